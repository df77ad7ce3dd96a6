"""The canon of relations: data (`kanon.toml`), validated once, never code.

The canon decides a relation's relationship type, its cardinality (einwertig or
mehrwertig), its object form (entity or value), the object's type and the subject
types it allows. Relationship types in Cypher come only from here.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kg.errors import ConfigError, UnknownRelation
from kg.plain import describe

Typ = Literal["person", "ort", "organisation", "tier", "objekt", "sonstiges"]
TYPEN: tuple[Typ, ...] = ("person", "ort", "organisation", "tier", "objekt", "sonstiges")


class Relation(BaseModel):
    """One relation of the canon."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,40}$", description="snake_case name.")
    vorwaerts: str = Field(min_length=1, description="Display text from the subject.")
    rueckwaerts: str = Field(min_length=1, description="Display text from the object.")
    einwertig: bool = Field(description="True: a new value supersedes the old one.")
    objekt: Literal["entitaet", "wert"] = Field(description="Object form.")
    objekt_typ: Typ | None = Field(None, description="Type of an entity object.")
    subjekt_typen: tuple[Typ, ...] = Field((), description="Allowed subject types; () = any.")
    transitiv: bool = Field(False, description="Closed at read time to any depth.")
    symmetrisch: bool = Field(False, description="Reads the same from both ends.")

    @property
    def implied_subjekt_typ(self) -> Typ | None:
        """The type a subject gets from this relation: the one type it allows (beruf →
        person), as `objekt_typ` is the object's."""
        return self.subjekt_typen[0] if len(self.subjekt_typen) == 1 else None

    @property
    def rel_type(self) -> str:
        """The relationship type in the graph (UPPER_SNAKE_CASE)."""
        return self.name.upper()

    @model_validator(mode="after")
    def _consistent(self) -> Relation:
        if self.objekt == "wert" and (self.objekt_typ or self.transitiv or self.symmetrisch):
            raise ValueError("a value relation has no objekt_typ and is not transitive/symmetric")
        if self.transitiv and not self.objekt_typ:
            raise ValueError("a transitive relation needs an objekt_typ")
        return self


class CanonFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    typen: dict[str, object] = Field(default_factory=dict)
    relation: list[Relation] = Field(default_factory=list)


#: Relationship types the graph holds besides the facts: a relation stored as one of them
#: would be taken for the timeline's edges, and they for its facts (a fact `betrifft`
#: made every event's link an unknown relation to `kg check`, and a user's export that
#: its import refused).
GRAPH_OWN_TYPES = {
    "BETRIFFT": "a timeline entry's link to the entity it is about",
    "NACHFOLGER": "a timeline entry's link to the entry that replaced it",
}


class Canon:
    """The relations by name, plus the class → type mapping of `ist_ein`."""

    def __init__(self, relations: list[Relation], klassen: dict[str, Typ]) -> None:
        self.relations: dict[str, Relation] = {}
        for rel in relations:
            if rel.name in self.relations:
                raise ConfigError(f"relation {rel.name!r} is defined twice in the canon")
            self.relations[rel.name] = rel
        for rel in relations:
            if rel.rel_type in GRAPH_OWN_TYPES:
                raise ConfigError(
                    f"relation {rel.name!r} would be stored as {rel.rel_type}, the graph's "
                    f"own relationship type ({GRAPH_OWN_TYPES[rel.rel_type]}): name it "
                    "otherwise")
        for required in ("typ", "ist_ein"):
            if required not in self.relations:
                raise ConfigError(f"the canon must define the relation {required!r}")
        self.klassen = klassen
        self.by_type = {r.rel_type: r for r in self.relations.values()}

    def __getitem__(self, name: str) -> Relation:
        try:
            return self.relations[name]
        except KeyError:
            raise UnknownRelation(self.unknown(name)) from None

    def unknown(self, name: object) -> str:
        """What to tell a caller who named a relation the canon does not have: the
        relation meant when only case, spaces or hyphens differ (a relation's name is
        exact: `Wohnt_In` is not `wohnt_in`), and the canon's relations."""
        from kg.models import MAX_MELDUNG, clip, shown, strip_format  # kg.models imports this

        meant = None
        if isinstance(name, str):
            key = re.sub(r"[\s-]+", "_", strip_format(name).strip()).casefold()
            meant = next((r for r in self.relations if r.casefold() == key), None)
        hint = f" — did you mean {meant!r}?" if meant else ""
        said = clip(shown(name), 80) if isinstance(name, str) else repr(name)
        return clip(f"unknown relation {said}{hint} (the canon has: "
                    f"{', '.join(sorted(self.relations))})", MAX_MELDUNG)

    def __contains__(self, name: object) -> bool:
        return name in self.relations

    def link_key(self, beziehung: object) -> str:
        """A relation as a correction and its replacement are linked by: its type, for
        its name in another case or with spaces or hyphens for underscores too (as a
        triple refused by its form may have it, and as `unknown` reads it); its name so
        folded when the canon does not know it."""
        from kg.models import strip_format  # kg.models imports this

        key = re.sub(r"[\s-]+", "_", strip_format(str(beziehung)).strip()).casefold()
        meant = next((r for r in self.relations if r.casefold() == key), None)
        return self.relations[meant].rel_type if meant else f"?{key}"

    def typ_of_class(self, klasse: str) -> Typ | None:
        """The type a free class of `ist_ein` maps to (Hund → tier), if it is known."""
        return self.klassen.get(klasse.strip().casefold())

    @property
    def rel_types(self) -> list[str]:
        return sorted(self.by_type)

    @property
    def value_types(self) -> list[str]:
        return sorted(r.rel_type for r in self.relations.values() if r.objekt == "wert")

    @property
    def einwertig_types(self) -> list[str]:
        return sorted(r.rel_type for r in self.relations.values() if r.einwertig)

    @property
    def transitive_types(self) -> list[str]:
        return sorted(r.rel_type for r in self.relations.values() if r.transitiv)


def _read(text: str, source: str) -> CanonFile:
    try:
        return CanonFile.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        detail = describe(exc) if isinstance(exc, ValidationError) else str(exc)
        raise ConfigError(f"canon file {source} is invalid: {detail}") from None


@cache
def load_canon(extra: Path | None = None) -> Canon:
    """The built-in canon, extended by a user file when one is set."""
    base = _read(resources.files("kg").joinpath("kanon.toml").read_text("utf-8"), "kanon.toml")
    relations = list(base.relation)
    klassen: dict[str, Typ] = {}
    raw = base.typen.get("klassen", {})
    if not isinstance(raw, dict):
        raise ConfigError("kanon.toml: [typen.klassen] must be a table")
    for typ, names in raw.items():
        if typ not in TYPEN:
            raise ConfigError(f"kanon.toml: class table {typ!r} is not one of {TYPEN}")
        for name in names:
            klassen[str(name).casefold()] = typ
    if extra is not None:
        try:
            text = extra.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"canon file {extra} cannot be read: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"canon file {extra} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
            ) from None
        user = _read(text, str(extra))
        if user.typen:
            raise ConfigError(
                f"canon file {extra} has a [typen] table: a canon file adds relations only "
                "([[relation]] tables); the types and their classes are the built-in "
                "canon's. Remove the table"
            )
        known = {r.name for r in relations}
        clash = [r.name for r in user.relation if r.name in known]
        if clash:
            raise ConfigError(f"canon file {extra} redefines built-in relations: {clash}")
        relations += user.relation
    return Canon(relations, klassen)
