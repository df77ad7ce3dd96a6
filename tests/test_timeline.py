"""The timeline: entries, NACHFOLGER chains, facts valid from an event."""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any

import pytest

from kg.errors import InvalidInput, TimelineError
from kg.models import NeuerEintrag
from kg.timeline import Eintrag, month_window, moved_end, when_text
from tests.conftest import Pair, t


def add(pair: Pair, titel: str = "Zahnarzt", **kw: Any) -> str:
    entry = NeuerEintrag(titel=titel, **{"typ": "termin", "beginn": date(2026, 11, 3), **kw})
    return pair.store.run(pair.store.memory.timeline_add(pair.user_id, "nova", entry)).id


def move(pair: Pair, eintrag_id: str, beginn: date, **kw: Any) -> Eintrag:
    return pair.store.run(
        pair.store.memory.timeline_move(pair.user_id, "nova", eintrag_id, beginn, **kw)
    )


def test_when_text_keeps_precision() -> None:
    assert when_text(date(2026, 11, 1), None, "monat") == "November 2026"
    assert when_text(date(2026, 11, 3), None, "tag") == "3. November 2026"
    assert month_window("2026-02") == (date(2026, 2, 1), date(2026, 2, 28))
    with pytest.raises(InvalidInput):
        month_window("November")


def test_a_span_within_one_month_of_month_precision_reads_as_that_month() -> None:
    """A three-day appointment moved to "in May" (month precision) read "Mai 2026 bis Mai
    2026" (a stranger's attack)."""
    assert when_text(date(2026, 5, 1), date(2026, 5, 31), "monat") == "Mai 2026"
    assert when_text(date(2026, 5, 1), date(2026, 6, 30), "monat") == "Mai 2026 bis Juni 2026"
    assert when_text(date(2026, 5, 1), date(2026, 5, 3), "tag") == "1. Mai 2026 bis 3. Mai 2026"


def test_end_before_start_is_rejected() -> None:
    with pytest.raises(ValueError, match="before"):
        NeuerEintrag(titel="x", beginn=date(2026, 11, 5), ende=date(2026, 11, 1))


def test_move_creates_a_successor_and_aktive_zeile_follows(pair: Pair) -> None:
    first = add(pair)
    second = move(pair, first, date(2026, 11, 10))
    third = move(pair, second.id, date(2026, 11, 17))
    chain = pair.store.run(pair.store.memory.timeline_chain(pair.user_id, "nova", second.id))
    assert [e.id for e in chain] == [first, second.id, third.id]
    assert [e.aktiv for e in chain] == [False, False, True]
    for any_id in (first, second.id, third.id):
        active = pair.store.run(pair.store.memory.timeline_active(pair.user_id, "nova", any_id))
        assert active.id == third.id and active.beginn == date(2026, 11, 17)


def test_a_move_to_where_the_entry_is_writes_nothing(pair: Pair) -> None:
    """Found by a stranger's attack: a move to the entry's own day wrote a successor that
    said the same. Now it answers the entry as it is; a move with anything new (an
    end, a precision) still moves it."""
    first = add(pair)
    active = pair.store.run(pair.store.memory.timeline_active(pair.user_id, "nova", first))
    clock = "MATCH (n:Nutzer {id: $u}) RETURN n.uhr AS uhr, n.writes AS writes"
    before = pair.cypher(clock, u=pair.user_id)
    same = move(pair, first, active.beginn)
    assert same.id == first
    assert pair.cypher(clock, u=pair.user_id) == before  # rolled back: not even the clock
    assert same.model_dump() == active.model_dump()
    chain = pair.store.run(pair.store.memory.timeline_chain(pair.user_id, "nova", first))
    assert [e.id for e in chain] == [first]
    longer = move(pair, first, active.beginn, ende=date(2026, 11, 4))
    assert longer.id != first and (longer.beginn, longer.ende) == (active.beginn, date(2026, 11, 4))


def test_a_moved_span_keeps_its_length_unless_given_an_end(pair: Pair) -> None:
    """Moving a holiday of 20-27 December to begin on the 21st moves its end too; it never
    silently becomes a single day."""
    first = add(pair, "Urlaub", beginn=date(2026, 12, 20), ende=date(2026, 12, 27))
    moved = move(pair, first, date(2026, 12, 21))
    assert (moved.beginn, moved.ende) == (date(2026, 12, 21), date(2026, 12, 28))
    shorter = move(pair, moved.id, date(2026, 12, 22), ende=date(2026, 12, 24))
    assert (shorter.beginn, shorter.ende) == (date(2026, 12, 22), date(2026, 12, 24))
    one_day = move(pair, shorter.id, date(2026, 12, 23), ende=date(2026, 12, 23))
    assert (one_day.beginn, one_day.ende) == (date(2026, 12, 23), date(2026, 12, 23))


def test_a_moved_month_span_keeps_its_months(pair: Pair) -> None:
    """January to March, moved to begin in February, ends in April: three months stay
    three months (a length in days, 89, ran to the end of May)."""
    first = add(pair, "Kurs", beginn=date(2027, 1, 1), ende=date(2027, 3, 31),
                genauigkeit="monat")
    moved = move(pair, first, date(2027, 2, 1))
    assert (moved.beginn, moved.ende) == (date(2027, 2, 1), date(2027, 4, 30))
    as_days = move(pair, moved.id, date(2027, 2, 10), genauigkeit="tag")
    assert (as_days.beginn, as_days.ende) == (date(2027, 2, 10), date(2027, 5, 9))  # 88 days


def test_moved_end_keeps_months_or_days() -> None:
    assert moved_end(date(2027, 1, 1), date(2027, 3, 31), date(2027, 11, 1), True) == \
        date(2028, 1, 31)
    assert moved_end(date(2027, 1, 1), date(2027, 1, 31), date(2028, 2, 1), True) == \
        date(2028, 2, 29)
    assert moved_end(date(2026, 12, 20), date(2026, 12, 27), date(2027, 2, 25), False) == \
        date(2027, 3, 4)
    with pytest.raises(OverflowError):
        moved_end(date(2027, 1, 1), date(2027, 3, 31), date(9999, 11, 1), True)


def test_moving_an_inactive_entry_is_a_clear_error(pair: Pair) -> None:
    first = add(pair)
    second = move(pair, first, date(2026, 11, 10))
    with pytest.raises(TimelineError, match=f"inactive.*{second.id}"):
        move(pair, first, date(2026, 12, 1))


def test_concurrent_moves_never_fork_the_chain(pair: Pair) -> None:
    first = add(pair)
    memory = pair.store.memory

    async def race() -> list[Eintrag | BaseException]:
        return await asyncio.gather(
            *(
                memory.timeline_move(pair.user_id, "nova", first, date(2026, 12, d))
                for d in range(1, 9)
            ),
            return_exceptions=True,
        )

    outcomes = pair.store.run(race())
    assert sum(not isinstance(o, Exception) for o in outcomes) == 1
    assert all(isinstance(o, TimelineError) for o in outcomes if isinstance(o, Exception))
    shape = pair.cypher(
        "MATCH (t:TimelineEintrag {user_id: $u}) "
        "RETURN count(t) AS entries, sum(CASE WHEN t.aktiv THEN 1 ELSE 0 END) AS active, "
        "max(COUNT { (t)-[:NACHFOLGER]->() }) AS max_out, "
        "max(COUNT { ()-[:NACHFOLGER]->(t) }) AS max_in",
        u=pair.user_id,
    )
    assert shape == [{"entries": 2, "active": 1, "max_out": 1, "max_in": 1}]


def test_month_precision_and_window_reads(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Berlin"))
    lena = pair.id_of("Lena")
    event = NeuerEintrag(
        typ="ereignis", titel="Lena zieht um", beginn=date(2026, 11, 20), genauigkeit="monat"
    )
    entry = pair.store.run(pair.store.memory.timeline_add(pair.user_id, "nova", event, lena))
    assert entry.beginn == date(2026, 11, 1) and entry.text == "November 2026"
    add(pair, "Zahnarzt", beginn=date(2026, 11, 3))
    add(pair, "Urlaub", beginn=date(2026, 10, 28), ende=date(2026, 11, 2))
    add(pair, "Dezember", beginn=date(2026, 12, 5))
    von, bis = month_window("2026-11")
    window = pair.store.run(pair.store.memory.timeline_window(pair.user_id, "nova", von, bis))
    assert [e.titel for e in window] == ["Urlaub", "Lena zieht um", "Zahnarzt"]
    (umzug,) = [e for e in window if e.typ == "ereignis"]
    assert umzug.fremd and umzug.person_name == "Lena"
    # A day inside the month sees the month-precision event; another pair sees nothing.
    day = pair.store.run(
        pair.store.memory.timeline_window(
            pair.user_id, "nova", date(2026, 11, 15), date(2026, 11, 15)
        )
    )
    assert [e.titel for e in day] == ["Lena zieht um"]
    assert pair.store.run(pair.store.memory.timeline_window(pair.user_id, "luna", von, bis)) == []


def test_fact_from_an_event_supersedes_and_follows_a_move(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2026-09-01T00:00:00Z")
    result = pair.write(
        t(
            "Lena",
            "wohnt_in",
            "Kassel",
            ereignis={
                "titel": "Lena zieht nach Kassel",
                "beginn": "2026-11-01",
                "genauigkeit": "monat",
            },
        )
    )
    (r,) = result.ergebnisse
    assert r.ausgang == "abgeloest" and r.timeline_id
    mappe = pair.mappe("Lena")
    (kassel,) = [f for f in mappe.fakten if f.beziehung == "wohnt_in"]
    assert (kassel.objekt.name, kassel.ab, kassel.aus_ereignis) == ("Kassel", "November 2026", True)
    (berlin,) = mappe.historie
    assert (berlin.objekt.name, berlin.bis) == ("Berlin", "November 2026")
    fact_before = pair.cypher("MATCH ()-[r {id: $id}]->() RETURN properties(r) AS p", id=r.fakt_id)
    moved = move(pair, r.timeline_id, date(2026, 12, 1), genauigkeit="monat")
    mappe = pair.mappe("Lena")
    (kassel,) = [f for f in mappe.fakten if f.beziehung == "wohnt_in"]
    assert kassel.ab == "Dezember 2026" and mappe.historie[0].bis == "Dezember 2026"
    # The fact itself is untouched: it still references the chain's first entry.
    assert (
        pair.cypher("MATCH ()-[r {id: $id}]->() RETURN properties(r) AS p", id=r.fakt_id)
        == fact_before
    )
    assert fact_before[0]["p"]["timeline_id"] == r.timeline_id != moved.id
    # A later fact may reference any entry of the chain; it stores the first id.
    later = pair.write(t("Lena", "arbeitet_bei", "Klinikum", timeline_id=moved.id))
    assert later.ergebnisse[0].timeline_id == r.timeline_id


def test_one_event_told_with_two_facts_of_an_order_is_one_entry(pair: Pair) -> None:
    """"Lena moves to Kassel on 1 March and starts there as a doctor": both triples carry
    the same event. It was written as two entries, so moving or cancelling "the move"
    changed one of the two facts, and a caller could not name the first entry in the same
    order. The same event of the same subject in one order is one entry; another
    subject's, or another event, is its own."""
    umzug = {"titel": "Umzug", "beginn": "2026-03-01"}
    result = pair.write(
        t("Lena", "wohnt_in", "Kassel", ereignis=umzug),
        t("Lena", "beruf", wert="Ärztin", ereignis=dict(umzug, genauigkeit="tag")),
        t("Tom", "wohnt_in", "Kassel", ereignis=umzug),
        t("Lena", "hobby", wert="Schach", ereignis=dict(umzug, titel="Schachclub")),
    )
    ids = [e.timeline_id for e in result.ergebnisse]
    assert ids[0] == ids[1] and len(set(ids)) == 3, ids
    listed = pair.store.run(pair.store.memory.timeline_window(
        pair.user_id, "nova", date(2026, 1, 1), date(2026, 12, 31)))
    assert sorted(e.titel for e in listed) == ["Schachclub", "Umzug", "Umzug"]
    move(pair, ids[0], date(2026, 4, 1))
    mappe = pair.mappe("Lena")
    assert sorted((f.beziehung, f.ab) for f in mappe.fakten if f.grad == 1) == [
        ("beruf", "1. April 2026"), ("hobby", "1. März 2026"), ("wohnt_in", "1. April 2026")]
    tom = pair.mappe("Tom").fakten
    assert [f.ab for f in tom if f.grad == 1 and f.beziehung == "wohnt_in"] == ["1. März 2026"]


def test_an_event_told_with_a_fact_that_holds_already_says_it_was_not_created(
    pair: Pair,
) -> None:
    """Found by a stranger's attack (2026-12-05): "Lena plays chess" told again with a
    chess tournament as its event, or Lena's Jena told again with a later move, came back
    `unveraendert` with no entry and no word: the event was dropped in silence. Nothing
    would be valid from it, so it is still not created, and the result says so and how
    to add it."""
    pair.write(t("Lena", "hobby", wert="Schach"))
    pair.write(t("Lena", "wohnt_in", "Jena"), zeitpunkt="2026-01-10T00:00:00Z")
    result = pair.write(
        t("Lena", "hobby", wert="Schach",
          ereignis={"titel": "Schachturnier", "beginn": "2027-02-10", "genauigkeit": "tag"}),
        t("Lena", "wohnt_in", "Jena", ereignis={"titel": "Umzug", "beginn": "2026-11-01"}),
    )
    assert result.status == "ok"
    for r, what in zip(result.ergebnisse, ("'Schachturnier'", "'Umzug'"), strict=True):
        assert (r.ausgang, r.timeline_id) == ("unveraendert", None)
        assert r.meldung is not None and f"the event {what} of " in r.meldung
        assert "was not created" in r.meldung
        assert "kg timeline add" in r.meldung
    assert "Jena holds on 2026-11-01 already" in str(result.ergebnisse[1].meldung)
    # A multi-valued value holds from where it was told: an event before it says so too.
    early = pair.write(t("Lena", "hobby", wert="Schach",
                         ereignis={"titel": "Schachclub", "beginn": "2020-05-01"}))
    assert early.ergebnisse[0].timeline_id is None
    assert "Schach is stored already (from 20" in str(early.ergebnisse[0].meldung)
    listed = pair.store.run(pair.store.memory.timeline_window(
        pair.user_id, "nova", date(2020, 1, 1), date(2027, 12, 31)))
    assert listed == []
    told = pair.write(t("Lena", "wohnt_in", "Kassel",
                        ereignis={"titel": "Umzug", "beginn": "2026-11-01"}))
    assert told.ergebnisse[0].timeline_id is not None and told.ergebnisse[0].meldung is None


def test_an_event_told_with_a_value_that_holds_names_the_day_its_stay_began(
    pair: Pair,
) -> None:
    """Left open by stop 53: Jena told from 10 June and again from 3 June is one stay
    (docs/time.md), "ab 3. Juni" in the Mappe; a move to Jena brought with an event in
    July said "stored already (from 2026-06-10)", the day of the version it read. Where
    the stay began, the order need not read (the earlier version ended before the event):
    the words name the event's day, on which the value holds."""
    pair.write(t("Lena", "wohnt_in", "Jena"), zeitpunkt="2026-06-10T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Jena"), zeitpunkt="2026-06-03T00:00:00Z")
    assert [f.ab for f in pair.mappe("Lena").fakten if f.beziehung == "wohnt_in"] == [
        "3. Juni 2026"]
    result = pair.write(
        t("Lena", "wohnt_in", "Jena", ereignis={"titel": "Umzug", "beginn": "2026-07-01"}))
    assert (result.ergebnisse[0].ausgang, result.ergebnisse[0].timeline_id) == (
        "unveraendert", None)
    meldung = str(result.ergebnisse[0].meldung)
    assert "Jena holds on 2026-07-01 already" in meldung and "2026-06-10" not in meldung


@pytest.mark.parametrize("prefix", ["absage-", "verschiebung-"])
def test_an_order_may_not_take_the_audit_id_of_a_cancel_or_a_move(
    pair: Pair, prefix: str
) -> None:
    """A cancel audits its order as `absage-<entry>`, a move as `verschiebung-<entry>`.
    A caller's order of that id made the cancel fail on the audit's key for good, with a
    raw Neo4j error; such ids are refused, and the cancel goes through."""
    told = pair.write(t("Eva", "wohnt_in", "Rom",
                        ereignis={"titel": "Eva zieht", "beginn": "2027-02-01"}))
    entry = told.ergebnisse[0].timeline_id
    with pytest.raises(InvalidInput, match=f"starts with '{prefix}'.*choose another id"):
        pair.write(t("Eva", "beruf", wert="Malerin"), auftrag_id=f"{prefix}{entry}")
    assert pair.mappe("Eva").fakten[0].objekt is not None
    cancelled = pair.store.run(pair.store.memory.timeline_cancel(pair.user_id, "nova", entry))
    assert cancelled.auftrag_id == f"absage-{entry}"
    # The fact, then Rom's type, which only it implied.
    assert cancelled.retired == [told.ergebnisse[0].fakt_id, *told.ergebnisse[0].typ_fakten]


def test_cancelling_an_event_retires_its_facts_and_reinstates_the_old_value(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2026-09-01T00:00:00Z")
    result = pair.write(
        t(
            "Lena",
            "wohnt_in",
            "Kassel",
            ereignis={"titel": "Umzug", "beginn": "2026-11-01", "genauigkeit": "monat"},
        )
    )
    entry = result.ergebnisse[0].timeline_id
    outcome = pair.store.run(pair.store.memory.timeline_cancel(pair.user_id, "nova", entry))
    # The fact, then Kassel's type, which only it implied.
    (told,) = result.ergebnisse
    assert outcome.retired == [told.fakt_id, *told.typ_fakten] and len(outcome.reinstated) == 1
    assert outcome.auftrag_id == f"absage-{entry}"
    mappe = pair.mappe("Lena")
    assert [f.objekt.name for f in mappe.fakten if f.beziehung == "wohnt_in"] == ["Berlin"]
    assert mappe.historie == []
    # A cancelled event cannot be referenced again or moved.
    again = pair.write(t("Lena", "beruf", wert="x", timeline_id=entry))
    assert again.ergebnisse[0].grund == "eintrag_abgesagt"
    with pytest.raises(TimelineError, match="cancelled"):
        move(pair, entry, date(2026, 12, 1))


def test_unknown_and_foreign_entries_are_errors(pair: Pair) -> None:
    entry = add(pair)
    other = Pair(pair.store, pair.user_id + "-x")
    with pytest.raises(TimelineError, match="no timeline entry"):
        other.store.run(
            other.store.memory.timeline_move(other.user_id, "nova", entry, date(2026, 12, 1))
        )
    with pytest.raises(TimelineError, match="no timeline entry"):
        pair.store.run(pair.store.memory.timeline_chain(pair.user_id, "luna", entry))
    result = other.write(t("Lena", "beruf", wert="x", timeline_id=entry))
    assert result.ergebnisse[0].grund == "unbekannter_eintrag"


def test_an_entry_of_an_unknown_or_foreign_entity_is_an_error_and_writes_nothing(
    pair: Pair,
) -> None:
    """The entity an event happens to must be one of the user's: another user's entity,
    or an id nobody has, is a TimelineError, and the entry is not made (the check and
    the entry are one query, in the transaction the error rolls back)."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    other = Pair(pair.store, pair.user_id + "-x")
    memory = pair.store.memory
    entry = NeuerEintrag(titel="Umzug", beginn=date(2026, 11, 3))
    try:
        other.write(t("Ben", "wohnt_in", "Bonn"))
        for foreign in (other.id_of("Ben"), "no-such-entity"):
            with pytest.raises(TimelineError, match=f"no entity with id '{foreign}' for this"):
                pair.store.run(memory.timeline_add(pair.user_id, "nova", entry, foreign))
    finally:
        pair.store.run(memory.purge(other.user_id))
    assert pair.cypher(
        "MATCH (t:TimelineEintrag {user_id: $u}) RETURN count(t) AS n", u=pair.user_id
    ) == [{"n": 0}]
    made = pair.store.run(memory.timeline_add(pair.user_id, "nova", entry, pair.id_of("Lena")))
    assert made.person_id == pair.id_of("Lena")


def test_a_refused_move_names_the_day_the_move_would_give_the_event(pair: Pair) -> None:
    """A stranger's audit (2026-12-07): Lehrerin from 7 March, Ärztin from an event on
    15 March; the event moved to "15 March, month precision" (1 March) is refused, as it
    should be, but the words read "to 2027-03-15 … begins on 2027-03-07, between the
    event's old and new day", which 7 March is not. They name the day the move gives."""
    pair.write(t("Lena", "beruf", wert="Lehrerin"), zeitpunkt="2027-03-07T00:00:00Z")
    told = pair.write(t("Lena", "beruf", wert="Ärztin", ereignis={
        "titel": "Neue Stelle", "beginn": "2027-03-15", "genauigkeit": "tag"}))
    entry = told.ergebnisse[0].timeline_id
    assert entry is not None
    with pytest.raises(TimelineError, match=r"to 2027-03-01 would carry the event to or past "
                       r"'Lena beruf Lehrerin', which begins on 2027-03-07"):
        move(pair, entry, date(2027, 3, 15), genauigkeit="monat")
