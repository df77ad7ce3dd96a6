"""The Mappe: two degrees, both directions, one round trip, history, derived, as-of."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cli.worked_example import build
from kg.errors import EntityNotFound
from kg.mappe import render
from tests.conftest import Pair, t


def worked_example(pair: Pair, *, move: bool = False) -> str:
    """The worked example (cli/worked_example.py) for this pair, the event in November
    unless `move`; returns the move event's id."""
    return pair.store.run(build(pair.store.memory, pair.user_id, move=move)).event_id


def test_worked_example_end_to_end(pair: Pair) -> None:
    worked_example(pair)
    mappe = pair.mappe("Lena")
    assert mappe.typ == "person"  # the object of "begleitet" is a person
    near = {
        (f.subjekt.name, f.beziehung, f.objekt.name if f.objekt else f.wert)
        for f in mappe.fakten
        if f.grad == 1
    }
    assert near == {
        ("Lena", "wohnt_in", "Kassel"),
        ("Lena", "beruf", "Ärztin"),
        ("Lena", "hat_haustier", "Bello"),
        ("Bello", "begleitet", "Lena"),
    }
    far = {
        (f.subjekt.name, f.beziehung, f.objekt.name if f.objekt else f.wert, f.via)
        for f in mappe.fakten
        if f.grad == 2
    }
    assert far == {
        ("Kassel", "liegt_in", "Deutschland", "Kassel"),
        ("Kassel", "liegt_in", "Hessen", "Kassel"),
        ("Bello", "ist_ein", "Hund", "Bello"),
    }
    (wohnt,) = [f for f in mappe.fakten if f.beziehung == "wohnt_in"]
    assert wohnt.ab == "November 2026"
    assert [(h.objekt.name, h.bis) for h in mappe.historie] == [("Berlin", "November 2026")]
    assert [(d.beziehung, d.objekt.name, d.pfad) for d in mappe.abgeleitet] == [
        ("wohnt_in", "Deutschland", ["Kassel"]),
        ("wohnt_in", "Hessen", ["Kassel"]),
    ]
    # The other character's Kassel facts never appear.
    assert not any(
        f.wert == "Herkules-Denkmal" or (f.objekt and f.objekt.name == "Nordhessen")
        for f in mappe.fakten
    )
    text = render(mappe)
    assert "wohnt in Kassel (ab November 2026)" in text
    assert "früher: wohnt in Berlin (bis November 2026)" in text
    # Derived knowledge carries the *ab* of the fact it starts with, like that fact.
    assert "abgeleitet: wohnt in Deutschland (über Kassel, ab November 2026)" in text
    assert "Kassel liegt in Deutschland [laut Modell]" in text
    assert "Kassel liegt in Hessen [laut Modell]" in text
    assert render(mappe) == text  # deterministic
    # Moving the event to December changes the *ab*, not the fact.
    worked_example(pair, move=True)
    (moved,) = [f for f in pair.mappe("Lena").fakten if f.beziehung == "wohnt_in"]
    assert (moved.id, moved.ab) == (wohnt.id, "Dezember 2026")


def test_other_pair_sees_only_its_own_facts_on_the_same_entity(pair: Pair) -> None:
    worked_example(pair)
    luna = pair.other("luna").mappe("Kassel")
    assert {f.wert or f.objekt.name for f in luna.fakten} == {"Herkules-Denkmal", "Nordhessen"}
    nova = pair.mappe("Kassel")
    assert "Herkules-Denkmal" not in {f.wert for f in nova.fakten}


def test_value_nodes_are_not_traversed_and_incoming_facts_count(pair: Pair) -> None:
    pair.write(
        t("Anna", "beruf", wert="Ärztin"),
        t("Ben", "beruf", wert="Ärztin"),
        t("Anna", "geschwister", "Lena"),
    )
    mappe = pair.mappe("Lena")
    # Anna's beruf is degree 2 through Anna; Ben (same value text, own Wert node) is not.
    assert {(f.subjekt.name, f.grad) for f in mappe.fakten} == {("Anna", 1), ("Anna", 2)}


def test_one_round_trip(pair: Pair) -> None:
    worked_example(pair)
    lena = pair.id_of("Lena")
    db = pair.store.memory.db
    before = db.round_trips
    pair.store.run(pair.store.memory.mappe(pair.user_id, "nova", lena))
    assert db.round_trips - before == 1
    ids = [lena, pair.id_of("Kassel"), pair.id_of("Bello")]
    before = db.round_trips
    mappen = pair.store.run(pair.store.memory.mappen(pair.user_id, "nova", ids))
    assert [m.entitaet.name for m in mappen] == ["Lena", "Kassel", "Bello"]
    assert db.round_trips - before == 1  # all the entities of a turn in one query
    with pytest.raises(EntityNotFound):
        pair.store.run(pair.store.memory.mappen(pair.user_id, "nova", [lena, "no-such-id"]))


def test_resting_edges_are_left_out_but_stay_active(pair: Pair) -> None:
    pair.write(t("Lena", "hobby", wert="Lesen"), t("Lena", "hobby", wert="Tanzen"))
    pair.cypher(
        "MATCH (:Entitaet {user_id: $u})-[r:HOBBY]->(w {wert: 'Tanzen'}) "
        "SET r.staerke_decay = 0.05",
        u=pair.user_id,
    )
    assert [f.wert for f in pair.mappe("Lena").fakten] == ["Lesen"]
    assert pair.cypher(
        "MATCH (:Entitaet {user_id: $u})-[r:HOBBY]->() RETURN collect(r.aktiv) AS a", u=pair.user_id
    ) == [{"a": [True, True]}]
    pair.write(t("Lena", "hobby", wert="Tanzen"))  # re-asserting touches it back to 1
    assert {f.wert for f in pair.mappe("Lena").fakten} == {"Lesen", "Tanzen"}


def test_cap_keeps_degree_one_before_degree_two(pair: Pair) -> None:
    pair.write(*[t("Lena", "befreundet_mit", f"Freund{i}") for i in range(4)])
    pair.write(*[t(f"Freund{i}", "hobby", wert=f"H{i}-{j}") for i in range(4) for j in range(5)])
    full = pair.mappe("Lena", cap=100)
    assert (
        sum(f.grad == 1 for f in full.fakten) == 4 and sum(f.grad == 2 for f in full.fakten) == 20
    )
    capped = pair.mappe("Lena", cap=6)
    assert [f.grad for f in capped.fakten] == [1, 1, 1, 1, 2, 2]
    assert capped.gekappt and not full.gekappt
    only_near = pair.mappe("Lena", cap=3)
    assert [f.grad for f in only_near.fakten] == [1, 1, 1]


def test_what_the_cap_cuts_derives_nothing(pair: Pair) -> None:
    """Lena in Kassel, Kassel in Hessen, then two hobbies (newer: they come first under
    the cap). Cut by the cap, "wohnt in Kassel" derived "wohnt in Hessen (über Kassel)"
    still: a home the Mappe did not show. Derived knowledge goes with the fact it
    begins with, in a current read and an as-of one."""
    pair.write(t("Lena", "wohnt_in", "Kassel"), t("Kassel", "liegt_in", "Hessen"))
    pair.write(t("Lena", "hobby", wert="Schach"), t("Lena", "hobby", wert="Rudern"))
    shown = pair.mappe("Lena", cap=3)
    assert [d.objekt.name for d in shown.abgeleitet] == ["Hessen"]
    for capped in (pair.mappe("Lena", cap=2),
                   pair.mappe("Lena", cap=2, gueltig_am=datetime.now(UTC))):
        assert {f.wert for f in capped.fakten} == {"Schach", "Rudern"}
        assert capped.gekappt and capped.abgeleitet == []


def test_hub_neighbour_is_bounded_by_the_cap(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Berlin"))
    pair.write(*[t(f"P{i}", "wohnt_in", "Berlin") for i in range(150)])
    mappe = pair.mappe("Lena", cap=20)
    assert len(mappe.fakten) == 20 and mappe.fakten[0].grad == 1


def test_transitive_chain_of_depth_four_and_a_cycle(pair: Pair) -> None:
    pair.write(
        t("Lena", "wohnt_in", "Kassel"),
        t("Kassel", "liegt_in", "Nordhessen"),
        t("Nordhessen", "liegt_in", "Hessen"),
        t("Hessen", "liegt_in", "Deutschland"),
        t("Deutschland", "liegt_in", "Europa"),
    )
    derived = {(d.objekt.name, tuple(d.pfad)) for d in pair.mappe("Lena").abgeleitet}
    assert derived == {
        ("Nordhessen", ("Kassel",)),
        ("Hessen", ("Kassel", "Nordhessen")),
        ("Deutschland", ("Kassel", "Nordhessen", "Hessen")),
        ("Europa", ("Kassel", "Nordhessen", "Hessen", "Deutschland")),
    }
    # The writer refuses a cycle (zyklus); planted as bad data it must still terminate
    # and never derive the start itself.
    refused = pair.write(t("Europa", "liegt_in", "Kassel"))
    assert refused.ergebnisse[0].grund == "zyklus"
    pair.cypher(
        "MATCH (e:Entitaet {user_id: $u, name: 'Europa'}), (k:Entitaet {user_id: $u, "
        "name: 'Kassel'}) CREATE (e)-[r:LIEGT_IN]->(k) SET r = $props, r.user_id = $u, "
        "r.t_valid = datetime(), r.t_recorded = datetime(), r.last_touched = datetime()",
        u=pair.user_id,
        props={"id": "planted-cycle", "character_id": "nova", "aktiv": True,
               "staerke_decay": 1.0, "herkunft": "mensch"},
    )
    reached = {d.objekt.name for d in pair.mappe("Lena").abgeleitet}
    assert reached == {"Nordhessen", "Hessen", "Deutschland", "Europa"}
    assert "Kassel" not in {d.objekt.name for d in pair.mappe("Kassel").abgeleitet}
    # Nothing derived is ever stored.
    assert pair.cypher(
        "MATCH (:Entitaet {name: 'Lena', user_id: $u})-[r:WOHNT_IN]->(o) "
        "RETURN collect(o.name) AS o",
        u=pair.user_id,
    ) == [{"o": ["Kassel"]}]


def test_every_relation_that_composes_with_a_transitive_one_derives_in_one_mappe(
    pair: Pair,
) -> None:
    """wohnt_in and geburtsort (ort) each compose with liegt_in, and a place's own
    liegt_in with itself: all of them in the Mappe of one person, and of one place."""
    pair.write(
        t("Lena", "wohnt_in", "Kassel"),
        t("Lena", "geburtsort", "Fulda"),
        t("Kassel", "liegt_in", "Hessen"),
        t("Fulda", "liegt_in", "Hessen"),
        t("Hessen", "liegt_in", "Deutschland"),
    )
    derived = {(d.beziehung, d.objekt.name, tuple(d.pfad)) for d in pair.mappe("Lena").abgeleitet}
    assert derived == {
        ("wohnt_in", "Hessen", ("Kassel",)),
        ("wohnt_in", "Deutschland", ("Kassel", "Hessen")),
        ("geburtsort", "Hessen", ("Fulda",)),
        ("geburtsort", "Deutschland", ("Fulda", "Hessen")),
    }
    of_kassel = {(d.beziehung, d.objekt.name) for d in pair.mappe("Kassel").abgeleitet}
    assert of_kassel == {("liegt_in", "Deutschland")}


def test_as_of_reads_around_a_supersession_and_a_correction(pair: Pair) -> None:
    # Valid times come from the orders; system times are the store's (each result's
    # `erfasst`), so "as known then" is asked at the instants the store recorded.
    berlin = pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2026-01-10T00:00:00Z")
    hamburg = pair.write(t("Lena", "wohnt_in", "Hamburg"), zeitpunkt="2026-03-10T00:00:00Z")
    pilotin = pair.write(t("Lena", "beruf", wert="Pilotin"), zeitpunkt="2026-02-01T00:00:00Z")
    order = pair.order(zeitpunkt="2026-04-01T00:00:00Z")
    order["berichtigungen"] = [{"herkunft": "mensch",
                                "subjekt": "Lena", "beziehung": "beruf", "wert": "Pilotin"}]
    corrected = pair.store.run(pair.store.memory.write(order))
    assert berlin.erfasst < hamburg.erfasst < pilotin.erfasst < corrected.erfasst

    def view(v: str | None, x: datetime | None) -> set[str]:
        kw: dict[str, datetime] = {}
        if v:
            kw["gueltig_am"] = datetime.fromisoformat(v).replace(tzinfo=UTC)
        if x:
            kw["bekannt_am"] = x
        m = pair.mappe("Lena", **kw)
        return {f.wert or f.objekt.name for f in m.fakten}

    assert view(None, None) == {"Hamburg"}
    assert view("2026-02-15", None) == {"Berlin"}  # true then, known now
    assert view("2026-02-15", pilotin.erfasst) == {"Berlin", "Pilotin"}  # believed then
    assert view("2026-05-01", berlin.erfasst) == {"Berlin"}  # move not yet known
    assert view("2026-05-01", pilotin.erfasst) == {"Hamburg", "Pilotin"}
    assert view("2026-05-01", corrected.erfasst) == {"Hamburg"}  # correction known: never true
    assert view("2026-01-05", None) == set()  # before anything held
    m = pair.mappe("Lena", bekannt_am=berlin.erfasst)
    assert m.historie == []  # the supersession was not known yet


def test_a_value_told_again_for_an_earlier_time_reads_as_one_stay(pair: Pair) -> None:
    """Lena lives in Berlin (told in 2025), then "since 2020": the late version is
    history ending where the current one begins. The Mappe read as a move from Berlin to
    Berlin ("wohnt in Berlin (ab 1. Januar 2025)", "früher: wohnt in Berlin (bis 1.
    Januar 2025)"), and Deutschland was derived from 2025."""
    pair.write(t("Berlin", "liegt_in", "Deutschland", herkunft="modell"),
               zeitpunkt="1990-01-01T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Hamburg"), zeitpunkt="2015-01-01T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2025-01-01T00:00:00Z")
    late = pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2020-01-01T00:00:00Z")
    assert late.ergebnisse[0].ausgang == "nachgetragen"
    for kw in ({}, {"gueltig_am": datetime(2026, 6, 1, tzinfo=UTC)}):
        m = pair.mappe("Lena", **kw)
        (wohnt,) = [f for f in m.fakten if f.beziehung == "wohnt_in" and f.grad == 1]
        assert (wohnt.objekt.name, wohnt.ab) == ("Berlin", "1. Januar 2020"), kw
        assert [(h.objekt.name, h.bis) for h in m.historie] == [("Hamburg", "1. Januar 2020")]
        assert [(d.objekt.name, d.ab) for d in m.abgeleitet] == [
            ("Deutschland", "1. Januar 2020")], kw
        text = render(m)
        assert "früher: wohnt in Berlin" not in text and "früher: wohnt in Hamburg" in text
    # The record keeps both versions: the history lists them as they were written.
    history = pair.store.run(
        pair.store.memory.history(pair.user_id, "nova", pair.id_of("Lena"), "wohnt_in")
    )
    assert [(h.objekt.name if h.objekt else None, h.ab, h.bis) for h in history] == [
        ("Hamburg", "1. Januar 2015", "1. Januar 2020"),
        ("Berlin", "1. Januar 2020", "1. Januar 2025"),
        ("Berlin", "1. Januar 2025", None),
    ]


def test_a_relation_whose_current_value_rests_is_left_out_with_its_history(
    pair: Pair,
) -> None:
    """Berlin told for 2025 and again "since 2020", then the current version rests: the
    Mappe left it out but showed the late version as history, "früher: wohnt in Berlin
    (bis 1. Januar 2025)", a move out of Berlin that never was. The relation's history
    goes with its current value (Hamburg and the first Berlin too: without the value
    that followed them they read the same way), current read and as-of alike; `kg
    history` still lists every version."""
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2010-01-01T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Hamburg"), zeitpunkt="2015-01-01T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2025-01-01T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2020-01-01T00:00:00Z")
    pair.write(t("Lena", "beruf", wert="Ärztin"), zeitpunkt="2010-01-01T00:00:00Z")
    pair.write(t("Lena", "beruf", wert="Lehrerin"), zeitpunkt="2020-01-01T00:00:00Z")
    pair.cypher(
        "MATCH (:Entitaet {user_id: $u, name: 'Lena'})-[r:WOHNT_IN {aktiv: true}]->() "
        "SET r.staerke_decay = 0.05",
        u=pair.user_id,
    )
    for kw in ({}, {"gueltig_am": datetime(2026, 6, 1, tzinfo=UTC)}):
        m = pair.mappe("Lena", **kw)
        assert [(f.beziehung, f.wert) for f in m.fakten] == [("beruf", "Lehrerin")], kw
        assert [(h.beziehung, h.wert, h.ab, h.bis) for h in m.historie] == [
            ("beruf", "Ärztin", "1. Januar 2010", "1. Januar 2020")], kw
        assert "wohnt in" not in render(m)
    history = pair.store.run(pair.store.memory.history(
        pair.user_id, "nova", pair.id_of("Lena"), "wohnt_in"))
    assert len(history) == 4


def test_history_lists_every_value(pair: Pair) -> None:
    for i, city in enumerate(["Berlin", "Hamburg", "Kassel"]):
        pair.write(t("Lena", "wohnt_in", city), zeitpunkt=f"2026-0{i + 1}-01T00:00:00Z")
    history = pair.store.run(
        pair.store.memory.history(pair.user_id, "nova", pair.id_of("Lena"), "wohnt_in")
    )
    assert [(h.objekt.name if h.objekt else None, h.aktiv, h.ab, h.bis) for h in history] == [
        ("Berlin", False, "1. Januar 2026", "1. Februar 2026"),
        ("Hamburg", False, "1. Februar 2026", "1. März 2026"),
        ("Kassel", True, "1. März 2026", None),
    ]


def test_prompt_text_respects_the_budget_and_marks_herkunft(pair: Pair) -> None:
    pair.write(
        t("Lena", "beruf", wert="Ärztin", herkunft="recherche"),
        *[t("Lena", "hobby", wert=f"Hobby Nummer {i}") for i in range(30)],
    )
    mappe = pair.mappe("Lena")
    text = render(mappe, budget=300)
    assert len(text) <= 300 and text.endswith("…")
    assert "[recherchiert]" in render(mappe, budget=5000)


def test_a_value_that_held_nowhere_is_no_former_value(pair: Pair) -> None:
    """A stranger's attack: Berlin from 2024, then Hamburg and Köln both told from 1
    January 2025. Hamburg held nowhere, yet the prompt said "früher: wohnt in Hamburg
    (bis 1. Januar 2025)". The Mappe leaves it out, as of any time too; `kg history`
    keeps it."""
    for ort, since in (("Berlin", "2024-01-01"), ("Hamburg", "2025-01-01"),
                       ("Köln", "2025-01-01")):
        pair.write(t("Lena", "wohnt_in", ort), zeitpunkt=f"{since}T00:00:00Z")
    for mappe in (pair.mappe("Lena"), pair.mappe("Lena", gueltig_am=datetime(2025, 6, 1,
                                                                           tzinfo=UTC))):
        assert [(h.objekt.name if h.objekt else None) for h in mappe.historie] == ["Berlin"]
        assert "Hamburg" not in render(mappe)
    lena = pair.store.run(pair.store.memory.entity_id(pair.user_id, "nova", "Lena"))
    history = pair.store.run(pair.store.memory.history(pair.user_id, "nova", lena, "wohnt_in"))
    assert "Hamburg" in {h.objekt.name for h in history if h.objekt}
