"""The Fakten-Agent against the real server: every ausgang and every rule it enforces."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from kg.api import parse_order
from kg.db import Tx
from kg.errors import InvalidInput, KgError, StoredDataError, WriteNotConfirmed
from kg.models import Auftrag, AuftragErgebnis
from kg.writer import content_hash
from tests.conftest import Pair, t


def facts_of(pair: Pair, name: str, rel: str) -> list[dict[str, Any]]:
    """The current versions of a subject's facts of one relation (the record as it is)."""
    return pair.cypher(
        "MATCH (s:Entitaet {user_id: $u, name: $n})-[r]->(o) WHERE type(r) = $rel "
        "AND r.t_expired IS NULL "
        "RETURN r.aktiv AS aktiv, r.grund AS grund, coalesce(o.name, o.wert) AS objekt, "
        "r.character_id AS character_id, r.herkunft AS herkunft, r.t_invalid AS t_invalid, "
        "r.t_expired AS t_expired, r.staerke_decay AS staerke, r.last_touched AS touched "
        "ORDER BY r.t_valid, r.t_recorded",
        u=pair.user_id,
        n=name,
        rel=rel.upper(),
    )


def versions_of_berlin(pair: Pair, columns: str) -> list[dict[str, Any]]:
    """Every stored version of Lena's WOHNT_IN Berlin (`r`), oldest first, as `columns`."""
    return pair.cypher(
        "MATCH (:Entitaet {user_id: $u, name: 'Lena'})-[r:WOHNT_IN]->(:Entitaet {name: 'Berlin'}) "
        f"RETURN {columns} ORDER BY r.version",
        u=pair.user_id,
    )


def snapshot(pair: Pair) -> dict[str, Any]:
    rows = pair.cypher(
        "CALL () { MATCH (e:Entitaet {user_id: $u}) RETURN count(e) AS entities } "
        "CALL () { MATCH (:Entitaet {user_id: $u})-[r]->() RETURN count(r) AS rels, "
        "  collect(r.staerke_decay) AS strengths } "
        "CALL () { MATCH (a:Auftrag {user_id: $u}) RETURN count(a) AS orders } "
        "RETURN entities, rels, strengths, orders",
        u=pair.user_id,
    )
    return rows[0]


def test_reference_and_value_facts_are_written(pair: Pair) -> None:
    result = pair.write(
        t("Lena", "wohnt_in", "Berlin"),
        t("Lena", "beruf", wert="Ärztin"),
    )
    assert result.status == "ok"
    assert [r.ausgang for r in result.ergebnisse] == ["geschrieben", "geschrieben"]
    assert facts_of(pair, "Lena", "wohnt_in")[0]["objekt"] == "Berlin"
    value = pair.cypher(
        "MATCH (:Entitaet {user_id: $u, name: 'Lena'})-[r:BERUF]->(w:Wert) "
        "RETURN w.wert AS wert, COUNT { (w)-->() } AS out, COUNT { ()-->(w) } AS inc",
        u=pair.user_id,
    )
    assert value == [{"wert": "Ärztin", "out": 0, "inc": 1}]


def test_einwertig_supersedes_in_one_order_and_keeps_history(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Berlin"))
    result = pair.write(t("Lena", "wohnt_in", "Kassel"))
    (r,) = result.ergebnisse
    assert r.ausgang == "abgeloest" and len(r.abgeloest) == 1
    rows = facts_of(pair, "Lena", "wohnt_in")
    assert [(x["objekt"], x["aktiv"], x["grund"]) for x in rows] == [
        ("Berlin", False, "abgeloest"),
        ("Kassel", True, None),
    ]
    assert rows[0]["t_invalid"] is not None and rows[0]["t_expired"] is None
    # The record Berlin had before is kept, closed when Kassel arrived (append-only).
    versions = pair.cypher(
        "MATCH (:Entitaet {user_id: $u, name: 'Lena'})-[r:WOHNT_IN]->(:Entitaet {name: 'Berlin'}) "
        "RETURN r.version AS v, r.aktiv AS aktiv, r.t_invalid AS bis, "
        "r.t_expired.epochMillis = $closed AS closed_then ORDER BY v",
        u=pair.user_id,
        closed=int(result.erfasst.timestamp() * 1000),
    )
    assert versions == [
        {"v": 1, "aktiv": False, "bis": None, "closed_then": True},
        {"v": 2, "aktiv": False, "bis": rows[0]["t_invalid"], "closed_then": None},
    ]


def test_two_values_of_one_relation_in_one_order_say_that_the_first_holds_nowhere(
    pair: Pair,
) -> None:
    """"Lena lives in Berlin" and "Lena lives in Kassel" in one order, without a time:
    both begin at the order's instant, so Kassel ends Berlin where it begins, and Berlin
    holds nowhere (no read shows it, not as history either). It came back `geschrieben`
    without a word (a stranger's attack); its result now says so and what to do. A
    value that holds somewhere says nothing of the kind."""
    result = pair.write(t("Lena", "wohnt_in", "Berlin"), t("Lena", "wohnt_in", "Kassel"))
    first, second = result.ergebnisse
    assert (first.ausgang, second.ausgang) == ("geschrieben", "abgeloest")
    assert first.meldung == (
        "Lena wohnt in Berlin holds nowhere: Lena wohnt in Kassel begins where it begins "
        "(two values of one relation for one instant: send each in an order of its own "
        "with its own zeitpunkt, or correct the one that is wrong)"
    )
    assert second.meldung is None
    assert pair.mappe("Lena").historie == []
    told = pair.write(t("Lena", "wohnt_in", "Bonn"))
    assert told.ergebnisse[0].ausgang == "abgeloest" and told.ergebnisse[0].meldung is None


def test_mehrwertig_accumulates(pair: Pair) -> None:
    pair.write(t("Lena", "hat_haustier", "Bello"))
    result = pair.write(t("Lena", "hat_haustier", "Minka"))
    assert result.ergebnisse[0].ausgang == "geschrieben"
    assert {x["objekt"] for x in facts_of(pair, "Lena", "hat_haustier") if x["aktiv"]} == {
        "Bello",
        "Minka",
    }


def test_same_value_touches_and_adds_no_row(pair: Pair) -> None:
    pair.write(t("Lena", "beruf", wert="Ärztin"), zeitpunkt="2026-01-01T00:00:00Z")
    pair.cypher(
        "MATCH (:Entitaet {user_id: $u})-[r:BERUF]->() SET r.staerke_decay = 0.5", u=pair.user_id
    )
    result = pair.write(t("Lena", "beruf", wert="Ärztin"), zeitpunkt="2026-06-01T00:00:00Z")
    assert result.ergebnisse[0].ausgang == "unveraendert"
    (row,) = facts_of(pair, "Lena", "beruf")
    assert row["staerke"] == 1.0
    # A touch is system time: the store's clock, whatever the order's valid time says.
    assert row["touched"].to_native() == result.erfasst


def test_symmetric_partner_reads_the_same_from_both_ends(pair: Pair) -> None:
    pair.write(t("Lena", "partner", "Tom"))
    result = pair.write(t("Tom", "partner", "Lena"))
    assert result.ergebnisse[0].ausgang == "unveraendert"
    # A new partner of Tom ends Lena's partnership too (einwertig from both ends).
    result = pair.write(t("Tom", "partner", "Anna"))
    assert result.ergebnisse[0].ausgang == "abgeloest"
    assert [x["aktiv"] for x in facts_of(pair, "Lena", "partner")] == [False]


def test_a_mehrwertig_symmetric_fact_is_found_from_the_other_end(pair: Pair) -> None:
    """Tom befreundet_mit Lena is stored at Tom; an order that says it from Lena's side
    touches it (the state finds it among Tom's outgoing facts, not Lena's incoming)."""
    pair.write(t("Tom", "befreundet_mit", "Lena"), t("Tom", "geschwister", "Anna"))
    result = pair.write(t("Lena", "befreundet_mit", "Tom"), t("Anna", "geschwister", "Tom"))
    assert [r.ausgang for r in result.ergebnisse] == ["unveraendert", "unveraendert"]
    assert pair.cypher(
        "MATCH (:Entitaet {user_id: $u})-[r:BEFREUNDET_MIT|GESCHWISTER]->() RETURN count(r) AS n",
        u=pair.user_id,
    ) == [{"n": 2}]


def test_ambiguous_name_writes_nothing_and_returns_candidates(pair: Pair) -> None:
    pair.write(t("Anna", "wohnt_in", "Berlin"), t({"neu": "Anna"}, "wohnt_in", "Kassel"))
    before = snapshot(pair)
    result = pair.write(t("Anna", "beruf", wert="Lehrerin"))
    (r,) = result.ergebnisse
    assert r.ausgang == "mehrdeutig" and result.status == "abgelehnt"
    assert {k.name for k in r.kandidaten} == {"Anna"} and len(r.kandidaten) == 2
    assert sorted(m for k in r.kandidaten for m in k.merkmale) == [
        "wohnt in Berlin",
        "wohnt in Kassel",
    ]
    after = snapshot(pair)
    assert after["rels"] == before["rels"] and after["entities"] == before["entities"]
    # Retrying with an id resolves it.
    retry = pair.write(t({"id": r.kandidaten[1].id}, "beruf", wert="Lehrerin"))
    assert retry.ergebnisse[0].ausgang == "geschrieben"


def test_a_candidate_is_told_apart_by_what_its_mappe_shows(pair: Pair) -> None:
    """Rule 10: everything that needs knowledge about an entity reads it as the Mappe
    does, resting edges left out. A candidate's merkmale read every active fact, so a
    fact faded below the threshold (out of every Mappe) still told the human which Anna
    was meant (a review against the contract). Now the write's candidates and
    `resolve`'s leave it out, and name what still shows."""
    pair.write(t("Anna", "wohnt_in", "Berlin"), t("Anna", "hobby", wert="Schach"))
    pair.write(t({"neu": "Anna"}, "wohnt_in", "Kassel"))
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r:WOHNT_IN]->(:Entitaet {name: 'Berlin'}) "
                "SET r.staerke_decay = 0.05", u=pair.user_id)
    result = pair.write(t("Anna", "beruf", wert="Lehrerin"))
    told = sorted(m for k in result.ergebnisse[0].kandidaten for m in k.merkmale)
    assert told == ["hat das Hobby Schach", "wohnt in Kassel"], told
    found = pair.store.run(pair.store.memory.resolve(pair.user_id, "nova", "Anna"))
    assert sorted(m for k in found.kandidaten for m in k.merkmale) == told
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r:WOHNT_IN]->() SET r.staerke_decay = 1.0",
                u=pair.user_id)  # (swept again below: what the sweep wrote, kg check reads)
    pair.store.run(pair.store.memory.decay_run(pair.user_id))


@pytest.mark.parametrize(
    ("triple", "grund"),
    [
        (t("Lena", "mag", "Pizza"), "unbekannte_beziehung"),
        (t("Lena", "wohnt_in", wert="Kassel"), "form"),
        (t("Lena", "beruf", "Kassel"), "form"),
        ({"subjekt": "Lena", "beziehung": "beruf", "wert": "x"}, "herkunft"),
        (t("Lena", "beruf", wert="x", herkunft="gerücht"), "herkunft"),
        (t("", "beruf", wert="x"), "name_leer"),
        (t("L" * 100_000, "beruf", wert="x"), "name_zu_lang"),
        (t("Le\x00na", "beruf", wert="x"), "steuerzeichen"),
        (t({"id": "no-such-id"}, "beruf", wert="x"), "unbekannte_id"),
        (t("Lena", "typ", wert="drache"), "ungueltiger_typ"),
    ],
)
def test_rejections_have_a_reason_and_write_nothing(
    pair: Pair, triple: dict[str, Any], grund: str
) -> None:
    pair.write(t("Lena", "hobby", wert="Lesen"))
    before = snapshot(pair)
    result = pair.write(triple)
    (r,) = result.ergebnisse
    assert (r.ausgang, r.grund) == ("abgelehnt", grund)
    assert r.meldung
    after = snapshot(pair)
    assert (after["entities"], after["rels"]) == (before["entities"], before["rels"])


def test_foreign_id_reads_like_an_unknown_id(pair: Pair) -> None:
    other = Pair(pair.store, pair.user_id + "-other")
    other.write(t("Geheim", "beruf", wert="Spionin"))
    foreign = other.id_of("Geheim")
    result = pair.write(t({"id": foreign}, "beruf", wert="x"))
    (r,) = result.ergebnisse
    assert (r.ausgang, r.grund) == ("abgelehnt", "unbekannte_id")
    assert foreign in (r.meldung or "") and "Geheim" not in (r.meldung or "")


def test_type_facts_come_from_relations_and_classes(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Kassel"), t("Bello", "ist_ein", wert="Hund"))
    assert pair.mappe("Kassel").typ == "ort"
    assert pair.mappe("Bello").typ == "tier"
    assert pair.mappe("Lena").typ == "sonstiges"  # nothing is written in advance
    # A tier has no beruf; a place cannot be a dog.
    result = pair.write(t("Bello", "beruf", wert="Wachhund"), t("Kassel", "ist_ein", wert="Hund"))
    assert [(r.ausgang, r.grund) for r in result.ergebnisse] == [
        ("abgelehnt", "typkonflikt"),
        ("abgelehnt", "typkonflikt"),
    ]
    # The object's known type is checked too: Bello is not a place to live in.
    result = pair.write(t("Lena", "wohnt_in", "Bello"))
    assert result.ergebnisse[0].grund == "typkonflikt"
    # Each names the type fact it contradicts (a docs check: `konflikt` was null where
    # a relation met a known type; only a new type against a fact named one).
    (bello_typ,) = pair.cypher(
        "MATCH (:Entitaet {user_id: $u, name: 'Bello'})-[r:TYP]->() RETURN r.id AS id",
        u=pair.user_id)
    refused = pair.write(t("Bello", "beruf", wert="Wachhund"), t("Lena", "wohnt_in", "Bello"))
    assert [r.konflikt for r in refused.ergebnisse] == [bello_typ["id"]] * 2
    assert all(bello_typ["id"] in (r.meldung or "") for r in refused.ergebnisse)


def test_correction_retires_as_never_true(pair: Pair) -> None:
    pair.write(t("Mittelmeer", "ist_ein", wert="Ozean", herkunft="modell"))
    order = pair.order(t("Mittelmeer", "ist_ein", wert="Nebenmeer", herkunft="modell"))
    order["berichtigungen"] = [{"herkunft": "mensch",
                                "subjekt": "Mittelmeer", "beziehung": "ist_ein", "wert": "Ozean"}]
    result = pair.store.run(pair.store.memory.write(order))
    assert [r.ausgang for r in result.ergebnisse] == ["berichtigt", "geschrieben"]
    rows = facts_of(pair, "Mittelmeer", "ist_ein")
    # (The replacement takes the wrong value's place: both begin at the same instant.)
    assert sorted((x["objekt"], x["aktiv"], x["grund"] or "") for x in rows) == [
        ("Nebenmeer", True, ""),
        ("Ozean", False, "berichtigt"),
    ]
    assert all(h.wert != "Ozean" for h in pair.mappe("Mittelmeer").historie)
    history = pair.store.run(
        pair.store.memory.history(pair.user_id, "nova", pair.id_of("Mittelmeer"))
    )
    assert [h.wert for h in history] == ["Nebenmeer"]


def test_pairs_are_separate_but_entities_are_shared_per_user(pair: Pair) -> None:
    other = pair.other("luna")
    pair.write(t("Kassel", "liegt_in", "Hessen"))
    other.write(t("Kassel", "hat", wert="Herkules"))
    assert pair.id_of("Kassel") == other.id_of("Kassel")
    assert [f.objekt.name for f in pair.mappe("Kassel").fakten if f.objekt] == ["Hessen"]
    assert [f.wert for f in other.mappe("Kassel").fakten] == ["Herkules"]
    assert {x["character_id"] for x in facts_of(pair, "Kassel", "liegt_in")} == {"nova"}


def test_replay_returns_the_first_result_and_writes_nothing(pair: Pair) -> None:
    order = pair.order(t("Lena", "wohnt_in", "Berlin"), auftrag_id="turn-4711")
    first = pair.store.run(pair.store.memory.write(order))
    before = snapshot(pair)
    again = pair.store.run(pair.store.memory.write(order))
    assert again.wiederholt and not first.wiederholt
    assert again.ergebnisse == first.ergebnisse
    assert snapshot(pair) == before


def test_a_stored_result_that_does_not_parse_is_stored_data_not_the_callers_input(
    pair: Pair, cli_env: dict[str, str]
) -> None:
    """An order's audit record changed outside the library: its replay and `kg audit` say
    which order's stored result is broken (exit 1, no traceback), where pydantic's error
    read as a fault of the caller's input ("invalid input", exit 2), and write nothing."""
    order = pair.order(t("Lena", "wohnt_in", "Berlin"), auftrag_id="turn-broken")
    pair.store.run(pair.store.memory.write(order))
    pair.cypher("MATCH (a:Auftrag {user_id: $u, id: 'turn-broken'}) SET a.ergebnis = '{\"x\"'",
                u=pair.user_id)
    before = snapshot(pair)
    with pytest.raises(StoredDataError, match="stored result of order 'turn-broken' does not"):
        pair.store.run(pair.store.memory.write(order))
    assert snapshot(pair) == before
    result = CliRunner().invoke(app, ["audit", "-u", pair.user_id], env=cli_env)
    assert result.exit_code == 1, result.output
    assert "stored result of order 'turn-broken' does not parse" in result.output
    assert "Traceback" not in result.output and "invalid input" not in result.output


def test_a_stored_result_of_another_order_is_stored_data_not_the_replays_answer(
    pair: Pair, cli_env: dict[str, str]
) -> None:
    """An order's audit record holding another order's result (changed outside the
    library): a replay answered with that other order's result as its own, and `kg audit`
    showed it. Both now say which order's stored result is not its own (exit 1), and the
    replay writes nothing. A record whose status or count disagrees with its result is
    caught by `kg audit` the same way."""
    order = pair.order(t("Lena", "wohnt_in", "Berlin"), auftrag_id="turn-own")
    pair.store.run(pair.store.memory.write(order))
    pair.cypher("MATCH (a:Auftrag {user_id: $u, id: 'turn-own'}) "
                "SET a.ergebnis = replace(a.ergebnis, '\"turn-own\"', '\"turn-else\"')",
                u=pair.user_id)
    before = snapshot(pair)
    with pytest.raises(StoredDataError, match="order 'turn-own' is not its own"):
        pair.store.run(pair.store.memory.write(order))
    assert snapshot(pair) == before
    result = CliRunner().invoke(app, ["audit", "-u", pair.user_id], env=cli_env)
    assert result.exit_code == 1, result.output
    assert "stored result of order 'turn-own' is not its own" in result.output
    pair.cypher("MATCH (a:Auftrag {user_id: $u, id: 'turn-own'}) "
                "SET a.ergebnis = replace(a.ergebnis, '\"turn-else\"', '\"turn-own\"'), "
                "a.anzahl_tripel = 3", u=pair.user_id)
    result = CliRunner().invoke(app, ["audit", "-u", pair.user_id], env=cli_env)
    assert result.exit_code == 1 and "anzahl_tripel is 3" in result.output, result.output


@pytest.mark.parametrize("queued", [False, True], ids=["first run", "queued"])
def test_a_failure_in_the_middle_of_an_order_leaves_nothing(
    pair: Pair, monkeypatch: pytest.MonkeyPatch, queued: bool
) -> None:
    """Both ways `order_apply` goes: run alone (its first run in the process, which
    writes before the fault) and queued for the COMMIT (which the rollback carries)."""
    runs = pair.store.memory.db.first_runs
    if queued:

        async def plan() -> None:
            async with runs.alone("order_apply", 1.0):
                pass

        pair.store.run(plan())
    else:
        runs.forget()
    assert runs.planned("order_apply") == queued
    original = Tx.with_commit

    async def failing(self: Tx, name: str, /, **params):  # type: ignore[no-untyped-def]
        await original(self, name, **params)
        # order_apply is queued (or, on its first run, written): the commit has not
        # happened, and the rollback carries what is queued.
        raise RuntimeError("injected fault before commit")

    monkeypatch.setattr(Tx, "with_commit", failing)
    with pytest.raises(RuntimeError, match="injected"):
        pair.write(
            t("Lena", "wohnt_in", "Berlin"),
            t("Lena", "beruf", wert="Ärztin"),
            t("Lena", "hobby", wert="Lesen"),
        )
    assert snapshot(pair) == {"entities": 0, "rels": 0, "strengths": [], "orders": 0}
    monkeypatch.undo()
    # The same order then goes through once.
    assert pair.write(t("Lena", "wohnt_in", "Berlin")).status == "ok"
    assert snapshot(pair)["orders"] == 1


def test_a_refused_query_sent_with_the_commit_fails_the_order_and_leaves_nothing(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once planned, order_apply goes out with the COMMIT (`Tx.with_commit`), and nobody
    waits for its answer before committing. Where the server refuses it (here an instant
    it cannot parse), the commit fails with it: the order raises, nothing of it is
    written, and the connection serves the next order."""
    assert pair.write(t("Lena", "wohnt_in", "Berlin")).status == "ok"
    assert pair.store.memory.db.first_runs.planned("order_apply")
    before = snapshot(pair)
    original = Tx.with_commit

    async def refused(self: Tx, name: str, /, **params: Any) -> None:
        await original(self, name, **{**params, "jetzt": "not an instant"})

    monkeypatch.setattr(Tx, "with_commit", refused)
    with pytest.raises(KgError, match="not an instant"):
        pair.write(t("Lena", "beruf", wert="Ärztin"), t("Lena", "hobby", wert="Lesen"))
    assert snapshot(pair) == before
    monkeypatch.undo()
    assert pair.write(t("Lena", "beruf", wert="Ärztin")).status == "ok"
    assert snapshot(pair)["orders"] == before["orders"] + 1


def test_a_connection_lost_at_the_commit_plans_the_queries_anew(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection lost at the COMMIT (which carries `order_apply`) may be a restarted
    server, whose plans are gone: the order is not confirmed, and the next run of each
    query is its first again (`FirstRuns`), sent alone."""
    from neo4j.exceptions import IncompleteCommit

    assert pair.write(t("Lena", "wohnt_in", "Berlin")).status == "ok"
    runs = pair.store.memory.db.first_runs
    assert runs.planned("order_apply")

    async def lost(self: Tx, name: str, /, **params: Any) -> None:
        raise IncompleteCommit("the connection was lost at the COMMIT")

    monkeypatch.setattr(Tx, "with_commit", lost)
    with pytest.raises(WriteNotConfirmed, match="replay it with the same auftrag_id"):
        pair.write(t("Lena", "beruf", wert="Ärztin"))
    assert not runs.planned("order_apply") and not runs.planned("order_state")


@pytest.mark.parametrize("server_committed", [False, True], ids=["at once", "after it"])
def test_an_order_whose_commit_lost_its_answer_is_written_once_by_its_replay(
    pair: Pair, monkeypatch: pytest.MonkeyPatch, server_committed: bool
) -> None:
    """The connection fails after the COMMIT, which carries `order_apply`, went out: the
    order may be written or not. The caller is told so (`WriteNotConfirmed`), and the
    replay with the same auftrag_id writes it exactly once: `wiederholt` where the lost
    commit had written it (made sure of by losing the answer only after the server
    committed), written now where it had not."""
    from tests.conftest import raw_cypher
    from tests.reliability_support import lose_the_answer_to_the_commit

    assert pair.write(t("Lena", "wohnt_in", "Berlin")).status == "ok"  # planned: queued
    order = pair.order(t("Lena", "beruf", wert="Ärztin"))

    async def written() -> bool:
        return bool(await raw_cypher(pair.store.memory, "MATCH (a:Auftrag {user_id: $u, "
                                     "id: $id}) RETURN a.id", u=pair.user_id,
                                     id=order["auftrag_id"]))

    lost = lose_the_answer_to_the_commit(monkeypatch, written if server_committed else None)
    with pytest.raises(WriteNotConfirmed, match=r"whether it was written is unknown.*"
                       r"replay it with the same auftrag_id"):
        pair.store.run(pair.store.memory.write(order))
    assert lost == ["order_apply"]
    monkeypatch.undo()
    committed = len(facts_of(pair, "Lena", "beruf"))
    assert committed in ((1,) if server_committed else (0, 1))
    replayed = pair.store.run(pair.store.memory.write(order))
    assert replayed.status == "ok" and replayed.wiederholt == bool(committed)
    assert [f["objekt"] for f in facts_of(pair, "Lena", "beruf")] == ["Ärztin"]
    assert snapshot(pair)["orders"] == 2


def test_concurrent_writers_keep_one_active_einwertig_fact_and_one_entity(pair: Pair) -> None:
    memory = pair.store.memory

    async def burst() -> list[AuftragErgebnis]:
        orders = [
            Auftrag.model_validate(
                pair.order(
                    t("Lena", "wohnt_in", f"Stadt{i % 5}"),
                    t("Lena", "hat_haustier", "Neuer Hund"),
                    t("Zoe", "geschwister", "Lena"),
                )
            )
            for i in range(24)
        ]
        return await asyncio.gather(*(memory.write(o) for o in orders))

    results = pair.store.run(burst())
    assert all(r.status == "ok" for r in results)
    active = [x for x in facts_of(pair, "Lena", "wohnt_in") if x["aktiv"]]
    assert len(active) == 1
    names = pair.cypher(
        "MATCH (e:Entitaet {user_id: $u}) RETURN e.name AS name, count(*) AS n ORDER BY name",
        u=pair.user_id,
    )
    assert all(row["n"] == 1 for row in names), names
    assert len([x for x in facts_of(pair, "Lena", "hat_haustier") if x["aktiv"]]) == 1


def test_cli_write_reports_and_bad_input_changes_nothing(pair: Pair, tmp_path: Path) -> None:
    runner = CliRunner()
    good = tmp_path / "good.json"
    good.write_text(json.dumps(pair.order(t("Lena", "wohnt_in", "Kassel"))))
    result = runner.invoke(app, ["write", str(good), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ergebnisse"][0]["ausgang"] == "geschrieben"
    before = snapshot(pair)
    bad_inputs = [
        "{not json",
        json.dumps({"user_id": pair.user_id, "tripel": []}),
        json.dumps({**pair.order(t("Lena", "beruf", wert="x")), "tripel": "nope"}),
        json.dumps({**pair.order(t("Lena", "beruf", wert="x")), "zeitpunkt": "gestern"}),
        json.dumps(pair.order(t("Lena'}) DETACH DELETE (n) //", "mag", "x"))),
    ]
    for text in bad_inputs:
        path = tmp_path / "bad.json"
        path.write_text(text)
        result = runner.invoke(app, ["write", str(path)])
        assert result.exit_code != 0
        assert "Traceback" not in result.output
    assert snapshot(pair)["entities"] == before["entities"]
    assert snapshot(pair)["rels"] == before["rels"]


def test_injection_text_is_stored_literally(pair: Pair) -> None:
    evil = "x'}) MATCH (n) DETACH DELETE n //"
    pair.write(t(evil, "beruf", wert='"; DROP TABLE fakten; --'))
    (row,) = facts_of(pair, evil, "beruf")
    assert row["objekt"] == '"; DROP TABLE fakten; --'


def test_audit_records_each_order_with_outcomes(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Berlin"), t("Lena", "mag", "x"), auftrag_id="a-1")
    (entry,) = pair.store.run(pair.store.memory.audit(pair.user_id, "nova"))
    assert entry.auftrag_id == "a-1" and entry.status == "teilweise"
    assert [r.ausgang for r in entry.ergebnis.ergebnisse] == ["geschrieben", "abgelehnt"]


def test_a_reused_auftrag_id_with_other_content_is_refused(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Berlin"), auftrag_id="same-id")
    # The same order again (the store's clock, which dates it, is later now) is a replay ...
    again = pair.write(t("Lena", "wohnt_in", "Berlin"), auftrag_id="same-id")
    assert again.wiederholt
    # ... another order under the same id is a caller's bug and is refused.
    with pytest.raises(InvalidInput, match="other content"):
        pair.write(t("Lena", "wohnt_in", "Kassel"), auftrag_id="same-id")
    assert [x["objekt"] for x in facts_of(pair, "Lena", "wohnt_in")] == ["Berlin"]


def test_a_reused_auftrag_id_with_another_zeitpunkt_is_refused(pair: Pair) -> None:
    """The zeitpunkt a caller gives is the order's valid time, part of what it says: the
    same triples at another time (or at a time where the first had none, or the other
    way round) are another order. They were answered as a replay of the first, with its
    time, and nothing was written. Only the store's clock, which dates an order without a
    zeitpunkt, may differ on a replay."""
    lena, tom = t("Lena", "wohnt_in", "Berlin"), t("Tom", "wohnt_in", "Berlin")
    first = pair.write(lena, auftrag_id="z1", zeitpunkt="2025-01-01T00:00:00Z")
    pair.write(tom, auftrag_id="z2")
    before = snapshot(pair)
    for other, this in (({"zeitpunkt": "2026-06-01T00:00:00Z"},
                         r"with 2026-06-01T00:00:00\+00:00"),
                        ({}, "without")):
        # Not "give a new auftrag_id" (the review): a retry rebuilt with a new clock
        # would then write the order twice.
        with pytest.raises(InvalidInput, match=(
                r"'z1' was written on .* with the same triples, with zeitpunkt "
                rf"2025-01-01T00:00:00\+00:00; this one {this}: if this is that order sent "
                r"again, it is written already — send it as first sent \(with zeitpunkt "
                r"2025-01-01T00:00:00\+00:00\) to get")):
            pair.write(lena, auftrag_id="z1", **other)
    with pytest.raises(InvalidInput, match=r"with the same triples, without a zeitpunkt; this "
                                           r"one with 2025-01-01T00:00:00\+00:00: if this"):
        pair.write(tom, auftrag_id="z2", zeitpunkt="2025-01-01T00:00:00Z")
    assert snapshot(pair) == before
    # The same instant, written another way, is the same order; so is one without a
    # zeitpunkt sent again without one.
    again = pair.write(lena, auftrag_id="z1", zeitpunkt="2025-01-01T01:00:00+01:00")
    assert again.wiederholt and again.zeitpunkt == first.zeitpunkt
    assert again.ergebnisse == first.ergebnisse
    assert pair.write(tom, auftrag_id="z2").wiederholt
    assert snapshot(pair) == before


def test_an_order_stored_before_its_zeitpunkt_counted_still_replays(pair: Pair) -> None:
    """An order stored by an older version has a content hash without its zeitpunkt
    (2026-12-05): sent again with the same zeitpunkt it is still its replay; with another
    one, or none, it is refused (the first's zeitpunkt is its result's valid time)."""
    order = pair.order(t("Lena", "wohnt_in", "Berlin"), auftrag_id="old-1",
                       zeitpunkt="2025-01-01T00:00:00Z")
    first = pair.store.run(pair.store.memory.write(order))
    without = {key: value for key, value in order.items() if key != "zeitpunkt"}
    legacy = content_hash(Auftrag.model_validate(without))
    pair.cypher("MATCH (a:Auftrag {user_id: $u, id: 'old-1'}) SET a.inhalt = $h",
                u=pair.user_id, h=legacy)
    again = pair.store.run(pair.store.memory.write(order))
    assert again.wiederholt and again.ergebnisse == first.ergebnisse
    for other in ({**order, "zeitpunkt": "2026-06-01T00:00:00Z"}, without):
        with pytest.raises(InvalidInput, match="with the same triples, with zeitpunkt 2025"):
            pair.store.run(pair.store.memory.write(other))
    # One stored so without a zeitpunkt replays without one, and not with one.
    plain = pair.order(t("Tom", "wohnt_in", "Berlin"), auftrag_id="old-2")
    pair.store.run(pair.store.memory.write(plain))
    assert pair.store.run(pair.store.memory.write(plain)).wiederholt
    with pytest.raises(InvalidInput, match="with the same triples, without a zeitpunkt"):
        pair.store.run(pair.store.memory.write({**plain, "zeitpunkt": "2025-01-01"}))


def test_a_superseded_version_keeps_every_stored_value_exactly(pair: Pair) -> None:
    """The writer reads instants as epoch microseconds and writes them as ISO text (both
    cheaper than the driver's temporal types): the next version of a fact must still hold
    the very values of the one it follows, of the same types, to the microsecond."""
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2026-09-01T10:11:12.345678Z")
    pair.store.run(pair.store.memory.decay_run(pair.user_id, day=date(2026, 9, 2)))
    result = pair.write(t("Lena", "wohnt_in", "Kassel"), zeitpunkt="2026-10-02T03:04:05.000007Z")
    assert result.ergebnisse[0].ausgang == "abgeloest"
    rows = versions_of_berlin(
        pair,
        "r.version AS version, properties(r) AS props, "
        "[k IN keys(r) | [k, valueType(r[k])]] AS types",
    )
    assert [r["version"] for r in rows] == [1, 2]
    first, second = rows[0]["props"], rows[1]["props"]
    changed = {"version", "aktiv", "grund", "t_invalid", "t_expired", "t_recorded",
               "abgeloest_durch"}
    assert {k: v for k, v in first.items() if k not in changed} == {
        k: v for k, v in second.items() if k not in changed
    }
    assert "abgeloest_durch" not in first  # it held, followed by nothing
    assert second["abgeloest_durch"] == [result.ergebnisse[0].fakt_id]  # Kassel follows it
    assert first["t_valid"].to_native() == datetime(2026, 9, 1, 10, 11, 12, 345678, UTC)
    assert first["decay_am"].to_native() == date(2026, 9, 2)
    assert second["t_invalid"].to_native() == datetime(2026, 10, 2, 3, 4, 5, 7, UTC)
    types = dict(rows[1]["types"])
    for key in ("t_valid", "t_invalid", "t_recorded", "last_touched"):
        assert types[key] == "ZONED DATETIME NOT NULL", key
    assert types["decay_am"] == "DATE NOT NULL"


def test_a_value_restated_among_many_is_touched_from_any_side_and_any_name(pair: Pair) -> None:
    """The state of an order reads, of a relation with many values, only the facts whose
    other end the order names (by name, id or value): each way of naming must still find
    the fact that already says it, so it is touched and not written again."""
    pair.write(
        t("Lena", "hobby", wert="Schach"), t("Lena", "hobby", wert="Lesen"),
        t("Lena", "hobby", wert="Tennis"), t("Lena", "befreundet_mit", "Tom"),
        t("Lena", "befreundet_mit", "Ida"), t("Lena", "hat_haustier", "Bello"),
        t("Lena", "hat_haustier", "Minka"),
    )
    minka = pair.id_of("Minka")
    before = snapshot(pair)["rels"]
    for restated in (
        t("Lena", "hobby", wert="Lesen"),  # a value
        t("Tom", "befreundet_mit", "Lena"),  # a symmetric fact, from its other end by name
        t({"id": pair.id_of("Lena")}, "befreundet_mit", "Ida"),  # the subject by id
        t("Lena", "hat_haustier", {"id": minka}),  # the object by id
    ):
        (result,) = pair.write(restated).ergebnisse  # each alone: no other name helps
        assert result.ausgang == "unveraendert", restated
    assert snapshot(pair)["rels"] == before
    new = pair.write(t("Lena", "hobby", wert="Segeln"), t("Lena", "hat_haustier", "Rex"))
    assert [r.ausgang for r in new.ergebnisse] == ["geschrieben", "geschrieben"]


def test_a_stored_value_of_the_wrong_type_is_carried_forward_not_fatal(pair: Pair) -> None:
    """The writer reads instants and days as integers and writes them as text; a value
    that is no day where a day belongs (an edit by hand, which `kg check` reports) must
    neither break the next order on that fact nor be changed by it."""
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2026-09-01T00:00:00Z")
    pair.cypher(
        "MATCH (:Entitaet {user_id: $u, name: 'Lena'})-[r:WOHNT_IN]->() SET r.decay_am = 'kaputt'",
        u=pair.user_id,
    )
    result = pair.write(t("Lena", "wohnt_in", "Kassel"))
    assert result.ergebnisse[0].ausgang == "abgeloest"
    rows = versions_of_berlin(
        pair, "r.version AS version, r.decay_am AS decay_am, valueType(r.t_valid) AS t_valid"
    )
    assert rows == [
        {"version": 1, "decay_am": "kaputt", "t_valid": "ZONED DATETIME NOT NULL"},
        {"version": 2, "decay_am": "kaputt", "t_valid": "ZONED DATETIME NOT NULL"},
    ]


def test_type_facts_are_read_only_for_an_entity_whose_type_the_order_may_change(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person's hundreds of hobbies and friends are not walked again for a check that
    cannot fail: an order that gives Lena only the type she has reads none of her type
    facts; one that would make her another type reads them (and is refused by them)."""
    import kg.writer

    states: list[dict[str, Any]] = []
    to_state = kg.writer.to_state

    def seen(row: dict[str, Any], canon: Any) -> Any:
        states.append(row)
        return to_state(row, canon)

    pair.write(t("Lena", "beruf", wert="Ärztin"), t("Lena", "wohnt_in", "Kassel"))
    monkeypatch.setattr(kg.writer, "to_state", seen)

    def typed_of_lena() -> list[dict[str, Any]]:
        (lena,) = [e for e in states[-1]["entities"] if e["name"] == "Lena"]
        return list(lena["typed"])

    same = pair.write(t("Lena", "hobby", wert="Schach"))  # hobby: a person's, as Lena is
    assert same.status == "ok" and typed_of_lena() == []
    other = pair.write(t("Lena", "typ", wert="tier"))
    assert [r.grund for r in other.ergebnisse] == ["typkonflikt"]
    assert {f["rel"] for f in typed_of_lena()} >= {"BERUF", "WOHNT_IN"}


@pytest.mark.parametrize("query", ["order_state", "user_lock"])
def test_a_write_that_waited_for_the_users_lock_records_after_the_one_it_waited_for(
    pair: Pair, query: str
) -> None:
    """The store's clock of a write is read under the user's lock. A transaction that
    began first but reached the lock second (a server paused under load, as in the
    fault tests, where `kg check` then found a version replaced before it was recorded)
    must still get a clock after the write it waited for, not its own earlier one."""
    from kg.api import parse_order
    from kg.plan import refs_of

    memory = pair.store.memory
    db = memory.db

    async def clock(tx: Any) -> int:
        if query == "user_lock":
            row = await Tx(tx, db).one("user_lock", user_id=pair.user_id)
            assert row is not None
            return int(row["jetzt"].to_native().timestamp() * 1_000_000)
        auftrag = parse_order(pair.order(t("Lena", "wohnt_in", "Kassel")))
        row = await memory.agent._state(Tx(tx, db), auftrag, refs_of(auftrag, memory.canon))
        return int(row["jetzt"])

    async def race() -> tuple[int, int]:
        early_session = db.driver.session(database=db.name)
        late_session = db.driver.session(database=db.name)
        async with early_session, late_session:
            early = await early_session.begin_transaction()
            await (await early.run("RETURN 1")).consume()  # its clock is taken now
            await asyncio.sleep(0.05)
            late = await late_session.begin_transaction()
            late_clock = await clock(late)  # takes the lock first
            waiting = asyncio.create_task(clock(early))
            await asyncio.sleep(0.5)  # the early one is now waiting for the lock
            await late.commit()
            early_clock = await waiting
            await early.rollback()
        return early_clock, late_clock

    pair.write(t("Lena", "wohnt_in", "Berlin"))  # the user's lock node exists
    early_clock, late_clock = pair.store.run(race())
    assert early_clock > late_clock


def test_a_correction_names_who_says_the_fact_is_wrong_on_every_surface() -> None:
    """Found by a stranger's attack (2026-12-05): `Memory.correct` and `kg correct`
    required a correction's herkunft, while an order's `berichtigungen` (and so MCP's
    `write` and `correct`) took one without, and the audit kept `herkunft: null`. It is
    required everywhere, as a fact's is, and the error says what to give."""
    wrong = {"subjekt": "Lena", "beziehung": "beruf", "wert": "Koch", "notiz": "falsch"}
    order: dict[str, Any] = {"auftrag_id": "c1", "user_id": "u", "character_id": "nova",
                             "berichtigungen": [wrong]}
    with pytest.raises(InvalidInput, match=r"berichtigungen\.0\.herkunft: is required: who "
                       r"says so, one of mensch, nova, modell, recherche \(there is no"):
        parse_order(order)
    # Who says so is part of the order: the same correction by another is another order.
    said = [Auftrag.model_validate(order | {"berichtigungen": [wrong | {"herkunft": h}]})
            for h in ("mensch", "nova")]
    assert content_hash(said[0]) != content_hash(said[1])
