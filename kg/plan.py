"""Planning a write order: pure Python, no database.

The writer reads the state an order touches in one query (entities by name and id,
their type in the pair, the pair's active facts of the relations involved, the
timeline chains referenced), then this module decides triple by triple — exactly as if
the triples were written one after another — and returns the results and one set of
operations that the writer applies in a single query.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import ValidationError

from kg.canon import TYPEN, Canon, Relation
from kg.models import (
    MAX_MELDUNG,
    Auftrag,
    Berichtigung,
    ById,
    EntityRef,
    Kandidat,
    NeuerEintrag,
    New,
    Tripel,
    TripelErgebnis,
    clip,
    normalize_name,
)
from kg.timeline import entry_props


def new_id() -> str:
    return uuid.uuid4().hex


class Rejected(Exception):
    """A triple cannot be written; carries its result."""

    def __init__(self, ausgang: str, grund: str, meldung: str, **extra: Any) -> None:
        super().__init__(meldung)
        self.ausgang = ausgang
        self.grund = grund
        self.meldung = meldung
        self.extra = extra


def reject_reason(error: ValidationError) -> tuple[str, str]:
    """A reason code and message for a triple that fails validation."""
    first = error.errors()[0]
    where = str(first["loc"][0]) if first["loc"] else ""
    kind = first["type"]
    # The location may be an unknown key of any size: only its start is kept.
    loc = ".".join(clip(str(p), 40) for p in first["loc"][:4]) or "tripel"
    message = clip(f"{loc}: {first['msg']}", MAX_MELDUNG)
    if where == "herkunft":
        return "herkunft", "herkunft is required and must be one of mensch, nova, modell, recherche"
    if "control characters" in str(first["msg"]):
        return "steuerzeichen", message
    if where in ("subjekt", "objekt") and kind == "string_too_long":
        return "name_zu_lang", message
    if where in ("subjekt", "objekt") and kind == "string_too_short":
        return "name_leer", message
    if where == "wert" and kind == "string_too_long":
        return "wert_zu_lang", message
    return "ungueltig", message


def precheck(raw: Tripel | dict[str, Any], canon: Canon) -> Tripel:
    """Validate one triple against its model and the canon; raises Rejected."""
    if isinstance(raw, Tripel):
        tripel = raw
    else:
        try:
            tripel = Tripel.model_validate(raw)
        except ValidationError as exc:
            grund, meldung = reject_reason(exc)
            raise Rejected("abgelehnt", grund, meldung) from None
    if tripel.beziehung not in canon:
        raise Rejected(
            "abgelehnt",
            "unbekannte_beziehung",
            f"unknown relation {tripel.beziehung!r}; known: {', '.join(sorted(canon.relations))}",
        )
    rel = canon[tripel.beziehung]
    if rel.objekt == "entitaet" and tripel.objekt is None:
        raise Rejected("abgelehnt", "form", f"{rel.name} needs an entity as 'objekt', not a 'wert'")
    if rel.objekt == "wert" and tripel.wert is None:
        raise Rejected("abgelehnt", "form", f"{rel.name} needs a 'wert', not an entity as 'objekt'")
    if rel.name == "typ" and tripel.wert not in TYPEN:
        raise Rejected(
            "abgelehnt",
            "ungueltiger_typ",
            f"typ must be one of {', '.join(TYPEN)}, not {tripel.wert!r}",
        )
    return tripel


def order_status(results: list[TripelErgebnis]) -> Literal["ok", "teilweise", "abgelehnt"]:
    done = {"geschrieben", "abgeloest", "unveraendert", "berichtigt"}
    written = sum(r.ausgang in done for r in results)
    if written == len(results):
        return "ok"
    return "teilweise" if written else "abgelehnt"


# -- the state an order reads ------------------------------------------------------


@dataclass
class EntityState:
    id: str
    name: str
    typ: str | None  # None: no type fact in the pair (counts as sonstiges)
    merkmale: list[str] = field(default_factory=list)


@dataclass
class FactState:
    id: str
    rel: str
    start_id: str
    end_id: str | None
    wert: str | None
    aktiv: bool = True
    grund: str | None = None
    new: dict[str, Any] | None = None  # the planned creation, for facts of this order


@dataclass
class ChainState:
    first_id: str
    abgesagt: bool


@dataclass
class State:
    """What the database holds for the entities, relations and entries of one order."""

    entities: dict[str, EntityState] = field(default_factory=dict)
    by_name: dict[str, list[str]] = field(default_factory=dict)
    facts: dict[str, FactState] = field(default_factory=dict)
    chains: dict[str, ChainState] = field(default_factory=dict)


@dataclass
class Operations:
    """Everything an order writes, applied by one query."""

    entities: list[dict[str, Any]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    retire: list[dict[str, Any]] = field(default_factory=list)
    touch: list[dict[str, Any]] = field(default_factory=list)
    facts: list[FactState] = field(default_factory=list)

    def ref_facts(self) -> list[dict[str, Any]]:
        return [
            {"rel": f.rel, "start_id": f.start_id, "end_id": f.end_id, "props": f.new}
            for f in self.facts
            if f.end_id is not None
        ]

    def value_facts(self) -> list[dict[str, Any]]:
        return [
            {"rel": f.rel, "start_id": f.start_id, "wert": f.wert, "props": f.new}
            for f in self.facts
            if f.end_id is None
        ]


@dataclass
class Refs:
    """What an order's state query has to read."""

    names: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)
    rel_types: set[str] = field(default_factory=lambda: {"TYP"})
    history_types: set[str] = field(default_factory=set)
    timeline_ids: set[str] = field(default_factory=set)

    def add(self, ref: EntityRef | None) -> None:
        if isinstance(ref, ById):
            self.ids.add(ref.id)
        elif isinstance(ref, str):
            self.names.add(normalize_name(ref))


def refs_of(auftrag: Auftrag, canon: Canon) -> Refs:
    """The names, ids, relationship types and timeline ids an order touches."""
    refs = Refs()
    for item in auftrag.berichtigungen:
        if item.beziehung in canon:
            refs.rel_types.add(canon[item.beziehung].rel_type)
            refs.history_types.add(canon[item.beziehung].rel_type)
        refs.add(item.subjekt)
        refs.add(item.objekt)
    for raw in auftrag.tripel:
        try:
            tripel = precheck(raw, canon)
        except Rejected:
            continue
        refs.rel_types.add(canon[tripel.beziehung].rel_type)
        refs.add(tripel.subjekt)
        refs.add(tripel.objekt)
        if tripel.timeline_id:
            refs.timeline_ids.add(tripel.timeline_id)
    return refs


# -- the planner -----------------------------------------------------------------


@dataclass
class Resolved:
    id: str | None
    name: str
    typ: str | None


class Planner:
    """Decides each triple of an order against the state, as if written one by one."""

    def __init__(self, canon: Canon, auftrag: Auftrag, state: State) -> None:
        self.canon = canon
        self.auftrag = auftrag
        self.state = state
        self.ops = Operations()
        self._neue: list[str] = []
        self._typ_fakten: list[str] = []

    @property
    def now(self) -> datetime:
        return self.auftrag.zeitpunkt

    def plan(self) -> list[TripelErgebnis]:
        """Corrections first (their replacements follow as triples), then the triples."""
        results = []
        items: list[Any] = [*self.auftrag.berichtigungen, *self.auftrag.tripel]
        for index, raw in enumerate(items):
            self._neue, self._typ_fakten = [], []
            try:
                if isinstance(raw, Berichtigung):
                    results.append(self.correction(index, raw))
                else:
                    results.append(self.triple(index, precheck(raw, self.canon)))
            except Rejected as rejected:
                results.append(
                    TripelErgebnis(
                        index=index,
                        ausgang=rejected.ausgang,
                        grund=rejected.grund,
                        meldung=rejected.meldung,
                        **rejected.extra,
                    )
                )
        return results

    # -- entities ---------------------------------------------------------------

    def resolve(self, ref: EntityRef, role: str) -> Resolved:
        if isinstance(ref, ById):
            entity = self.state.entities.get(ref.id)
            if entity is None:
                # A foreign id reads exactly like an unknown one.
                raise Rejected(
                    "abgelehnt", "unbekannte_id", f"{role}: no entity with id {ref.id!r}"
                )
            return Resolved(entity.id, entity.name, entity.typ)
        if isinstance(ref, New):
            return Resolved(None, ref.neu, None)
        ids = self.state.by_name.get(normalize_name(ref), [])
        if len(ids) > 1:
            raise Rejected(
                "mehrdeutig",
                "mehrdeutig",
                f"{role}: {len(ids)} entities are named {ref!r}; retry with {{'id': ...}}",
                kandidaten=[self._kandidat(self.state.entities[i]) for i in ids],
            )
        if ids:
            entity = self.state.entities[ids[0]]
            return Resolved(entity.id, entity.name, entity.typ)
        return Resolved(None, ref, None)

    def _kandidat(self, entity: EntityState) -> Kandidat:
        return Kandidat(
            id=entity.id, name=entity.name, typ=entity.typ or "sonstiges", merkmale=entity.merkmale
        )

    def create(self, entity: Resolved) -> str:
        if entity.id is None:
            entity.id = new_id()
            self.ops.entities.append(
                {
                    "id": entity.id,
                    "name": entity.name,
                    "name_norm": normalize_name(entity.name),
                    "erstellt": self.now,
                }
            )
            self.state.entities[entity.id] = EntityState(entity.id, entity.name, None)
            self.state.by_name.setdefault(normalize_name(entity.name), []).append(entity.id)
            self._neue.append(entity.id)
        return entity.id

    # -- facts ------------------------------------------------------------------

    def active(self, entity_id: str, rel_type: str, both: bool) -> list[FactState]:
        return [
            f
            for f in self.state.facts.values()
            if f.aktiv
            and f.rel == rel_type
            and (f.start_id == entity_id or (both and f.end_id == entity_id))
        ]

    def same_fact(
        self, subjekt_id: str, rel: Relation, objekt_id: str | None, wert: str | None
    ) -> FactState | None:
        """The active fact that already says this (symmetric relations from either end)."""
        for fact in self.active(subjekt_id, rel.rel_type, rel.symmetrisch):
            if wert is not None:
                if fact.wert == wert:
                    return fact
            elif rel.symmetrisch:
                if {fact.start_id, fact.end_id} == {subjekt_id, objekt_id}:
                    return fact
            elif fact.end_id == objekt_id:
                return fact
        return None

    def retire(self, fact: FactState, grund: str, timeline_bis: str | None = None) -> None:
        """Supersede (abgeloest: valid until now) or correct (berichtigt: never true)."""
        fact.aktiv = False
        fact.grund = grund
        change = {
            "grund": grund,
            "t_invalid": self.now if grund == "abgeloest" else None,
            "t_expired": self.now,
            "timeline_bis": timeline_bis,
        }
        if fact.new is not None:  # written by this very order: write it retired
            fact.new.update(aktiv=False, **change)
            if change["t_invalid"] is None:
                fact.new["t_invalid"] = fact.new["t_valid"]
        else:
            self.ops.retire.append({"id": fact.id, "start_id": fact.start_id, **change})

    def assert_fact(
        self,
        subjekt_id: str,
        rel: Relation,
        herkunft: str,
        objekt_id: str | None = None,
        wert: str | None = None,
        timeline_id: str | None = None,
    ) -> tuple[str, str, list[str]]:
        """Write, supersede or touch one fact; (ausgang, fact id, superseded ids)."""
        existing = self.active(subjekt_id, rel.rel_type, rel.symmetrisch)
        same = self.same_fact(subjekt_id, rel, objekt_id, wert)
        if same is not None:
            if same.new is None:
                self.ops.touch.append(
                    {"id": same.id, "start_id": same.start_id, "zeitpunkt": self.now}
                )
            return "unveraendert", same.id, []
        retire: dict[str, FactState] = {}
        if rel.einwertig:
            retire = {f.id: f for f in existing}
            if rel.symmetrisch and objekt_id is not None:
                # A partner is einwertig from both ends: the object's old partner goes too.
                retire.update({f.id: f for f in self.active(objekt_id, rel.rel_type, True)})
        for fact in retire.values():
            self.retire(fact, "abgeloest", timeline_id)
        fact = FactState(
            id=new_id(),
            rel=rel.rel_type,
            start_id=subjekt_id,
            end_id=objekt_id,
            wert=wert,
        )
        fact.new = {
            "id": fact.id,
            "user_id": self.auftrag.user_id,
            "character_id": self.auftrag.character_id,
            "herkunft": herkunft,
            "auftrag_id": self.auftrag.auftrag_id,
            "t_valid": self.now,
            "t_recorded": self.now,
            "aktiv": True,
            "staerke_decay": 1.0,
            "last_touched": self.now,
            "timeline_id": timeline_id,
        }
        self.state.facts[fact.id] = fact
        self.ops.facts.append(fact)
        ids = sorted(retire)
        return ("abgeloest" if ids else "geschrieben"), fact.id, ids

    def set_type(self, entity: Resolved, typ: str, herkunft: str) -> None:
        """Write the type fact an entity gets from a relation or a known class."""
        if entity.typ == typ or entity.id is None:
            return
        _, fakt_id, _ = self.assert_fact(entity.id, self.canon["typ"], herkunft, wert=typ)
        entity.typ = typ
        self.state.entities[entity.id].typ = typ
        self._typ_fakten.append(fakt_id)

    # -- one triple -------------------------------------------------------------

    def triple(self, index: int, tripel: Tripel) -> TripelErgebnis:
        rel = self.canon[tripel.beziehung]
        subj = self.resolve(tripel.subjekt, "subjekt")
        obj = self.resolve(tripel.objekt, "objekt") if tripel.objekt is not None else None
        if obj is not None and obj.id is not None and obj.id == subj.id:
            raise Rejected(
                "abgelehnt", "selbstbezug", f"{rel.name}: subject and object are the same entity"
            )
        if rel.subjekt_typen and subj.typ and subj.typ not in rel.subjekt_typen:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{subj.name} is a {subj.typ}; {rel.name} allows {', '.join(rel.subjekt_typen)}",
            )
        if obj is not None and rel.objekt_typ and obj.typ and obj.typ != rel.objekt_typ:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{obj.name} is a {obj.typ}; the object of {rel.name} is a {rel.objekt_typ}",
            )
        klassen_typ = self.canon.typ_of_class(tripel.wert or "") if rel.name == "ist_ein" else None
        if klassen_typ and subj.typ and subj.typ != klassen_typ:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{subj.name} is a {subj.typ}; a {tripel.wert} is a {klassen_typ}",
            )
        timeline_id = None
        if tripel.timeline_id is not None:
            chain = self.state.chains.get(tripel.timeline_id)
            if chain is None:
                raise Rejected(
                    "abgelehnt", "unbekannter_eintrag", f"no timeline entry {tripel.timeline_id!r}"
                )
            if chain.abgesagt:
                raise Rejected(
                    "abgelehnt",
                    "eintrag_abgesagt",
                    f"timeline entry {tripel.timeline_id!r} is cancelled",
                )
            timeline_id = chain.first_id

        subjekt_id = self.create(subj)
        objekt_id = self.create(obj) if obj is not None else None
        # An event brought along with a fact that already holds is not created: nothing
        # would be valid from it (the fact keeps its own validity).
        if tripel.ereignis is not None and not self.same_fact(
            subjekt_id, rel, objekt_id, tripel.wert
        ):
            timeline_id = self.add_entry(tripel.ereignis, subjekt_id)
        ausgang, fakt_id, abgeloest = self.assert_fact(
            subjekt_id, rel, tripel.herkunft, objekt_id, tripel.wert, timeline_id
        )
        # Types become known from the relation (rule 4); none is written in advance.
        if obj is not None and rel.objekt_typ:
            self.set_type(obj, rel.objekt_typ, tripel.herkunft)
            if rel.symmetrisch:
                self.set_type(subj, rel.objekt_typ, tripel.herkunft)
        if klassen_typ:
            self.set_type(subj, klassen_typ, tripel.herkunft)
        if rel.name == "typ":
            self.state.entities[subjekt_id].typ = tripel.wert
        return TripelErgebnis(
            index=index,
            ausgang=ausgang,
            fakt_id=fakt_id,
            abgeloest=abgeloest,
            subjekt_id=subjekt_id,
            objekt_id=objekt_id,
            timeline_id=timeline_id,
            neue_entitaeten=list(self._neue),
            typ_fakten=list(self._typ_fakten),
        )

    def correction(self, index: int, item: Berichtigung) -> TripelErgebnis:
        if item.beziehung not in self.canon:
            raise Rejected(
                "abgelehnt", "unbekannte_beziehung", f"unknown relation {item.beziehung!r}"
            )
        rel = self.canon[item.beziehung]
        subj = self.resolve(item.subjekt, "subjekt")
        obj = self.resolve(item.objekt, "objekt") if item.objekt is not None else None
        target = f"{subj.name} {rel.name} {obj.name if obj else repr(item.wert)}"
        if subj.id is None or (obj is not None and obj.id is None):
            raise Rejected("abgelehnt", "nicht_gefunden", f"no fact {target} in this pair")

        def matches(f: FactState) -> bool:
            if f.rel != rel.rel_type or f.grund == "berichtigt":
                return False
            if obj is None:
                return f.start_id == subj.id and f.wert == item.wert
            ends = (f.start_id, f.end_id)
            return ends == (subj.id, obj.id) or (rel.symmetrisch and ends == (obj.id, subj.id))

        wrong = sorted((f for f in self.state.facts.values() if matches(f)), key=lambda f: f.id)
        if not wrong:
            raise Rejected("abgelehnt", "nicht_gefunden", f"no fact {target} in this pair")
        for fact in wrong:
            self.retire(fact, "berichtigt")
        return TripelErgebnis(
            index=index,
            ausgang="berichtigt",
            abgeloest=[f.id for f in wrong],
            subjekt_id=subj.id,
            objekt_id=obj.id if obj else None,
        )

    def add_entry(self, entry: NeuerEintrag, betrifft_id: str) -> str:
        props = entry_props(entry, self.now)
        props["character_id"] = self.auftrag.character_id
        self.ops.entries.append({"props": props, "betrifft_id": betrifft_id})
        self.state.chains[props["id"]] = ChainState(props["id"], False)
        return str(props["id"])
