"""A symmetric single-valued relation (partner) against its reference model
(`Partners` in tests/temporal_model.py).

A hypothesis state machine writes partner facts among four people (now, or late or
future valid times) and takes them back by corrections, through `Memory` against the
real Neo4j. After every step it compares every person's current Mappe, and their as-of
Mappe at random (gueltig_am, bekannt_am) points, with the model: whom they are with,
since when, and whom they were with until when. Nobody ever has two partners at once,
also where a correction names only one end of the fact it reinstates. At the end of
each sequence `kg check` must be clean.

CI runs a bounded number of examples; `KG_STRESS=1` runs thousands.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from kg.api import SyncMemory
from tests.temporal_model import Partners, day_start

STRESS = os.environ.get("KG_STRESS") == "1"

PEOPLE = ["Anna", "Ben", "Lena", "Tom"]
# Valid times around the store's own clock: late ones, one in the future.
INSTANTS = [
    datetime(2025, 3, 29, 12, tzinfo=UTC),
    datetime(2026, 6, 16, tzinfo=UTC),
    datetime(2026, 11, 10, tzinfo=UTC),
    datetime(2027, 2, 1, tzinfo=UTC),
]
PROBES = [
    datetime(2025, 12, 31, tzinfo=UTC),
    datetime(2026, 8, 1, tzinfo=UTC),
    datetime(2026, 11, 20, tzinfo=UTC),
    datetime(2027, 6, 1, tzinfo=UTC),
]

two = st.permutations(PEOPLE).map(lambda people: (people[0], people[1]))


def partners(m: Any) -> tuple[set[Any], set[Any]]:
    """A Mappe's partner now and former ones, as the model states them."""
    me = m.entitaet.id

    def other(f: Any) -> str:
        return str(f.objekt.name if f.subjekt.id == me else f.subjekt.name)

    facts = {
        (other(f), f.ab_datum) for f in m.fakten if f.grad == 1 and f.beziehung == "partner"
    }
    history = {
        (other(h), h.ab_datum, h.bis_datum) for h in m.historie if h.beziehung == "partner"
    }
    return facts, history


class PartnerRecord(RuleBasedStateMachine):
    store: SyncMemory

    def __init__(self) -> None:
        super().__init__()
        self.user = f"partner-{uuid.uuid4().hex[:10]}"
        self.model = Partners()
        self.known: list[datetime] = []  # instants between steps: known[k] is after step k
        self.n = 0
        # Everyone exists before the first partner fact (their Mappe can be read).
        self.order(tripel=[
            {"subjekt": p, "beziehung": "typ", "wert": "person", "herkunft": "mensch"}
            for p in PEOPLE
        ], zeitpunkt="2000-01-01T00:00:00Z")
        self.model.noop()
        self.between()
        self.ids = {
            p: str(self.run(self.store.memory.entity_id(self.user, "nova", p))) for p in PEOPLE
        }

    def run(self, coro: Any) -> Any:
        return self.store.run(coro)

    def between(self) -> None:
        """An instant after the step just done and before the next one."""
        time.sleep(0.003)
        self.known.append(datetime.now(UTC))
        time.sleep(0.003)

    def order(self, **body: Any) -> Any:
        self.n += 1
        return self.run(self.store.memory.write({
            "auftrag_id": f"o-{self.n}", "user_id": self.user, "character_id": "nova",
            **body,
        }))

    # -- operations -------------------------------------------------------------------

    @rule(people=two, when=st.one_of(st.none(), st.sampled_from(INSTANTS)))
    def write(self, people: tuple[str, str], when: datetime | None) -> None:
        a, b = people
        extra = {"zeitpunkt": when.isoformat()} if when else {}
        result = self.order(tripel=[
            {"subjekt": a, "beziehung": "partner", "objekt": b, "herkunft": "mensch"}
        ], **extra)
        expected = self.model.write(a, b, when or result.erfasst)
        assert result.ergebnisse[0].ausgang == expected, (a, b, when)
        self.between()

    @rule(people=two)
    def correct(self, people: tuple[str, str]) -> None:
        a, b = people
        result = self.order(berichtigungen=[{"subjekt": a, "beziehung": "partner", "objekt": b}])
        found = self.model.correct(a, b)
        assert (result.ergebnisse[0].ausgang == "berichtigt") == found, (a, b)
        self.between()

    # -- what must agree after every step ------------------------------------------

    @invariant()
    def current_mappen_agree(self) -> None:
        got = self.run(self.store.memory.mappen(
            self.user, "nova", [self.ids[p] for p in PEOPLE]
        ))
        for person, m in zip(PEOPLE, got, strict=True):
            assert partners(m) == self.model.current(person), person

    @invariant()
    def as_of_mappen_agree(self) -> None:
        for step in sorted({len(self.known), max(1, len(self.known) - 2)}):
            for v in PROBES:
                got = self.run(self.store.memory.mappen(
                    self.user, "nova", [self.ids[p] for p in PEOPLE],
                    gueltig_am=v, bekannt_am=self.known[step - 1],
                ))
                for person, m in zip(PEOPLE, got, strict=True):
                    assert partners(m) == self.model.as_of(person, v, step), (person, v, step)

    def teardown(self) -> None:
        try:
            self.run(self.store.memory.decay_run(self.user))  # a check needs a sweep first
            report = self.run(self.store.memory.check(self.user))
            assert report.ok, report
        finally:
            self.run(self.store.memory.purge(self.user))


@pytest.mark.slow
def test_partners_agree_with_the_reference_model(store: SyncMemory) -> None:
    PartnerRecord.store = store
    run_state_machine_as_test(
        PartnerRecord,
        settings=settings(
            max_examples=1000 if STRESS else int(os.environ.get("KG_ORACLE_EXAMPLES", "40")),
            stateful_step_count=25 if STRESS else 12,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=not STRESS,
        ),
    )


def test_partner_model_never_gives_anyone_two_partners() -> None:
    """The model is not a mirror of the store: it ends a bond at either end's next one."""
    model = Partners()
    assert model.write("Tom", "Ben", datetime(2026, 6, 16, tzinfo=UTC)) == "geschrieben"
    assert model.write("Anna", "Lena", datetime(2026, 11, 20, tzinfo=UTC)) == "geschrieben"
    late = datetime(2025, 3, 29, 12, tzinfo=UTC)
    assert model.write("Tom", "Lena", late) == "nachgetragen"
    assert model.current("Lena") == (
        {("Anna", date(2026, 11, 20))}, {("Tom", date(2025, 3, 29), date(2026, 6, 16))}
    )
    assert model.correct("Ben", "Tom")
    # Tom–Lena holds again, up to Lena's next partner, never alongside Anna.
    assert model.current("Tom") == (set(), {("Lena", date(2025, 3, 29), date(2026, 11, 20))})
    assert model.as_of("Lena", day_start(date(2026, 12, 1)), model.step) == (
        {("Anna", date(2026, 11, 20))}, {("Tom", date(2025, 3, 29), date(2026, 11, 20))}
    )
    # A store that reinstated Tom–Lena open (the defect the oracle found) would differ.
    planted = ({("Tom", date(2025, 3, 29)), ("Anna", date(2026, 11, 20))}, set())
    assert planted != model.current("Lena")


@contextmanager
def replay(store: SyncMemory) -> Iterator[PartnerRecord]:
    """A sequence the state machine found, replayed step by step (each step checks its
    outcome against the model); afterwards the current and as-of Mappen must agree and
    `kg check` must be clean."""
    PartnerRecord.store = store
    state = PartnerRecord()
    try:
        yield state
        state.current_mappen_agree()
        state.as_of_mappen_agree()
    finally:
        state.teardown()


F = datetime(2027, 2, 1, tzinfo=UTC)


def test_correcting_a_partner_that_squeezed_another_at_the_same_instant(
    store: SyncMemory,
) -> None:
    """Anna–Lena now; Anna–Ben from February (ends Anna–Lena there); Ben–Lena from the
    same instant (squeezes Anna–Ben to nothing). Taking Ben–Lena back brings Anna–Ben
    back from February, and only it: Anna–Lena also ends exactly where Ben–Lena began,
    but Anna–Ben ended it (`abgeloest_durch`); the store once reinstated Anna–Lena."""
    with replay(store) as state:
        state.write(("Anna", "Lena"), None)
        state.write(("Anna", "Ben"), F)
        state.write(("Ben", "Lena"), F)
        state.correct(("Ben", "Lena"))


def test_a_partner_squeezed_by_the_far_end_still_ends_the_one_before(
    store: SyncMemory,
) -> None:
    """Anna–Ben from February is squeezed to nothing by Ben–Lena (Ben's partition);
    Anna–Ben told again today, then Anna–Tom today: Anna–Tom ends in February, where
    Anna–Ben was told to begin (nachgetragen), as a value squeezed in one partition still
    follows in the other. The store once left Anna–Tom open."""
    with replay(store) as state:
        state.write(("Anna", "Lena"), None)
        state.write(("Anna", "Ben"), F)
        state.write(("Ben", "Lena"), F)
        state.correct(("Anna", "Lena"))
        state.write(("Anna", "Ben"), None)
        state.write(("Anna", "Tom"), None)


def test_taking_back_a_partner_ended_at_its_far_end_reinstates_open(
    store: SyncMemory,
) -> None:
    """Ben–Lena, then Anna–Ben (ends it), then Anna–Tom (ends Anna–Ben at Anna's end).
    Taking Anna–Ben back brings Ben–Lena back open: Anna–Ben's end came from Anna's
    partition, which Ben–Lena is not in. The store once carried that end over."""
    with replay(store) as state:
        state.write(("Ben", "Lena"), None)
        state.write(("Anna", "Ben"), None)
        state.write(("Anna", "Tom"), None)
        state.correct(("Anna", "Ben"))


def test_a_partner_squeezed_later_still_ends_the_one_it_ended(store: SyncMemory) -> None:
    """Ben–Lena since 2025; Anna–Ben today, and late from 10 November (ends Ben–Lena
    then); Anna–Tom from the same 10 November squeezes that Anna–Ben to nothing. Ben–Lena
    still ends on 10 November: a value told for a time ends what was told before it, as
    in a partition of one (the model once said otherwise, the store did this)."""
    with replay(store) as state:
        state.write(("Ben", "Lena"), datetime(2025, 3, 29, 12, tzinfo=UTC))
        state.write(("Anna", "Ben"), None)
        state.write(("Anna", "Ben"), None)
        state.write(("Anna", "Ben"), datetime(2026, 11, 10, tzinfo=UTC))
        state.write(("Anna", "Tom"), datetime(2026, 11, 10, tzinfo=UTC))
