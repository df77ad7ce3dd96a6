"""An order before it is planned: the form of a triple, what the order's state query has
to read, and the status of its results.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Literal

from pydantic import ValidationError

from kg.canon import TYPEN, Canon, Relation
from kg.models import (
    MAX_MELDUNG,
    Auftrag,
    ById,
    EntityRef,
    Tripel,
    TripelErgebnis,
    clip,
    normalize_name,
    value_key,
)
from kg.plain import problems
from kg.plan.state import day_start
from kg.timeline import normalized


class Rejected(Exception):
    """A triple cannot be written; carries its result."""

    def __init__(self, ausgang: str, grund: str, meldung: str, **extra: Any) -> None:
        super().__init__(meldung)
        self.ausgang = ausgang
        self.grund = grund
        self.meldung = meldung
        self.extra = extra


class Unread(Exception):
    """The plan needs the types of entities its state did not read (the far end of a
    fact a take-back brings back: Kassel, when "Lena wohnt in Kassel" holds again): the
    writer reads the state again with them (`Refs.ids`) and plans anew."""

    def __init__(self, ids: set[str]) -> None:
        super().__init__(f"the types of {len(ids)} entities were not read")
        self.ids = ids


def reject_reason(error: ValidationError) -> tuple[str, str]:
    """A reason code and a plain message for a triple that fails validation. The
    location may be an unknown key of any size: only its start is kept."""
    first = problems(error)[0]
    where, kind = first.field, first.kind
    message = clip(f"{clip(first.where or 'tripel', 80)}: {first.message}", MAX_MELDUNG)
    if where == "herkunft":
        return "herkunft", "herkunft is required and must be one of mensch, nova, modell, recherche"
    if where == "typ":
        return "ungueltiger_typ", f"typ must be one of {', '.join(TYPEN)}"
    if "control characters" in first.message:
        return "steuerzeichen", message
    # A name, or the name of a new entity ({"neu": ...}); an id ({"id": ...}) is no name.
    name = first.where in ("subjekt", "objekt", "subjekt.neu", "objekt.neu")
    if name and kind == "string_too_long":
        return "name_zu_lang", message
    if name and kind == "string_too_short":
        return "name_leer", message
    if where == "wert" and kind == "string_too_long":
        return "wert_zu_lang", message
    return "ungueltig", message


#: Sigmas of one value whose forms are tried each way (2 ** 4 forms); more take the two
#: forms of all of them.
SIGMAS = 4


def sigma_forms(key: str) -> set[str]:
    """A value's lower case with each of its sigmas as σ and as ς: the forms Cypher's
    `toLower` may have given the stored value where Python's gives `key`."""
    at = [i for i, c in enumerate(key) if c in "σς"]
    if not at:
        return {key}
    if len(at) > SIGMAS:
        return {key, key.replace("ς", "σ"), key.replace("σ", "ς")}
    forms = set()
    for mask in range(2 ** len(at)):
        chars = list(key)
        for bit, i in enumerate(at):
            chars[i] = "ς" if mask >> bit & 1 else "σ"
        forms.add("".join(chars))
    return forms


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
            canon.unknown(tripel.beziehung),
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


#: The outcomes of a part of an order that was not written.
REFUSED = ("abgelehnt", "mehrdeutig")


def held_together(
    corrections: int, results: list[TripelErgebnis], replacing: dict[int, list[int]]
) -> dict[int, TripelErgebnis]:
    """What of an order must not be written because a correction or its replacement was
    refused, by position (`corrections`: how many of the order's items are corrections,
    `replacing`: each replacement's position with its corrections' positions, as the plan
    linked them): the group of the first refused part, or nothing.

    A correction and its replacements are written together or not at all: a refused
    replacement would leave the wrong fact retired with nothing in its place, a refused
    correction its replacement written as news at the store's clock. Corrections that
    share a replacement, and replacements that share a correction, stand together. A
    refused part keeps its outcome (an ambiguous name its candidates, rule 11); every
    other part of its group is refused for it (`zusammen_abgelehnt`). One group at a
    time, the first refused part's: what a later part was refused for may have come of
    what the held group would have written, so the order is planned again without the
    group first (`plan_order`)."""

    groups: list[set[int]] = []
    for index, replaced in sorted(replacing.items()):
        group = {index, *replaced}
        for other in [g for g in groups if g & group]:
            groups.remove(other)
            group |= other
        groups.append(group)
    refused = [(min(j for j in g if results[j].ausgang in REFUSED), g)
               for g in groups
               if any(results[j].ausgang in REFUSED for j in g)]
    if not refused:
        return {}
    _, group = min(refused, key=lambda found: found[0])
    return hold(corrections, results, group)


def hold(corrections: int, results: list[TripelErgebnis], group: set[int]
         ) -> dict[int, TripelErgebnis]:
    """The outcomes of a refused correction group (`held_together`): each refused part
    its own, every other part refused for the first of them."""
    first = min(j for j in group if results[j].ausgang in REFUSED)
    cause = results[first]
    name = (f"the correction berichtigungen[{first}]" if first < corrections
            else f"the correction's tripel[{first - corrections}]")
    why = clip(f"{name} is refused — {cause.meldung or cause.grund}", 300)
    return {j: results[j] if results[j].ausgang in REFUSED else
            TripelErgebnis(
                index=j, ausgang="abgelehnt", grund="zusammen_abgelehnt",
                meldung=f"not written: {why}; a correction and its replacement are written "
                "together, so send both again, in a new order, once that is mended",
                notiz=results[j].notiz, herkunft=results[j].herkunft)
            for j in sorted(group)}


def order_status(results: list[TripelErgebnis]) -> Literal["ok", "teilweise", "abgelehnt"]:
    done = {
        "geschrieben", "abgeloest", "nachgetragen", "unveraendert", "berichtigt", "abgesagt",
        "verschoben",
    }
    written = sum(r.ausgang in done for r in results)
    if written == len(results):
        return "ok"
    return "teilweise" if written else "abgelehnt"


def subject_claims(rel: Relation, tripel: Tripel, canon: Canon) -> dict[str, str]:
    """The specific types a triple gives its subject, each with where it comes from: its
    `typ` value, a known class of `ist_ein`, a relation that allows one subject type, the
    triple's own `typ` field (sonstiges is no specific type)."""
    claims: dict[str, str] = {}
    if rel.name == "typ" and tripel.wert:
        claims.setdefault(tripel.wert, f"typ {tripel.wert}")
    if rel.name == "ist_ein":
        klasse = canon.typ_of_class(tripel.wert or "")
        if klasse:
            claims.setdefault(klasse, f"a {tripel.wert} is a {klasse}")
    if rel.implied_subjekt_typ:
        claims.setdefault(
            rel.implied_subjekt_typ, f"{rel.name} needs a {rel.implied_subjekt_typ}"
        )
    if tripel.typ is not None:
        claims.setdefault(tripel.typ, f"the triple's typ {tripel.typ}")
    claims.pop("sonstiges", None)  # no specific type: never conflicts
    return claims


@dataclass
class Refs:
    """What an order's state query has to read."""

    names: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)
    #: The values of the order's value triples: of a relation that is not in
    #: `whole_types`, the state reads only the facts whose other end the order names (by
    #: name, id or value), the ones it may touch instead of writing again.
    werte: set[str] = field(default_factory=set)
    rel_types: set[str] = field(default_factory=lambda: {"TYP"})
    history_types: set[str] = field(default_factory=lambda: {"TYP"})
    #: Relations whose facts imply a type by their value (`ist_ein`: any class may
    #: contradict the one the order states).
    class_types: set[str] = field(default_factory=set)
    timeline_ids: set[str] = field(default_factory=set)
    #: Past values that ended before this, or before the store's clock if that is
    #: earlier, are not read (None: the clock alone bounds them).
    since: datetime | None = None
    #: Every past value is read (corrections, events of referenced chains).
    all_history: bool = False
    #: The ends of transitive triples: the state reads what they reach (cycle check).
    trans_names: set[str] = field(default_factory=set)
    trans_ids: set[str] = field(default_factory=set)
    #: The types the order may give an entity, by normalised name or id. The plan checks
    #: an entity's facts against a type only when the order gives it one that differs
    #: from its type in the pair (or it has none), so the state query reads the facts
    #: that imply a type (`typed`) only for such an entity.
    claims: dict[str, set[str]] = field(default_factory=dict)

    @property
    def whole_types(self) -> set[str]:
        """Relations of which the state reads every active fact: the einwertig ones and
        TYP (`history_types`: the plan ends what holds) and the `class_types`."""
        return self.history_types | self.class_types

    def incoming_types(self, symmetric: set[str]) -> set[str]:
        """The symmetric relations whose facts the state also reads at their object's end:
        those of which it reads every fact (an einwertig one: the partner a new partner
        ends is not named), and all of them with `all_history`. Of another symmetric
        relation it reads only the facts between ends the order names, and each of them
        is an outgoing fact of one named end: a hub's incoming edges are not walked for
        nothing."""
        wanted = self.rel_types if self.all_history else self.whole_types
        return self.rel_types & symmetric & wanted

    def far_types(self, symmetric_einwertig: set[str]) -> set[str]:
        """The symmetric einwertig relations whose facts the state also reads at the far
        end of each named entity's fact of them: with `all_history` (a correction, a
        cancel), a fact of one may hold again, and then holds up to the next value at
        either end, also at an end the order does not name (Tom–Lena, ended by Tom–Ben,
        holds again when Tom–Ben is taken back, up to Lena's next partner)."""
        return self.rel_types & symmetric_einwertig if self.all_history else set()

    def follow_types(self, symmetric_einwertig: set[str]) -> set[str]:
        """The symmetric einwertig relations of which the state also reads, at a named
        entity, the facts that followed a value it reads there (`abgeloest_durch`),
        though they ended before `since`. Whether a value squeezed to nothing at one end
        follows a new value depends on the values that squeezed it at that end
        (`History.squeezed_partners`). With `all_history` every value is read anyway."""
        return set() if self.all_history else self.rel_types & symmetric_einwertig

    def add(
        self, ref: EntityRef | None, transitive: bool = False, claims: Iterable[str] = ()
    ) -> None:
        if isinstance(ref, ById):
            key = ref.id
            self.ids.add(key)
            if transitive:
                self.trans_ids.add(key)
        elif isinstance(ref, str):
            key = normalize_name(ref)
            self.names.add(key)
            if transitive:
                self.trans_names.add(key)
        else:
            return
        self.claims.setdefault(key, set()).update(claims)


def refs_of(auftrag: Auftrag, canon: Canon) -> Refs:
    """The names, ids, relationship types and timeline ids an order touches, and from
    when on past values matter to it (`since`, `all_history`)."""
    refs = Refs()
    starts: list[datetime] = []
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
        rel = canon[tripel.beziehung]
        refs.rel_types.add(rel.rel_type)
        if rel.einwertig:
            refs.history_types.add(rel.rel_type)
        if rel.name == "ist_ein":
            refs.class_types.add(rel.rel_type)
        refs.add(tripel.subjekt, rel.transitiv, subject_claims(rel, tripel, canon))
        refs.add(tripel.objekt, rel.transitiv, [rel.objekt_typ] if rel.objekt_typ else [])
        if tripel.wert is not None:
            # Composed, as stored now, and decomposed, as a value stored before that
            # rule was likely written, the way macOS and iOS send it; each as written
            # and in lower case (`kg.models.value_key`). The state query finds a value
            # by either (`toLower`): Neo4j's Java lowers by an older Unicode than
            # Python, and leaves some letters (added in Unicode 14) as they are.
            # Java and Python also tell a final sigma apart otherwise where a letter
            # follows after an apostrophe ("ΑΣ’Α": ας’α, ασ’α): the lower case is asked
            # with each of its sigmas in either form too (`sigma_forms`).
            key = value_key(tripel.wert)
            refs.werte.update(
                form(text) for text in (*sigma_forms(key), tripel.wert)
                for form in (str, partial(unicodedata.normalize, "NFD")))
        if tripel.timeline_id:
            refs.timeline_ids.add(tripel.timeline_id)
        if tripel.ereignis is not None:
            starts.append(day_start(normalized(tripel.ereignis).beginn))
    # A value that ended before the order's earliest valid start can neither hold at it
    # nor follow it: the plan never looks at it, so a long history is not read for
    # nothing. That start is the earliest of these and the valid time of the rest: the
    # order's `zeitpunkt`, else the store's clock (known only to the state query, which
    # bounds by it). A correction (what it takes back may be old) and an event of
    # unknown day (a referenced chain) read it all.
    if auftrag.berichtigungen or refs.timeline_ids:
        refs.all_history = True
    else:
        if auftrag.zeitpunkt is not None:
            starts.append(auftrag.zeitpunkt)
        refs.since = min(starts, default=None)
    return refs
