"""The timeline of a pair: dated entries, NACHFOLGER chains, events of other people.

Time lives only here (rule 7). A fact valid from an event references the first entry
of its chain; moving the event creates a successor entry (old -[:NACHFOLGER]-> new,
old inactive) in one transaction, so the fact's *ab* follows without touching the fact.

Cancelling an entry (the event does not happen) takes back every fact that was valid
from it (grund `abgesagt`), by the same rule and through the same writer as a
correction: the values they had ended hold again. Moves and cancels are recorded at the
store's clock, so a read as known before them still sees the chain as it was.
"""

from __future__ import annotations

import calendar
import itertools
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import TYPE_CHECKING, Any

from pydantic import Field, ValidationError

from kg.db import Database, Record, Tx, held
from kg.errors import (
    InvalidInput,
    StoredDataError,
    TimelineError,
    UnknownEntry,
    UnknownTimelineEntity,
)
from kg.values import stored_day, stored_instant

if TYPE_CHECKING:
    from kg.writer import FaktenAgent
from kg.models import Absage, Frozen, Genauigkeit, NeuerEintrag, from_store

MONATE = (
    "Januar",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
)


#: The timeline entries a fact's dates come from, as a StoredDataError names them (the
#: active end of the chain of its `timeline_id`, and of its `timeline_bis`).
START_ENTRY = "timeline entry of the event of fact"
END_ENTRY = "timeline entry of the event that ended fact"


class Eintrag(Frozen):
    """A timeline entry as read back."""

    id: str
    typ: str
    titel: str
    beginn: date
    ende: date | None
    genauigkeit: Genauigkeit
    aktiv: bool
    abgesagt: bool = Field(False, description="The event does not happen.")
    person_id: str | None = Field(None, description="Entity the event happens to (BETRIFFT).")
    person_name: str | None = None
    fremd: bool = Field(False, description="An event of another person, not the human's time.")
    text: str = Field(description="The date as a person says it ('November 2026').")


def when_text(beginn: date, ende: date | None, genauigkeit: str) -> str:
    """A date with its precision: '3. November 2026', 'November 2026', or a span."""

    def one(d: date) -> str:
        month = f"{MONATE[d.month - 1]} {d.year}"
        return month if genauigkeit == "monat" else f"{d.day}. {month}"

    if ende is None or one(ende) == one(beginn):  # (a month's span within that month)
        return one(beginn)
    return f"{one(beginn)} bis {one(ende)}"


def normalized(entry: NeuerEintrag) -> NeuerEintrag:
    """Month precision stores the first of the month (and the span's last month-day)."""
    if entry.genauigkeit != "monat":
        return entry
    beginn = entry.beginn.replace(day=1)
    ende = None
    if entry.ende is not None:
        last = calendar.monthrange(entry.ende.year, entry.ende.month)[1]
        ende = entry.ende.replace(day=last)
    return entry.model_copy(update={"beginn": beginn, "ende": ende})


def moved_end(old_beginn: date, old_ende: date, beginn: date, months: bool) -> date:
    """The end of a span moved to `beginn` without a new end: it keeps its length, in
    months when it is of month precision before and after (January to March moved to
    February ends in April), else in days. OverflowError past 9999-12-31."""
    if not months:
        return beginn + (old_ende - old_beginn)
    span = (old_ende.year - old_beginn.year) * 12 + old_ende.month - old_beginn.month
    index = beginn.year * 12 + beginn.month - 1 + span
    year, month = divmod(index, 12)
    if year > 9999:
        raise OverflowError("date value out of range")
    return date(year, month + 1, calendar.monthrange(year, month + 1)[1])


def month_window(month: str) -> tuple[date, date]:
    """'2026-11' → first and last day of the month."""
    try:
        year, mon = (int(p) for p in month.split("-"))
        first = date(year, mon, 1)
    except ValueError:
        raise InvalidInput(f"month {month!r} is not YYYY-MM (e.g. 2026-11)") from None
    return first, first.replace(day=calendar.monthrange(year, mon)[1])


def new_entry_id() -> str:
    return uuid.uuid4().hex


def binding_key(timeline_id: str | None, fact_id: str) -> tuple[bool, str]:
    """Of several values that begin where another ends, the one that end is bound to
    (recorded in `timeline_bis`): one told without an event first (the end is then
    fixed, and stays where it is), else the one of the smallest fact id. The same
    choice every time, in a take-back and in a move."""
    return timeline_id is not None, fact_id


def entry_props(entry: NeuerEintrag) -> dict[str, Any]:
    """The properties of a new entry (month precision normalised); the writing query
    adds `t_recorded`, the store's clock."""
    entry = normalized(entry)
    return {
        "id": new_entry_id(),
        "typ": entry.typ,
        "titel": entry.titel,
        "beginn": entry.beginn,
        "ende": entry.ende,
        "genauigkeit": entry.genauigkeit,
        "aktiv": True,
        "abgesagt": False,
    }


def to_eintrag(node: Any, person_id: str | None = None, person_name: str | None = None) -> Eintrag:
    """An entry as read back from its node (and the person it names). A property stored
    outside the library is a StoredDataError that names the entry and the property."""
    ident = node.get("id")
    beginn = stored_day(node.get("beginn"), "timeline entry", ident, "beginn")
    ende = node.get("ende")
    ende = None if ende is None else stored_day(ende, "timeline entry", ident, "ende")
    if person_name is not None and not isinstance(person_name, str):
        raise StoredDataError.of("entity", person_id, "name", person_name, "not a text")
    genauigkeit = node.get("genauigkeit")
    return from_store(Eintrag, {
        "id": ident,
        "typ": node.get("typ"),
        "titel": node.get("titel"),
        "beginn": beginn,
        "ende": ende,
        "genauigkeit": genauigkeit,
        "aktiv": node.get("aktiv"),
        "abgesagt": bool(node.get("abgesagt")),
        "person_id": person_id,
        "person_name": person_name,
        "fremd": node.get("typ") == "ereignis" and person_id is not None,
        "text": when_text(beginn, ende, genauigkeit),
    }, "timeline entry", ident)


# -- used inside write transactions ------------------------------------------------


async def lock(tx: Tx, user_id: str) -> datetime:
    """Take the user's write lock; returns the store's clock for this transaction (UTC,
    with a fixed offset, as every instant the library writes)."""
    row = await tx.one("user_lock", user_id=user_id)
    assert row is not None
    held(user_id, row["jetzt"] is not None)
    return row["jetzt"].to_native().astimezone(UTC)  # type: ignore[no-any-return]


async def chain_ends(tx: Tx, user_id: str, character_id: str, eintrag_id: str) -> Record | None:
    return await tx.one(
        "timeline_chain_ends", user_id=user_id, character_id=character_id, eintrag_id=eintrag_id
    )


@dataclass(frozen=True)
class ReEnd:
    """A value a move re-ends, from now on at `at` with `timeline_bis`: either it ended
    where the moved event's value began without being recorded as ending with the event,
    and ends on the event's new day (`timeline_bis`: the event); or it was recorded as
    ending with the event, and keeps its end because at its far end another value
    (`followers`) begins on the same instant (`timeline_bis`: that value's event)."""

    fact_id: str
    subjekt_id: str
    rel: str
    at: datetime
    timeline_bis: str | None
    followers: tuple[str, ...] = ()


class _Unmoved(Exception):
    """A move to where the entry already is: its transaction is rolled back."""


@dataclass
class _Value:
    """One value of a single-valued relation as a move would leave it."""

    fact: str  # 'Lena wohnt_in Berlin', for messages
    objekt: str
    start: datetime
    end: datetime | None


def _squeezed_before(g: Record, f: Record, far: list[Record]) -> bool:
    """True when the value `g`, squeezed to nothing in its partition, comes before `f`
    there: a value that squeezed it (its recorded follower) begins no later than `f`
    (as the planner's `_squeezed_before`). Such a value precedes `f`, so it does not
    follow it, even where it begins on the instant `f` ends (Tom–Ben by an event moved
    into the window of a month event that Tom–Lena has: placed before Tom–Lena)."""
    start, end = _utc(g, "beginn"), _utc(g, "ende")
    if end is None or end > start:
        return False
    followers = set(g["followers"] or ())
    return any(
        x["id"] in followers and x["subjekt_id"] == g["subjekt_id"]
        and _utc(x, "beginn") <= _utc(f, "beginn")
        for x in far
    )


def _day(entry: Any, prop: str) -> date:
    """A day of an entry's node (`beginn`, `ende`) as a Python date."""
    return stored_day(entry.get(prop), "timeline entry", entry.get("id"), prop)


#: The fact property a neighbour's time comes from when its value has no event.
_FACT_TIME = {"beginn": "t_valid", "ende": "t_invalid"}


def _utc(row: Record, key: str) -> Any:
    """A neighbour's `beginn` or `ende` (a driver instant) as an aware UTC datetime
    (None stays None)."""
    return stored_instant(row[key], "fact", row["id"], _FACT_TIME[key])


# -- the timeline's own operations -------------------------------------------------


class Timeline:
    """Add, move, cancel and read the entries of a pair.

    Entries are bi-temporal like facts: each records when the store learned it
    (`t_recorded`), a moved entry when it was replaced (`ersetzt_am`), a cancelled one
    when it was cancelled (`abgesagt_am`), all from the store's clock. What a cancel
    does to facts is decided by the one writer (`FaktenAgent.cancel_event`).
    """

    def __init__(self, db: Database, agent: FaktenAgent) -> None:
        self.db = db
        self.agent = agent
        self.einwertig = agent.canon.einwertig_types

    async def add(
        self,
        user_id: str,
        character_id: str,
        entry: NeuerEintrag,
        betrifft_id: str | None = None,
    ) -> Eintrag:
        async def work(tx: Tx) -> str:
            jetzt = await lock(tx, user_id)
            row = await tx.one(
                "timeline_create",
                user_id=user_id,
                character_id=character_id,
                props=entry_props(entry),
                betrifft={} if betrifft_id is None else {"id": betrifft_id},
                jetzt=jetzt,
            )
            assert row is not None
            if not row["betrifft"]:  # raised in the transaction: the entry is rolled back
                raise UnknownTimelineEntity(f"no entity with id {betrifft_id!r} for this user")
            return str(row["id"])

        new_id = await self.db.write(work)
        return await self.get(user_id, character_id, new_id)

    async def move(
        self,
        user_id: str,
        character_id: str,
        eintrag_id: str,
        beginn: date,
        ende: date | None = None,
        genauigkeit: Genauigkeit | None = None,
        titel: str | None = None,
    ) -> Eintrag:
        """Create the successor of the chain's active end with the new date. Without
        `ende`, a span keeps its length (its end moves with its beginning); give `ende`
        equal to `beginn` to make it a single day."""

        async def work(tx: Tx) -> str:
            jetzt = await lock(tx, user_id)
            ends = await self._active_end(tx, user_id, character_id, eintrag_id, "move")
            # The active entry as stored, read as every read reads it (a property set by
            # hand is a StoredDataError that names it, not a KeyError or the caller's
            # invalid input).
            old = to_eintrag(ends["active"])
            neues_ende = ende
            if neues_ende is None and old.ende is not None:
                months = old.genauigkeit == "monat" and genauigkeit in (None, "monat")
                try:
                    neues_ende = moved_end(old.beginn, old.ende, beginn, months)
                except OverflowError:
                    raise InvalidInput(
                        f"a span beginning {beginn} would end after 9999-12-31: give its end"
                    ) from None
            try:
                entry = NeuerEintrag(
                    typ=old.typ,
                    titel=titel or old.titel,
                    beginn=beginn,
                    ende=neues_ende,
                    genauigkeit=genauigkeit or old.genauigkeit,
                )
            except ValidationError as exc:
                raise InvalidInput(
                    "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
                ) from None
            same = normalized(entry)
            if (same.titel, same.beginn, same.ende, same.genauigkeit) == (
                    old.titel, old.beginn, old.ende, old.genauigkeit):
                # Nothing to move: a successor that says the same would only lengthen the
                # chain, and a cancel or move of it would have one more entry to walk.
                # Rolled back, so not even the user's clock moves.
                raise _Unmoved
            re_ends, typed = await self._keep_order(tx, user_id, character_id, ends, entry)
            row = await tx.one(
                "timeline_move",
                user_id=user_id,
                character_id=character_id,
                eintrag_id=eintrag_id,
                props=entry_props(entry),
                jetzt=jetzt,
            )
            if row is None:
                raise TimelineError(f"entry {eintrag_id!r} could not be moved")
            if re_ends or typed:
                await self.agent.move_event(
                    tx, user_id, character_id, str(row["id"]), re_ends, jetzt, typed)
            return str(row["id"])

        try:
            new_id = await self.db.write(work)
        except _Unmoved:
            new_id = eintrag_id
        return await self.get(user_id, character_id, new_id)

    async def cancel(
        self, user_id: str, character_id: str, eintrag_id: str
    ) -> Absage:
        """Cancel the active end; facts valid from it are taken back, old values hold
        again (an audited order of the one writer, in the same transaction)."""

        async def work(tx: Tx) -> Absage:
            jetzt = await lock(tx, user_id)
            ends = await self._active_end(tx, user_id, character_id, eintrag_id, "cancel")
            await tx.run(
                "timeline_cancel",
                user_id=user_id,
                character_id=character_id,
                eintrag_id=eintrag_id,
                jetzt=jetzt,
            )
            facts = await tx.run(
                "timeline_facts",
                user_id=user_id,
                character_id=character_id,
                first_id=ends["first_id"],
            )
            # Both ends of a symmetric fact: a partner it ended at either end may hold
            # again, up to the next value at that partner's other end.
            subjects = {(f["start_id"], f["rel_type"]) for f in facts} | {
                (f["end_id"], f["rel_type"]) for f in facts
                if f["end_id"] is not None and f["rel_type"] in self.agent.symmetric_types
            } | {
                # The type facts of the objects whose type a fact implies (`wohnt_in` →
                # ort): a type only the cancelled facts implied goes with them.
                (f["end_id"], "TYP") for f in facts
                if f["end_id"] is not None and f["rel_type"] in self.agent.typed_in
            }
            ergebnis = await self.agent.cancel_event(
                tx, user_id, character_id, ends["first_id"], eintrag_id, sorted(subjects),
                jetzt,
            )
            result = ergebnis.ergebnisse[0]
            return Absage(auftrag_id=ergebnis.auftrag_id, retired=result.abgeloest,
                          reinstated=result.wieder_gueltig)

        return await self.db.write(work)

    async def link(
        self, user_id: str, character_id: str, eintrag_id: str, betrifft_id: str
    ) -> list[Eintrag]:
        """Name the person a chain is about on each of its entries that names nobody (an
        ereignis an older version wrote without its person, or whose link a hand edit
        deleted: `kg check`'s `ereignis_person`, `timeline_person`). Any entry of the
        chain, of any state; the entries' dates, facts and orders stay as they are.
        Refused when an entry of the chain names another person (a chain names one).
        Returns the chain, oldest first."""

        async def work(tx: Tx) -> None:
            await lock(tx, user_id)
            rows = await tx.run(
                "timeline_chain", user_id=user_id, character_id=character_id,
                eintrag_id=eintrag_id,
            )
            if not rows:
                raise UnknownEntry(f"no timeline entry {eintrag_id!r} in this pair")
            entries = [to_eintrag(r["eintrag"], r["person_id"], r["person_name"]) for r in rows]
            others = sorted({
                f"{e.person_name!r} ({e.person_id})" for e in entries
                if e.person_id is not None and e.person_id != betrifft_id
            })
            if others:
                raise TimelineError(
                    f"the chain of entry {eintrag_id!r} already names {', '.join(others)}: "
                    "a chain names one person, and a link never replaces one — if that "
                    "link is wrong, cancel the entry (which takes back the facts valid "
                    "from it) and add it again with the right person"
                )
            missing = sorted({e.id for e in entries if e.person_id is None})
            if not missing:
                return
            row = await tx.one(
                "timeline_link", user_id=user_id, character_id=character_id, ids=missing,
                betrifft_id=betrifft_id,
            )
            assert row is not None
            if not row["person"]:  # raised in the transaction: nothing is linked
                raise UnknownTimelineEntity(f"no entity with id {betrifft_id!r} for this user")

        await self.db.write(work)
        return await self.chain(user_id, character_id, eintrag_id)

    async def _keep_order(
        self, tx: Tx, user_id: str, character_id: str, ends: Record, entry: NeuerEintrag
    ) -> tuple[list[ReEnd], list[str]]:
        """A move keeps valid time a partition and changes nothing but the event: in each
        single-valued relation the event's value starts on the new day, and a value that
        ended where the event's value began ends there. The move is refused when another
        value of the relation begins on a day from the old to the new day, or when it
        would make two values overlap, or leave a value that held holding nowhere (a
        move never reorders or erases values). A value squeezed to nothing still ends the
        value before it: the event's own value, held nowhere, must not begin inside a
        value it does not precede (in every single-valued relation); of a symmetric
        relation, a carried end must not pass the start of such a value at the far end
        where it comes after the carried one, and a bond that holds nowhere keeps the end
        a far value holds, and every follower it names.

        A value can end where the event's value began without being recorded as ending
        with the event (its recorded follower was squeezed to nothing on that day): its
        new end is a new version. Returns those re-ends, for the one writer to record.
        `ends` are the chain's (`_active_end`), read under the user's lock."""
        eintrag_id = ends["active_id"]  # the entry moved: `_active_end` made sure
        first_id = ends["first_id"]
        k_was = datetime.combine(_day(ends["active"], "beginn"), time.min, tzinfo=UTC)
        after = datetime.combine(normalized(entry).beginn, time.min, tzinfo=UTC)
        # Days on which no other value may begin (both ends included: values that begin
        # on the same day are ordered by their day alone, so a tie is a reorder too).
        first_day, last_day = sorted((k_was.date(), after.date()))
        groups: dict[tuple[str, str], list[_Value]] = {}
        re_ends: list[ReEnd] = []
        neighbours = await tx.run(
            "timeline_move_neighbours", user_id=user_id, character_id=character_id,
            first_id=first_id, einwertig=self.einwertig,
            symmetric=sorted(self.agent.symmetric_types),
        )
        # The far partitions (of a symmetric relation's values' other ends) only bound
        # the values whose end the move carries (below).
        far = [f for f in neighbours if f["far"]]
        neighbours = [f for f in neighbours if not f["far"]]
        for f in neighbours if k_was != after else []:
            day = _utc(f, "beginn").date()
            if f["timeline_id"] != first_id and first_day <= day <= last_day:
                # (The day the move would give it: a month's first day at month
                # precision, not the day typed; a stranger's audit read "to 2027-03-15
                # … begins on 2027-03-07, between the event's old and new day".)
                raise TimelineError(
                    f"moving entry {eintrag_id!r} to {after.date()} would carry the event to "
                    f"or past '{f['subjekt']} {f['rel'].lower()} {f['objekt']}', which "
                    f"begins on {day}, between the event's old and new day: a move never "
                    "reorders values — correct that value or cancel the event instead"
                )
        # Per partition, the values held nowhere (squeezed to nothing): of a symmetric
        # relation, a value ends where the event's value began only if its recorded
        # follower in that partition is one of them (else it ends at a value of the
        # other end's partition that merely begins on the same day).
        nowhere = {
            (f["subjekt_id"], f["id"]) for f in neighbours
            if f["ende"] is not None and _utc(f, "ende") <= _utc(f, "beginn")
        }
        # Of a symmetric relation, a value recorded as ending with the event that, at its
        # far end, another value follows on the same instant keeps its end: it ended
        # there at both ends (Ben–Tom ends where Anna–Ben and Tom–Lena begin; moving
        # Anna–Ben's event leaves Ben–Tom ending where Tom–Lena begins). From now on it
        # is recorded as ending with that value.
        held_ends: dict[str, ReEnd] = {}
        own_ids = {f["id"] for f in neighbours if f["timeline_id"] == first_id}
        for f in neighbours if k_was != after else []:
            if (f["timeline_bis"] != first_id or f["rel"] not in self.agent.symmetric_types
                    or f["ende"] is None):
                continue
            at = _utc(f, "ende")
            far_end = {g["subjekt_id"] for g in far if g["id"] == f["id"]}
            # Held nowhere, `f` ends where it begins, and a value that begins there may
            # come before it (one `f` ended, or one ended by another value before `f`
            # began): only a value `f` names as its follower comes after it. (Never a
            # value that names `f` as its own follower: `f` ended it.)
            nowhere_f = at <= _utc(f, "beginn")
            there = [
                g for g in far
                if g["subjekt_id"] in far_end and g["id"] != f["id"]
                and g["timeline_id"] != first_id and _utc(g, "beginn") == at
                and f["id"] not in (g["followers"] or ())
                and (not nowhere_f or g["id"] in (f["followers"] or ()))
                and not _squeezed_before(g, f, far)
            ]
            if there and f["id"] not in held_ends:
                # Of several, the one the end is bound to (`binding_key`).
                first = min(there, key=lambda g: binding_key(g["timeline_id"], g["id"]))
                if after < at and at > _utc(f, "beginn"):
                    # Moved earlier, the event's value would begin inside the bond,
                    # which keeps the end the far value holds: two partners at once, or
                    # an end moved away from the value that follows there. (A bond that
                    # holds nowhere keeps its end and still holds nowhere.)
                    raise TimelineError(
                        f"moving entry {eintrag_id!r} to {entry.beginn} would end "
                        f"'{f['subjekt']} {f['rel'].lower()} {f['objekt']}' on "
                        f"{after.date()}, though '{first['subjekt']} {first['rel'].lower()} "
                        f"{first['objekt']}' begins where it ends now ({at.date()}): a move "
                        "never reorders values, nor moves an end that another value holds "
                        "— correct one of them or cancel the event instead"
                    )
                named = {g["id"] for g in there}
                if at <= _utc(f, "beginn"):
                    # Held nowhere, it still comes before every value it names (a move
                    # never reorders), also the event's own, whichever day that begins.
                    present = {g["id"] for g in neighbours} | {g["id"] for g in far}
                    named |= {fid for fid in f["followers"] or () if fid in present}
                held_ends[f["id"]] = ReEnd(
                    f["id"], f["subjekt_id"], f["rel"], at, first["timeline_id"],
                    tuple(sorted(named)),
                )
        re_ends.extend(held_ends.values())
        nowhere_own: list[Record] = []  # the event's values that hold nowhere after it
        for f in neighbours:
            was_start: datetime = _utc(f, "beginn")
            was_end: datetime | None = _utc(f, "ende")
            own = f["timeline_id"] == first_id
            start = after if own else was_start
            fact = f"'{f['subjekt']} {f['rel'].lower()} {f['objekt']}'"
            # Ends where the event's value begins without being recorded so: its
            # recorded follower begins on the same day, so it ends at the earlier of the
            # two, and that must be the event's new day (a move never reorders values).
            meets = f["timeline_bis"] != first_id and not own and was_end == k_was
            if meets and f["rel"] in self.agent.symmetric_types and f["followers"]:
                # The event's own values count only where it names nothing else: another
                # follower that begins there holds the end (named with the event's value,
                # one per end at the same instant, it is the one the end is bound to), and
                # a move later leaves it there.
                others = [fid for fid in f["followers"] if fid not in own_ids]
                if (others and len(others) < len(f["followers"]) and after < k_was
                        and (was_end is None or was_end > was_start)):
                    # The event's value follows it, and so does another that begins where
                    # it ends: moved earlier, the event's value would end it there and
                    # take the end from the value that holds it. (One that holds nowhere
                    # keeps its end and still holds nowhere.)
                    raise TimelineError(
                        f"moving entry {eintrag_id!r} to {entry.beginn} would end {fact} "
                        f"on {after.date()}, though another value begins where it ends now "
                        f"({k_was.date()}): a move never reorders values, nor moves an end "
                        "that another value holds — correct one of them or cancel the "
                        "event instead"
                    )
                meets = any((f["subjekt_id"], fid) in nowhere for fid in others or f["followers"])
            held = was_end is None or was_end > was_start
            carried = f["timeline_bis"] == first_id and f["id"] not in held_ends
            end = after if carried else was_end
            if meets:
                assert was_end is not None
                end = min(after, was_end)
                if end != after and (held or end > start):
                    raise TimelineError(
                        f"moving entry {eintrag_id!r} to {entry.beginn} would leave {fact} "
                        f"ending on {end.date()}, where another value begins, and no longer "
                        "where the event's value begins: a move never reorders values — "
                        "correct one of them or cancel the event instead"
                    )
            if (own and not held and f["timeline_bis"] is None and end is not None
                    and start < end):
                # The event's value held nowhere: a value that began no later squeezed it,
                # and its end was kept as its start, a fixed instant. Moved earlier than
                # that, it would hold from the new day to the old one; it still follows
                # that value (a move never reorders), so it ends where it begins again.
                if f["id"] not in {r.fact_id for r in re_ends}:
                    re_ends.append(ReEnd(f["id"], f["subjekt_id"], f["rel"], after, None,
                                         tuple(f["followers"] or ())))
                end = start
            if end is not None and end <= start:
                if held and own:
                    raise TimelineError(
                        f"moving entry {eintrag_id!r} to {entry.beginn} would carry {fact} "
                        f"to or past the start of the value that follows it ({end.date()}): "
                        "a move never reorders values — correct that value or cancel the "
                        "event instead"
                    )
                if held:
                    raise TimelineError(
                        f"moving entry {eintrag_id!r} to {entry.beginn} would leave {fact} "
                        f"(from {start.date()}) holding nowhere: a move never reorders "
                        "values or erases one — correct that value or cancel the event "
                        "instead"
                    )
                if own:
                    nowhere_own.append(f)
                continue  # holds nowhere, before and after
            if meets and end != was_end and f["id"] not in {r.fact_id for r in re_ends}:
                # (a symmetric value comes once for each of its ends: re-ended once)
                re_ends.append(ReEnd(f["id"], f["subjekt_id"], f["rel"], after, first_id))
            groups.setdefault((f["subjekt_id"], f["rel"]), []).append(
                _Value(fact, f["objekt"], start, end)
            )
        # A value whose end the move carries ends there at its other end too, where it
        # must not pass the start of a value of that person's (Anna–Ben carried past
        # Ben–Tom would give Ben two partners).
        carried = {r.fact_id for r in re_ends if r.fact_id not in held_ends}
        carried_far: list[tuple[Record, datetime]] = []  # (value, its end before the move)
        for f in far:
            start, end = _utc(f, "beginn"), _utc(f, "ende")
            if (f["timeline_bis"] == first_id and f["id"] not in held_ends) or f["id"] in carried:
                if end is not None:
                    carried_far.append((f, end))
                end = after
            if end is None or end > start:
                fact = f"'{f['subjekt']} {f['rel'].lower()} {f['objekt']}'"
                groups.setdefault((f["subjekt_id"], f["rel"]), []).append(
                    _Value(fact, f["objekt"], start, end)
                )
        # Nor the start of a value there that holds nowhere but does not precede it: that
        # one still ends it (Anna–Lena carried past Lena–Tom, which Ben–Tom squeezes at
        # Tom's end). A value squeezed to nothing precedes the carried one where a value
        # it names as its follower in that partition begins no later than that one (its
        # end alone does not tell: it may come from its other end's partition).
        for f, was_end in carried_far:
            for g in far:
                g_start, g_end = _utc(g, "beginn"), _utc(g, "ende")
                if (g["subjekt_id"] == f["subjekt_id"] and g["rel"] == f["rel"]
                        and g["id"] != f["id"] and g_end is not None and g_end <= g_start
                        and was_end < g_start < after
                        and not _squeezed_before(g, f, far)):
                    raise TimelineError(
                        f"moving entry {eintrag_id!r} to {entry.beginn} would carry the end "
                        f"of '{f['subjekt']} {f['rel'].lower()} {f['objekt']}' past "
                        f"'{g['subjekt']} {g['rel'].lower()} {g['objekt']}', which begins "
                        f"on {g_start.date()} and ends it there: a move never reorders "
                        "values — correct one of them or cancel the event instead"
                    )
        # The event's value that holds nowhere still ends the value before it (a value
        # squeezed to nothing in one end's partition ends the one before it in the
        # other's): it must not begin inside a value that it does not precede, whose end
        # the move leaves where it is (Anna–Ben squeezed at Ben's end, moved back into
        # Anna–Lena, which ends where Lena–Tom begins). It precedes a value that begins
        # no earlier than one of its recorded followers in that partition.
        for v in nowhere_own:
            followers = set(v["followers"] or ())
            starts = [
                after if g["timeline_id"] == first_id else _utc(g, "beginn")
                for g in neighbours
                if g["subjekt_id"] == v["subjekt_id"] and g["id"] in followers
            ]
            for value in groups.get((v["subjekt_id"], v["rel"]), []):
                inside = value.start < after and (value.end is None or value.end > after)
                if inside and not any(s <= value.start for s in starts):
                    raise TimelineError(
                        f"moving entry {eintrag_id!r} to {entry.beginn} would make "
                        f"'{v['subjekt']} {v['rel'].lower()} {v['objekt']}' begin inside "
                        f"{value.fact} (from {value.start.date()}), which ends elsewhere: a "
                        "move never reorders values — correct one of them or cancel the "
                        "event instead"
                    )
        for values in groups.values():
            values.sort(key=lambda v: v.start)
            for value, later in itertools.pairwise(values):
                if value.end is None or value.end > later.start:
                    raise TimelineError(
                        f"moving entry {eintrag_id!r} to {entry.beginn} would make "
                        f"{value.fact} overlap '{later.objekt}' (from {later.start.date()}): "
                        "a move never reorders values — correct one of them or cancel the "
                        "event instead"
                    )
        # The entities whose type begins or ends with the event, and the ends of the
        # values that do: each of their types from now on must still fit their facts
        # (`FaktenAgent.move_event`). Moved later, "Lena wohnt in Berlin" left "Lena
        # wohnt in Kassel" holding on beside Kassel, an organisation since.
        typed = sorted({
            end for f in neighbours
            if first_id in (f["timeline_id"], f["timeline_bis"])
            and (f["rel"] == "TYP" or k_was != after)
            for end in ((f["subjekt_id"],) if f["rel"] == "TYP"
                        else (f["subjekt_id"], f["objekt_id"]))
            if end is not None
        })
        return re_ends, typed

    async def _active_end(
        self, tx: Tx, user_id: str, character_id: str, eintrag_id: str, verb: str
    ) -> Record:
        """The chain's ends (`timeline_chain_ends`) when `eintrag_id` is its active end;
        a TimelineError that says why not otherwise."""
        ends = await chain_ends(tx, user_id, character_id, eintrag_id)
        if ends is None:
            raise UnknownEntry(f"no timeline entry {eintrag_id!r} in this pair")
        if ends["abgesagt"]:
            raise TimelineError(f"entry {eintrag_id!r} is cancelled; it cannot {verb}")
        if ends["active_id"] != eintrag_id:
            raise TimelineError(
                f"entry {eintrag_id!r} is inactive (it was moved); {verb} the active entry "
                f"{ends['active_id']!r} of its chain instead"
            )
        return ends

    async def get(self, user_id: str, character_id: str, eintrag_id: str) -> Eintrag:
        chain = await self.chain(user_id, character_id, eintrag_id)
        for entry in chain:
            if entry.id == eintrag_id:
                return entry
        raise UnknownEntry(f"no timeline entry {eintrag_id!r} in this pair")

    async def active(self, user_id: str, character_id: str, eintrag_id: str) -> Eintrag:
        """`aktive_zeile`: from any entry of a chain, its active end (one query: the
        chain's, oldest first; not `timeline_chain_ends`, which moves and cancels run
        after the user's lock, so that the server keeps one plan of it, not two)."""
        return (await self.chain(user_id, character_id, eintrag_id))[-1]

    async def chain(self, user_id: str, character_id: str, eintrag_id: str) -> list[Eintrag]:
        rows = await self.db.query(
            "timeline_chain", user_id=user_id, character_id=character_id, eintrag_id=eintrag_id
        )
        if not rows:
            raise UnknownEntry(f"no timeline entry {eintrag_id!r} in this pair")
        return [to_eintrag(r["eintrag"], r["person_id"], r["person_name"]) for r in rows]

    async def window(self, user_id: str, character_id: str, von: date, bis: date) -> list[Eintrag]:
        if bis < von:
            raise InvalidInput(f"the window ends ({bis}) before it starts ({von})")
        rows = await self.db.query(
            "timeline_window", user_id=user_id, character_id=character_id, von=von, bis=bis
        )
        return [to_eintrag(r["eintrag"], r["person_id"], r["person_name"]) for r in rows]
