"""A reference model of the bi-temporal record: small, obviously correct, and sharing no
code with the production planner or reader.

It keeps no versions. It keeps, per relation of one subject, the list of assertions in
*partition order* and, for each operation, the step at which an assertion came and
went. Knowledge "as known after step k" is the list of assertions alive at k; valid
intervals are derived from it:

- an assertion starts at its own instant, or at the day its event had at step k;
- it ends where the first assertion after it in the list starts (an end before its
  start is its start); the last one is open;
- a new value is placed after every assertion that starts no later than it (an event's
  start counts up to the end of its day or month: a value that began within the
  event's precision precedes the event), so a late value lands before the values that
  follow it and becomes history;
- taking a value back (a correction or a cancelled event) removes it from the list; a
  correction's replacement (in the same step) takes the place where the latest stay of
  the value taken back began (its intervals that held, the latest and those meeting it):
  that start, or its event (on a tie, one with an event), without the window of the
  event's precision; when none of it held anywhere, the store's clock;
- a move changes an event's day from that step on: the event's value starts on the
  new day, and a value that ended where it began ends there. It is refused when
  another value begins on a day from the old to the new day (both included), or when it
  would change any other end of a value that holds somewhere (before or after) or leave
  a value that held holding nowhere (a move never reorders or erases values).

Multi-valued relations are sets: a value holds from its start until it is taken back.

The type (`typ`, of another subject) is single-valued with one rule more: `sonstiges`
(no specific type yet) never follows a specific type. Placed after one in the list (a
specific type told for an earlier time than it), it holds nowhere and ends nothing; told
while the type at the order's time is specific, it is not added (unchanged). The type at
an instant is the value that holds then, before the first value the first, and without
any value `sonstiges`.

Reads show a value's stay: intervals of one value that meet (one ends where the other
starts: the value told again for an earlier time) are one interval. (Not yet for
partners, `Partners` below: the store does not join their stays.)
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta


def day_start(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def first_of(day: date, genauigkeit: str) -> date:
    return day.replace(day=1) if genauigkeit == "monat" else day


def window_end(day: date, genauigkeit: str) -> datetime:
    if genauigkeit == "monat":
        last = calendar.monthrange(day.year, day.month)[1]
        return day_start(day.replace(day=last)) + timedelta(days=1)
    return day_start(day) + timedelta(days=1)


@dataclass
class Event:
    dates: list[tuple[int, date, str]]  # (step, first day, precision), oldest first
    cancelled_at: int | None = None

    def at(self, step: int) -> tuple[date, str]:
        known = [(d, g) for s, d, g in self.dates if s <= step]
        return known[-1]


@dataclass
class Assertion:
    value: str
    instant: datetime | None  # a precise start, or None when it starts with `event`
    event: int | None
    added: int
    removed: int | None = None

    def alive(self, step: int) -> bool:
        return self.added <= step and (self.removed is None or step < self.removed)


@dataclass
class Interval:
    value: str
    start: datetime
    end: datetime | None  # None: open

    def holds(self, when: datetime) -> bool:
        return self.start <= when and (self.end is None or when < self.end) and not self.empty

    @property
    def empty(self) -> bool:
        return self.end is not None and self.end <= self.start


def stays(intervals: list[Interval]) -> list[Interval]:
    """Join intervals of one value that meet (one ends where the other starts), in any
    order: a stay is a group of intervals linked by meeting, from its earliest start to
    its latest end (open if one is). An interval squeezed to nothing where its value's
    stay passes is part of that stay."""
    groups: list[list[Interval]] = [[iv] for iv in intervals]
    while True:
        pair = next(((a, b) for a in groups for b in groups if a is not b and any(
            x.value == y.value and x.end == y.start for x in a for y in b)), None)
        if pair is None:
            break
        a, b = pair
        groups = [g for g in groups if g is not a and g is not b] + [a + b]
    return [Interval(g[0].value, min(x.start for x in g),
                     None if any(x.end is None for x in g) else max(x.end for x in g
                                                                     if x.end is not None))
            for g in groups]


@dataclass
class Model:
    """One subject's relations in one pair; `einwertig` names the single-valued ones."""

    einwertig: set[str]
    lists: dict[str, list[Assertion]] = field(default_factory=dict)
    events: dict[int, Event] = field(default_factory=dict)
    step: int = 0

    # -- derived knowledge ------------------------------------------------------------

    def start_of(self, a: Assertion, step: int) -> datetime:
        if a.event is None:
            assert a.instant is not None
            return a.instant
        return day_start(self.events[a.event].at(step)[0])

    def intervals(self, rel: str, step: int | None = None) -> list[Interval]:
        step = self.step if step is None else step
        alive = [a for a in self.lists.get(rel, []) if a.alive(step)]
        starts = [self.start_of(a, step) for a in alive]
        unknown = self._unknown(rel, alive)
        out = []
        for i, a in enumerate(alive):
            if unknown[i]:
                end: datetime | None = starts[i]  # holds nowhere
            elif rel in self.einwertig:
                later = [s for s, u in zip(starts[i + 1 :], unknown[i + 1 :], strict=True)
                         if not u]
                end = max(min(later), starts[i]) if later else None
            else:
                end = None
            out.append(Interval(a.value, starts[i], end))
        return out

    @staticmethod
    def _unknown(rel: str, alive: list[Assertion]) -> list[bool]:
        """Per assertion: a `sonstiges` type after a specific one, which holds nowhere."""
        return [rel == TYP and a.value == NO_TYPE
                and any(b.value != NO_TYPE for b in alive[:i]) for i, a in enumerate(alive)]

    def raw_ends(self, rel: str, step: int) -> list[tuple[Assertion, datetime | None]]:
        alive = [a for a in self.lists.get(rel, []) if a.alive(step)]
        starts = [self.start_of(a, step) for a in alive]
        unknown = self._unknown(rel, alive)
        out = []
        for i, a in enumerate(alive):
            later = [s for s, u in zip(starts[i + 1 :], unknown[i + 1 :], strict=True)
                     if not u]
            out.append((a, starts[i] if unknown[i] else min(later) if later else None))
        return out

    def type_at(self, when: datetime, step: int | None = None) -> str:
        """The type at `when` as known after `step`."""
        return type_in(self.intervals(TYP, step), when)

    # -- operations -------------------------------------------------------------------

    def write(
        self,
        rel: str,
        value: str,
        start: datetime,
        event: tuple[date, str] | None = None,
    ) -> str:
        """Returns the outcome: geschrieben, abgeloest, nachgetragen or unveraendert."""
        self.step += 1
        return self._write(rel, value, start, event)

    def write_together(self, rel: str, values: list[str], start: datetime) -> list[str]:
        """The values of one order, all from `start`: one step of system time, each
        placed as if written alone after the ones before it (so of two values of one
        instant the later told ends the earlier). Returns each one's outcome."""
        self.step += 1
        return [self._write(rel, value, start) for value in values]

    def write_at(self, rel: str, value: str, key: int) -> str:
        """A value told with an event that exists (`timeline_id`): from the event's day as
        it is now, within the window of its precision, as a value of a new event."""
        self.step += 1
        return self._write(rel, value, day_start(self.events[key].at(self.step)[0]),
                           existing=key)

    def _write(
        self,
        rel: str,
        value: str,
        start: datetime,
        event: tuple[date, str] | None = None,
        existing: int | None = None,
        window: bool = True,
    ) -> str:
        """The write of this step: a new event (`event`), an event that exists
        (`existing`, its day as it is now), or the instant `start`. "Before" is the
        record as it stands in this step so far (a correction of the same order may have
        taken values back)."""
        now = self.step
        before = self.intervals(rel, now)
        # At the order's time (`start` as `write` and `write_together` are given it; the
        # oracle tells no type by `write_at` or `correct_with`, whose `start` is a day
        # of the record's) a specific type holds.
        if rel == TYP and value == NO_TYPE and type_in(before, start) != NO_TYPE:
            return "unveraendert"
        if event is not None:
            first, precision = first_of(event[0], event[1]), event[1]
        elif existing is not None:
            first, precision = self.events[existing].at(now)
        edge = None
        if event is not None or existing is not None:
            start = day_start(first)
            edge = window_end(first, precision) if window else None
        if rel in self.einwertig:
            holding = [iv for iv in before if iv.holds(start)]
            if holding and holding[0].value == value:
                return "unveraendert"
        elif any(iv.value == value for iv in before):
            return "unveraendert"
        key = existing
        if event is not None:
            key = len(self.events) + 1
            self.events[key] = Event([(now, first, precision)])
        new = Assertion(value, None if key else start, key, now)
        items = self.lists.setdefault(rel, [])
        if rel not in self.einwertig:
            items.append(new)
            return "geschrieben"
        alive = [a for a in items if a.alive(now) and a is not new]
        precede = [
            a for a in alive
            if (self.start_of(a, now) < edge if edge else self.start_of(a, now) <= start)
        ]
        position = items.index(precede[-1]) + 1 if precede else 0
        items.insert(position, new)
        ended = [
            iv for iv in before
            if not iv.empty and (iv.holds(start) or (edge and start < iv.start < edge)
                                 # (a later `sonstiges` a specific type now precedes)
                                 or (rel == TYP and iv.value == NO_TYPE != value
                                     and iv.start > start))
        ]
        mine = next(iv for a, iv in zip(
            [a for a in items if a.alive(now)], self.intervals(rel, now), strict=True
        ) if a is new)
        if mine.end is not None:
            return "nachgetragen"
        return "abgeloest" if ended else "geschrieben"

    def correct(self, rel: str, value: str) -> bool:
        """Take back every alive assertion of this value; False when there is none."""
        self.step += 1
        return self._take_back(rel, value)[0]

    def _take_back(self, rel: str, value: str) -> tuple[bool, tuple[datetime, int | None] | None]:
        """Take back the alive assertions of this value in this step. Returns whether
        there were any, and where the latest stay of the value began: its intervals that
        held somewhere, the latest and those before it that meet it (one ends where the
        next begins), the first of them (its start, and its event if it had one; on a tie
        the one with an event). None when none of them held anywhere."""
        was = self.step - 1
        alive = [a for a in self.lists.get(rel, []) if a.alive(was)]
        spans = dict(zip(map(id, alive), self.intervals(rel, was), strict=True))
        found = [a for a in alive if a.value == value]
        for a in found:
            a.removed = self.step
        held = [a for a in found if not spans[id(a)].empty]
        if not held:
            return bool(found), None
        first = max(held, key=lambda a: (spans[id(a)].start, a.event is not None))
        while True:
            before = [a for a in held
                      if a is not first and spans[id(a)].end == spans[id(first)].start]
            if not before:
                break
            first = min(before, key=lambda a: (spans[id(a)].start, a.event is None))
        return True, (spans[id(first)].start, first.event)

    def correct_with(self, rel: str, value: str, replacement: str,
                     clock: datetime | None) -> str | None:
        """A correction and its replacement in one order (one step): the replacement takes
        the place of the value taken back (where its latest stay began, with its event,
        and without the window of the event's precision: the value's own place), or, when
        none of it held anywhere, begins at the store's `clock`. Returns the replacement's
        outcome; None when the value was never told: neither is written, and nothing
        changes."""
        self.step += 1
        found, place = self._take_back(rel, value)
        if not found:
            return None
        if place is None:
            assert clock is not None
            return self._write(rel, replacement, clock)
        start, event = place
        return self._write(rel, replacement, start, existing=event, window=False)

    def cancel(self, key: int) -> None:
        self.step += 1
        self.events[key].cancelled_at = self.step
        for items in self.lists.values():
            for a in items:
                if a.event == key and a.alive(self.step - 1):
                    a.removed = self.step

    def move(self, key: int, beginn: date) -> bool:
        """Move an event from this step on; False (and nothing changes) when the move would
        change more than the event's values and the ends that meet them. In each
        single-valued relation the event's value starts on the new day, and a value that
        ended where the event's value began ends there; every other value that holds
        somewhere, before or after, keeps its end, none that held holds nowhere, and no
        other value begins from the old to the new day (a move never reorders or erases
        values)."""
        self.step += 1
        was = self.step - 1
        old = self.events[key].at(was)
        self.events[key].dates.append((self.step, first_of(beginn, old[1]), old[1]))
        if not all(self._moved_only_the_event(rel, key, was, self.step)
                   for rel in self.einwertig):
            self.events[key].dates.pop()
            return False
        return True

    def _moved_only_the_event(self, rel: str, key: int, was: int, now: int) -> bool:
        alive = [a for a in self.lists.get(rel, []) if a.alive(was)]
        own = [a for a in alive if a.event == key]
        if not own:
            return True
        k_was, k_now = self.start_of(own[0], was), self.start_of(own[0], now)
        if k_was != k_now:
            first, last = min(k_was, k_now).date(), max(k_was, k_now).date()
            if any(first <= self.start_of(a, was).date() <= last
                   for a in alive if a.event != key):
                return False  # another value begins from the old to the new day
        rows = zip(self.raw_ends(rel, was), self.raw_ends(rel, now),
                   self.intervals(rel, was), self.intervals(rel, now), strict=True)
        for (a, end_was), (_, end_now), before, after in rows:
            if not before.empty and after.empty:
                return False  # it held, and would hold nowhere
            if a.event == key:
                continue
            if before.empty and after.empty:
                continue
            expected = k_now if end_was == k_was else end_was
            if end_now != expected:
                return False
        return True

    def noop(self) -> None:
        """An operation that changed nothing still takes a step of system time."""
        self.step += 1

    # -- reads --------------------------------------------------------------------------

    def current(self) -> tuple[set[tuple[str, str, date]], set[tuple[str, str, date, date]]]:
        """The current Mappe: active values (rel, value, ab) and history (…, bis)."""
        facts, history = set(), set()
        for rel in self.lists:
            for iv in stays(self.intervals(rel)):
                if iv.end is None:
                    facts.add((rel, iv.value, iv.start.date()))
                elif iv.end > iv.start:  # (one that held nowhere is no former value)
                    history.add((rel, iv.value, iv.start.date(), iv.end.date()))
        return facts, history

    def still_holding(self, now: datetime) -> set[tuple[str, str, date, datetime]]:
        """The superseded values that hold at `now` and until a day after it (rel, value,
        ab, and the instant their stay ends): the current Mappe's history says "noch
        bis", and derives from them until then."""
        return {
            (rel, iv.value, iv.start.date(), iv.end)
            for rel in self.lists for iv in stays(self.intervals(rel))
            if iv.end is not None and iv.start <= now < iv.end
        }

    def told_of(
        self, rel: str, value: str, now: datetime
    ) -> set[tuple[date, date | None]]:
        """The stays of `value` a current read shows from the value's side (Kassel's
        Mappe), each with its first day and its end day (None where it holds on, also
        one to come): each that holds on, still holds at `now`, or is to come and ends.
        Never one that held nowhere."""
        return {
            (iv.start.date(), None if iv.end is None else iv.end.date())
            for iv in stays(self.intervals(rel))
            if iv.value == value and (iv.end is None or (iv.start < iv.end and now < iv.end))
        }

    def as_of(
        self, gueltig_am: datetime, step: int
    ) -> tuple[set[tuple[str, str, date]], set[tuple[str, str, date, date]]]:
        """The as-of Mappe: what held at `gueltig_am` as known after `step`, and the
        values that had ended by then."""
        facts, history = set(), set()
        for rel in self.lists:
            for iv in stays(self.intervals(rel, step)):
                if iv.holds(gueltig_am):
                    facts.add((rel, iv.value, iv.start.date()))
                if iv.end is not None and iv.start < iv.end <= gueltig_am:
                    history.add((rel, iv.value, iv.start.date(), iv.end.date()))
        return facts, history


TYP, NO_TYPE = "typ", "sonstiges"


def type_in(intervals: list[Interval], when: datetime) -> str:
    """The type at `when`: the value that holds then; before the first value the first
    (the earliest that holds somewhere); without any, `sonstiges`."""
    held = [iv for iv in intervals if not iv.empty]
    now = [iv.value for iv in held if iv.holds(when)]
    if now:
        return now[0]
    return min(held, key=lambda iv: iv.start).value if held else NO_TYPE


def end_of_day(day: date) -> datetime:
    return datetime.combine(day, time.max, tzinfo=UTC)


# -- a symmetric single-valued relation (partner) ----------------------------------------


@dataclass
class Bond:
    """One assertion of a symmetric relation: two people, from an instant (or from the
    first day of an event, `event`, which a move may change: `moves`)."""

    ends: frozenset[str]
    start: datetime  # as told
    added: int
    removed: int | None = None
    event: int | None = None
    moves: list[tuple[int, datetime]] = field(default_factory=list)  # (step, new start)

    def alive(self, step: int) -> bool:
        return self.added <= step and (self.removed is None or step < self.removed)

    def start_at(self, step: int) -> datetime:
        """Where it starts as known after `step` (its event's day then)."""
        known = [start for at, start in self.moves if at <= step]
        return known[-1] if known else self.start

    def other(self, person: str) -> str:
        (other,) = self.ends - {person}
        return other


@dataclass
class Partners:
    """A symmetric single-valued relation among several people in one pair.

    Each person has a partition of their own, kept as in `Model`: the list of the bonds
    that name them, in partition order. A bond is in two lists, placed in each after
    every bond there that starts no later than it. It ends where the first bond after it
    in *either* list starts (an end before its start is its start), so nobody ever has
    two partners at once. As in `Model`, a bond squeezed to nothing still ends the ones
    before it (a value told for a time ends what was told before it, even where another
    value then squeezes it). Taking a bond back removes it from both lists. Moving its
    event changes where it starts, never its place in the lists (see `move`).

    Only two bonds of the same pair share both lists, and the lists can order them
    differently (one placed by a month event's window in one list, by its start in the
    other). Their starts decide then: the later one does not end at the earlier one
    (`raw_end`), so the pair stays together rather than each ending the other.
    """

    lists: dict[str, list[Bond]] = field(default_factory=dict)
    step: int = 0
    events: int = 0  # events told so far: the key of the last one
    precision: dict[int, str] = field(default_factory=dict)  # event → tag or monat

    def alive(self, person: str, step: int) -> list[Bond]:
        return [b for b in self.lists.get(person, []) if b.alive(step)]

    def raw_end(self, bond: Bond, step: int, skip: Bond | None = None) -> datetime | None:
        """Where the first bond after it in either list starts, after `step` (None: none
        follows it), leaving `skip` out. Two bonds of the same pair are in both lists;
        where the lists order them differently, their starts decide: the later one does
        not end at the earlier."""
        def after(person: str, x: Bond) -> list[Bond]:
            alive = self.alive(person, step)
            return alive[alive.index(x) + 1 :]

        later = [
            b.start_at(step)
            for person in bond.ends
            for b in after(person, bond)
            if b is not skip
            and not (b.ends == bond.ends and b.start_at(step) < bond.start_at(step)
                    and any(bond in after(p, b) for p in b.ends))
        ]
        return min(later) if later else None

    def end_of(self, bond: Bond, step: int) -> datetime | None:
        """Where the bond ends as known after `step` (None: it holds on)."""
        end = self.raw_end(bond, step)
        return None if end is None else max(end, bond.start_at(step))

    def intervals(self, person: str, step: int | None = None) -> list[Interval]:
        """`person`'s partners, each as an interval whose value is the partner's name."""
        step = self.step if step is None else step
        return [
            Interval(b.other(person), b.start_at(step), self.end_of(b, step))
            for b in self.alive(person, step)
        ]

    def write(
        self, a: str, b: str, start: datetime, event: tuple[date, str] | None = None
    ) -> str:
        """Returns the outcome: geschrieben, abgeloest, nachgetragen or unveraendert. With
        `event` (first day, precision) the bond starts on the event's first day, and a
        bond that began within the event's precision precedes it."""
        self.step += 1
        return self._write(a, b, start, event)

    def write_together(self, bonds: list[tuple[str, str]], start: datetime) -> list[str]:
        """The bonds of one order, all from `start`: one step of system time, each placed
        as if written alone after the ones before it. Returns each one's outcome."""
        self.step += 1
        return [self._write(a, b, start) for a, b in bonds]

    def _write(
        self, a: str, b: str, start: datetime, event: tuple[date, str] | None = None
    ) -> str:
        """The write of this step, seeing the record as it stands in this step so far
        (the bonds its order told before it included)."""
        was = self.step
        ends = frozenset((a, b))
        edge = None
        if event is not None:
            first = first_of(event[0], event[1])
            start, edge = day_start(first), window_end(first, event[1])
        holding = [
            (bond, self.end_of(bond, was))
            for person in ends for bond in self.alive(person, was)
        ]
        if any(bond.ends == ends and Interval(b, bond.start_at(was), end).holds(start)
               for bond, end in holding):
            return "unveraendert"
        self.events += event is not None
        if event is not None:
            self.precision[self.events] = event[1]
        new = Bond(ends, start, self.step, event=self.events if event is not None else None)
        for person in ends:
            items = self.lists.setdefault(person, [])
            precede = [
                x for x in self.alive(person, was)
                if (x.start_at(was) < edge if edge else x.start_at(was) <= start)
            ]
            items.insert(items.index(precede[-1]) + 1 if precede else 0, new)
        ended = [
            bond for bond, end in holding
            if Interval("", bond.start_at(was), end).holds(start)
            or (edge and start < bond.start_at(was) < edge
                and (end is None or end > bond.start_at(was)))
        ]
        if self.end_of(new, self.step) is not None:
            return "nachgetragen"
        return "abgeloest" if ended else "geschrieben"

    def correct(self, a: str, b: str) -> bool:
        """Take back every alive bond of these two; False when there is none."""
        self.step += 1
        found = [
            bond for bond in self.alive(a, self.step - 1) if bond.ends == frozenset((a, b))
        ]
        for bond in found:
            bond.removed = self.step
        return bool(found)

    def move(self, key: int, beginn: date) -> bool:
        """Move an event from this step on; False (and nothing changes) when the move would
        change more than the event's bond and the ends that meet it, as in `Model.move`:
        the bond starts on the new day (its precision kept), and a bond in either of its
        people's lists that ended where it began ends there (unless another bond that
        follows it begins where it ended: then it keeps its end). Refused when another bond in
        either of its people's lists begins on a day from the old to the new day (both
        included), or when any other bond that holds somewhere (before or after) would
        end elsewhere, or one that held would hold nowhere (a move never reorders or
        erases values)."""
        self.step += 1
        was = self.step - 1
        moved = [b for items in self.lists.values() for b in items
                 if b.event == key and b.alive(was)]
        if not moved:
            return True  # taken back: the move changes no bond
        bond = moved[0]
        k_was = bond.start_at(was)
        k_now = day_start(first_of(beginn, self.precision[key]))
        bond.moves.append((self.step, k_now))
        everyone = list({id(b): b for items in self.lists.values() for b in items
                         if b.alive(was)}.values())
        first, last = min(k_was, k_now).date(), max(k_was, k_now).date()
        reorders = k_was != k_now and any(
            first <= b.start_at(was).date() <= last
            for person in bond.ends for b in self.alive(person, was) if b is not bond
        )
        ok = not reorders
        for b in everyone if ok else []:
            end_before, end_after = self.end_of(b, was), self.end_of(b, self.step)
            held = end_before is None or end_before > b.start_at(was)
            holds = end_after is None or end_after > b.start_at(self.step)
            if held and not holds:
                ok = False
            elif b is not bond and (held or holds):
                # Only a bond the moved one follows in a list they share can end where
                # it began (another that ends on that day ends at another bond), unless
                # another follower begins on the same instant, at its far end: then
                # that one holds the end where it was.
                end_was = self.raw_end(b, was)
                meets = end_was == k_was and any(
                    bond in (items := self.alive(p, was))[items.index(b) + 1 :]
                    for p in b.ends & bond.ends
                )
                held_there = self.raw_end(b, was, skip=bond) == end_was
                expected = k_now if meets and not held_there else end_was
                ok = ok and self.raw_end(b, self.step) == expected
        if not ok:
            bond.moves.pop()
        return ok

    def cancel(self, key: int) -> None:
        """A cancelled event: its bonds are taken back."""
        self.step += 1
        for items in self.lists.values():
            for bond in items:
                if bond.event == key and bond.alive(self.step - 1):
                    bond.removed = self.step

    def noop(self) -> None:
        self.step += 1

    def current(self, person: str) -> tuple[set[tuple[str, date]], set[tuple[str, date, date]]]:
        """`person`'s partner now (partner, ab) and former ones (…, bis): a bond's
        versions that meet are one stay, as a value's are."""
        facts, history = set(), set()
        for iv in stays(self.intervals(person)):
            if iv.end is None:
                facts.add((iv.value, iv.start.date()))
            elif iv.end > iv.start:  # (one that held nowhere is no former partner)
                history.add((iv.value, iv.start.date(), iv.end.date()))
        return facts, history

    def as_of(
        self, person: str, gueltig_am: datetime, step: int
    ) -> tuple[set[tuple[str, date]], set[tuple[str, date, date]]]:
        """`person`'s partner at `gueltig_am` as known after `step`, and the ones that had
        ended by then."""
        facts, history = set(), set()
        for iv in stays(self.intervals(person, step)):
            if iv.holds(gueltig_am):
                facts.add((iv.value, iv.start.date()))
            if iv.end is not None and iv.start < iv.end <= gueltig_am:
                history.add((iv.value, iv.start.date(), iv.end.date()))
        return facts, history
