"""The rules of time for one order: every change of a fact closes its version and
writes the next; valid time is a partition per subject, einwertig relation and pair;
one rule takes a value back (a correction, a cancelled event); a move re-ends the values
that end where the event's value begins.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.canon import Canon, Relation
from kg.models import Auftrag, TripelErgebnis, value_key
from kg.plan.state import FactState, Operations, State, Taken, as_utc, taken_of
from kg.timeline import ReEnd, binding_key


class History:
    """The record of one order: the state it read, the operations it writes, its clocks,
    and the rules by which a fact's versions change (supersede, take back, a cancelled
    or moved event)."""

    def __init__(self, canon: Canon, auftrag: Auftrag, state: State, jetzt: datetime) -> None:
        self.canon = canon
        self.auftrag = auftrag
        self.state = state
        self.jetzt = jetzt  # system time: the store's clock, never the caller's
        self.ops = Operations()

    @property
    def now(self) -> datetime:
        """Valid time of the order's facts: its `zeitpunkt`, else the store's clock."""
        return self.auftrag.zeitpunkt or self.jetzt


    # -- facts ------------------------------------------------------------------
    #
    # Every fact is a series of versions; the state holds the current one. A change
    # never edits a version: it closes it (t_expired) and writes the next one
    # (`change`). Valid time is a partition per subject, einwertig relation and pair:
    # a value holds from its start until the next value's start.

    def current(self, entity_id: str, rel_type: str, both: bool) -> list[FactState]:
        """The facts of a relation at an entity that are taken to hold or have held."""
        return [f for f in self.stated(entity_id, rel_type, both) if not f.empty]

    def stated(self, entity_id: str, rel_type: str, both: bool) -> list[FactState]:
        """The facts of a relation at an entity that were never taken back, also the ones
        squeezed to nothing."""
        return [
            f
            for f in self.state.facts.values()
            if f.rel == rel_type
            and f.valid
            and (f.start_id == entity_id or (both and f.end_id == entity_id))
        ]

    def squeezed_partners(
        self, ends: list[str], rel_type: str, start: datetime, window_end: datetime | None
    ) -> tuple[list[FactState], list[FactState]]:
        """Of a symmetric relation, the values squeezed to nothing at the ends of a new
        value beginning at `start`: those that follow it, and those it follows too.

        A value squeezed by the far end's partition still follows (in its own a value
        squeezing it would begin no later anyway), unless it precedes the new one: it
        began within the event's precision, or a value that squeezed it in this end's
        partition (after it there, and not taken back since) begins no later (for a
        month event's value: before its window ends). One squeezed where the new value
        begins (or within its event's precision) is followed by it too, at its other end:
        that matters when the one that squeezed it first is taken back."""

        def after(f: FactState) -> bool:
            return f.start >= window_end if window_end else f.start > start

        following: list[FactState] = []
        followed: dict[str, FactState] = {}
        for entity_id in ends:
            for f in self.stated(entity_id, rel_type, True):
                if not f.empty:
                    continue
                if not after(f):
                    if start <= f.start:
                        followed[f.id] = f
                    continue
                if all(after(x) for x in self._followers(f, {entity_id}) if x.valid):
                    following.append(f)
        return following, list(followed.values())

    def active(self, entity_id: str, rel_type: str, both: bool) -> list[FactState]:
        return [f for f in self.current(entity_id, rel_type, both) if f.aktiv]

    def type_now(self, entity_id: str) -> FactState | None:
        """The entity's type fact at the order's valid time (`type_fact_at`)."""
        return self.type_fact_at(entity_id, self.now)

    def type_fact_at(self, entity_id: str, instant: datetime) -> FactState | None:
        """The entity's type fact at `instant`, of those the order read: the value that
        holds then (one superseded from a day ahead holds until that day, though no
        longer active), and before the first value the first, as the Mappe reads it."""
        types = self.current(entity_id, "TYP", False)
        held = next((f for f in types if f.contains(instant)), None)
        return held or min(types, key=lambda f: (f.start, not f.aktiv, f.id), default=None)

    def set_type_now(self, entity_id: str) -> None:
        """The entity's type for the rest of the order, after its type facts changed."""
        if entity_id in self.state.entities:
            fact = self.type_now(entity_id)
            typ = fact.wert if fact is not None else None
            self.state.entities[entity_id].typ = None if typ in (None, "sonstiges") else typ

    def says(self, fact: FactState, subjekt_id: str, rel: Relation, objekt_id: str | None,
             wert: str | None) -> bool:
        """True when the fact states this value (symmetric relations from either end)."""
        if wert is not None:  # (`value_key`: a value stored before compares so too)
            return fact.wert is not None and value_key(fact.wert) == value_key(wert)
        if rel.symmetrisch:
            return {fact.start_id, fact.end_id} == {subjekt_id, objekt_id}
        return fact.end_id == objekt_id

    def same_fact(
        self, subjekt_id: str, rel: Relation, objekt_id: str | None, wert: str | None,
        at: datetime | None = None,
    ) -> FactState | None:
        """The fact that already says this: for an einwertig relation the value holding
        at `at` (the new value's start), else any active one."""
        if rel.einwertig:
            when = self.now if at is None else at
            holding = [
                f for f in self.current(subjekt_id, rel.rel_type, rel.symmetrisch)
                if f.contains(when)
            ]
        else:
            holding = self.active(subjekt_id, rel.rel_type, rel.symmetrisch)
        for fact in holding:
            if self.says(fact, subjekt_id, rel, objekt_id, wert):
                return fact
        return None

    def change(self, fact: FactState, **updates: Any) -> None:
        """Record a new state of a fact: close its version and write the next one (or
        amend the version this very order writes)."""
        keys: tuple[str, ...] = ("aktiv", "grund", "t_invalid", "timeline_bis", "abgeloest_durch")
        stored: dict[str, Any] = {key: updates[key] for key in keys if key in updates}
        if fact.new is not None:
            fact.new.update(stored)
        else:
            self.ops.close.append(
                {"id": fact.id, "start_id": fact.start_id, "version": fact.version}
            )
            fact.version += 1
            # A version states the valid time as known when it is recorded: a fact that
            # starts or ends with an event starts or ends on the day its chain has now (a
            # move may have changed it since the last version).
            since = {"t_valid": fact.start} if fact.props.get("timeline_id") else {}
            until = (
                {"t_invalid": fact.end}
                if fact.props.get("timeline_bis") and fact.end is not None else {}
            )
            fact.new = {
                **fact.props, **since, **until, **stored, "version": fact.version,
                "t_expired": None,
            }
            fixed = fact.new.get("t_invalid")
            if since and "t_invalid" not in stored and fixed is not None and (
                    as_utc(fixed) < fact.start):
                # A fixed end before the start its chain has now (a value kept squeezed
                # at its start, its event moved later since) is its start: a version
                # never records an end before its start.
                fact.new["t_invalid"] = fact.start
                fact.end = fact.start
            fact.props = fact.new
            self.ops.facts.append(fact)
        fact.aktiv = bool(fact.new["aktiv"])
        fact.grund = fact.new.get("grund")
        if "end" in updates:
            fact.end = updates["end"]

    def end_at(
        self, fact: FactState, end: datetime, timeline_bis: str | None,
        followers: list[str] | None,
    ) -> None:
        """The fact's value is followed by another from `end` on (superseded): by the
        facts `followers` (None where a move re-ends it with its event, `timeline_bis`).
        A value never ends before it starts: an end before its start is its start."""
        self.change(
            fact, aktiv=False, grund="abgeloest", t_invalid=max(end, fact.start),
            timeline_bis=timeline_bis, abgeloest_durch=followers or None,
            end=max(end, fact.start),
        )

    def retire(self, fact: FactState, grund: str, timeline_bis: str | None = None) -> None:
        """Supersede the fact now (abgeloest), or take it back (berichtigt/abgesagt)."""
        if grund == "abgeloest":
            self.end_at(fact, self.now, timeline_bis, None)
        else:
            self.take_back(fact, grund)

    def take_back(self, fact: FactState, grund: str) -> list[str]:
        """The one rule for taking a value back (a correction, a cancelled event): the
        fact never held, and in an einwertig relation the values it had ended hold
        again, each up to the next value that remains (or to where the taken-back one
        ended), as if it had never been written. Returns the reinstated facts."""
        rel = self.canon.by_type.get(fact.rel)
        was_valid = fact.valid
        taken = taken_of(fact)
        self.change(
            fact, aktiv=False, grund=grund, t_invalid=fact.start,
            timeline_bis=None, end=fact.start,
        )
        if not was_valid or rel is None or not rel.einwertig:
            return []
        reinstated: list[str] = []
        for before in sorted(self._at_ends(fact, rel), key=lambda f: (f.start, f.id)):
            if before.grund != "abgeloest" or not self._ended_by(before, taken):
                continue
            # Squeezed to nothing, it stays so where another value still squeezes it.
            # The values that followed the taken-back one and begin no later squeeze it
            # too: named as well, they keep the order in which values of one instant
            # were told (Berlin, Kassel, Berlin for 24 December: the first Berlin stays
            # squeezed by the second once what else squeezed it is taken back too).
            behind = self._squeezing(taken, fact, before, rel) if before.empty else []
            if self._still_followed(before, taken):
                # Another value follows it (a partner's far end, or a value that squeezed
                # it too): it keeps its end. Recorded as ending with the taken-back
                # value's event, it would follow that event's moves from now on (a value
                # squeezed to nothing holding again when the event moved later), so it is
                # recorded as ending with the followers that remain.
                if not self._behind_a_type(before, taken) and (
                        (taken.timeline_id is not None
                         and before.props.get("timeline_bis") == taken.timeline_id)
                        or self._bound_to_plain(before, taken)):
                    self._end_with_the_rest(before, taken, behind,
                                            self._upcoming(before, rel, taken))
                elif [fid for fid in behind
                      if fid not in (before.props.get("abgeloest_durch") or ())]:
                    rest = [fid for fid in before.props.get("abgeloest_durch") or ()
                            if fid != taken.id]
                    self.end_at(before, before.start, before.props.get("timeline_bis"),
                                rest + [fid for fid in behind if fid not in rest])
                continue
            covering = self._covering(before, rel, taken) if before.empty else []
            if covering:
                # Where it begins another value holds that the take-back leaves as it
                # is: it stays squeezed, recorded as followed by those values, at a fixed
                # instant (Lena–Ben of 27 August, squeezed by Tom–Ben "in August", held
                # again up to 2 September beside Ben–Anna from 17 August once the August
                # event was called off), and by those above.
                named = [f.id for f in covering]
                self.end_at(before, before.start, None,
                            named + [fid for fid in behind if fid not in named])
                continue
            upcoming = self._upcoming(before, rel, taken)  # the first value after it
            # Where the taken-back value ended is where `before` ends, unless a value at
            # its own ends begins earlier. Of a symmetric relation only if the value that
            # followed the taken-back one is at `before`'s own ends: else that end lay in
            # the far end's partition alone.
            followers = self._carried_followers(taken, {fact.start_id, fact.end_id}, before, rel)
            carried = taken.end if followers or not rel.symmetrisch else None
            if upcoming is not None and (carried is None or upcoming.start < carried):
                self.end_at(
                    before, upcoming.start, upcoming.props.get("timeline_id"), [upcoming.id]
                )
            elif carried is None:
                if rel.symmetrisch and any(
                    other.id != before.id
                    for other_id in (before.start_id, before.end_id)
                    if other_id is not None
                    for other in self.active(other_id, fact.rel, True)
                ):
                    continue  # the other end has a partner of its own by now
                self.change(
                    before, aktiv=True, grund=None, t_invalid=None, timeline_bis=None,
                    abgeloest_durch=None, end=None,
                )
            else:
                self.change(
                    before,
                    # The next version starts where `before` starts now (see `change`).
                    t_invalid=max(as_utc(taken.t_invalid), before.start),
                    timeline_bis=self._carried_event(taken, followers, carried, rel),
                    abgeloest_durch=followers or None,
                    end=max(carried, before.start),
                )
            reinstated.append(before.id)
        return reinstated

    def held_again(self, reinstated: list[str]) -> list[str]:
        """Of the facts the take-backs reinstated, those that hold again once all are
        done: not taken back themselves (a value told twice may be both), and not
        squeezed to nothing by a value that begins where they do."""
        return sorted(
            fid for fid in set(reinstated)
            if self.state.facts[fid].valid and not self.state.facts[fid].empty
        )

    def take_back_all(self, facts: list[FactState], grund: str) -> tuple[list[str], list[str]]:
        """Take back the values of a correction or of a cancelled event, each by the one
        rule (`take_back`), and then the types only they implied (`drop_implied_types`).
        Returns what it retired (the facts, then those types) and the facts that hold
        again."""
        reinstated = []
        for fact in facts:
            reinstated += self.take_back(fact, grund)
        types = self.drop_implied_types(facts)
        return [f.id for f in facts] + types, self.held_again(reinstated)

    def implied(self, fact: FactState, entity_id: str, *, carried: bool = False) -> str | None:
        """The type a fact gives one of its ends (None: it implies none); with `carried`,
        also the type its triple carried in its own `typ` field (`subjekt_typ`), which
        goes when the fact is taken back. Not otherwise: it is what was said with the
        fact, not what the fact needs, so a correction of that type is no correction of
        a fact that implies it (a review: "Max has the type tier by the fact 'Max wohnt
        in Kassel'; correct that fact first")."""
        rel = self.canon.by_type.get(fact.rel)
        if rel is None or rel.name == "typ":
            return None
        if fact.start_id == entity_id:
            if rel.name == "ist_ein":
                return self.canon.typ_of_class(fact.wert or "")
            said = (fact.new or fact.props).get("subjekt_typ") if carried else None
            return rel.implied_subjekt_typ or (said if isinstance(said, str) else None)
        if fact.end_id == entity_id:
            return rel.objekt_typ
        return None

    def drop_implied_types(self, taken: list[FactState]) -> list[str]:
        """Retire the types that only the taken-back facts implied: never stated (a `typ`
        triple of the same value touches it) and implied by no other fact that held
        (whichever order wrote the type: Tom's home wrote Kassel's ort, and with Tom's
        fact taken back while Lena's still implied it, taking hers back left an ort
        that no fact implied, a stranger's attack found): active, or superseded
        (Lena lives in Kassel since 2025 until she moves to Paris; the Kassel of an event
        in 2099 cancelled, Kassel lost its type while her Mappe read "wohnt in Kassel
        (noch bis …)"), never one taken back or squeezed to nothing. They were never true
        either. Retired `berichtigt` after a cancel too: a type fact begins with its
        order, not with the event (a cancelled fact, `abgesagt`, rests on one)."""
        retired: list[str] = []
        gone = {f.id for f in taken}
        for fact in taken:
            for entity_id in (fact.start_id, fact.end_id):
                typ = self.implied(fact, entity_id, carried=True) if entity_id else None
                if entity_id is None or typ is None:
                    continue
                still = any(
                    self.implied(f, entity_id, carried=True) == typ
                    for f in self.state.facts.values()
                    if f.valid and not f.empty and f.id not in gone
                    and entity_id in (f.start_id, f.end_id)
                )
                # The active value, and one that holds now until a type to come.
                for t in self.current(entity_id, "TYP", False):
                    if t.touched or still or t.wert != typ or not (
                            t.aktiv or t.contains(self.now)):
                        continue
                    self.retire(t, "berichtigt")
                    self.set_type_now(entity_id)
                    retired.append(t.id)
        return retired

    def _carried_followers(
        self, taken: Taken, taken_ends: set[str | None], before: FactState, rel: Relation
    ) -> list[str]:
        """The facts that followed the taken-back one and now follow `before`: all of them
        in a relation of one partition per subject. In a symmetric one, those at
        `before`'s ends that still hold somewhere (not taken back by the same order) and
        come after it: each that followed the taken-back value in a partition `before`
        shares with it, where `before` preceded it (whatever its start: Tom–Anna from 3
        June, placed after Tom–Ben of a June event, which Tom–Ben from 23 June precedes,
        follows that one too); else one that begins no earlier (it followed the
        taken-back value at the other end only, and a partition orders by start); never
        one that `before` itself ended, which precedes it, nor one of the same pair that
        begins earlier: where two values of one pair are ordered differently at their two
        ends (a month event's window placed one, its start the other), the later one
        never ends at the earlier one, so the pair stays together. (The model skips such
        a value only where the two ends order them differently; one that begins earlier
        and follows `before` at both ends would need a month window at both, and would
        have ended `before` itself, which the clause before leaves out.) Nor, where
        `before` held somewhere, one that begins before `before` ends: a value after it
        in a partition begins no earlier than where it ends, so that one precedes it (a
        value ended at its far end where `before` begins, recorded before a partner
        named one follower per end: Anna–Lena, ended by Ben–Lena where Anna–Ben
        begins). Nor one squeezed to nothing that comes before `before`
        (`_squeezed_before`): Anna–Lena of 24 December, squeezed by Anna–Tom "in
        December", precedes Anna–Ben from 3 December, placed after Anna–Tom."""
        if not rel.symmetrisch:
            return list(taken.followers)
        ends = {before.start_id, before.end_id}
        shared = ends & taken_ends
        return [
            fid for fid in taken.followers
            if (f := self.state.facts.get(fid)) is not None and f.valid
            and {f.start_id, f.end_id} & ends
            and ({f.start_id, f.end_id} & shared or f.start >= before.start)
            and not (f.grund == "abgeloest" and self._ended_by(f, taken_of(before)))
            and not ({f.start_id, f.end_id} == ends and f.start < before.start)
            and (before.empty or before.end is None or f.start >= before.end)
            and not (f.empty and self._squeezed_before(f, before))
        ]

    def _carried_event(
        self, taken: Taken, followers: list[str], end: datetime, rel: Relation
    ) -> str | None:
        """The event a value reinstated up to where the taken-back one ended ends with:
        the taken-back value's, if that is the event of a follower it carries over;
        else, of the carried followers that begin at that end, the one the end is bound
        to (`binding_key`: fixed, when one has no event), or fixed when none begins
        there. In a symmetric relation the taken-back value may have ended with a far
        end's event, in a partition the reinstated value does not share: bound to it,
        its end would be that event's day, not a follower's (Anna–Tom ending on the 1
        November of Ben–Lena's month event); or at a fixed instant where a follower it
        carries begins with an event, which its end would then not follow."""
        if not rel.symmetrisch:
            return taken.timeline_bis
        carried = [f for fid in followers if (f := self.state.facts.get(fid)) is not None]
        if taken.timeline_bis is not None and any(
                f.props.get("timeline_id") == taken.timeline_bis for f in carried):
            return taken.timeline_bis
        at_end = [f for f in carried if f.start == end]
        if not at_end:
            return None
        bound = min(at_end, key=lambda f: binding_key(f.props.get("timeline_id"), f.id))
        event = bound.props.get("timeline_id")
        return str(event) if event is not None else None

    def _squeezed_before(self, squeezed: FactState, before: FactState) -> bool:
        """True when a value squeezed to nothing comes before `before` in a partition
        they share: a value that squeezed it there begins no later than `before` (the
        squeezed one precedes that value, and so `before` too), as in
        `squeezed_partners`. Of the same pair, in both their partitions: where it comes
        after `before` in one, it ends `before` there (of two values of one pair only the
        later one is kept from ending at the earlier). Lena–Tom of today, squeezed at
        Tom's end by Anna–Tom of a month event moved to November, comes after Lena–Tom of
        10 November at Lena's."""
        shared = {squeezed.start_id, squeezed.end_id} & {before.start_id, before.end_id}
        return all(
            any(x.valid and x.start <= before.start for x in self._followers(squeezed, {end}))
            for end in shared
        )

    def _squeezing(
        self, taken: Taken, fact: FactState, before: FactState, rel: Relation
    ) -> list[str]:
        """Of the values that followed the taken-back one (`fact`) and now follow
        `before` (squeezed to nothing), those that hold or will and begin no later than
        it: they come after it in its partition, so they squeeze it too."""
        return [
            fid for fid in self._carried_followers(taken, {fact.start_id, fact.end_id},
                                                   before, rel)
            if (f := self.state.facts.get(fid)) is not None and f.valid
            and f.start <= before.start
        ]

    def _end_with_the_rest(self, before: FactState, taken: Taken,
                           also: list[str] | None = None,
                           upcoming: FactState | None = None) -> None:
        """Record `before` as ending where the first of its followers other than the
        taken-back one begins (with that one's event, or fixed when it has none), each of
        them named, as the model ends a value where the first value after it begins: no
        longer tied to the event of a value that never held. A value squeezed to nothing
        keeps its start. Where a follower that remains begins later (its event moved
        since), the first value after `before` at its own ends that begins earlier
        (`upcoming`) ends it instead: Anna–Ben, ended by Anna–Lena from 24 December and by
        Ben–Tom's event moved to the 30th, with Anna–Tom from the 27th, ends on the 27th
        once Anna–Lena is taken back (it ended on the 30th: two partners at once)."""
        rest = [f for f in self._followers(before) if f.id != taken.id and f.valid]
        first = min(rest, key=lambda f: (f.start, *binding_key(f.props.get("timeline_id"), f.id)))
        if upcoming is not None and upcoming.start < first.start:
            self.end_at(before, upcoming.start, upcoming.props.get("timeline_id"),
                        [upcoming.id] + [fid for fid in also or () if fid != upcoming.id])
            return
        named = [f.id for f in rest]
        self.end_at(before, first.start, first.props.get("timeline_id"),
                    named + [fid for fid in also or () if fid not in named])

    def _upcoming(self, before: FactState, rel: Relation, taken: Taken) -> FactState | None:
        """The first value after `before` at its own ends (of a symmetric relation also at
        the end it does not share with the taken-back value): of those that begin later
        and hold somewhere, or will again (a value squeezed to nothing by another follows
        nothing, except in a symmetric relation, where the far end's partition may have
        squeezed it; one the taken-back value squeezed that another value still squeezes
        stays so: a month event's value placed after it keeps it squeezed, and so precedes
        it), except the ones it ended (they precede it, ending where it begins)."""
        later = [
            f for f in self._at_ends(before, rel)
            if f.id != before.id and f.start > before.start
            and (not f.empty or rel.symmetrisch
                 or (self._ended_by(f, taken) and not self._still_followed(f, taken)))
            and not (f.grund == "abgeloest" and self._ended_by(f, taken_of(before)))
            and not (rel.symmetrisch and f.empty and self._squeezed_before(f, before))
            # "No specific type yet" squeezed by the taken-back value follows no
            # specific type (rule 4): the writer files it so after one, and the type
            # that holds again where it begins keeps it squeezed (`_covering`).
            and not (rel.name == "typ" and f.wert == "sonstiges" != before.wert
                     and f.empty and self._ended_by(f, taken))
        ]
        return min(later, key=lambda f: (f.start, f.id)) if later else None

    def _covering(self, before: FactState, rel: Relation, taken: Taken) -> list[FactState]:
        """The other values at `before`'s ends, neither the taken-back one nor one it
        ended, that hold where `before` begins (began earlier and go on)."""
        return sorted((
            f for f in self._at_ends(before, rel)
            if f.id != taken.id and f.valid and not f.empty
            and not (f.grund == "abgeloest" and self._ended_by(f, taken))
            and f.start < before.start and (f.end is None or f.end > before.start)
        ), key=lambda f: f.id)

    def _bound_to_plain(self, before: FactState, taken: Taken) -> bool:
        """True when `before`'s end is the fixed instant the taken-back value, told
        without an event, began at: of the values that begin where it ends, the end is
        bound to one without an event (`binding_key`). Taken back, the end belongs to the
        followers that remain: to the event of the first of them (Ben–Anna ended by
        Tom–Anna from 24 December and by Lena–Anna's event on that day: "not Anna–Tom",
        and moving Lena–Anna's event to 1 December was refused, the corrected Tom–Anna
        still named as holding the end)."""
        return (taken.timeline_id is None and before.props.get("timeline_bis") is None
                and before.end is not None and before.end == as_utc(taken.t_valid))

    def _behind_a_type(self, before: FactState, taken: Taken) -> bool:
        """True when `before` is "no specific type yet" squeezed to nothing behind
        specific types (rule 4: it comes after them, `Planner.assert_fact`) and one of
        them other than the taken-back one remains: it stays squeezed, and never ends
        where the first of them begins as another value would (a sonstiges "in March",
        told after an objekt from the 3rd and a tier from the 1st, held from the 1st to
        the 3rd beside the sonstiges that held before, once the tier was taken back)."""
        return (before.rel == "TYP" and before.wert == "sonstiges" and before.empty
                and any(f.id != taken.id and f.valid and f.wert != "sonstiges"
                        for f in self._followers(before)))

    def _still_followed(self, before: FactState, taken: Taken) -> bool:
        """True when a value other than the taken-back one follows `before` where it ends
        (a partner fact followed at both ends at the same instant), and still holds or
        will: then `before` keeps its end."""
        return any(f.id != taken.id and f.valid for f in self._followers(before))

    def _followers(self, fact: FactState, at: set[str | None] | None = None) -> list[FactState]:
        """The facts `fact` records as following it (`abgeloest_durch`) that the order
        read: at one of the entities `at` (their partitions), or anywhere."""
        return [
            x for fid in fact.props.get("abgeloest_durch") or ()
            if (x := self.state.facts.get(fid)) is not None
            and (at is None or bool({x.start_id, x.end_id} & at))
        ]

    def _at_ends(self, fact: FactState, rel: Relation) -> list[FactState]:
        """The other valid facts of the fact's relation in the partition of its subject,
        and of a symmetric relation also in its object's."""
        ends = [fact.start_id] + ([fact.end_id] if rel.symmetrisch and fact.end_id else [])
        return list({
            f.id: f for entity_id in ends
            for f in self.stated(entity_id, fact.rel, rel.symmetrisch) if f.id != fact.id
        }.values())

    def _ended_by(self, before: FactState, taken: Taken) -> bool:
        """True when `before`'s value was followed by the taken-back one: it was
        superseded by that fact (`abgeloest_durch`: also a partner squeezed to nothing
        that a later event's value follows without ending it with its event), or it ends
        with that value's event, unless it names another value of that event as its
        follower (two values of one move: Köln told with München's, Berlin squeezed by
        Köln ends with the move, and was not ended by München). On older data without
        either, when its end is the taken value's start (which cannot tell apart values
        that begin at the same instant)."""
        followers = before.props.get("abgeloest_durch")
        if followers is not None and taken.id in followers:
            return True
        if before.props.get("timeline_bis") != taken.timeline_id:
            return False
        if taken.timeline_id is not None:
            # It ends with the taken value's event, wherever that has moved.
            return not any(
                (f := self.state.facts.get(fid)) is not None
                and f.props.get("timeline_id") == taken.timeline_id
                for fid in followers or ()
            )
        if followers is not None:
            return False
        stored_end = before.props.get("t_invalid")
        if stored_end is None:
            return False
        return bool(as_utc(stored_end) == max(taken.t_valid, as_utc(before.props["t_valid"])))


    def cancel(self, first_id: str) -> TripelErgebnis:
        """A cancelled event: every fact valid from its chain is taken back (abgesagt),
        with the types only they implied, by the same rule as a correction."""
        taken = sorted(
            (f for f in self.state.facts.values()
             if f.props.get("timeline_id") == first_id and f.valid),
            key=lambda f: f.id,
        )
        retired, again = self.take_back_all(taken, "abgesagt")
        return TripelErgebnis(
            index=0,
            ausgang="abgesagt",
            abgeloest=retired,
            wieder_gueltig=again,
            timeline_id=first_id,
        )

    def move(self, entry_id: str, re_ends: list[ReEnd]) -> TripelErgebnis:
        """A moved event: the values that ended where its value began, without being
        recorded as ending with it, now end on its new day; a partner recorded as ending
        with it that another value follows at its far end on the same instant keeps its
        end, recorded as ending with that value (a new version each, still
        superseded)."""
        for r in re_ends:
            fact = self.state.facts.get(r.fact_id)
            if fact is None:
                raise RuntimeError(f"the move's state lacks fact {r.fact_id!r}")
            self.end_at(fact, r.at, r.timeline_bis, list(r.followers) or None)
        return TripelErgebnis(
            index=0,
            ausgang="verschoben",
            abgeloest=[r.fact_id for r in re_ends],
            timeline_id=entry_id,
        )
