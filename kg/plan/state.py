"""What an order reads and writes: the state of its entities, facts and chains, and
the operations its plan applies (plain data, no database).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any


def new_id() -> str:
    return uuid.uuid4().hex



@dataclass
class EntityState:
    id: str
    name: str
    typ: str | None  # None: no type fact in the pair (counts as sonstiges)
    merkmale: list[str] = field(default_factory=list)


@dataclass
class FactState:
    """The current version of a fact (its record as known now), or a planned new one.

    `start` and `end` are the effective valid interval: from the timeline chain's active
    entry where the fact starts or ends with an event, else `t_valid` / `t_invalid`.
    """

    id: str
    rel: str
    start_id: str
    end_id: str | None
    wert: str | None
    start: datetime
    end: datetime | None = None
    aktiv: bool = True
    grund: str | None = None
    version: int = 1
    props: dict[str, Any] = field(default_factory=dict)  # the stored version's properties
    new: dict[str, Any] | None = None  # the version this order writes, if any
    auftrag_id: str | None = None  # the order that wrote it
    herkunft: str | None = None
    touched: bool = False  # re-asserted since it was written (a type: stated, not implied)

    @property
    def valid(self) -> bool:
        """True while it is taken to have held at all (not corrected or cancelled)."""
        return self.grund not in ("berichtigt", "abgesagt")

    def contains(self, instant: datetime) -> bool:
        return self.start <= instant and (self.end is None or instant < self.end)

    @property
    def empty(self) -> bool:
        return self.end is not None and self.end <= self.start

    def span(self) -> Span:
        """What it says of its valid time now (compared before and after a take-back or a
        move: `Planner.type_clash`)."""
        return Span(self.start, self.end, self.grund, self.aktiv)


@dataclass(frozen=True)
class Span:
    """A fact's valid time and state at one moment of a plan."""

    start: datetime
    end: datetime | None
    grund: str | None
    aktiv: bool

    @property
    def empty(self) -> bool:
        """Squeezed to nothing: it holds nowhere."""
        return self.end is not None and self.end <= self.start

    def stands(self, now: datetime) -> bool:
        """Active, or a value superseded from a day ahead that holds on until then (the
        Mappe shows it: "noch bis")."""
        return self.aktiv or (self.grund == "abgeloest" and self.end is not None
                              and self.end > now and not self.empty)

    def holds_from(self, now: datetime) -> bool:
        """Never taken back, not squeezed to nothing, and not ended by `now`: it holds
        then or later (a type's span the type checks compare with)."""
        return (self.grund in (None, "abgeloest") and not self.empty
                and (self.end is None or self.end > now))


#: Where a value began: its start, and the first id of the event it began with (if any).
Place = tuple[datetime, str | None]


@dataclass(frozen=True)
class Taken:
    """What a taken-back fact's current version said, before it was taken back."""

    id: str
    t_valid: datetime
    t_invalid: Any
    timeline_id: str | None
    timeline_bis: str | None
    followers: tuple[str, ...]  # the facts that follow it where it ends (abgeloest_durch)
    end: datetime | None
    open: bool


@dataclass
class ChainState:
    first_id: str
    abgesagt: bool
    beginn: datetime  # the active entry's first instant
    window_end: datetime  # the end of its precision (its day or month)


@dataclass
class State:
    """What the database holds for the entities, relations and entries of one order."""

    entities: dict[str, EntityState] = field(default_factory=dict)
    by_name: dict[str, list[str]] = field(default_factory=dict)
    facts: dict[str, FactState] = field(default_factory=dict)
    chains: dict[str, ChainState] = field(default_factory=dict)
    #: Names of entities the order does not name but a fact of it reaches (the other
    #: end of a binding, a step on a transitive path), for messages.
    names: dict[str, str] = field(default_factory=dict)


@dataclass
class Operations:
    """Everything an order writes, applied by one query."""

    entities: list[dict[str, Any]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    close: list[dict[str, Any]] = field(default_factory=list)  # versions to close
    touch: list[dict[str, Any]] = field(default_factory=list)
    facts: list[FactState] = field(default_factory=list)  # new versions to write

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



def taken_of(fact: FactState) -> Taken:
    """Where a fact's current version starts and ends, as its stored references say."""
    return Taken(
        id=fact.id,
        t_valid=as_utc(fact.props["t_valid"]),
        t_invalid=fact.props.get("t_invalid"),
        timeline_id=fact.props.get("timeline_id"),
        timeline_bis=fact.props.get("timeline_bis"),
        followers=tuple(fact.props.get("abgeloest_durch") or ()),
        end=fact.end,
        open=fact.aktiv,
    )


def day_start(day: date) -> datetime:
    """The first instant (UTC) of a timeline day: where a fact from that event starts."""
    return datetime.combine(day, time.min, tzinfo=UTC)


#: The last instant the calendar holds: the end of a window that closes on 31 December 9999.
END_OF_TIME = datetime.max.replace(tzinfo=UTC)


def precision_end(day: date, genauigkeit: str) -> datetime:
    """The end of the window an event's start is known to: its day, or its month (the
    calendar's last instant for December 9999, whose window ends past it)."""
    try:
        if genauigkeit == "monat":
            first = day.replace(day=1)
            return day_start(first.replace(year=first.year + 1, month=1) if first.month == 12
                             else first.replace(month=first.month + 1))
        return day_start(day) + timedelta(days=1)
    except (OverflowError, ValueError):
        return END_OF_TIME


def as_utc(value: Any) -> datetime:
    """A stored instant (driver or Python value) as an aware UTC datetime."""
    native = value.to_native() if hasattr(value, "to_native") else value
    return native.astimezone(UTC)  # type: ignore[no-any-return]
