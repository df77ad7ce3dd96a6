"""The database side of a transfer: read a user's records, write a checked file, purge."""

from __future__ import annotations

import os
import shlex
import stat
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from kg.canon import Canon
from kg.check import CheckResult, run_checks
from kg.db import Database, Record, Tx, held, lost_at_commit
from kg.errors import (
    ConfigError,
    InvalidInput,
    KgError,
    MemoryLimitExceeded,
    NothingStored,
    ServerUnavailable,
    StoredDataError,
)
from kg.transfer.codec import TAG, ZEIT, instant, temporal_fields
from kg.transfer.parse import Datei, read_file
from kg.transfer.records import (
    KIND_CLASS,
    BetrifftRec,
    Kopf,
    NachfolgerRec,
    Rec,
    problem,
)
from kg.transfer.results import (
    ExportErgebnis,
    ImportErgebnis,
    Progress,
    PurgeErgebnis,
    no_progress,
)

T = TypeVar("T")

#: The `kg check` items an import must keep: all but 6-7, which judge the daily sweep (an
#: import of older data cannot have had it). 8 holds what the Fakten-Agent guards, 9 the
#: bi-temporal record (no system time after now among them): a file passes both or none
#: of it is written.
IMPORT_CHECK_ITEMS = frozenset({1, 2, 3, 4, 5, 8, 9})
#: Checks of those items an import does not judge: states an older version wrote, which
#: reads take as they are. A backup of such a store must restore; `kg check` names them.
IMPORT_TAKES = frozenset({"duplicate_values", "ereignis_person", "fact_first_touch",
                          "type_missing", "sonstiges_after_type"})
#: Records per `UNWIND` query of an import, and lines per progress report.
BATCH = 2000


#: Neo4j value types an export can hold, and the field marker each needs.
_GRAPH_TYPES = {"ZONED DATETIME NOT NULL": ZEIT, "DATE NOT NULL": TAG}
#: Temporal types the export queries return as text (the others are refused).
TEMPORAL = [*_GRAPH_TYPES, "LOCAL DATETIME NOT NULL", "LOCAL TIME NOT NULL",
            "ZONED TIME NOT NULL", "DURATION NOT NULL"]


def _prop(row: Record, name: str) -> Any:
    return next((value for key, _, value in row["props"] if key == name), None)


def _record(kind: str, row: Record, **extra: Any) -> Rec:
    """A record from an export row's [key, type, value] properties; the Neo4j type of
    each property must be the one its field stands for (DateTime, Date or neither)."""
    cls = KIND_CLASS[kind]
    fields = temporal_fields(cls)
    data: dict[str, Any] = {"kind": kind}
    ident = _prop(row, "id")
    for key, value_type, value in row["props"]:
        if key not in fields or key == "kind" or key in extra:
            raise StoredDataError(
                f"{kind} {ident!r} has the property {key!r}, which export does not know — if "
                "it was set by hand, remove it (run `kg check`, which lists them all); if the "
                "graph model has it, update kg/transfer")
        if fields[key] is not _GRAPH_TYPES.get(value_type) or (
            value_type in TEMPORAL and value_type not in _GRAPH_TYPES
        ):
            raise StoredDataError(f"{kind} {ident!r}: property {key!r} is a {value_type}, not "
                                  "what the graph model says — run `kg check`")
        data[key] = value
    try:
        # Strict: a stored value is written as it is, or the export fails; lax, a text
        # 'yes' where a boolean belongs was written as true (`kg check` reports it).
        rec = cls.model_validate(data | extra, strict=True)
    except ValidationError as exc:
        which = f"{kind} {ident!r}" if ident is not None else f"{kind} without an id"
        raise StoredDataError(f"{which} cannot be exported ({problem(exc)}) — "
                              "run `kg check`") from None
    for key, value in (data | extra).items():
        # The records strip whitespace at either end: written so, "nova " would come
        # back as "nova", another pair's id or another entity's name.
        # (An order's `ergebnis` is written again as its JSON, which loses nothing.)
        if (key != "ergebnis" and isinstance(value, str) and value != value.strip()
                and getattr(rec, key) != value):
            raise StoredDataError(
                f"{kind} {ident!r} cannot be exported: its {key} {value!r} has whitespace "
                "at either end, which no surface writes and the file would lose — mend it "
                "by hand (run `kg check`, which names them all)")
    return rec


def _link(cls: type[Rec], data: dict[str, Any], kind: str, target: Any) -> Rec:
    """A NACHFOLGER or BETRIFFT record; a StoredDataError when the node it leads to (the
    `kind`) has no id an export takes."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise StoredDataError.of(kind, None, "id", target,
                                 None if target is None else problem(exc)) from None


async def read_export(
    db: Database, canon: Canon, user_id: str, character_id: str | None
) -> Datei:
    """Everything of a user (or a pair) as records, read under the user's lock."""

    async def work(tx: Tx) -> Datei:
        await tx.run("transfer_lock", user_id=user_id)
        scope = {"user_id": user_id, "character_id": character_id, "temporal": TEMPORAL}
        # The counts and checksum are known once every record is: `Datei.lines()`
        # writes the format 2 header.
        datei = Datei(Kopf(kind="export", format=1, user_id=user_id,
                           character_id=character_id))
        for row in await tx.run("export_entities", **scope):
            datei.add(_record("entitaet", row, namensvettern=row["namensvettern"] or None))
        for row in await tx.run("export_timeline", **scope):
            eintrag = _record("eintrag", row)
            datei.add(eintrag)
            for nach in row["nachfolger"]:
                datei.add(_link(NachfolgerRec, {"kind": "nachfolger", "von": eintrag.key(),
                                                "nach": nach},
                                f"timeline entry following {eintrag.key()!r}", nach))
            for entitaet in row["betrifft"]:
                datei.add(_link(BetrifftRec, {"kind": "betrifft", "eintrag": eintrag.key(),
                                              "entitaet": entitaet},
                                f"entity named by timeline entry {eintrag.key()!r}", entitaet))
        for row in await tx.run("export_facts", **scope):
            rel = canon.by_type.get(row["rel_type"])
            if rel is None:
                raise ConfigError(
                    f"fact {_prop(row, 'id')!r} has the relationship type "
                    f"{row['rel_type']!r}, which is not in the canon — set KG_KANON_DATEI "
                    "to the canon file it was written with; nothing was exported"
                )
            datei.add(_record("fakt", row, beziehung=rel.name, subjekt=row["subjekt"],
                              objekt=row["objekt"], wert=row["wert"]))
        for row in await tx.run("export_orders", **scope):
            datei.add(_record("auftrag", row))
        return datei

    async with db.user_turn(user_id, maintenance=True):
        datei = await db.write(work, maintenance=True)
    for n, rec in enumerate(datei.records(), start=1):
        datei.line_of[(rec.kind, rec.key())] = n
    try:
        # What export writes, import must take: the same checks, before the file exists.
        datei.check(canon, "export")
    except InvalidInput as exc:
        message = f"the store is inconsistent, export refused — {exc}; run `kg check`"
        raise StoredDataError(message) from None
    return datei


def holds_nothing(datei: Datei) -> bool:
    """No fact, timeline entry or order: what no export writes and no import takes (a
    typo in an id would replace a backup with an empty export; entities alone imported
    are what no export of the user could carry)."""
    return not (datei.fakten or datei.eintraege or datei.auftraege)


async def export_file(
    db: Database,
    canon: Canon,
    path: Path,
    user_id: str,
    character_id: str | None = None,
    progress: Progress = no_progress,
) -> ExportErgebnis:
    """Write the export to `path` (atomically: a temporary file, then renamed)."""
    path = Path(path)
    writable_target(path)
    datei = await read_export(db, canon, user_id, character_id)
    if holds_nothing(datei):
        # A typo in an id would otherwise replace a backup with an empty export.
        whose = f"user {user_id!r}" + (f", character {character_id!r}," if character_id else "")
        raise NothingStored(f"{whose} has nothing in this store (no fact, timeline entry or "
                            f"order); nothing written, {path} is as it was")
    total = datei.zeilen
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            for n, line in enumerate(datei.lines(), start=1):
                out.write(line + "\n")
                if n % BATCH == 0 or n == total:
                    progress("export", n, total)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk, a file size limit, a folder gone read-only
        Path(tmp).unlink(missing_ok=True)
        raise InvalidInput(
            f"cannot write {path}: {exc.strerror or exc} — free space, or name a file on "
            f"another disk; nothing was exported, {path} is as it was"
        ) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return ExportErgebnis(datei=str(path), user_id=user_id, character_id=character_id,
                          zeilen=total, anzahl=datei.anzahl())


def writable_target(path: Path) -> None:
    """An export replaces its file by renaming a finished copy over it: only a regular,
    writable file (or none yet) may be there. A device, pipe or socket would be replaced
    by a plain file holding the user's data, a link by a file of its own."""
    if str(path) == "-":
        raise InvalidInput("export writes a file, not standard output: name the file")
    try:
        st = path.lstat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror}") from None
    kind = ("a directory" if stat.S_ISDIR(st.st_mode)
            else "a symbolic link" if stat.S_ISLNK(st.st_mode)
            else None if stat.S_ISREG(st.st_mode)
            else "a device, pipe or socket")
    if kind is not None:
        raise InvalidInput(f"{path} is {kind}, not a file: name a regular file to write "
                           "(an export replaces it as a whole); nothing was exported")
    if not os.access(path, os.W_OK) or not st.st_mode & 0o222:
        raise InvalidInput(f"{path} is read-only: make it writable or name another file; "
                           "nothing was exported")


#: The system times of a file's records: when the store that wrote them recorded them.
SYSTEM_TIME = ("erstellt", "t_recorded", "t_expired", "last_touched", "ersetzt_am",
               "abgesagt_am", "erfasst")


def _recorded_by(datei: Datei, clock: datetime, source: str) -> None:
    """Refuse a file with a system time after `clock`, the import's own (the user's
    clock, taken with the lock): a write after the import would be recorded before it,
    and a read after it would stand at an instant that leaves it out."""
    for rec in datei.records():
        for name in SYSTEM_TIME:
            text = getattr(rec, name, None)
            if text is None or instant(text) <= clock:
                continue
            kind = str(getattr(rec, "kind", "?"))
            line = datei.line_of.get((kind, rec.key()))
            raise InvalidInput(
                f"{source}:{line}: {kind} {rec.key()!r} has {name} {text}, after this "
                f"store's clock ({clock.isoformat()}): system time is the store's, and a "
                "write after the import would be recorded before it; nothing was imported "
                "— export the file again from a store whose clock is right"
            )


def _batches(rows: list[Any]) -> Iterator[list[Any]]:
    for i in range(0, len(rows), BATCH):
        yield rows[i : i + BATCH]


async def write_import(
    db: Database,
    canon: Canon,
    datei: Datei,
    source: str = "<import>",
    progress: Progress = no_progress,
) -> ImportErgebnis:
    """Write a checked file in one transaction; a conflict rolls all of it back."""
    user = datei.kopf.user_id
    rel_type = {f.id: canon[f.beziehung].rel_type for f in datei.fakten}  # never from the file
    total = datei.zeilen - 1

    async def work(tx: Tx) -> tuple[int, list[str]]:
        [lock] = await tx.run("import_lock", user_id=user)
        held(user, lock["held"])
        _recorded_by(datei, lock["jetzt"].to_native(), source)
        row = await tx.one(
            "import_conflicts",
            user_id=user,
            entity_ids=[e.id for e in datei.entitaeten],
            entities=[{"id": e.id, "name_norm": e.name_norm} for e in datei.entitaeten],
            fact_ids=sorted({f.id for f in datei.fakten}),
            eintrag_ids=[e.id for e in datei.eintraege],
            auftraege=[{"character_id": a.character_id, "id": a.id} for a in datei.auftraege],
        )
        assert row is not None
        there = ("is in the store already (imported before? to restore the file, purge "
                 f"first: `{_purge_command(datei)}`, which deletes what was written since: "
                 "`kg export` it before, if it may be needed)")
        foreign = "belongs to another user"
        for kind, field, why in (
            ("entitaet", "fremde_entitaeten", foreign),
            ("fakt", "fremde_fakten", foreign),
            ("eintrag", "fremde_eintraege", foreign),
            ("fakt", "fakten", there),
            ("eintrag", "eintraege", there),
            ("auftrag", "auftraege", there),
        ):
            if row[field]:
                key = sorted(row[field])[0]
                line = datei.line_of.get((kind, key)) or datei.line_of.get((kind, f"{key}#000001"))
                more = f" (and {len(row[field]) - 1} more)" if len(row[field]) > 1 else ""
                raise InvalidInput(
                    f"{source}:{line}: {kind} {key!r} {why}{more}; nothing was imported"
                )
        if holds_nothing(datei):
            # As `kg export` writes no such file: imported, it left entities that no
            # export of the user could carry ("has nothing"), seen by check and purge.
            raise InvalidInput(
                f"{source} holds no fact, timeline entry or order (no export is without "
                "them: a file cut short, or made by hand?); nothing was imported")
        done = 0

        async def put(kind: str, rows: list[Any],
                      write: Callable[[list[Any]], Awaitable[Record | None]]) -> None:
            nonlocal done
            for batch in _batches(rows):
                got = await write(batch)
                if got is None or got["n"] != len(batch):
                    raise InvalidInput(
                        f"{source}: {got and got['n']} of {len(batch)} {kind} records were "
                        "written (a reference did not resolve); nothing was imported"
                    )
                done += len(batch)
                progress("import", done, total)

        kept = set(row["vorhandene_entitaeten"])
        # An entity of the file that is not in the store, where the user has one of its
        # name, is that one (a pair restored after another pair made it since): where the
        # name is the file's only one of it, and the store's only one, and no entity of
        # the file of that name is in the store by id (the file tells two people apart),
        # and the store's was not another entity of that name at the export (the file's
        # `namensvettern`: two people of one name, one made with `neu`, were merged).
        names = Counter(e.name_norm for e in datei.entitaeten)
        known = {e.name_norm for e in datei.entitaeten if e.id in kept}
        by_id = {e.id: e for e in datei.entitaeten}
        same = {
            n["datei"]: n["store"][0] for n in row["namensvettern"]
            if len(n["store"]) == 1 and names[by_id[n["datei"]].name_norm] == 1
            and by_id[n["datei"]].name_norm not in known
            and n["store"][0] not in (by_id[n["datei"]].namensvettern or ())
        }
        notes = [
            f"entity {e.name!r} ({e.id}) is the store's entity of that name ({same[e.id]}): "
            "the file's facts, entries and orders' results about it name it"
            for e in datei.entitaeten if e.id in same
        ]
        kept |= set(same)
        done += len(kept)

        def ent(entity_id: str | None) -> str | None:
            return same.get(entity_id, entity_id) if entity_id is not None else None

        await put("entitaet", [e.to_graph("namensvettern") for e in datei.entitaeten
                               if e.id not in kept],
                  lambda b: tx.one("import_entities", user_id=user, rows=b))
        await put("eintrag", [e.to_graph() for e in datei.eintraege],
                  lambda b: tx.one("import_entries", user_id=user, rows=b))
        await put("nachfolger", [{"von": n.von, "nach": n.nach} for n in datei.nachfolger],
                  lambda b: tx.one("import_nachfolger", user_id=user, rows=b))
        await put("betrifft",
                  [{"eintrag": b.eintrag, "entitaet": ent(b.entitaet)} for b in datei.betrifft],
                  lambda b: tx.one("import_betrifft", user_id=user, rows=b))
        fields = ("beziehung", "subjekt", "objekt", "wert")
        await put("fakt", [
            {"subjekt": ent(f.subjekt), "objekt": ent(f.objekt), "rel_type": rel_type[f.id],
             **f.to_graph(*fields)}
            for f in datei.fakten if f.objekt is not None
        ], lambda b: tx.one("import_ref_facts", user_id=user, rows=b))
        await put("fakt", [
            {"subjekt": ent(f.subjekt), "wert": f.wert, "rel_type": rel_type[f.id],
             **f.to_graph(*fields)}
            for f in datei.fakten if f.wert is not None
        ], lambda b: tx.one("import_value_facts", user_id=user, rows=b))
        await put("auftrag", [a.renamed(same).to_graph() for a in datei.auftraege],
                  lambda b: tx.one("import_orders", user_id=user, rows=b))
        # The user's data with the file in it must pass `kg check --user` (its structural
        # items) before anything commits; a violation rolls the whole file back.
        report = await run_checks(db, canon, user, tx=tx)
        broken = [c for c in report.checks if c.item in IMPORT_CHECK_ITEMS
                  and c.name not in IMPORT_TAKES and not c.ok]
        if broken:
            raise _Broken(broken)
        return len(kept), notes

    progress("import", 0, total)
    try:
        vorhanden, notes = await whole(db, user, work, "imported")
    except _Broken as exc:  # rolled back: was it broken before the file?
        failed = ""
        try:
            before = [c for c in (await run_checks(db, canon, user)).checks if not c.ok]
        except NothingStored:  # the store holds nothing of the user: nothing broken
            before = []
        except KgError as again:  # the refusal stands; only its cause is less sure
            before = []
            failed = f" (the check of the store without the file failed: {again})"
        raise InvalidInput(_refusal(source, datei, exc.checks, before) + failed) from None
    return ImportErgebnis(
        datei=source, user_id=user, character_id=datei.kopf.character_id,
        zeilen=datei.zeilen, anzahl=datei.anzahl(), entitaeten_vorhanden=vorhanden,
        warnungen=[*datei.warnungen, *notes],
    )


class _Broken(Exception):
    """The checks an import's data broke, inside its transaction (rolled back)."""

    def __init__(self, checks: list[CheckResult]) -> None:
        super().__init__(", ".join(c.name for c in checks))
        self.checks = checks


def _refusal(
    source: str, datei: Datei, broken: list[CheckResult], before: list[CheckResult]
) -> str:
    """Why an import was refused and what to do. `broken`: the checks that failed with
    the file in; `before`: those that fail on the store without it. Where the store broke
    an invariant before the file came (another pair's data, names an older version
    stored), the file is not at fault there, and no purge or new export mends it."""
    def listed(checks: list[CheckResult]) -> str:
        first = checks[0]
        return (f"{first.name} ({first.title}; {first.count} found, e.g. "
                f"{', '.join(first.samples[:3]) or '-'})"
                + (f", and {', '.join(c.name for c in checks[1:])}" if len(checks) > 1 else ""))

    already = [c for c in before if c.name in {b.name for b in broken}]
    if not already:
        return (f"{source}: with this file the store would break {len(broken)} "
                f"invariant(s) of `kg check`: {listed(broken)}; nothing was imported — "
                + _import_where_empty(datei))
    user = shlex.quote(datei.kopf.user_id)
    also = [c for c in broken if c.name not in {a.name for a in already}]
    return (
        f"{source}: the store breaks {len(already)} invariant(s) of `kg check` already, "
        f"without this file: {listed(already)}"
        + (f"; with the file it would break {listed(also)} too" if also else "")
        + f"; nothing was imported — mend the store first (`kg check --user {user}` lists "
        f"it; names stored by an older version: `kg schema renormalize --user {user}`), "
        "then import the file again"
        + (": " + _import_where_empty(datei) if also else "")
    )


def _purge_command(datei: Datei) -> str:
    user, character = datei.kopf.user_id, datei.kopf.character_id
    return f"kg purge --user {shlex.quote(user)}" + (
        "" if character is None else f" --character {shlex.quote(character)}") + " --yes"


def _import_where_empty(datei: Datei) -> str:
    """What to do when a file and the store's data together break an invariant: a file
    restores its pair (or user) into a store that holds nothing of it (docs/export.md:
    export, purge, import). What the store holds of the pair now (a value written after
    the export) is not merged with the file's, whose values are history of their own."""
    user, character = datei.kopf.user_id, datei.kopf.character_id
    whose = f"user {user!r}" if character is None else f"pair ({user!r}, {character!r})"
    return (
        f"import it where the {whose} holds nothing: if the store has data of it (written "
        f"after the export), purge that first (`{_purge_command(datei)}`; `kg export` it "
        "before, if it may be needed) or import the file into another store; if the store has "
        "nothing of it, the file itself is inconsistent (changed by hand?): export it "
        "again"
    )


async def whole(
    db: Database, user_id: str, work: Callable[[Tx], Awaitable[T]], done: str
) -> T:
    """`work`, which takes the user's lock, as one maintenance transaction in the user's
    turn (`Database.user_turn`); a server's failure says that nothing was `done`
    (imported, deleted): the transaction was rolled back whole. A connection lost at the
    COMMIT is raised as it is: its words say it may have been done."""
    async with db.user_turn(user_id, maintenance=True):
        try:
            return await db.write(work, maintenance=True)
        except (ServerUnavailable, MemoryLimitExceeded) as exc:
            if lost_at_commit(exc):
                raise
            raise type(exc)(f"{str(exc).rstrip('.')}; nothing was {done}") from exc


async def import_file(
    db: Database, canon: Canon, path: Path, progress: Progress = no_progress
) -> ImportErgebnis:
    """Validate the whole file, then write it in one transaction."""
    if str(path) == "-":
        raise InvalidInput("import reads a file, not standard input: save the export to "
                           "a file and name it; nothing was imported")
    try:
        datei = read_file(Path(path), canon)
    except InvalidInput as exc:
        raise InvalidInput(f"{exc}; nothing was imported") from None
    datei.normalise_names(str(path))
    return await write_import(db, canon, datei, str(path), progress)


def _refuse_empty_purge(user_id: str, character_id: str | None) -> None:
    if character_id is None:
        whose, held = f"user {user_id!r}", "no entity, fact, timeline entry, order or lock node"
    else:
        whose, held = f"pair ({user_id!r}, {character_id!r})", "no fact, timeline entry or order"
    raise NothingStored(
        f"{whose} has nothing in this store ({held}): purged already (a retry of a purge "
        "that went through), or a typo in an id; nothing was deleted"
    )


async def purge(db: Database, user_id: str, character_id: str | None = None) -> PurgeErgebnis:
    """Delete a pair's data (or a whole user's) in one transaction; report the counts.

    The user's lock node goes in a transaction of its own after it, and only while
    nothing of the user is there: a write waiting for that node holds a lock its delete
    needs, and deleted in the purge's transaction, which holds the node, Neo4j ended the
    one or the other on the deadlock (a stranger's attack: orders sent during a long
    purge failed after the retries, or the purge ran again). Where that second
    transaction fails (a write of the user came in the instant between its lock and its
    delete, or Neo4j went away) or the process stops before it, the node alone is left
    (`nutzer` 0; it holds the user's id, its clock and count of writes): a purge again
    deletes it, and says "purged already" as for a purge that went through whole."""

    async def work(tx: Tx) -> tuple[PurgeErgebnis, bool]:
        await tx.run("transfer_lock", user_id=user_id)
        if character_id is not None:
            await tx.run("purge_clock", user_id=user_id)
        scope = {"user_id": user_id, "character_id": character_id}
        facts = await tx.one("purge_facts", **scope)
        entries = await tx.one("purge_timeline", **scope)
        orders = await tx.one("purge_orders", **scope)
        assert facts is not None and entries is not None and orders is not None
        touched = None
        if character_id is not None:
            touched = sorted({*facts["entitaeten"], *entries["entitaeten"]} - {None})
        entities = await tx.one("purge_entities", user_id=user_id, entity_ids=touched)
        lock = await tx.one("purge_lock_left", user_id=user_id)
        assert entities is not None
        deleted = bool(facts["fakten"] or entries["eintraege"] or orders["auftraege"]
                       or entities["entitaeten"])
        if not deleted and not (lock and lock["nutzer"]):
            # Nothing deleted: a typo in an id (answered "purged", exit 0, it hid the
            # typo), or a purge that committed and whose answer was lost, retried.
            _refuse_empty_purge(user_id, character_id)
        return PurgeErgebnis(
            user_id=user_id,
            character_id=character_id,
            fakten=facts["fakten"],
            werte=facts["werte"],
            eintraege=entries["eintraege"],
            nachfolger=entries["nachfolger"],
            auftraege=orders["auftraege"],
            entitaeten=entities["entitaeten"],
            entitaeten_behalten=entities["behalten"],
            nutzer=0,
            fremde_kanten=entities["fremde_kanten"],
        ), deleted

    done, deleted = await whole(db, user_id, work, "deleted")

    async def lock_node(tx: Tx) -> int:
        row = await tx.one("purge_lock", user_id=user_id)
        return int(row["nutzer"]) if row else 0

    try:
        async with db.user_turn(user_id, maintenance=True):
            done = done.model_copy(update={"nutzer": await db.write(lock_node)})
    except KgError:
        pass  # (what it deletes is the lock node alone: a purge again deletes it)
    if not deleted:
        # Only the lock node was left, by a purge stopped before its last step, or by one
        # that ran at the same time (it was refused as "purged already" before the lock
        # node had a step of its own: a review).
        raise NothingStored(
            f"user {user_id!r} was purged already: only its lock node was left (a purge "
            "stopped before its last step, or one at the same time)"
            + ("; it is deleted now" if done.nutzer else "")
        )
    return done
