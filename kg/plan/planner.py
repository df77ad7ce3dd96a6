"""Planning a write order, triple by triple: entities resolved, types checked both ways,
cycles refused, facts asserted and corrected through the rules of time (`history`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kg.canon import Canon, Relation
from kg.models import (
    Auftrag,
    Berichtigung,
    ById,
    EntityRef,
    Kandidat,
    NeuerEintrag,
    New,
    Tripel,
    TripelErgebnis,
    clean_name,
    clip,
    normalize_name,
    shown,
    value_key,
)
from kg.plan.history import History
from kg.plan.orders import (
    REFUSED,
    Rejected,
    Unread,
    held_together,
    hold,
    precheck,
    subject_claims,
)
from kg.plan.state import (
    ChainState,
    EntityState,
    FactState,
    Place,
    Span,
    State,
    day_start,
    new_id,
    precision_end,
)
from kg.timeline import entry_props, normalized


@dataclass
class Resolved:
    id: str | None
    name: str
    typ: str | None
    neu: bool = False  # asked for with {"neu": ...}: a new entity even if the name exists


def same_entity(a: Resolved, b: Resolved) -> bool:
    """Whether two references of one triple are one entity. A name the user has no
    entity of yet names the one entity the order creates for it, whichever role it is
    in; only two {"neu": ...} are two."""
    if a.id is not None or b.id is not None:
        return a.id == b.id
    if a.neu and b.neu:
        return False
    return normalize_name(a.name) == normalize_name(b.name)



class Planner(History):
    """Decides each triple of an order against the state, as if written one by one."""

    def __init__(self, canon: Canon, auftrag: Auftrag, state: State, jetzt: datetime) -> None:
        super().__init__(canon, auftrag, state, jetzt)
        self._neue: list[str] = []
        self._typ_fakten: list[str] = []
        #: Where the values this order's corrections took back began, by subject and
        #: relation: the place a replacement in the same order takes (`triple`).
        self._taken_places: dict[tuple[str, str], Place] = {}
        #: This order's corrections by position, found or not: the keys their subject
        #: has (its id, and its name as the store reads names, as written and as
        #: resolved), the entity it resolved to (None: none, or not yet) and the
        #: relation; and for each triple that replaces one, their positions (the writer
        #: writes a correction and its replacements together or not at all).
        self._corrections: dict[int, tuple[set[tuple[str, str]], str | None, str]] = {}
        self.replacing: dict[int, list[int]] = {}
        #: The entries this order's events created, by subject and event.
        self._entries: dict[tuple[Any, ...], str] = {}
        #: The ids of the entities and facts this order creates, by the item that creates
        #: them and their role in it (a fact: what it says): kept across the plans of one
        #: order (`plan_order`), so that one plan's outcome names what another writes.
        self.made_ids: dict[tuple[int, str], str] = {}
        #: Entities the state was asked for: one not found there has no type to check
        #: (`type_clash` raises `Unread` only for the others).
        self.asked: set[str] = set()
        self._index = 0
        # An entity's type for the checks is the one that holds at the order's valid
        # time (`type_now`; the state query reads it at the store's clock, the order's
        # time may be earlier). Types that begin later are checked apart (`later_type`).
        for entity_id in {f.start_id for f in state.facts.values() if f.rel == "TYP"}:
            self.set_type_now(entity_id)

    def plan(self, held: Mapping[int, TripelErgebnis] | None = None) -> list[TripelErgebnis]:
        """Corrections first (their replacements follow as triples), then the triples.
        The items `held` (by position) are not planned: they take the outcome given."""
        results = []
        items: list[Any] = [*self.auftrag.berichtigungen, *self.auftrag.tripel]
        for index, raw in enumerate(items):
            if held and index in held:
                results.append(held[index])
                continue
            self._neue, self._typ_fakten = [], []
            self._index = index
            try:
                if isinstance(raw, Berichtigung):
                    results.append(self.correction(index, raw))
                else:
                    results.append(self.triple(index, precheck(raw, self.canon)))
            except Rejected as rejected:
                if not isinstance(raw, Berichtigung):
                    # A triple refused by its form never reached `triple`: linked to a
                    # correction by its subject and relation as written.
                    self._note_raw_replacement(index, raw)
                results.append(
                    TripelErgebnis(
                        index=index,
                        ausgang=rejected.ausgang,
                        grund=rejected.grund,
                        meldung=rejected.meldung,
                        **rejected.extra,
                    )
                )
            if isinstance(raw, Berichtigung):
                # Who says the fact is wrong, and why: kept with the outcome (the audit's
                # result, which a replay returns and an export carries), whatever it is.
                results[-1] = results[-1].model_copy(
                    update={"notiz": raw.notiz, "herkunft": raw.herkunft}
                )
        return [self._said_if_nowhere(r) for r in results]

    def _said_if_nowhere(self, result: TripelErgebnis) -> TripelErgebnis:
        """A value this order wrote that holds nowhere once the order is done (a later
        triple of the order gave the relation another value for the same instant, or a
        value it precedes begins where it begins): written as told, but no read shows it,
        so its result says so and names what begins there."""
        fact = self.state.facts.get(result.fakt_id) if result.fakt_id else None
        if (result.meldung is not None or fact is None or fact.new is None
                or fact.version != 1 or not fact.valid or not fact.empty
                or result.ausgang not in ("geschrieben", "abgeloest", "nachgetragen")):
            return result
        there = [
            self.fact_text(f) for fid in fact.new.get("abgeloest_durch") or ()
            if (f := self.state.facts.get(fid)) is not None
        ]
        if fact.rel == "TYP" and fact.wert == "sonstiges" and there:
            return result.model_copy(update={"meldung": (
                f"{self.fact_text(fact)} holds nowhere: {', '.join(there)} holds or begins "
                "by then, and sonstiges never replaces a type (correct that type first, if "
                "it is wrong)"
            )})
        return result.model_copy(update={"meldung": (
            f"{self.fact_text(fact)} holds nowhere: "
            f"{', '.join(there) or 'another value'} begins where it begins (two values of "
            "one relation for one instant: send each in an order of its own with its own "
            "zeitpunkt, or correct the one that is wrong)"
        )})

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
        name = ref.neu if isinstance(ref, New) else ref
        if not normalize_name(name):
            raise Rejected(
                "abgelehnt",
                "name_leer",
                f"{role}: the name {clip(shown(name), 60)} has only invisible characters; "
                "give a visible name",
            )
        if isinstance(ref, New):
            return Resolved(None, clean_name(ref.neu), None, neu=True)
        ids = self.state.by_name.get(normalize_name(ref), [])
        if len(ids) > 1:
            raise Rejected(
                "mehrdeutig",
                "mehrdeutig",
                f"{role}: {len(ids)} entities are named {clip(shown(ref), 80)}; retry with "
                "{'id': ...}",
                kandidaten=[self._kandidat(self.state.entities[i]) for i in ids],
            )
        if ids:
            entity = self.state.entities[ids[0]]
            return Resolved(entity.id, entity.name, entity.typ)
        return Resolved(None, clean_name(ref), None)

    def _kandidat(self, entity: EntityState) -> Kandidat:
        return Kandidat(
            id=entity.id, name=entity.name, typ=entity.typ or "sonstiges", merkmale=entity.merkmale
        )

    def create(self, entity: Resolved, role: str) -> str:
        if entity.id is None:
            entity.id = self.made_ids.setdefault((self._index, role), new_id())
            self.ops.entities.append(
                {
                    "id": entity.id,
                    "name": entity.name,
                    "name_norm": normalize_name(entity.name),
                }
            )
            self.state.entities[entity.id] = EntityState(entity.id, entity.name, None)
            self.state.by_name.setdefault(normalize_name(entity.name), []).append(entity.id)
            self._neue.append(entity.id)
        return entity.id


    def assert_fact(
        self,
        subjekt_id: str,
        rel: Relation,
        herkunft: str,
        objekt_id: str | None = None,
        wert: str | None = None,
        timeline_id: str | None = None,
        start: datetime | None = None,
        window_end: datetime | None = None,
    ) -> tuple[str, str, list[str]]:
        """Write, supersede or touch one fact; (ausgang, fact id, superseded ids).

        `start` is the effective valid start (an event's first instant), else the order's
        time. An einwertig value ends the value holding at its start; it holds until the
        next known value begins, so a value that arrives late becomes history
        (`nachgetragen`) and never the current one. An event's start is known only to its
        precision (`window_end`: the end of its day or month): a value that began inside
        that window is taken to precede the event and ends where it began.
        """
        start = self.now if start is None else start
        same = self.same_fact(subjekt_id, rel, objekt_id, wert, start)
        if same is not None:
            if same.new is None:
                self.ops.touch.append({"id": same.id, "start_id": same.start_id})
            return "unveraendert", same.id, []
        ended: dict[str, FactState] = {}
        squeezed: list[FactState] = []  # already ended where this one begins
        following: list[FactState] = []
        # "No specific type yet" told for a later time than a specific type: it never
        # replaces one (rule 4), so it ends where it begins, and the type holds on.
        unknown: list[FactState] = []
        if rel.einwertig:
            # A partner is einwertig from both ends: the object's partition counts too.
            ends = [subjekt_id] + ([objekt_id] if rel.symmetrisch and objekt_id else [])
            for entity_id in ends:
                for fact in self.current(entity_id, rel.rel_type, rel.symmetrisch):
                    if fact.contains(start):
                        ended[fact.id] = fact
                    elif window_end is not None and start < fact.start < window_end:
                        ended[fact.id] = fact  # began within the event's precision
                    elif (fact.start > start and rel.name == "typ"
                          and fact.wert == "sonstiges" != wert):
                        unknown.append(fact)
                    elif fact.start > start:
                        following.append(fact)
            if rel.symmetrisch:
                more, squeezed = self.squeezed_partners(ends, rel.rel_type, start, window_end)
                following += more
                # A partner that another value ended where this one begins (by an earlier
                # triple or order, at either end) is followed by this one too, at the end
                # they share: the followers of one instant are all named. A take-back of
                # the value that began with this one then never carries that partner over
                # to follow it (Anna–Lena, ended by Ben–Lena from 3 December, is followed
                # by Anna–Ben of that day at Anna). (A value of the same pair is at both
                # ends: named once.)
                named = {x.id for x in squeezed} | set(ended)
                for entity_id in ends:
                    for fact in self.current(entity_id, rel.rel_type, True):
                        if (fact.end == start and not fact.empty and fact.grund == "abgeloest"
                                and fact.id not in named):
                            named.add(fact.id)
                            squeezed.append(fact)
        fakt_id = self.made_ids.setdefault(
            (self._index, f"fakt {rel.rel_type} {subjekt_id} {objekt_id} {wert}"), new_id())
        # "No specific type yet" told for a time a specific type holds, or begins within
        # the event's precision: it comes after that type, which it never replaces (rule
        # 4). It holds nowhere and ends nothing, followed by those types, and holds once
        # none of them remains (`History._behind_a_type`). ("Rex objekt from 3 March
        # 2027", then "Rex sonstiges from that day": the sonstiges ended the objekt.)
        behind = (sorted(f.id for f in ended.values() if f.wert != wert)
                  if rel.name == "typ" and wert == "sonstiges" else [])
        if behind:
            ended, following = {}, []
        for fact in ended.values():
            self.end_at(fact, start, timeline_id, [fakt_id])
        for fact in unknown:
            self.end_at(fact, fact.start, None, [fakt_id])
        for fact in squeezed:  # it keeps its end; this value follows it too
            earlier = list(fact.props.get("abgeloest_durch") or ())
            self.change(fact, abgeloest_durch=[*earlier, fakt_id])
        upcoming = min(following, key=lambda f: (f.start, f.id)) if following else None
        followers = behind or ([upcoming.id] if upcoming else None)
        # Where the next value begins now (its chain's day, not the day stored when it
        # was written: the event may have moved since).
        end = start if behind else max(upcoming.start, start) if upcoming else None
        fact = FactState(
            id=fakt_id,
            rel=rel.rel_type,
            start_id=subjekt_id,
            end_id=objekt_id,
            wert=wert,
            start=start,
            end=end,
            aktiv=end is None,
            grund="abgeloest" if followers else None,
        )
        fact.new = {
            "id": fact.id,
            "version": 1,
            "user_id": self.auftrag.user_id,
            "character_id": self.auftrag.character_id,
            "herkunft": herkunft,
            "auftrag_id": self.auftrag.auftrag_id,
            "t_valid": start,
            "t_invalid": end,
            "t_expired": None,
            "aktiv": end is None,
            "grund": "abgeloest" if followers else None,
            "staerke_decay": 1.0,
            "last_touched": self.jetzt,
            "timeline_id": timeline_id,
            "timeline_bis": upcoming.props.get("timeline_id") if upcoming else None,
            "abgeloest_durch": followers,
        }
        fact.props = fact.new
        self.state.facts[fact.id] = fact
        self.ops.facts.append(fact)
        ids = sorted([*ended, *(f.id for f in unknown)])
        if end is not None:
            return "nachgetragen", fact.id, ids
        return ("abgeloest" if ids else "geschrieben"), fact.id, ids

    def set_type(self, entity: Resolved, typ: str, herkunft: str) -> None:
        """Write the type fact an entity gets from a relation, a known class or the
        triple's `typ` (checked before, with `check_type`)."""
        if entity.typ == typ or entity.id is None:
            return
        _, fakt_id, _ = self.assert_fact(entity.id, self.canon["typ"], herkunft, wert=typ)
        entity.typ = typ
        self.state.entities[entity.id].typ = typ
        self._typ_fakten.append(fakt_id)

    def set_type_from(self, entity: Resolved, typ: str, herkunft: str, timeline_id: str,
                      start: datetime | None, window_end: datetime | None) -> None:
        """Write the type a known class gives an entity from the class's event: the
        event causes the class, and the type with it (rule 7), as it does a `typ`
        triple's. Before the event the entity keeps the type it has (a dog that becomes
        a car in 2099 is a tier until then). The type a relation implies is what the fact
        needs, not what the event causes, and begins with the order (`set_type`)."""
        if entity.id is None:
            return
        if self.same_fact(entity.id, self.canon["typ"], None, typ, start) is None:
            # (Not touched where it holds then already: a touched type reads as stated,
            # and a take-back of the facts that imply it would keep it.)
            _, fakt_id, _ = self.assert_fact(
                entity.id, self.canon["typ"], herkunft, wert=typ, timeline_id=timeline_id,
                start=start, window_end=window_end,
            )
            self._typ_fakten.append(fakt_id)
        self.set_type_now(entity.id)
        entity.typ = self.state.entities[entity.id].typ

    def event_day(self, tripel: Tripel) -> datetime | None:
        """The day a triple's event or entry begins (None without one, or for an entry
        not found: refused later)."""
        if tripel.ereignis is not None:
            return day_start(normalized(tripel.ereignis).beginn)
        chain = self.state.chains.get(tripel.timeline_id) if tripel.timeline_id else None
        return chain.beginn if chain is not None else None

    def cancel(self, first_id: str) -> TripelErgebnis:
        """A cancelled event (`History.cancel`), and then the types a fact that stands
        still implies, where its entity was left without one (`restore_types`)."""
        before = self.spans()
        result = super().cancel(first_id)
        again = self.restore_types(before)
        return result.model_copy(update={"typ_fakten": again}) if again else result

    def restore_types(self, before: Mapping[str, Span]) -> list[str]:
        """After a take-back, for the entities whose facts it changed (`before`: their
        `span` as read), the type a fact that stands implies (what it needs, not a
        type its triple carried) where the entity has no specific type: written from
        now, implied, with that fact's herkunft. A type that rested on a cancelled
        event went with it while a fact told since still implied it (told while it held,
        that fact wrote none): Kassel, a Stadt by the event, read sonstiges beside "Lena
        wohnt in Kassel" (a stranger's attack). And a value brought back whose type had
        gone while it held nowhere (squeezed): Berlin, Ben's home again once Kassel was
        taken back, had no type (`kg check`'s `type_missing`)."""
        written: list[str] = []
        for entity_id in self.changed_ends(before):
            if entity_id not in self.state.entities:
                continue
            now = self.type_now(entity_id)
            if now is not None and now.wert not in (None, "sonstiges"):
                continue
            # (What a fact needs, not the type its triple carried: that is what was said
            # with it, and a correction of it is no correction of the fact; `implied`.)
            implying = next(
                (f for f in self.state.facts.values()
                 if entity_id in (f.start_id, f.end_id) and self.stands(f)
                 and f.herkunft is not None
                 and self.implied(f, entity_id) not in (None, "sonstiges")),
                None)
            if implying is None or implying.herkunft is None:
                continue
            typ = self.implied(implying, entity_id)
            assert typ is not None
            _, fakt_id, _ = self.assert_fact(
                entity_id, self.canon["typ"], implying.herkunft, wert=typ)
            if self.state.facts[fakt_id].new is not None:
                written.append(fakt_id)
            self.set_type_now(entity_id)
        return written

    def check_class_since(self, entity: Resolved, typ: str, tripel: Tripel,
                          start: datetime | None) -> None:
        """A known class told with an event of the past (or an entry, or the place of
        a value this order took back) gives its type from that day (`set_type_from`),
        and stands on: another type that began since would hold beside it. Bello, a
        tier since 2022, "ist ein Auto" from 2020: the objekt went in before the tier,
        the class stood beside it, and `kg check` failed. (A type that begins after the
        order's time is `later_type`'s.)"""
        start = self.event_day(tripel) if tripel.ereignis is not None else start
        if start is None or start >= self.now or entity.id is None:
            return
        for fact in self.current(entity.id, "TYP", False):
            if (start < fact.start <= self.now and fact.wert not in (typ, "sonstiges")
                    and not fact.empty):
                raise Rejected(
                    "abgelehnt",
                    "typkonflikt",
                    f"{entity.name} is a {fact.wert} from {fact.start.date().isoformat()} "
                    f"({fact.id}): a class of a {typ} from {start.date().isoformat()} would "
                    f"make it a {typ} on into that time; correct that type first",
                    konflikt=fact.id,
                )

    # -- types, both ways (rule 4) ------------------------------------------------

    def name_of(self, entity_id: str) -> str:
        entity = self.state.entities.get(entity_id)
        return entity.name if entity else self.state.names.get(entity_id, entity_id)

    def fact_text(self, fact: FactState) -> str:
        """A fact as a person reads it: 'Tom wohnt in Kassel'."""
        rel = self.canon.by_type.get(fact.rel)
        verb = rel.vorwaerts if rel else fact.rel.lower()
        objekt = fact.wert if fact.end_id is None else self.name_of(fact.end_id)
        return f"{self.name_of(fact.start_id)} {verb} {objekt}"

    def contradicting(self, entity_id: str, typ: str, since: datetime | None = None,
                      until: datetime | None = None) -> FactState | None:
        """The first of `contradictions`, or None."""
        return next(self.contradictions(entity_id, typ, since, until), None)

    def contradictions(self, entity_id: str, typ: str, since: datetime | None = None,
                       until: datetime | None = None) -> Iterator[FactState]:
        """The facts of the entity in the pair that stand (active, or a value that holds
        on until a day ahead) and that the type contradicts: a relation whose subject
        cannot be of that type, the object of a relation whose object is another type,
        or a class of another type. The type fact itself is not one: a new type
        supersedes it. Within the type's span where it is given: a fact that begins
        where the type ends (`until`: Bello is a tier until he becomes a car in 2099,
        with "ist ein Auto" from then), or ends by where it begins (`since`), is not
        one."""
        if typ == "sonstiges":
            return
        for fact in self.state.facts.values():
            if entity_id not in (fact.start_id, fact.end_id) or not self.stands(fact):
                continue
            if until is not None and fact.start >= until:
                continue
            if since is not None and fact.end is not None and fact.end <= since:
                continue
            rel = self.canon.by_type.get(fact.rel)
            if rel is None or rel.name == "typ":
                continue
            if fact.start_id == entity_id:
                if rel.name == "ist_ein":
                    klasse = self.canon.typ_of_class(fact.wert or "")
                    if klasse and klasse != typ:
                        yield fact
                elif rel.subjekt_typen and typ not in rel.subjekt_typen:
                    yield fact
            elif rel.objekt_typ and rel.objekt_typ != typ:
                yield fact

    def stands(self, fact: FactState) -> bool:
        """Active, or a value superseded from a day ahead that holds on until then
        (`Span.stands`)."""
        return fact.span().stands(self.now)

    def implying(self, entity_id: str, typ: str) -> FactState | None:
        """The first fact of the entity in the pair that stands (`stands`) and makes it
        of type `typ` (`implied`: rule 4, the types a fact implies)."""
        return next((f for f in self.state.facts.values()
                     if self.stands(f) and entity_id in (f.start_id, f.end_id)
                     and self.implied(f, entity_id) == typ), None)

    def check_type(self, entity: Resolved, typ: str, stated: bool = False,
                   since: datetime | None = None) -> None:
        """A new type is checked against the facts the entity already has in the pair,
        and against a type that begins later (the order's facts hold on into its time).
        A `typ` triple (`stated`) is itself a value of the type: it ends where the next
        value begins (told late, it is history), so only the facts are checked. A type
        that begins with an event (`since`: a `typ` triple's or a class's) is checked
        against the facts that stand then: Kassel an organisation from 2099, where Lena's
        home there holds on until 2098."""
        if entity.id is None or typ == "sonstiges":
            return
        later = None if stated else self.later_type(entity.id, typ)
        if later is not None:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{entity.name} is a {later.wert} from {later.start.date().isoformat()} "
                f"({later.id}): this would make it a {typ} on into that time; correct "
                "that type first",
                konflikt=later.id,
            )
        # Not asked where the entity is of that type where it begins already (its facts
        # agree with it then). The type now is not that type where the new one begins
        # later: "Bello typ organisation" from April, an organisation now, passed beside
        # "ist ein Auto" from March, which makes him an objekt from then.
        held = self.type_at(entity, since or self.now)
        fact = self.contradicting(entity.id, typ, since) if held != typ else None
        if fact is not None:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{entity.name} cannot be a {typ}: it contradicts the fact "
                f"'{self.fact_text(fact)}' ({fact.id}); correct that fact first",
                konflikt=fact.id,
            )

    def type_at(self, entity: Resolved, instant: datetime) -> str | None:
        """The entity's type at `instant` by the type facts the order read (the value
        that holds then, before the first value the first), else the type it was read
        with (the read's instant)."""
        held = None if entity.id is None else self.type_fact_at(entity.id, instant)
        if held is None:
            return entity.typ
        return None if held.wert == "sonstiges" else held.wert

    def later_type(self, entity_id: str, typ: str | None = None,
                   allowed: tuple[str, ...] = ()) -> FactState | None:
        """A type that begins after the order's valid time, other than `typ` (or, with
        `allowed`, outside those): a new type then would only be history before it, and
        a fact of the order holds on into its time."""
        for fact in self.current(entity_id, "TYP", False):
            if (fact.start > self.now and fact.wert not in (typ, "sonstiges")
                    and not (allowed and fact.wert in allowed)):
                return fact
        return None

    def subject_type(self, rel: Relation, tripel: Tripel, subj: Resolved) -> str | None:
        """The specific type a triple gives its subject: by `typ`, by a known class of
        `ist_ein`, by a relation that allows one subject type, or by the triple's own
        `typ` field. Sources that disagree are a typkonflikt."""
        if tripel.typ is not None:
            if rel.subjekt_typen and tripel.typ not in (*rel.subjekt_typen, "sonstiges"):
                raise Rejected(
                    "abgelehnt",
                    "typkonflikt",
                    f"the triple says {subj.name} is a {tripel.typ}; {rel.name} allows "
                    f"{', '.join(rel.subjekt_typen)}",
                )
            if tripel.typ != "sonstiges" and subj.typ and subj.typ != tripel.typ:
                current = self.type_fact(subj)
                raise Rejected(
                    "abgelehnt",
                    "typkonflikt",
                    f"the triple says {subj.name} is a {tripel.typ}, but in this pair it is "
                    f"a {subj.typ}" + (f" ({current.id})" if current else ""),
                    **({"konflikt": current.id} if current else {}),
                )
        claims = subject_claims(rel, tripel, self.canon)
        if len(claims) > 1:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{subj.name} would get two types: {'; '.join(claims.values())}",
            )
        return next(iter(claims), None)

    def _type_refused(self, entity: Resolved, allowed: str) -> Rejected:
        """A typkonflikt of a relation with an entity's known type, naming its type fact."""
        current = self.type_fact(entity)
        return Rejected(
            "abgelehnt",
            "typkonflikt",
            f"{entity.name} is a {entity.typ}" + (f" ({current.id})" if current else "")
            + f"; {allowed}",
            **({"konflikt": current.id} if current else {}),
        )

    def spans(self) -> dict[str, Span]:
        """Every fact's `span`, for `type_clash`."""
        return {f.id: f.span() for f in self.state.facts.values()}

    def changed_ends(self, before: Mapping[str, Span]) -> set[str]:
        """The entities whose type facts changed since `before` (each fact's `span`
        as read), and the ends of the other facts that changed: brought back, held on
        longer or taken back ("Lena wohnt in Kassel" again, once Berlin was taken back,
        beside Kassel the organisation since)."""
        return {
            end for f in self.state.facts.values()
            if before.get(f.id) != f.span()
            for end in ((f.start_id,) if f.rel == "TYP" else (f.start_id, f.end_id))
            if end is not None
        }

    def type_clash(
        self, before: Mapping[str, Span], moved: Iterable[str] | None = None
    ) -> tuple[str, str, FactState] | None:
        """After a take-back or a move, for the entities whose type facts it changed,
        and the ends of the other facts it changed (`before`: each fact's `span` as
        read; `moved`: the entities whose type facts' days a move changed on their
        event), each type they have from the order's time on (the one that holds, then
        each later one) against their facts within its span. The first clash: (entity
        name, type, the fact it contradicts). A cancel brought back a tier for Bello while
        "Lena besitzt Bello" (an objekt) stood, which a correction of that type refuses
        (a stranger's attack). Raises `Unread` for an end whose type the state did not
        read. A clash the store had before is left out (`clashed_before`), except after
        a move (`moved` given): its state is read after the entry moved, so `before`
        holds the moved days already."""
        changed = sorted(self.changed_ends(before) | set(moved or ()))
        unread = {e for e in changed if e not in self.state.entities and e not in self.asked}
        if unread:
            raise Unread(unread)
        for entity_id in changed:
            now = self.type_now(entity_id)
            later = [f for f in self.current(entity_id, "TYP", False) if f.start > self.now]
            for typ in ([now] if now is not None and now.contains(self.now) else []) + later:
                if typ.wert in (None, "sonstiges"):
                    continue
                for fact in self.contradictions(entity_id, typ.wert,
                                                max(typ.start, self.now), typ.end):
                    if moved is not None or not self.clashed_before(before, typ, fact):
                        return self.name_of(entity_id), typ.wert, fact
        return None

    def clashed_before(self, before: Mapping[str, Span], typ: FactState,
                       fact: FactState) -> bool:
        """The type and the fact contradicted each other before the take-back or the
        move already, by their spans as read (`FactState.span`): a clash the store had
        (a hand edit, data of an older version) is no reason to refuse this one."""
        if typ.id not in before or fact.id not in before:
            return False
        t, f = before[typ.id], before[fact.id]
        since = max(t.start, self.now)
        return (t.holds_from(self.now) and f.stands(self.now)
                and (t.end is None or f.start < t.end) and (f.end is None or f.end > since))

    def type_fact(self, entity: Resolved) -> FactState | None:
        """The type fact a refusal names: the one `entity.typ` was read from."""
        return None if entity.id is None else self.type_now(entity.id)

    # -- transitive relations: no cycles ------------------------------------------

    def cycle_path(self, rel: Relation, start_id: str, end_id: str) -> list[FactState] | None:
        """The facts of a path end → … → start over the pair's active facts of a
        transitive relation: what start → end would close into a cycle."""
        edges: dict[str, list[FactState]] = {}
        for fact in self.state.facts.values():
            if fact.aktiv and fact.rel == rel.rel_type and fact.end_id is not None:
                edges.setdefault(fact.start_id, []).append(fact)
        came: dict[str, FactState | None] = {end_id: None}
        queue = [end_id]
        while queue:
            node = queue.pop(0)
            if node == start_id:
                path: list[FactState] = []
                step = came[node]
                while step is not None:
                    path.append(step)
                    step = came[step.start_id]
                return path[::-1]
            for fact in sorted(edges.get(node, []), key=lambda f: f.id):
                if fact.end_id is not None and fact.end_id not in came:
                    came[fact.end_id] = fact
                    queue.append(fact.end_id)
        return None

    # -- one triple -------------------------------------------------------------

    @staticmethod
    def _subject_keys(ref: Any, resolved: Resolved | None) -> set[tuple[str, str]]:
        """The keys a subject is known by: its id and its name (normalised), as written
        (a reference, or a raw one of a triple refused by its form) and, once resolved,
        as the entity has them."""
        if isinstance(ref, dict):
            keys = {("id", str(ref["id"]).strip()) if ref.get("id")
                    else ("name", normalize_name(str(ref.get("neu"))))}
        else:
            keys = {("id", ref.id) if isinstance(ref, ById)
                    else ("name", normalize_name(str(ref.neu if isinstance(ref, New) else ref)))}
        if resolved is not None:
            keys.add(("name", normalize_name(resolved.name)))
            if resolved.id is not None:
                keys.add(("id", resolved.id))
        return keys

    def _note_correction(self, index: int, ref: EntityRef, resolved: Resolved | None,
                         beziehung: str) -> None:
        self._corrections[index] = (self._subject_keys(ref, resolved),
                                    resolved.id if resolved else None,
                                    self.canon.link_key(beziehung))

    def _note_replacement(self, index: int, ref: Any, resolved: Resolved | None,
                          beziehung: Any) -> None:
        """Link a triple to the corrections it replaces: of the same relation, and of the
        same subject — the same entity where both resolved to one (namesakes named by
        their ids are two people), else sharing a key (an ambiguous "Anna" and one
        Anna's id; a correction by id and a replacement by name). Noted again once its
        subject resolved, which replaces the note before."""
        relation = self.canon.link_key(beziehung)
        if isinstance(ref, New) or (isinstance(ref, dict) and "neu" in ref):
            # A new entity is another one, whatever its name (as MCP's correct reads it).
            self.replacing.pop(index, None)
            return
        keys, rid = self._subject_keys(ref, resolved), resolved.id if resolved else None
        found = sorted(
            i for i, (their_keys, their_id, their_relation) in self._corrections.items()
            if their_relation == relation
            and (their_id == rid if their_id and rid else bool(their_keys & keys)))
        if found:
            self.replacing[index] = found
        else:
            self.replacing.pop(index, None)

    def _note_raw_replacement(self, index: int, raw: Any) -> None:
        if isinstance(raw, Tripel):
            self._note_replacement(index, raw.subjekt, None, raw.beziehung)
        elif isinstance(raw, dict) and isinstance(raw.get("subjekt"), str | dict):
            self._note_replacement(index, raw["subjekt"], None, raw.get("beziehung"))

    def triple(self, index: int, tripel: Tripel) -> TripelErgebnis:
        rel = self.canon[tripel.beziehung]
        # Noted before the subject resolves (an ambiguous one is refused there).
        self._note_replacement(index, tripel.subjekt, None, rel.name)
        subj = self.resolve(tripel.subjekt, "subjekt")
        self._note_replacement(index, tripel.subjekt, subj, rel.name)
        obj = self.resolve(tripel.objekt, "objekt") if tripel.objekt is not None else None
        if obj is not None and same_entity(subj, obj):
            raise Rejected(
                "abgelehnt",
                "selbstbezug",
                f"{rel.name}: subject and object are the same entity ({subj.name})",
            )
        # Types both ways: the relation against the known types, then every new type
        # against the facts its entity already has in the pair.
        # (With the type fact it contradicts, as a new type names the fact it would
        # contradict: the caller corrects the one that is wrong.)
        if rel.subjekt_typen and subj.typ and subj.typ not in rel.subjekt_typen:
            raise self._type_refused(
                subj, f"{rel.name} allows {', '.join(rel.subjekt_typen)}")
        if obj is not None and rel.objekt_typ and obj.typ and obj.typ != rel.objekt_typ:
            raise self._type_refused(obj, f"the object of {rel.name} is a {rel.objekt_typ}")
        later = (self.later_type(subj.id, allowed=rel.subjekt_typen)
                 if subj.id is not None and rel.subjekt_typen else None)
        if later is not None:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{subj.name} is a {later.wert} from {later.start.date().isoformat()} "
                f"({later.id}); {rel.name} allows {', '.join(rel.subjekt_typen)}",
                konflikt=later.id,
            )
        subj_typ = self.subject_type(rel, tripel, subj)
        # Only the triple's own `typ` field says it, and the subject is of that type at
        # the order's time: nothing is written, and the fact does not need the type
        # (it was refused beside a type to come: "this would make it a tier on into
        # that time").
        carried = subj_typ is not None and subj_typ == tripel.typ and not subject_claims(
            rel, tripel.model_copy(update={"typ": None}), self.canon)
        if subj_typ and not (carried and self.type_at(subj, self.now) == subj_typ):
            self.check_type(subj, subj_typ, stated=rel.name == "typ",
                            since=self.event_day(tripel) if rel.name in ("typ", "ist_ein")
                            else None)
        if obj is not None and rel.objekt_typ:
            self.check_type(obj, rel.objekt_typ)
        if rel.transitiv and obj is not None and subj.id is not None and obj.id is not None:
            path = self.cycle_path(rel, subj.id, obj.id)
            if path:
                raise Rejected(
                    "abgelehnt",
                    "zyklus",
                    f"{subj.name} {rel.name} {obj.name} would close a cycle: "
                    + ", ".join(self.fact_text(f) for f in path),
                    konflikt=path[0].id,
                )
        timeline_id = None
        start: datetime | None = None
        window_end: datetime | None = None
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
            timeline_id, start, window_end = chain.first_id, chain.beginn, chain.window_end
        elif tripel.ereignis is None and self.auftrag.zeitpunkt is None and subj.id is not None:
            place = self._taken_places.get((subj.id, rel.rel_type))
            if place is not None:
                start, timeline_id = place

        if rel.name == "typ" and tripel.wert == "sonstiges" and subj.typ:
            # "No specific type yet" never replaces a specific type: nothing is written
            # or touched, and no fact says sonstiges.
            return TripelErgebnis(
                index=index,
                ausgang="unveraendert",
                subjekt_id=subj.id,
                meldung=f"{subj.name} is a {subj.typ}; sonstiges does not replace a type",
            )
        if rel.name == "ist_ein" and subj_typ and subj.id is not None:
            self.check_class_since(subj, subj_typ, tripel, start)
        subjekt_id = self.create(subj, "subjekt")
        objekt_id = self.create(obj, "objekt") if obj is not None else None
        # An event brought along with a fact that already holds is not created: nothing
        # would be valid from it (the fact keeps its own validity). The result says so.
        dropped: str | None = None
        if tripel.ereignis is not None:
            # The fact is valid from the event; an event that would change nothing (the
            # value holds at its start already) is not created.
            event = normalized(tripel.ereignis)
            start = day_start(event.beginn)
            window_end = precision_end(event.beginn, event.genauigkeit)
            held = self.same_fact(subjekt_id, rel, objekt_id, tripel.wert, start)
            if held is None:
                timeline_id = self.add_entry(tripel.ereignis, subjekt_id)
            else:
                # An einwertig value holds on the event's day: where its stay began,
                # the order may not have read (a version told for an earlier time that
                # ended before the event is not read), so the words name the event's
                # day. A mehrwertig value keeps the start it was first told with.
                since = (
                    f"holds on {event.beginn.isoformat()} already" if rel.einwertig
                    else f"is stored already (from {held.start.date().isoformat()})"
                )
                dropped = (
                    f"{subj.name} {rel.name} {obj.name if obj is not None else tripel.wert} "
                    f"{since}, so the event {event.titel!r} of {event.beginn.isoformat()} "
                    "was not created: it would change nothing of it; add it to the "
                    "timeline on its own if it matters (timeline_add, `kg timeline add`)"
                )
        ausgang, fakt_id, abgeloest = self.assert_fact(
            subjekt_id, rel, tripel.herkunft, objekt_id, tripel.wert, timeline_id, start,
            window_end,
        )
        told = self.state.facts[fakt_id]
        if tripel.typ not in (None, "sonstiges") and told.start_id == subjekt_id:
            # The type the triple said of its subject, kept with the fact: a correction
            # or cancel of it takes that type back too, as one the relation implies
            # (`History.implied`; contract rule 5). Also on a stored fact told again,
            # first told without it (touched: `order_apply` keeps one it has).
            if told.new is not None:
                told.new["subjekt_typ"] = tripel.typ
            elif told.props.get("subjekt_typ") is None:
                told.props["subjekt_typ"] = tripel.typ
                for op in self.ops.touch:
                    if op["id"] == told.id:
                        op["subjekt_typ"] = tripel.typ
        # Types become known from the relation, a class or the triple (rule 4); none
        # is written in advance.
        if obj is not None and rel.objekt_typ:
            self.set_type(obj, rel.objekt_typ, tripel.herkunft)
        if rel.name == "typ":
            stated = self.state.facts[fakt_id]
            # The type at the order's valid time (`type_now`): this value where it
            # holds then; not one that begins on a day ahead (a later type, checked by
            # `later_type`).
            self.set_type_now(subjekt_id)
            subj.typ = self.state.entities[subjekt_id].typ
            stated.touched = True
            if stated.new is not None:
                # Stated by the human, not only implied: a correction or cancel of the
                # facts that imply it keeps it (`History.drop_implied_types`). A version
                # this order writes is not touched, and would look implied.
                stated.new["gesagt"] = True
        elif subj_typ and rel.name == "ist_ein" and timeline_id is not None:
            self.set_type_from(subj, subj_typ, tripel.herkunft, timeline_id, start, window_end)
        elif subj_typ:
            self.set_type(subj, subj_typ, tripel.herkunft)
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
            meldung=dropped,
        )

    def correction(self, index: int, item: Berichtigung) -> TripelErgebnis:
        # Noted before anything is refused (a relation the canon does not know, an
        # ambiguous or unknown subject), so that its replacement is refused with it.
        self._note_correction(index, item.subjekt, None, item.beziehung)
        if item.beziehung not in self.canon:
            raise Rejected(
                "abgelehnt", "unbekannte_beziehung", self.canon.unknown(item.beziehung)
            )
        rel = self.canon[item.beziehung]
        subj = self.resolve(item.subjekt, "subjekt")
        self._note_correction(index, item.subjekt, subj, item.beziehung)
        obj = self.resolve(item.objekt, "objekt") if item.objekt is not None else None
        target = f"{subj.name} {rel.name} {obj.name if obj else repr(item.wert)}"
        if subj.id is None or (obj is not None and obj.id is None):
            raise Rejected("abgelehnt", "nicht_gefunden", f"no fact {target} in this pair")

        def matches(f: FactState, valid: bool = True) -> bool:
            if f.rel != rel.rel_type or (valid and not f.valid):
                return False
            if obj is None:
                return (f.start_id == subj.id and f.wert is not None
                        and value_key(f.wert) == value_key(item.wert))
            ends = (f.start_id, f.end_id)
            return ends == (subj.id, obj.id) or (rel.symmetrisch and ends == (obj.id, subj.id))

        # The latest value first: a value it ended then still names the value that ended
        # it when an earlier one is taken back (values squeezed to nothing included).
        wrong = sorted(
            (f for f in self.state.facts.values() if matches(f)),
            key=lambda f: (f.start, f.id), reverse=True,
        )
        if not wrong:
            # Taken back by this order already (a type that only a fact corrected before
            # it implied, or the same fact corrected twice): found, nothing more to do.
            gone = [f for f in self.state.facts.values() if f.new is not None
                    and f.new.get("grund") == "berichtigt" and matches(f, valid=False)]
            if not gone:
                raise Rejected("abgelehnt", "nicht_gefunden", f"no fact {target} in this pair")
            if not rel.symmetrisch and (subj.id, rel.rel_type) not in self._taken_places:
                # Its replacement takes the place of what was taken back (a type that a
                # corrected fact implied): where the latest of it began.
                latest = max(gone, key=lambda f: (f.start, f.id))
                self._taken_places[(subj.id, rel.rel_type)] = (
                    latest.start, latest.props.get("timeline_id"))
            return TripelErgebnis(
                index=index, ausgang="berichtigt", subjekt_id=subj.id,
                objekt_id=obj.id if obj else None,
                meldung=f"{target}: taken back by this order already",
            )
        if rel.name == "typ" and item.wert is not None:
            # A type a standing fact implies is not wrong while that fact stands: retired,
            # the entity read as sonstiges though "Lena wohnt in Kassel" makes Kassel an
            # ort (a stranger's attack), and a new type was still refused by that fact.
            implied = self.implying(subj.id, value_key(item.wert))
            if implied is not None:
                raise Rejected(
                    "abgelehnt", "typkonflikt",
                    f"{subj.name} has the type {value_key(item.wert)} by the fact "
                    f"'{self.fact_text(implied)}' ({implied.id}); correct that fact first",
                    konflikt=implied.id,
                )
        place = self.place_of(wrong)
        if place is not None and not rel.symmetrisch:
            self._taken_places.setdefault((subj.id, rel.rel_type), place)
        # A take-back may bring back a type, or leave one that a standing fact
        # contradicts (Bello a tier again beside "Bello wohnt in Kassel" of the objekt
        # it corrects away: a stranger's attack); refused as a cancel of it is, with
        # the plan's state as it was.
        saved = copy.deepcopy((self.state, self.ops))
        before = self.spans()
        retired, again = self.take_back_all(wrong, "berichtigt")
        # (Restored before the clash check, so what it writes is checked too.)
        typen = self.restore_types(before)
        clash = self.type_clash(before)
        if clash is not None:
            self.state, self.ops = saved
            name, typ, fact = clash
            raise Rejected(
                "abgelehnt", "typkonflikt",
                f"this correction would make {name} a {typ} while the fact "
                f"'{self.fact_text(fact)}' ({fact.id}) stands, which it contradicts; "
                "correct that fact first",
                konflikt=fact.id,
            )
        if rel.name == "typ" and subj.id in self.state.entities:
            # The entity's type is what stands at the order's time (one brought back, or
            # none): a later triple of the order was checked against the type taken back.
            self.set_type_now(subj.id)
            subj.typ = self.state.entities[subj.id].typ
        return TripelErgebnis(
            index=index,
            ausgang="berichtigt",
            abgeloest=retired,
            wieder_gueltig=again,
            typ_fakten=typen,
            subjekt_id=subj.id,
            objekt_id=obj.id if obj else None,
        )

    @staticmethod
    def place_of(wrong: list[FactState]) -> Place | None:
        """Where a replacement of these values goes: where the latest stay of the value
        began (its versions that meet, one ending where the next begins, as the Mappe
        joins them), with that version's event if it began with one (so it moves with
        it). Values squeezed to nothing held nowhere: they give no place (nor, when all
        are, does the correction: its replacement begins at the order's time)."""
        held = [f for f in wrong if not f.empty]
        if not held:
            return None
        # (On a tie, a value from an event first: its replacement then moves with it.)
        first = max(held, key=lambda f: (f.start, f.props.get("timeline_id") is not None))
        while True:
            before = [f for f in held if f.end == first.start and f is not first]
            if not before:
                break
            first = min(before, key=lambda f: (f.start, f.props.get("timeline_id") is None))
        # The value's own place, not a new one's: no window of its event's precision (a
        # value that began inside it after the event keeps its place).
        return first.start, first.props.get("timeline_id")

    def add_entry(self, entry: NeuerEintrag, betrifft_id: str) -> str:
        """The timeline entry of an event a triple brings; the same event of the same
        subject told again in the order (title, days, precision, type) is that entry: one
        move or cancel of "the move" moves or cancels all its facts."""
        props = entry_props(entry)
        key = (betrifft_id, *(props[k] for k in ("typ", "titel", "beginn", "ende",
                                                  "genauigkeit")))
        if key in self._entries:
            return self._entries[key]
        self._entries[key] = str(props["id"])
        props["character_id"] = self.auftrag.character_id
        self.ops.entries.append({"props": props, "betrifft_id": betrifft_id})
        self.state.chains[props["id"]] = ChainState(
            props["id"], False, day_start(props["beginn"]),
            precision_end(props["beginn"], props["genauigkeit"]),
        )
        return str(props["id"])


def plan_order(
    fresh: Callable[[], Planner], corrections: int
) -> tuple[Planner, list[TripelErgebnis]]:
    """Plan an order whose refused corrections hold back their groups (`held_together`):
    planned, then planned again (`fresh()`: a planner on the state as read) without the
    first refused group, until no group is refused; then each held group is let go
    again, in turn and until none can go, where the order then plans without a refused
    group (it was refused only for what a group held after it would have written); then
    each group still held gets its outcome from a plan of everything else that is final.
    The entities and facts the order creates keep their ids from plan to plan
    (`Planner.made_ids`); a held outcome names only candidates and a conflicting fact
    the final plan has."""
    ids: dict[tuple[int, str], str] = {}

    def planned(held: dict[int, TripelErgebnis]) -> tuple[Planner, list[TripelErgebnis]]:
        planner = fresh()
        planner.made_ids = ids
        return planner, planner.plan(held)

    groups: list[dict[int, TripelErgebnis]] = []
    while True:
        planner, results = planned({j: r for g in groups for j, r in g.items()})
        more = held_together(corrections, results, planner.replacing)
        if not more:
            break
        groups.append(more)
    # Until none can go: a group let go may let an earlier one go in turn.
    released = True
    while released:
        released = False
        for group in list(groups):
            rest = [g for g in groups if g is not group]
            trial, again = planned({j: r for g in rest for j, r in g.items()})
            if not held_together(corrections, again, trial.replacing):
                groups, planner, results, released = rest, trial, again, True
    # Each held group's outcome as the final plan has it: planned with everything else
    # that is final, it is refused for itself (its refused parts and their words from
    # that plan), or it is fine alone and held for a group it cannot be written with.
    outcomes: dict[int, TripelErgebnis] = {}
    for group in groups:
        trial, again = planned({j: r for g in groups if g is not group for j, r in g.items()})
        if any(again[j].ausgang in REFUSED for j in group):
            outcomes.update(hold(corrections, again, set(group)))
            continue
        refused = held_together(corrections, again, trial.replacing)
        other = min((j for j in refused if again[j].ausgang in REFUSED), default=None)
        why = (f"written with it, {_item_name(corrections, other)} would be refused — "
               f"{again[other].meldung or again[other].grund}") if other is not None else (
               "it cannot be written with another correction of this order")
        outcomes.update({j: TripelErgebnis(
            index=j, ausgang="abgelehnt", grund="zusammen_abgelehnt",
            meldung=clip(f"not written: {why}; send it again, in a new order, once that is "
                         "mended", 600),
            notiz=group[j].notiz, herkunft=group[j].herkunft) for j in group})
    # The facts held outcomes name that only a plan not written made: named by no word.
    unwritten = {fid for (_, role), fid in ids.items()
                 if role.startswith("fakt ") and fid not in planner.state.facts}
    return planner, [_naming_only(outcomes[r.index], planner, unwritten)
                     if r.index in outcomes else r for r in results]


def _item_name(corrections: int, j: int) -> str:
    return f"berichtigungen[{j}]" if j < corrections else f"tripel[{j - corrections}]"


def _naming_only(result: TripelErgebnis, planner: Planner,
                 unwritten: set[str] | None = None) -> TripelErgebnis:
    """An outcome held from an earlier plan, without the entities and facts only that
    plan made: a candidate the final plan has under that id and name, a conflicting fact
    it has (standing), and in its words no id of a fact only a plan not written made
    (`unwritten`: a group's other parts quote the refused part's words)."""
    entities, facts = planner.state.entities, planner.state.facts
    standing = result.konflikt in facts and facts[result.konflikt].aktiv
    meldung = result.meldung
    for fid in sorted(unwritten or ()):
        if meldung:
            meldung = meldung.replace(f" ({fid})", " (one this order held back)")
            meldung = meldung.replace(fid, "a fact this order held back")
    return result.model_copy(update={
        "kandidaten": [k for k in result.kandidaten
                       if k.id in entities and entities[k.id].name == k.name],
        "konflikt": result.konflikt if standing else None,
        "meldung": meldung,
    })
