"""Review item 8: `kg check` is exact about decay.

A per-user check and the whole-store check judge against the same run: the newest
recorded global sweep (DecayLauf) or the newest swept edge. Edges written after that
run, relation types first used after it, and types whose edges are all inactive need
no run. A sweep that really is missing or stale is still reported.

Tests never run the global sweep on the shared server (it sweeps every user's edges):
a global run of today is planted as its DecayLauf node, and removed afterwards when the
test created it.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest

from kg.check import CheckReport
from tests.conftest import Pair, t

TODAY = datetime.now(UTC).date()


def report(pair: Pair) -> CheckReport:
    return pair.store.run(pair.store.memory.check(pair.user_id))


def check(pair: Pair, name: str) -> tuple[int, str]:
    (found,) = [c for c in report(pair).checks if c.name == name]
    return found.count, found.detail or ""


def row(pair: Pair, rel_type: str) -> tuple[bool, str]:
    (found,) = [r for r in report(pair).table if r.kind == "relationship"
                and r.name == rel_type]
    return found.ok, found.verdict


@pytest.fixture
def global_run_today(pair: Pair) -> Iterator[None]:
    """Today's global sweep as it records itself (a DecayLauf node)."""
    created = pair.cypher(
        "OPTIONAL MATCH (d:DecayLauf {tag: $tag}) WITH d WHERE d IS NULL "
        "CREATE (n:DecayLauf {tag: $tag, am: datetime(), edges: 0, resting: 0, seconds: 0.0}) "
        "RETURN n.tag AS tag", tag=TODAY)
    yield
    if created:
        pair.cypher("MATCH (d:DecayLauf {tag: $tag}) WHERE d.edges = 0 DELETE d", tag=TODAY)


def sweep(pair: Pair, day: date = TODAY) -> None:
    pair.store.run(pair.store.memory.decay_run(pair.user_id, day=day))


def test_edges_written_after_todays_global_sweep_have_a_run(
    pair: Pair, global_run_today: None
) -> None:
    """Review case 8a: `kg check --user U` said "decay properties without a run" for a
    user whose edges were all written after today's global sweep."""
    pair.write(t("Lena", "wohnt_in", "Kassel"), t("Lena", "beruf", wert="Ärztin"))
    count, detail = check(pair, "decay_has_a_run")
    assert count == 0, detail
    assert check(pair, "decay_sweep_complete")[0] == 0
    assert row(pair, "WOHNT_IN")[0]
    assert all(c.ok for c in report(pair).checks if c.item in (6, 7))


def test_a_relation_first_used_after_the_sweep_is_konform(pair: Pair) -> None:
    """Review case 8b: a relation type first used after the sweep failed the §4 table."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    sweep(pair)
    pair.write(t("Lena", "hat_haustier", "Bello"))  # a type the sweep never saw
    ok, verdict = row(pair, "HAT_HAUSTIER")
    assert ok, verdict
    assert check(pair, "decay_has_a_run")[0] == 0


def test_a_relation_whose_edges_are_all_inactive_needs_no_run(pair: Pair) -> None:
    """Review case 8c: a relation whose edges are all superseded or corrected was
    reported as "without a run" (the sweep never measures inactive edges again)."""
    pair.write(t("Lena", "wohnt_in", "Kassel"), t("Lena", "hat_haustier", "Bello"))
    sweep(pair)
    pair.store.run(pair.store.memory.write(pair.order(
        berichtigungen=[{"herkunft": "mensch",
                         "subjekt": "Lena", "beziehung": "hat_haustier", "objekt": "Bello"}])))
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r:HAT_HAUSTIER]->() SET r.decay_am = $old",
                u=pair.user_id, old=TODAY - timedelta(days=30))
    ok, verdict = row(pair, "HAT_HAUSTIER")
    assert ok, verdict


def test_a_stale_sweep_is_still_reported(pair: Pair, global_run_today: None) -> None:
    """Planted: edges swept 10 days ago and not touched since; today's global run did not
    reach them. That is still decay without a run, in the check and in the table."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r]->() WHERE r.aktiv "
                "SET r.decay_am = $old, r.last_touched = datetime() - duration('P10D')",
                u=pair.user_id, old=TODAY - timedelta(days=10))
    count, detail = check(pair, "decay_has_a_run")
    assert count >= 1 and "decay properties without a run" in detail
    assert check(pair, "decay_sweep_complete")[0] >= 1
    ok, verdict = row(pair, "WOHNT_IN")
    assert not ok and "without a run" in verdict


def test_a_missing_sweep_is_still_reported(pair: Pair) -> None:
    """Planted: strengths on edges written ten days ago, and no run at all for them."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r]->() "
                "SET r.last_touched = datetime() - duration('P10D') REMOVE r.decay_am",
                u=pair.user_id)
    count, detail = check(pair, "decay_has_a_run")
    assert count >= 1 and "decay properties without a run" in detail
    ok, verdict = row(pair, "WOHNT_IN")
    assert not ok and "without a run" in verdict


def test_per_user_and_whole_store_agree_on_the_run(pair: Pair, global_run_today: None) -> None:
    """Both judge against the same newest run: the user's edges never count against the
    whole store when the per-user check passes."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    mine = report(pair)
    whole = pair.store.run(pair.store.memory.check())
    (u_run,) = [c for c in mine.checks if c.name == "decay_has_a_run"]
    (w_run,) = [c for c in whole.checks if c.name == "decay_has_a_run"]
    assert u_run.ok
    assert u_run.detail == w_run.detail or w_run.ok is False  # the same run is named
    assert f"newest run {TODAY}" in (u_run.detail or "")
    (missed,) = [c for c in whole.checks if c.name == "decay_sweep_complete"]
    my_ids = {r["id"] for r in pair.cypher(
        "MATCH (:Entitaet {user_id: $u})-[r]->() RETURN r.id AS id", u=pair.user_id)}
    assert not my_ids & set(missed.samples)
