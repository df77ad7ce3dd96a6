"""Export, import and purge of a user's or a pair's data (JSON Lines).

The file format, one JSON object per line, each with a `kind`:

* line 1 — `export`: the format version and whose data it is (`user_id`, and
  `character_id` for a pair, null for a whole user);
* `entitaet`, `eintrag` (timeline entry), `nachfolger` (old → new entry),
  `betrifft` (entry → entity), `fakt` (reference and value facts: `objekt` is an entity
  id, or `wert` is the value), `auftrag` (the audit of an order).

Every property the graph holds is written, by name; a null field is a property the
graph does not have. Datetimes keep their Neo4j type, nanoseconds and offset or zone
(`2026-11-29T18:43:47.483Z`), dates are `YYYY-MM-DD`: the model field decides which
Neo4j type an import writes. Records are sorted (kind, then id) and serialised
compactly with the model's field order, so export → purge → import → export gives
the same bytes.

An import validates every line (pydantic, then references between records and the
canon) before it writes anything, and writes the whole file in **one transaction**
(batched `UNWIND` queries inside it): a bad line or a conflict with the store leaves
nothing behind. Entities already in the store (same user, same id) are kept as they
are — a pair export shares them with the user's other pairs.

Purge (the right to be forgotten): a pair loses its facts, value nodes, timeline
entries and orders; its entities go too unless another pair of the same user still
has a fact or an entry on them (entities are per user). A whole user loses all of
that, every entity, and the user's lock node. Every other pair is untouched.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import pytz  # type: ignore[import-untyped]  # the driver's own time zone library
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from kg.canon import Canon
from kg.check import run_checks
from kg.db import Database, Record, Tx
from kg.errors import InvalidInput, KgError
from kg.models import (
    AuftragErgebnis,
    EintragTyp,
    Frozen,
    Genauigkeit,
    Herkunft,
    Ident,
    Name,
    Wert,
    normalize_name,
)

#: Format 2 adds record counts and a checksum to the header; format 1 files (without
#: them) still import, with a warning.
FORMAT = 2
FORMATS = (1, 2)
#: The `kg check` items an import must keep (the structural ones; 6-7 judge the daily
#: sweep, which an import of older data cannot have had).
IMPORT_CHECK_ITEMS = frozenset({1, 2, 3, 4, 5})
BATCH = 2000
#: Server-side seconds an export, import or purge transaction may take (one per file).
TIMEOUT = 900.0

#: Called as (phase, done, total) while records are read or written.
Progress = Callable[[str, int, int], None]


def no_progress(phase: str, done: int, total: int) -> None:
    return None


# -- temporal values: exact text forms of Neo4j's DateTime and Date ----------------

_DATETIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
    r"(Z|[+-]\d{2}:\d{2}(?::\d{2})?)(?:\[([A-Za-z0-9_+\-/]+)\])?$"
)
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def _offset_text(offset: timedelta) -> str:
    seconds = int(offset.total_seconds())
    if seconds == 0:
        return "Z"
    sign = "+" if seconds > 0 else "-"
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}" + (f":{secs:02d}" if secs else "")


@functools.lru_cache(maxsize=65536)  # an order's facts share their timestamps
def canonical_datetime(text: str) -> str:
    """Check a datetime text and give its one canonical form; ValueError otherwise.

    Import sends this text to the server, which turns it into a DateTime with
    `datetime()`: exact to the nanosecond, with its offset or zone.
    """
    m = _DATETIME.match(text)
    if not m:
        raise ValueError(
            f"{text!r} is not an ISO datetime with offset, e.g. 2026-11-29T18:00:00Z"
        )
    year, month, day, hour, minute = (int(g) for g in m.groups()[:5])
    second = int(m.group(6) or 0)
    local = datetime(year, month, day, hour, minute, second)  # ValueError when out of range
    fraction = (m.group(7) or "").rstrip("0")
    off, zone = m.group(8), m.group(9)
    offset = timedelta(0)
    if off != "Z":
        parts = [int(p) for p in off[1:].split(":")]
        offset = timedelta(hours=parts[0], minutes=parts[1],
                           seconds=parts[2] if len(parts) > 2 else 0)
        offset = -offset if off[0] == "-" else offset
    if offset >= timedelta(hours=18) or offset <= -timedelta(hours=18):
        raise ValueError(f"{text!r}: offset {off} is out of range")
    if zone:
        try:
            tz = pytz.timezone(zone)
        except pytz.UnknownTimeZoneError:
            raise ValueError(f"{text!r}: unknown time zone {zone!r}") from None
        held = [tz.normalize(tz.localize(local, is_dst=dst)) for dst in (False, True)]
        if not any(h.utcoffset() == offset and h.replace(tzinfo=None) == local for h in held):
            raise ValueError(f"{text!r}: that time with offset {off} does not exist in {zone}")
    return (local.isoformat() + (f".{fraction}" if fraction else "") + _offset_text(offset)
            + (f"[{zone}]" if zone else ""))


def canonical_date(text: str) -> str:
    m = _DATE.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a date YYYY-MM-DD")
    return date(*(int(g) for g in m.groups())).isoformat()


class _Kind:
    """Marks a field whose text becomes a Neo4j temporal value on import."""

    def __init__(self, name: str) -> None:
        self.name = name


ZEIT, TAG = _Kind("datetime"), _Kind("date")
Zeit = Annotated[str, AfterValidator(canonical_datetime), ZEIT]
Tag = Annotated[str, AfterValidator(canonical_date), TAG]
# The writer's own validators: the same lengths, no control characters, line separators
# or bidi controls in what an import writes.
Id = Ident
Text = Annotated[str, Field(min_length=1, max_length=200)]


def _find_marker(metadata: Iterable[Any], annotation: Any) -> _Kind | None:
    for m in [*metadata, *getattr(annotation, "__metadata__", ())]:
        if isinstance(m, _Kind):
            return m
    for arg in get_args(annotation):
        found = _find_marker((), arg)
        if found is not None:
            return found
    return None


@functools.cache
def temporal_fields(cls: type[BaseModel]) -> dict[str, _Kind | None]:
    """Each field of a record class → ZEIT, TAG or None (also inside `Zeit | None`)."""
    return {name: _find_marker(f.metadata, f.annotation) for name, f in cls.model_fields.items()}


# -- the records ----------------------------------------------------------------------


class Rec(BaseModel):
    """One line of the file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str

    def to_graph(self, *exclude: str) -> dict[str, Any]:
        """The properties to store: `props` as they are, temporal ones as text in `zeit`
        (datetimes) and `tag` (dates) for the server to convert. Null ones stay absent."""
        props: dict[str, Any] = {}
        zeit: dict[str, str] = {}
        tag: dict[str, str] = {}
        for name, marker in temporal_fields(type(self)).items():
            value = getattr(self, name)
            if name == "kind" or name in exclude or value is None:
                continue
            if marker is ZEIT:
                zeit[name] = value
            elif marker is TAG:
                tag[name] = value
            else:
                props[name] = value
        return {"props": props, "zeit": zeit, "tag": tag}

    def key(self) -> str:
        """What identifies the record within its kind."""
        return str(getattr(self, "id"))  # noqa: B009 (every kind but two has an id)

    def line(self) -> str:
        return json.dumps(
            self.model_dump(), ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )


class Anzahl(Frozen):
    """How many records of each kind."""

    entitaeten: int = Field(0, ge=0)
    eintraege: int = Field(0, ge=0)
    nachfolger: int = Field(0, ge=0)
    betrifft: int = Field(0, ge=0)
    fakten: int = Field(0, ge=0, description="All facts, value facts included.")
    werte: int = Field(0, ge=0, description="Of them value facts (each with its Wert node).")
    auftraege: int = Field(0, ge=0)


class Kopf(Rec):
    """Line 1: the format, whose data the file holds, and (format 2) what follows."""

    kind: Literal["export"]
    format: Literal[1, 2] = Field(description="Version of this file format.")
    user_id: Id
    character_id: Id | None = Field(description="The pair's character; null: the whole user.")
    anzahl: Anzahl | None = Field(None, description="Records of each kind (format 2).")
    sha256: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$",
        description="SHA-256 of the lines after the header, each ending in \\n (format 2).",
    )

    @model_validator(mode="after")
    def _format(self) -> Kopf:
        if self.format >= 2 and (self.anzahl is None or self.sha256 is None):
            raise ValueError("a format 2 header carries 'anzahl' and 'sha256'")
        return self

    def key(self) -> str:
        return ""

    def line(self) -> str:
        data = self.model_dump()
        for name in ("anzahl", "sha256"):  # a format 1 header has neither
            if data[name] is None:
                del data[name]
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class EntitaetRec(Rec):
    kind: Literal["entitaet"]
    id: Id
    user_id: Id
    name: Name
    name_norm: str = Field(description="Recomputed from the name on import, never trusted.")
    erstellt: Zeit | None = None


class EintragRec(Rec):
    kind: Literal["eintrag"]
    id: Id
    user_id: Id
    character_id: Id
    typ: EintragTyp
    titel: Name
    beginn: Tag
    ende: Tag | None = None
    genauigkeit: Genauigkeit
    aktiv: bool
    abgesagt: bool | None = None
    t_recorded: Zeit | None = None
    ersetzt_am: Zeit | None = None
    abgesagt_am: Zeit | None = None


class NachfolgerRec(Rec):
    kind: Literal["nachfolger"]
    von: Id = Field(description="The moved (old) entry.")
    nach: Id = Field(description="Its successor.")

    def key(self) -> str:
        return f"{self.von}>{self.nach}"


class BetrifftRec(Rec):
    kind: Literal["betrifft"]
    eintrag: Id
    entitaet: Id

    def key(self) -> str:
        return f"{self.eintrag}>{self.entitaet}"


class FaktRec(Rec):
    kind: Literal["fakt"]
    id: Id
    user_id: Id
    character_id: Id
    beziehung: Id = Field(description="The canon relation (its type is UPPER_SNAKE_CASE).")
    subjekt: Id = Field(description="Subject entity id.")
    objekt: Id | None = Field(None, description="Object entity id (reference fact).")
    wert: Wert | None = Field(None, description="The value (value fact).")
    herkunft: Herkunft
    auftrag_id: Id | None = None
    t_valid: Zeit | None = None
    t_invalid: Zeit | None = None
    timeline_id: Id | None = None
    timeline_bis: Id | None = None
    t_recorded: Zeit | None = None
    t_expired: Zeit | None = None
    version: int = Field(1, ge=1, description="Version of the fact (its record in system time).")
    aktiv: bool
    grund: Literal["abgeloest", "berichtigt", "abgesagt"] | None = None
    staerke_decay: float = Field(ge=0, le=1)
    last_touched: Zeit | None = None
    decay_am: Tag | None = None

    def key(self) -> str:
        """A fact has one record per version (zero-padded: versions sort in order)."""
        return f"{self.id}#{self.version:06d}"

    @model_validator(mode="after")
    def _one_object(self) -> FaktRec:
        if (self.objekt is None) == (self.wert is None):
            raise ValueError("a fakt has exactly one of 'objekt' (entity id) or 'wert'")
        return self


class AuftragRec(Rec):
    kind: Literal["auftrag"]
    id: Id
    user_id: Id
    character_id: Id
    empfangen: Zeit | None = None
    erfasst: Zeit | None = None
    status: Literal["ok", "teilweise", "abgelehnt"]
    ergebnis: str | None = Field(None, description="The stored result (JSON text).")
    anzahl_tripel: int | None = Field(None, ge=0)
    inhalt: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="Content hash that tells a replay apart."
    )

    @model_validator(mode="after")
    def _ergebnis(self) -> AuftragRec:
        """The result must be what the writer stores: a result of this very order."""
        if self.ergebnis is None:
            return self
        try:
            result = AuftragErgebnis.model_validate_json(self.ergebnis)
        except ValidationError as exc:
            raise ValueError(f"ergebnis is not an order's result ({_problem(exc)})") from None
        except RecursionError:
            raise ValueError("ergebnis is nested too deeply") from None
        if (result.auftrag_id, result.user_id, result.character_id) != (
            self.id, self.user_id, self.character_id
        ):
            raise ValueError("ergebnis belongs to another order (auftrag_id, user_id or "
                             "character_id differ)")
        if result.status != self.status:
            raise ValueError(f"ergebnis has status {result.status!r}, the record {self.status!r}")
        if self.anzahl_tripel is not None and self.anzahl_tripel != len(result.ergebnisse):
            raise ValueError(f"anzahl_tripel is {self.anzahl_tripel}, the ergebnis holds "
                             f"{len(result.ergebnisse)}")
        canonical = result.model_dump_json()  # what the writer stores: bounded, validated
        if canonical != self.ergebnis:
            object.__setattr__(self, "ergebnis", canonical)
        return self


AnyRec = Annotated[
    Kopf | EntitaetRec | EintragRec | NachfolgerRec | BetrifftRec | FaktRec | AuftragRec,
    Field(discriminator="kind"),
]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(AnyRec)
_KIND_CLASS: dict[str, type[Rec]] = {
    "entitaet": EntitaetRec, "eintrag": EintragRec, "fakt": FaktRec, "auftrag": AuftragRec,
}

KINDS = ("export", "entitaet", "eintrag", "nachfolger", "betrifft", "fakt", "auftrag")


# -- results --------------------------------------------------------------------------


class ExportErgebnis(Frozen):
    """What `export` wrote."""

    datei: str
    user_id: str
    character_id: str | None
    zeilen: int = Field(description="Lines written (header included).")
    anzahl: Anzahl


class ImportErgebnis(Frozen):
    """What `import` wrote."""

    datei: str
    user_id: str
    character_id: str | None
    zeilen: int
    anzahl: Anzahl = Field(description="Records in the file.")
    entitaeten_vorhanden: int = Field(
        description="Entities already in the store (same user and id), kept as they were."
    )
    warnungen: list[str] = Field(
        default_factory=list, description="What was imported but is worth knowing."
    )


class PurgeErgebnis(Frozen):
    """What `purge` deleted."""

    user_id: str
    character_id: str | None
    fakten: int
    werte: int
    eintraege: int
    nachfolger: int
    auftraege: int
    entitaeten: int = Field(description="Entities deleted.")
    entitaeten_behalten: int = Field(
        description="Entities of the pair kept: another pair still has facts or entries on them."
    )
    nutzer: int = Field(description="1 when the user's lock node went (nothing of the user left).")


# -- the file as parsed ---------------------------------------------------------------


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
        for n in self.nachfolger:
            for end in (n.von, n.nach):
                if end not in entries:
                    raise bad(n, f"entry {end!r} is not in the file")
            if n.von == n.nach:
                raise bad(n, "an entry cannot succeed itself")
        for b in self.betrifft:
            if b.eintrag not in entries:
                raise bad(b, f"entry {b.eintrag!r} is not in the file")
            if b.entitaet not in entities:
                raise bad(b, f"entity {b.entitaet!r} is not in the file")
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


def _problem(exc: ValidationError, kind: str | None = None) -> str:
    parts = []
    for e in exc.errors()[:3]:
        loc = [str(p) for p in e["loc"]]
        if loc and loc[0] == kind:
            loc = loc[1:]
        msg = str(e["msg"]).removeprefix("Value error, ")
        parts.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
    return "; ".join(parts)


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
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{where}: not valid JSON ({exc.msg}, column {exc.colno})") from None
        except RecursionError:
            raise InvalidInput(f"{where}: nested too deeply to be a record") from None
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind not in KINDS:
            raise InvalidInput(
                f"{where}: a line is a JSON object with a kind, one of {', '.join(KINDS)}"
            )
        try:
            rec: Rec = _ADAPTER.validate_python(data)
        except ValidationError as exc:
            raise InvalidInput(f"{where}: {kind}: {_problem(exc, kind)}") from None
        if datei is None:
            if not isinstance(rec, Kopf):
                raise InvalidInput(
                    f'{where}: the first line must be the header {{"kind":"export","format":1,...}}'
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


# -- the database side ----------------------------------------------------------------


def _long(db: Database) -> Database:
    """The same driver with a server-side timeout long enough for one whole file."""
    if db.settings.query_timeout >= TIMEOUT:
        return db
    return Database(db.driver, db.settings.model_copy(update={"query_timeout": TIMEOUT}))


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
    cls = _KIND_CLASS[kind]
    fields = temporal_fields(cls)
    data: dict[str, Any] = {"kind": kind}
    ident = _prop(row, "id")
    for key, value_type, value in row["props"]:
        if key not in fields or key == "kind" or key in extra:
            raise KgError(f"{kind} {ident!r} has the property {key!r}, which export does not "
                          "know — update kg/transfer.py with the graph model")
        if fields[key] is not _GRAPH_TYPES.get(value_type) or (
            value_type in TEMPORAL and value_type not in _GRAPH_TYPES
        ):
            raise KgError(f"{kind} {ident!r}: property {key!r} is a {value_type}, not what "
                          "the graph model says — run `kg check`")
        data[key] = value
    try:
        return cls.model_validate(data | extra)
    except ValidationError as exc:
        raise KgError(f"{kind} {ident!r} cannot be exported ({_problem(exc)}) — "
                      "run `kg check`") from None


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
            datei.add(_record("entitaet", row))
        for row in await tx.run("export_timeline", **scope):
            eintrag = _record("eintrag", row)
            datei.add(eintrag)
            for nach in row["nachfolger"]:
                datei.add(NachfolgerRec(kind="nachfolger", von=eintrag.key(), nach=nach))
            for entitaet in row["betrifft"]:
                datei.add(BetrifftRec(kind="betrifft", eintrag=eintrag.key(), entitaet=entitaet))
        for row in await tx.run("export_facts", **scope):
            rel = canon.by_type.get(row["rel_type"])
            if rel is None:
                raise KgError(
                    f"fact {_prop(row, 'id')!r} has the relationship type "
                    f"{row['rel_type']!r}, which is not in the canon — set KG_KANON_DATEI"
                )
            datei.add(_record("fakt", row, beziehung=rel.name, subjekt=row["subjekt"],
                              objekt=row["objekt"], wert=row["wert"]))
        for row in await tx.run("export_orders", **scope):
            datei.add(_record("auftrag", row))
        return datei

    datei = await _long(db).write(work)
    for n, rec in enumerate(datei.records(), start=1):
        datei.line_of[(rec.kind, rec.key())] = n
    try:
        # What export writes, import must take: the same checks, before the file exists.
        datei.check(canon, "export")
    except InvalidInput as exc:
        message = f"the store is inconsistent, export refused — {exc}; run `kg check`"
        raise KgError(message) from None
    return datei


async def export_file(
    db: Database,
    canon: Canon,
    path: Path,
    user_id: str,
    character_id: str | None = None,
    progress: Progress = no_progress,
) -> ExportErgebnis:
    """Write the export to `path` (atomically: a temporary file, then renamed)."""
    datei = await read_export(db, canon, user_id, character_id)
    total = datei.zeilen
    path = Path(path)
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
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return ExportErgebnis(datei=str(path), user_id=user_id, character_id=character_id,
                          zeilen=total, anzahl=datei.anzahl())


def read_file(path: Path, canon: Canon) -> Datei:
    """Parse and check a whole file; InvalidInput names the first bad line."""
    try:
        with open(path, encoding="utf-8") as f:
            return parse_lines(f, canon, str(path))
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None


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

    async def work(tx: Tx) -> int:
        await tx.run("import_lock", user_id=user)
        row = await tx.one(
            "import_conflicts",
            user_id=user,
            entity_ids=[e.id for e in datei.entitaeten],
            fact_ids=sorted({f.id for f in datei.fakten}),
            eintrag_ids=[e.id for e in datei.eintraege],
            auftrag_ids=[a.id for a in datei.auftraege],
        )
        assert row is not None
        there = "is in the store already (imported before? purge the pair first)"
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
        done += len(kept)
        await put("entitaet", [e.to_graph() for e in datei.entitaeten if e.id not in kept],
                  lambda b: tx.one("import_entities", user_id=user, rows=b))
        await put("eintrag", [e.to_graph() for e in datei.eintraege],
                  lambda b: tx.one("import_entries", user_id=user, rows=b))
        await put("nachfolger", [{"von": n.von, "nach": n.nach} for n in datei.nachfolger],
                  lambda b: tx.one("import_nachfolger", user_id=user, rows=b))
        await put("betrifft",
                  [{"eintrag": b.eintrag, "entitaet": b.entitaet} for b in datei.betrifft],
                  lambda b: tx.one("import_betrifft", user_id=user, rows=b))
        fields = ("beziehung", "subjekt", "objekt", "wert")
        await put("fakt", [
            {"subjekt": f.subjekt, "objekt": f.objekt, "rel_type": rel_type[f.id],
             **f.to_graph(*fields)}
            for f in datei.fakten if f.objekt is not None
        ], lambda b: tx.one("import_ref_facts", user_id=user, rows=b))
        await put("fakt", [
            {"subjekt": f.subjekt, "wert": f.wert, "rel_type": rel_type[f.id],
             **f.to_graph(*fields)}
            for f in datei.fakten if f.wert is not None
        ], lambda b: tx.one("import_value_facts", user_id=user, rows=b))
        await put("auftrag", [a.to_graph() for a in datei.auftraege],
                  lambda b: tx.one("import_orders", user_id=user, rows=b))
        # The user's data with the file in it must pass `kg check --user` (its structural
        # items) before anything commits; a violation rolls the whole file back.
        report = await run_checks(db, canon, user, tx=tx)
        broken = [c for c in report.checks if c.item in IMPORT_CHECK_ITEMS and not c.ok]
        if broken:
            first = broken[0]
            raise InvalidInput(
                f"{source}: with this file the store would break {len(broken)} invariant(s) "
                f"of `kg check`: {first.name} ({first.title}; {first.count} found, e.g. "
                f"{', '.join(first.samples[:3]) or '-'})"
                + (f", and {', '.join(c.name for c in broken[1:])}" if len(broken) > 1 else "")
                + "; nothing was imported"
            )
        return len(row["vorhandene_entitaeten"])

    progress("import", 0, total)
    vorhanden = await _long(db).write(work)
    return ImportErgebnis(
        datei=source, user_id=user, character_id=datei.kopf.character_id,
        zeilen=datei.zeilen, anzahl=datei.anzahl(), entitaeten_vorhanden=vorhanden,
        warnungen=list(datei.warnungen),
    )


async def import_file(
    db: Database, canon: Canon, path: Path, progress: Progress = no_progress
) -> ImportErgebnis:
    """Validate the whole file, then write it in one transaction."""
    try:
        datei = read_file(Path(path), canon)
    except InvalidInput as exc:
        raise InvalidInput(f"{exc}; nothing was imported") from None
    datei.normalise_names(str(path))
    return await write_import(db, canon, datei, str(path), progress)


async def purge(db: Database, user_id: str, character_id: str | None = None) -> PurgeErgebnis:
    """Delete a pair's data (or a whole user's) in one transaction; report the counts."""

    async def work(tx: Tx) -> PurgeErgebnis:
        await tx.run("transfer_lock", user_id=user_id)
        scope = {"user_id": user_id, "character_id": character_id}
        facts = await tx.one("purge_facts", **scope)
        entries = await tx.one("purge_timeline", **scope)
        orders = await tx.one("purge_orders", **scope)
        assert facts is not None and entries is not None and orders is not None
        touched = None
        if character_id is not None:
            touched = sorted({*facts["entitaeten"], *entries["entitaeten"]} - {None})
        entities = await tx.one("purge_entities", user_id=user_id, entity_ids=touched)
        lock = await tx.one("purge_lock", user_id=user_id)
        assert entities is not None
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
            nutzer=lock["nutzer"] if lock else 0,
        )

    return await _long(db).write(work)
