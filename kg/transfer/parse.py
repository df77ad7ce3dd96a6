"""Reading an export file: every line validated, references and the canon checked, no database."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from kg.canon import Canon
from kg.errors import InvalidInput
from kg.models import DuplicateKey, normalize_name, unique_keys
from kg.transfer.records import (
    ADAPTER,
    FORMAT,
    KINDS,
    Anzahl,
    AuftragRec,
    BetrifftRec,
    EintragRec,
    EntitaetRec,
    FaktRec,
    Kopf,
    NachfolgerRec,
    Rec,
    problem,
)


class Datei:
    """All records of one file, checked, grouped by kind (the import plan)."""

    def __init__(self, kopf: Kopf) -> None:
        self.kopf = kopf
        self.entitaeten: list[EntitaetRec] = []
        self.eintraege: list[EintragRec] = []
        self.nachfolger: list[NachfolgerRec] = []
        self.betrifft: list[BetrifftRec] = []
        self.fakten: list[FaktRec] = []
        self.auftraege: list[AuftragRec] = []
        #: (kind, key) → line number in the file, for messages and duplicates.
        self.line_of: dict[tuple[str, str], int] = {}
        #: What an import should tell its caller (an old format, a recomputed name_norm).
        self.warnungen: list[str] = []

    @property
    def zeilen(self) -> int:
        """Lines of the file, the header included."""
        groups: tuple[list[Any], ...] = (self.entitaeten, self.eintraege, self.nachfolger,
                                         self.betrifft, self.fakten, self.auftraege)
        return 1 + sum(len(g) for g in groups)

    def add(self, rec: Rec) -> None:
        if isinstance(rec, EntitaetRec):
            self.entitaeten.append(rec)
        elif isinstance(rec, EintragRec):
            self.eintraege.append(rec)
        elif isinstance(rec, NachfolgerRec):
            self.nachfolger.append(rec)
        elif isinstance(rec, BetrifftRec):
            self.betrifft.append(rec)
        elif isinstance(rec, FaktRec):
            self.fakten.append(rec)
        elif isinstance(rec, AuftragRec):
            self.auftraege.append(rec)
        else:
            raise TypeError(f"not a data record: {rec!r}")

    def records(self) -> Iterator[Rec]:
        """Every record in file order: the header, then kind by kind, each sorted."""
        yield self.kopf
        for group in (self.entitaeten, self.eintraege, self.nachfolger, self.betrifft,
                      self.fakten, self.auftraege):
            yield from sorted(group, key=lambda r: r.key())

    def lines(self) -> list[str]:
        """The file's lines (without line ends): a format 2 header with the record
        counts and the checksum of the lines after it, then the records."""
        body = [rec.line() for rec in self.records()][1:]
        digest = hashlib.sha256()
        for line in body:
            digest.update(line.encode("utf-8") + b"\n")
        kopf = self.kopf.model_copy(
            update={"format": FORMAT, "anzahl": self.anzahl(), "sha256": digest.hexdigest()}
        )
        return [kopf.line(), *body]

    def normalise_names(self, source: str) -> None:
        """Recompute every entity's name_norm from its name (never trust the file's)."""
        changed = []
        for i, e in enumerate(self.entitaeten):
            norm = normalize_name(e.name)
            if e.name_norm != norm:
                self.entitaeten[i] = e.model_copy(update={"name_norm": norm})
                changed.append(f"{source}:{self.line_of.get(('entitaet', e.id))}")
        if changed:
            self.warnungen.append(
                f"{len(changed)} entities had a name_norm that does not follow from their "
                f"name ({', '.join(changed[:3])}{' …' if len(changed) > 3 else ''}); it was "
                "recomputed"
            )

    def anzahl(self) -> Anzahl:
        return Anzahl(
            entitaeten=len(self.entitaeten),
            eintraege=len(self.eintraege),
            nachfolger=len(self.nachfolger),
            betrifft=len(self.betrifft),
            fakten=len(self.fakten),
            werte=sum(f.wert is not None for f in self.fakten),
            auftraege=len(self.auftraege),
        )

    def check(self, canon: Canon, source: str) -> None:
        """Ownership, references between records and the canon; InvalidInput names the line."""
        user, character = self.kopf.user_id, self.kopf.character_id

        def bad(rec: Rec, message: str) -> InvalidInput:
            line = self.line_of.get((rec.kind, rec.key()))
            where = f"{source}:{line}" if line else source
            return InvalidInput(f"{where}: {rec.kind}: {message}")

        owned: list[EntitaetRec | EintragRec | FaktRec | AuftragRec] = [
            *self.entitaeten, *self.eintraege, *self.fakten, *self.auftraege
        ]
        for r in owned:
            if r.user_id != user:
                raise bad(r, f"user_id {r.user_id!r} is not the header's {user!r}")
            pair_of = getattr(r, "character_id", None)
            if character is not None and pair_of is not None and pair_of != character:
                raise bad(r, f"character_id {pair_of!r} is not the header's {character!r}")
        entities = {e.id for e in self.entitaeten}
        entries = {e.id for e in self.eintraege}
        person: dict[str, str] = {}
        for b in self.betrifft:
            if b.eintrag not in entries:
                raise bad(b, f"entry {b.eintrag!r} is not in the file")
            if b.entitaet not in entities:
                raise bad(b, f"entity {b.entitaet!r} is not in the file")
            if person.setdefault(b.eintrag, b.entitaet) != b.entitaet:
                raise bad(b, f"entry {b.eintrag!r} already names {person[b.eintrag]!r}: an "
                             "entry is about one person")
        successor: dict[str, str] = {}
        predecessor: dict[str, str] = {}
        for n in self.nachfolger:
            for end in (n.von, n.nach):
                if end not in entries:
                    raise bad(n, f"entry {end!r} is not in the file")
            if n.von == n.nach:
                raise bad(n, "an entry cannot succeed itself")
            if successor.setdefault(n.von, n.nach) != n.nach:
                raise bad(n, f"entry {n.von!r} already has the successor "
                             f"{successor[n.von]!r}: a chain does not fork")
            if predecessor.setdefault(n.nach, n.von) != n.von:
                raise bad(n, f"entry {n.nach!r} already succeeds {predecessor[n.nach]!r}: "
                             "chains do not join")
            if person.get(n.von) != person.get(n.nach):
                raise bad(n, f"entry {n.nach!r} names another person than {n.von!r}, which "
                             "it follows: a moved event stays about its person")
        # With one successor each, a chain that never reaches its first entry (one
        # without a predecessor) walking back from an entry is a cycle.
        reached = set()
        for first in successor.keys() - predecessor.keys():
            entry: str | None = first
            while entry is not None:
                reached.add(entry)
                entry = successor.get(entry)
        for n in self.nachfolger:
            if n.von not in reached:
                raise bad(n, f"entry {n.von!r} is in a cycle of successors: a chain has a "
                             "first entry and an end")
        fact_ids = {f.id for f in self.fakten}
        for f in self.fakten:
            if f.beziehung not in canon:
                raise bad(f, f"relation {f.beziehung!r} is not in the canon (set "
                             "KG_KANON_DATEI to the canon the file was exported with)")
            rel = canon[f.beziehung]
            if rel.objekt == "entitaet" and f.objekt is None:
                raise bad(f, f"{rel.name} needs an entity as 'objekt', not a 'wert'")
            if rel.objekt == "wert" and f.wert is None:
                raise bad(f, f"{rel.name} needs a 'wert', not an entity as 'objekt'")
            for role, ref in (("subjekt", f.subjekt), ("objekt", f.objekt)):
                if ref is not None and ref not in entities:
                    raise bad(f, f"{role} entity {ref!r} is not in the file")
            for role, ref in (("timeline_id", f.timeline_id), ("timeline_bis", f.timeline_bis)):
                if ref is not None and ref not in entries:
                    raise bad(f, f"{role} entry {ref!r} is not in the file")
            for at, follower in enumerate(f.abgeloest_durch or []):
                if follower not in fact_ids:
                    raise bad(f, f"abgeloest_durch fact {follower!r} is not in the file")
                if follower in (f.abgeloest_durch or [])[:at]:
                    raise bad(f, f"abgeloest_durch names fact {follower!r} twice")


def parse_lines(lines: Iterable[str], canon: Canon, source: str = "<import>") -> Datei:
    """Validate every line (pure: no database); InvalidInput names the first bad line.

    A format 2 header's record counts and checksum must match the lines after it: a
    file cut short or changed is refused."""
    datei: Datei | None = None
    digest = hashlib.sha256()
    lineno = 0
    for lineno, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text:
            continue
        where = f"{source}:{lineno}"
        if datei is not None:
            digest.update(raw.rstrip("\r\n").encode("utf-8") + b"\n")
        try:
            data = json.loads(text, object_pairs_hook=unique_keys)
        except DuplicateKey as exc:
            raise InvalidInput(f"{where}: {exc} (no export writes a key twice: a line "
                               "edited by hand?)") from None
        except json.JSONDecodeError as exc:
            if text.startswith("\ufeff"):  # (json said "decode using utf-8-sig")
                raise InvalidInput(f"{where}: the line begins with a byte order mark (BOM), "
                                   "which no export writes: an editor saved the file? Save it "
                                   "as UTF-8 without a BOM") from None
            raise InvalidInput(f"{where}: not valid JSON ({exc.msg}, column {exc.colno})") from None
        except RecursionError:
            raise InvalidInput(f"{where}: nested too deeply to be a record") from None
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind not in KINDS:
            raise InvalidInput(
                f"{where}: a line is a JSON object with a kind, one of {', '.join(KINDS)}"
            )
        try:
            rec: Rec = ADAPTER.validate_python(data)
        except ValidationError as exc:
            raise InvalidInput(f"{where}: {kind}: {problem(exc, kind)}") from None
        if datei is None:
            if not isinstance(rec, Kopf):
                raise InvalidInput(
                    f'{where}: the first line must be the header '
                    f'{{"kind":"export","format":{FORMAT},...}}'
                )
            datei = Datei(rec)
            continue
        if isinstance(rec, Kopf):
            raise InvalidInput(f"{where}: a second header; a file holds one export")
        seen = (kind, rec.key())
        if seen in datei.line_of:
            raise InvalidInput(f"{where}: {kind} {rec.key()!r} is already on line "
                               f"{datei.line_of[seen]}")
        datei.line_of[seen] = lineno
        datei.add(rec)
    if datei is None:
        raise InvalidInput(f"{source}: the file is empty")
    kopf = datei.kopf
    if kopf.anzahl is None or kopf.sha256 is None:
        datei.warnungen.append(
            f"{source}:1: an export of format {kopf.format} without record counts and "
            "checksum: a file cut short or changed cannot be told apart — export again "
            "with this version to get them"
        )
    else:
        found = datei.anzahl()
        if found != kopf.anzahl:
            missing = [f"{name} {getattr(kopf.anzahl, name)} (found {getattr(found, name)})"
                       for name in Anzahl.model_fields
                       if getattr(found, name) != getattr(kopf.anzahl, name)]
            raise InvalidInput(
                f"{source}:{lineno + 1}: the header (line 1) announces {', '.join(missing)}: "
                "the file is cut short or was changed"
            )
        if digest.hexdigest() != kopf.sha256:
            raise InvalidInput(
                f"{source}:1: the checksum of lines 2-{lineno} does not match the header's "
                "sha256: the file was changed after export"
            )
    datei.check(canon, source)
    return datei


#: The longest line an import reads: an export's longest record, an order's stored
#: result, stays far below it; /dev/zero or a file without line ends would not.
MAX_LINE = 16 * 1024 * 1024


def bounded_lines(f: IO[str], source: str) -> Iterator[str]:
    """The lines of `f`, none read whole that is longer than MAX_LINE characters."""
    for lineno in itertools.count(1):
        line = f.readline(MAX_LINE + 1)
        if not line:
            return
        if len(line) > MAX_LINE:
            raise InvalidInput(f"{source}:{lineno}: the line is longer than "
                               f"{MAX_LINE // 2**20} Mi characters; no record of an export is")
        yield line


def read_file(path: Path, canon: Canon) -> Datei:
    """Parse and check a whole file; InvalidInput names the first bad line."""
    try:
        with open(path, encoding="utf-8") as f:
            return parse_lines(bounded_lines(f, str(path)), canon, str(path))
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
