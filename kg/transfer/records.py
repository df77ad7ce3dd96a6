"""The lines of an export file: one pydantic record class per kind, as the file holds it."""

from __future__ import annotations

import calendar
import json
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from kg.models import (
    AuftragErgebnis,
    EintragTyp,
    Frozen,
    Genauigkeit,
    Herkunft,
    Ident,
    Name,
    Titel,
    TripelErgebnis,
    Wert,
    clean_name,
    parse_result,
    result_mismatch,
)
from kg.transfer.codec import TAG, ZEIT, Tag, Zeit, temporal_fields

#: A type a triple may carry for its subject and a fact keeps (`subjekt_typ`).
SpecificTyp = Literal["person", "ort", "organisation", "tier", "objekt"]

#: Format 2 adds record counts and a checksum to the header; format 1 files (without
#: them) still import, with a warning.
FORMAT = 2
FORMATS = (1, 2)

#: The largest integer the graph stores (Neo4j's 64-bit signed); a larger one in a file
#: failed in the driver as "a bug in kg".
GRAPH_INT_MAX = 2**63 - 1

# The writer's own validators: the same lengths, no control characters, line separators
# or bidi controls in what an import writes.
Id = Ident


class Rec(BaseModel):
    """One line of the file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str

    #: Fields a line leaves out where they are null: ones a file of an older format has
    #: not, so its lines stay as they were (every other null is written as null).
    sparse: ClassVar[tuple[str, ...]] = ()

    def line(self) -> str:
        data = self.model_dump()
        for name in self.sparse:
            if data[name] is None:
                del data[name]
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

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

    sparse = ("anzahl", "sha256")  # a format 1 header has neither

    def key(self) -> str:
        return ""


def _stored_name(name: str) -> str:
    """An entity's name as a write stores it: without the characters that show as
    nothing (`kg.models.strip_format`)."""
    cleaned = clean_name(name)
    if not cleaned:
        raise ValueError("is empty once invisible characters are removed")
    return cleaned


class EntitaetRec(Rec):
    kind: Literal["entitaet"]
    id: Id
    user_id: Id
    name: Annotated[Name, AfterValidator(_stored_name)]
    name_norm: str = Field(description="Recomputed from the name on import, never trusted.")
    erstellt: Zeit | None = None
    namensvettern: list[Id] | None = Field(
        None, min_length=1,
        description="The ids of the user's other entities of its normalised name at the "
        "export (not stored: the import takes the entity for the store's of its name only "
        "where that one is not among them).",
    )

    sparse = ("namensvettern",)  # most entities have none, and no file from before it

    @model_validator(mode="after")
    def _not_its_own(self) -> EntitaetRec:
        if self.namensvettern is not None and self.id in self.namensvettern:
            raise ValueError(f"namensvettern names the entity itself ({self.id!r})")
        return self


class EintragRec(Rec):
    kind: Literal["eintrag"]
    id: Id
    user_id: Id
    character_id: Id
    typ: EintragTyp
    titel: Titel
    beginn: Tag
    ende: Tag | None = None
    genauigkeit: Genauigkeit
    aktiv: bool
    abgesagt: bool | None = None
    t_recorded: Zeit | None = None
    ersetzt_am: Zeit | None = None
    abgesagt_am: Zeit | None = None

    @model_validator(mode="after")
    def _month_precision(self) -> EintragRec:
        """As the writer stores an entry of month precision: from the 1st of its month,
        a span to its last month's last day (readers take the window from `beginn`)."""
        if self.genauigkeit == "monat":
            beginn = date.fromisoformat(self.beginn)
            if beginn.day != 1:
                raise ValueError(f"an entry of precision monat begins on the 1st of its "
                                 f"month, not on {self.beginn}")
            if self.ende is not None:
                ende = date.fromisoformat(self.ende)
                if ende.day != calendar.monthrange(ende.year, ende.month)[1]:
                    raise ValueError(f"a span of precision monat ends on its month's last "
                                     f"day, not on {self.ende}")
        return self


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
    auftrag_id: Id = Field(description="The order that wrote it (every fact has one).")
    t_valid: Zeit | None = None
    t_invalid: Zeit | None = None
    timeline_id: Id | None = None
    timeline_bis: Id | None = None
    abgeloest_durch: list[Id] | None = Field(
        None, min_length=1,
        description="The facts whose values follow it where it ends (superseded); absent "
        "where none is recorded, never empty.",
    )
    t_recorded: Zeit | None = None
    t_expired: Zeit | None = None
    version: int = Field(
        1, ge=1, le=GRAPH_INT_MAX, description="Version of the fact (its record in system time)."
    )
    aktiv: bool
    grund: Literal["abgeloest", "berichtigt", "abgesagt"] | None = None
    staerke_decay: float = Field(ge=0, le=1)
    last_touched: Zeit | None = None
    decay_am: Tag | None = None
    gesagt: bool | None = Field(
        None, description="A type fact a `typ` triple stated (not only implied)."
    )
    subjekt_typ: SpecificTyp | None = Field(
        None, description="The type its triple carried in its own `typ` field."
    )

    sparse = ("gesagt", "subjekt_typ")  # most facts have none, and no file from before them

    def key(self) -> str:
        """A fact has one record per version (zero-padded: versions sort in order)."""
        return f"{self.id}#{self.version:06d}"


    @field_validator("decay_am")
    @classmethod
    def _swept_by_now(cls, value: str | None) -> str | None:
        """A sweep computes a day that has come (UTC); a day after tomorrow no sweep can
        have written, and every edge would read as decayed from it."""
        if value is not None and date.fromisoformat(value) > datetime.now(UTC).date() + \
                timedelta(days=1):
            raise ValueError(f"{value} is a day no decay sweep has reached yet")
        return value

    @model_validator(mode="after")
    def _one_object(self) -> FaktRec:
        if (self.objekt is None) == (self.wert is None):
            raise ValueError("a fakt has exactly one of 'objekt' (entity id) or 'wert'")
        if self.gesagt is not None and self.beziehung != "typ":
            raise ValueError(f"gesagt marks a type fact a typ triple stated, not a fact of "
                             f"{self.beziehung}")
        return self


class AuftragRec(Rec):
    kind: Literal["auftrag"]
    id: Id
    user_id: Id
    character_id: Id
    empfangen: Zeit | None = None
    erfasst: Zeit | None = None
    status: Literal["ok", "teilweise", "abgelehnt"]
    ergebnis: str = Field(description="The stored result (JSON text): a replay answers it.")
    anzahl_tripel: int | None = Field(None, ge=0, le=GRAPH_INT_MAX)
    inhalt: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="Content hash that tells a replay apart."
    )

    def key(self) -> str:
        """An order's id is its pair's idempotency key: two characters of one user may
        each have a `turn-1`."""
        return f"{self.character_id}/{self.id}"

    @model_validator(mode="after")
    def _ergebnis(self) -> AuftragRec:
        """The result must be what the writer stores: a result of this very order."""
        result = parse_result(self.ergebnis)  # a ValueError says what is wrong
        mismatch = result_mismatch(result, self.id, self.user_id, self.character_id,
                                   self.status, self.anzahl_tripel)
        if mismatch:
            raise ValueError(mismatch)
        canonical = result.model_dump_json()  # what the writer stores: bounded, validated
        if canonical != self.ergebnis:
            object.__setattr__(self, "ergebnis", canonical)
        return self

    def renamed(self, same: Mapping[str, str]) -> AuftragRec:
        """This order with its result's entity ids taken through `same` (a file's entity
        the import found in the store under another id): a replay must name entities
        that are there."""
        if not same:
            return self
        result = AuftragErgebnis.model_validate_json(self.ergebnis)

        def one(r: TripelErgebnis) -> TripelErgebnis:
            return r.model_copy(update={
                "subjekt_id": same.get(r.subjekt_id or "", r.subjekt_id),
                "objekt_id": same.get(r.objekt_id or "", r.objekt_id),
                "neue_entitaeten": [same.get(e, e) for e in r.neue_entitaeten],
                "kandidaten": [k.model_copy(update={"id": same.get(k.id, k.id)})
                               for k in r.kandidaten],
            })

        moved = result.model_copy(update={"ergebnisse": [one(r) for r in result.ergebnisse]})
        return self.model_copy(update={"ergebnis": moved.model_dump_json()})


AnyRec = Annotated[
    Kopf | EntitaetRec | EintragRec | NachfolgerRec | BetrifftRec | FaktRec | AuftragRec,
    Field(discriminator="kind"),
]
ADAPTER: TypeAdapter[Any] = TypeAdapter(AnyRec)
KIND_CLASS: dict[str, type[Rec]] = {
    "entitaet": EntitaetRec, "eintrag": EintragRec, "fakt": FaktRec, "auftrag": AuftragRec,
}

KINDS = ("export", "entitaet", "eintrag", "nachfolger", "betrifft", "fakt", "auftrag")


# -- results --------------------------------------------------------------------------


def problem(exc: ValidationError, kind: str | None = None) -> str:
    """The first few problems of a validation error, each as `field: message`."""
    parts = []
    for e in exc.errors()[:3]:
        loc = [str(p) for p in e["loc"]]
        if loc and loc[0] == kind:
            loc = loc[1:]
        msg = str(e["msg"]).removeprefix("Value error, ")
        parts.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
    return "; ".join(parts)
