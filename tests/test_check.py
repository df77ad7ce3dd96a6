"""`kg check`: a clean store reports clean, and every check reports a planted violation.

Each test builds its own small store (one user), sweeps it, checks that it is clean,
plants one violation with raw Cypher — the way a bug or a hand edit would leave it —
and sees the check report it by name. Checks run scoped to the test's user; the
planted data is removed afterwards.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import kg.check
from cli.main import app
from kg.canon import load_canon
from kg.check import (
    CHECKS,
    CheckReport,
    CheckResult,
    Job,
    _in_turn,
    _side_by_side,
    decay_results,
    is_recent,
    table,
    verdict,
)
from kg.errors import KgError, NothingStored, TimelineError
from kg.models import normalize_name
from kg.queries import registry
from tests.conftest import Pair, new_user_id, t

TODAY = datetime.now(UTC).date()


# -- pure --------------------------------------------------------------------------


class Gauge:
    """Jobs that record how many of them ran at once; `fail` names one that raises."""

    def __init__(self, fail: int | None = None) -> None:
        self.running = self.most = self.made = 0
        self.started: list[int] = []
        self.fail = fail

    def jobs(self, n: int) -> list[Job]:
        """n jobs, each a call that makes its coroutine (counted in `made`)."""
        return [partial(self.make, k) for k in range(n)]

    def make(self, k: int) -> Coroutine[Any, Any, int]:
        self.made += 1
        return self.run(k)

    async def run(self, k: int) -> int:
        self.started.append(k)
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(0.01 * (k % 3))
            if k == self.fail:
                raise LookupError(f"job {k}") from KeyError("the driver's error")
            return k * k
        finally:
            self.running -= 1


def test_checks_run_side_by_side_in_order_and_bounded() -> None:
    gauge = Gauge()
    assert asyncio.run(_side_by_side(gauge.jobs(10), 4)) == [
        k * k for k in range(10)
    ]
    assert gauge.most == 4


def test_a_failed_check_query_is_raised_as_itself_and_ends_the_rest() -> None:
    """The first failure (a server gone) comes out as itself, not as a group, with the
    driver's error it was raised from; and the jobs not yet started never start: none
    made its coroutine (none left to warn that it was never awaited)."""
    for run in (lambda jobs: _side_by_side(jobs, 2), _in_turn):
        gauge = Gauge(fail=1)
        with pytest.raises(LookupError, match="job 1") as raised:
            asyncio.run(run(gauge.jobs(6)))
        assert repr(raised.value.__cause__) == repr(KeyError("the driver's error"))
        assert 1 in gauge.started and len(gauge.started) < 6 and gauge.running == 0
        assert gauge.made == len(gauge.started)


def test_checks_in_a_transaction_run_one_at_a_time() -> None:
    gauge = Gauge()
    assert asyncio.run(_in_turn(gauge.jobs(5))) == [k * k for k in range(5)]
    assert gauge.most == 1 and gauge.started == list(range(5))


def test_recency_and_the_decay_verdicts() -> None:
    day = date(2026, 11, 10)
    assert is_recent(day, day, 2) and is_recent(day - timedelta(days=2), day, 2)
    assert not is_recent(day - timedelta(days=3), day, 2)
    assert not is_recent(day + timedelta(days=1), day, 2)  # a day to come is no run
    assert not is_recent(None, day, 2)

    state = {"with_strength": 5, "future": 0, "missed": 0, "samples": []}
    ok, complete = decay_results({**state, "newest": day}, day, 2)
    assert ok.ok and complete.ok
    stale, _ = decay_results({**state, "newest": day - timedelta(days=9)}, day, 2)
    assert stale.count == 5 and "decay properties without a run" in (stale.detail or "")
    never, _ = decay_results({**state, "newest": None}, day, 2)
    assert never.count == 5 and "does not exist" in (never.detail or "")
    future, _ = decay_results({**state, "newest": day, "future": 2}, day, 2)
    assert future.count == 2
    # Only a decay_am after the day (a hand edit, an import): the detail says so, as the
    # sweep's refusal that points here does, not only that no run exists.
    ahead, _ = decay_results({**state, "newest": None, "future": 2}, day, 2)
    assert ahead.count == 5 and f"2 carry a decay_am after {day}" in (ahead.detail or "")
    empty, _ = decay_results({**state, "with_strength": 0, "newest": None}, day, 2)
    assert empty.ok  # nothing carries a decay property: nothing to run
    _, missed = decay_results({**state, "newest": day, "missed": 3, "samples": ["f1"]}, day, 2)
    assert missed.count == 3 and missed.samples == ["f1"]
    # (a stranger's attack, 2026-12-06) a run recorded for a day to come, never run
    later = day + timedelta(days=30)
    planted, _ = decay_results({**state, "newest": day, "runs_ahead": [later]}, day, 2)
    assert planted.count == 1 and f"recorded for a day after tomorrow ({later})" in (
        planted.detail or "")
    both, _ = decay_results({**state, "newest": None, "runs_ahead": [later]}, day, 2)
    assert both.count == 6 and "does not exist" in (both.detail or "")


def test_the_section_4_verdicts() -> None:
    assert verdict("memory", ["decay_am", "staerke_decay"], True, False) == ("konform", True)
    assert verdict("memory", [], None, False)[1] is False
    assert "without a run" in verdict("memory", ["staerke_decay"], None, False)[0]
    assert "without a run" in verdict("memory", ["decay_am", "staerke_decay"], False, False)[0]
    assert verdict("fact entity", [], None, True) == ("konform", True)
    assert "reference target" in verdict("fact entity", ["staerke_decay"], None, True)[0]
    assert verdict("forensics", ["x_decay"], None, False)[1] is False
    assert verdict("unclassified", [], None, False)[1] is False


def test_table_classifies_labels_and_types() -> None:
    canon = load_canon()
    day = date(2026, 11, 10)
    labels = [
        {"label": "Entitaet", "count": 3, "decay_keys": [[]], "newest": None, "targeted": 2},
        {"label": "TimelineEintrag", "count": 1, "decay_keys": [[]], "newest": None,
         "targeted": 0},
        {"label": "Notiz", "count": 1, "decay_keys": [[]], "newest": None, "targeted": 0},
    ]
    rels = [
        {"type": "WOHNT_IN", "count": 2, "decay_keys": [["decay_am", "staerke_decay"]],
         "newest": day},
        {"type": "NACHFOLGER", "count": 1, "decay_keys": [[]], "newest": None},
    ]
    rows = {r.name: r for r in table(labels, rels, canon, day, 2)}
    assert rows["Entitaet"].classification == "fact entity" and rows["Entitaet"].referenced
    assert rows["TimelineEintrag"].referenced  # by timeline_id, no relationship needed
    assert rows["Notiz"].classification == "unclassified" and not rows["Notiz"].ok
    assert rows["WOHNT_IN"].classification == "memory" and rows["WOHNT_IN"].recent_run
    assert rows["WOHNT_IN"].ok and rows["NACHFOLGER"].ok


# -- a small store ----------------------------------------------------------------------


@dataclass
class World:
    """The test's pair with the ids planting needs."""

    pair: Pair
    lena: str
    max: str
    bello: str
    first_entry: str
    moved_entry: str

    @property
    def u(self) -> str:
        return self.pair.user_id

    def cypher(self, query: str, **params: object) -> list[dict[str, Any]]:
        return self.pair.cypher(query, u=self.u, **params)

    def report(self) -> CheckReport:
        return self.pair.store.run(self.pair.store.memory.check(self.u))

    def check(self, name: str) -> CheckResult:
        (found,) = [c for c in self.report().checks if c.name == name]
        return found

    def sweep(self) -> None:
        self.pair.store.run(self.pair.store.memory.decay_run(self.u, day=TODAY))


@pytest.fixture
def world(pair: Pair) -> Iterator[World]:
    pair.write(t("Lena", "wohnt_in", "Berlin"), t("Lena", "beruf", wert="Ärztin"),
               zeitpunkt="2026-09-01T00:00:00Z")
    moved = pair.write(t("Lena", "wohnt_in", "Kassel", ereignis={
        "titel": "Lena zieht nach Kassel", "beginn": "2026-11-01", "genauigkeit": "monat"}))
    first_entry = moved.ergebnisse[0].timeline_id
    pair.write(t("Kassel", "liegt_in", "Deutschland", herkunft="modell"),
               t("Lena", "hat_haustier", "Bello"), t("Bello", "ist_ein", wert="Hund"),
               t("Bello", "begleitet", "Lena"), t("Lena", "partner", "Max"),
               t("Lena", "hat", wert="Winterreifen"))
    pair.write(t("Lena", "beruf", wert="Lehrerin"))  # Ärztin superseded
    mem = pair.store.memory
    entry = pair.store.run(mem.timeline_move(pair.user_id, "nova", first_entry, date(2026, 12, 1)))
    s = World(pair, pair.id_of("Lena"), pair.id_of("Max"), pair.id_of("Bello"), first_entry,
              entry.id)
    s.sweep()
    yield s
    pair.cypher("MATCH (n) WHERE n.user_id STARTS WITH $u DETACH DELETE n", u=pair.user_id)
    pair.cypher("MATCH (n:Nutzer) WHERE n.id STARTS WITH $u DETACH DELETE n", u=pair.user_id)


def fails(world: World, name: str, planted: str | None = None) -> CheckResult:
    """The named check reports the violation (and names the planted id when given)."""
    found = world.check(name)
    assert not found.ok, f"{name} did not see the planted violation"
    assert found.count >= 1
    if planted is not None:
        assert any(planted in s for s in found.samples), found.samples
    return found


def one_fact(world: World, rel: str, objekt: str | None = None) -> str:
    rows = world.cypher(
        f"MATCH (s:Entitaet {{user_id: $u}})-[r:{rel}]->(o) WHERE r.aktiv "
        "AND ($o IS NULL OR coalesce(o.name, o.wert) = $o) RETURN r.id AS id", o=objekt)
    return str(rows[0]["id"])


def test_a_swept_store_is_clean(world: World) -> None:
    report = world.report()
    assert [c.name for c in report.checks] == list(CHECKS)
    assert report.ok, [(c.name, c.count, c.samples, c.detail) for c in report.violations]
    rows = {(r.kind, r.name): r for r in report.table}
    assert rows["label", "Entitaet"].classification == "fact entity"
    assert rows["label", "Entitaet"].referenced and rows["label", "Entitaet"].decay == []
    assert rows["label", "Auftrag"].classification == "forensics"
    assert rows["label", "TimelineEintrag"].ok and rows["label", "Wert"].ok
    wohnt = rows["relationship", "WOHNT_IN"]
    assert (wohnt.classification, wohnt.decay, wohnt.newest_run, wohnt.recent_run) == (
        "memory", ["decay_am", "staerke_decay"], TODAY, True)
    assert rows["relationship", "NACHFOLGER"].ok and rows["relationship", "BETRIFFT"].ok
    assert all(r.ok for r in report.table)


# -- item 1 ----------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "field"), [
    ("REMOVE r.t_recorded", "t_recorded"),
    ("SET r.t_valid = '2026-11-01'", "t_valid"),
    ("SET r.aktiv = 'ja'", "aktiv"),
    ("REMOVE r.character_id", "character_id"),
    ("SET r.decay_am = '2026-11-01'", "decay_am"),
    ("SET r.abgeloest_durch = 'f-2'", "abgeloest_durch"),  # one id, not a list of them
    ("SET r.abgeloest_durch = [1, 2]", "abgeloest_durch"),
    # Every fact comes from an audited order (a stranger's attack: a fact without its
    # order passed the check, and an export and import carried the gap on).
    ("REMOVE r.auftrag_id", "auftrag_id"),
    ("SET r.auftrag_id = 7", "auftrag_id"),
    # (a stranger's attack, 2026-12-06) the mark of a stated type on a pet's fact
    ("SET r.gesagt = true", "gesagt (only on a type fact)"),
    # the type a triple carried for its subject (rule 5), one of the specific five
    ("SET r.subjekt_typ = 'sonstiges'", "subjekt_typ (a specific type"),
    ("SET r.subjekt_typ = 'hund'", "subjekt_typ (a specific type"),
    ("SET r.subjekt_typ = 7", "subjekt_typ"),
])
def test_fact_fields(world: World, change: str, field: str) -> None:
    assert world.check("fact_fields").ok
    fid = one_fact(world, "HAT_HAUSTIER")
    world.cypher(f"MATCH (:Entitaet {{user_id: $u}})-[r {{id: $id}}]->() {change}", id=fid)
    found = fails(world, "fact_fields", fid)
    assert field in found.samples[0]


@pytest.mark.parametrize(("anchor", "change"), [
    ("MATCH (x:Entitaet {id: $ref})", "SET x.erstellt = datetime('2030-01-01T00:00:00Z')"),
    ("MATCH (x:Auftrag {user_id: $u}) WITH x ORDER BY x.id LIMIT 1",
     "SET x.erfasst = datetime('2030-01-01T00:00:00Z')"),
])
def test_node_system_time(world: World, tmp_path: Any, anchor: str, change: str) -> None:
    """An entity created, or an order recorded, in 2030 (a stranger's attack): kg check
    was clean, the export was written, and no import would take it back ("after this
    store's clock"); an order so recorded outlived its retention."""
    assert world.check("node_system_time").ok
    (row,) = world.cypher(f"{anchor} {change} RETURN x.id AS id", ref=world.bello)
    path = tmp_path / "x.jsonl"
    world.pair.store.run(world.pair.store.memory.export(path, world.u))
    assert "2030-01-01" in path.read_text()
    assert "2030-01-01" in fails(world, "node_system_time", str(row["id"])).samples[0]


def test_a_first_version_touched_before_it_was_recorded(world: World, tmp_path: Any) -> None:
    """Touched "in 2022", a fact recorded today rested at the next sweep and left the
    Mappe, and kg check was clean (a stranger's attack). A later version keeps the touch
    of the one before (Ärztin's second version, superseded): it is no violation. An
    older version wrote such facts (recorded and touched at orders' zeitpunkte): an
    import takes them (the review), check names them."""
    assert world.check("fact_first_touch").ok
    assert world.cypher("MATCH (:Entitaet {user_id: $u})-[r:BERUF]->() WHERE r.version > 1 "
                        "AND r.last_touched < r.t_recorded RETURN count(r) AS n")[0]["n"] >= 1
    fid = one_fact(world, "HAT_HAUSTIER")
    world.cypher("MATCH (:Entitaet {user_id: $u})-[r {id: $id}]->() "
                 "SET r.last_touched = datetime('2022-01-01T00:00:00Z')", id=fid)
    assert "touched 2022-01-01" in fails(world, "fact_first_touch", fid).samples[0]
    store = world.pair.store
    store.run(store.memory.export(tmp_path / "x.jsonl", world.u))
    store.run(store.memory.purge(world.u))
    store.run(store.memory.import_file(tmp_path / "x.jsonl"))  # a backup restores
    assert "touched 2022-01-01" in fails(world, "fact_first_touch", fid).samples[0]


def test_a_decay_run_recorded_for_a_day_to_come_is_found(
    world: World, cli_env: dict[str, str]
) -> None:
    """A stranger's attack (2026-12-06): a DecayLauf dated 2027-01-01 passed `kg check`;
    on that day `kg decay run --if-due` would take the day's sweep as done."""
    assert world.check("decay_has_a_run").ok
    world.cypher("CREATE (:DecayLauf {tag: date('2099-01-01'), edges: 0, resting: 0, "
                 "am: datetime()})")
    try:
        found = fails(world, "decay_has_a_run")
        assert "recorded for a day after" in (found.detail or "") and "2099-01-01" in (
            found.detail or "")
        # A check of an earlier day takes today's run as none after it (the review: a
        # check with `day` set called the real runs since impossible).
        earlier = world.pair.store.run(world.pair.store.memory.check(
            world.u, day=TODAY - timedelta(days=1)))
        (run,) = [c for c in earlier.checks if c.name == "decay_has_a_run"]
        assert str(TODAY) not in (run.detail or "") and "2099-01-01" in (run.detail or "")
        # The advice is a command that mends it, and deletes no run of a day gone by.
        assert "`kg decay forget-ahead`" in (found.detail or "")
        done = CliRunner().invoke(app, ["decay", "forget-ahead"], env=cli_env)
        assert done.exit_code == 0, done.output
        assert "deleted 1 decay run(s) recorded for a day after tomorrow: 2099-01-01" in (
            done.output)
        assert world.check("decay_has_a_run").ok
        again = CliRunner().invoke(app, ["decay", "forget-ahead", "--json"], env=cli_env)
        assert again.exit_code == 0 and json.loads(again.output) == {"geloescht": []}
    finally:
        world.cypher("MATCH (d:DecayLauf {tag: date('2099-01-01')}) DELETE d")


@pytest.mark.parametrize("uhr", [
    "datetime('2099-01-01T00:00:00Z')", "'morgen'",
    # (a stranger's attack, 2026-12-06) before the user's records: a Mappe stood at it,
    # and read again as known then it said nothing
    "datetime('2020-01-01T00:00:00Z')",
    "n.uhr - duration({microseconds: 1})",
])
def test_user_clock(world: World, uhr: str) -> None:
    """A user's clock in the future was clean; the next write was then recorded in 2099,
    and only then did fact_system_time fail, with the record already written."""
    assert world.check("user_clock").ok
    world.cypher(f"MATCH (n:Nutzer {{id: $u}}) SET n.uhr = {uhr}")
    fails(world, "user_clock", world.u)


@pytest.mark.parametrize(("change", "field"), [
    ("SET r.t_valid = '2026-01-10'", "t_valid"),
    ("SET r.t_valid = localdatetime('2026-01-10T00:00:00')", "t_valid"),
    ("SET r.t_recorded = '2026-01-10'", "t_recorded"),
    ("SET r.t_invalid = 5", "t_invalid"),
])
def test_a_wrongly_typed_time_is_reported_and_every_other_check_runs(
    world: World, change: str, field: str, cli_env: dict[str, str]
) -> None:
    """The time checks computed with the stored times; one wrongly typed time of one
    version made the whole `kg check` (of the store, too) end in a Neo4j type error,
    with no report at all."""
    fid = one_fact(world, "WOHNT_IN", "Kassel")
    world.cypher(f"MATCH (:Entitaet {{user_id: $u}})-[r {{id: $id}}]->() WHERE r.aktiv {change}",
                 id=fid)
    report = world.report()
    assert len(report.checks) == len(CHECKS)
    found = fails(world, "fact_fields", fid)
    assert field in found.samples[0]
    broken = CliRunner().invoke(app, ["check", "--user", world.u], env=cli_env)
    assert broken.exit_code == 1 and "fact_fields" in broken.stdout, broken.output


@pytest.mark.parametrize(("target", "change", "words"), [
    ("entry", "SET x.beginn = date('2026-09-17'), x.genauigkeit = 'monat'", "monat: the 1st"),
    ("entry", "SET x.ende = x.beginn - duration('P3D')", "before beginn"),
    ("entry", "SET x.genauigkeit = 'jahr'", "genauigkeit"),
    ("entry", "SET x.beginn = '2026-11-01'", "beginn"),
    ("entry", "REMOVE x.beginn", "beginn"),
    ("entry", "SET x.t_recorded = 'gestern'", "t_recorded"),
    ("entity", "REMOVE x.name_norm", "name_norm"),
    ("order", "SET x.status = 'wat'", "status"),
])
def test_node_fields(world: World, target: str, change: str, words: str) -> None:
    """What export refuses ("— run `kg check`"), kg check found clean: an entry's
    precision, a month entry not on the 1st, a span that ends before it begins, an
    entity without its lookup key, an order of an unknown status."""
    assert world.check("node_fields").ok
    anchor = {
        "entry": "MATCH (x:TimelineEintrag {id: $ref})",
        "entity": "MATCH (x:Entitaet {id: $ref})",
        "order": "MATCH (x:Auftrag {user_id: $u}) WITH x LIMIT 1",
    }[target]
    ref = {"entry": world.moved_entry, "entity": world.bello, "order": None}[target]
    world.cypher(f"{anchor} {change}", ref=ref)
    found = fails(world, "node_fields")
    assert any(words in sample for sample in found.samples), found.samples


@pytest.mark.parametrize(("anchor", "change", "check", "words"), [
    ("MATCH (:Entitaet {id: $bello})<-[]-(:Entitaet)-[:HAT]->(x:Wert)", "SET x.wert = 42",
     "fact_fields", "wert"),
    ("MATCH (:Entitaet {user_id: $u})-[:HAT]->(x:Wert)", "SET x.wert = ''", "fact_fields",
     "wert"),
    ("MATCH (:Entitaet {user_id: $u})-[:HAT]->(x:Wert)", "SET x.wert = '  '", "fact_fields",
     "wert"),
    ("MATCH (:Entitaet {user_id: $u})-[:HAT]->(x:Wert)",
     "SET x.wert = reduce(t = '', i IN range(1, 2001) | t + 'x')", "fact_fields", "wert"),
    ("MATCH (:Entitaet {user_id: $u})-[:HAT]->(x:Wert)", "SET x.wert = 'Winter\u0007reifen'",
     "fact_fields", "wert"),
    ("MATCH (x:Entitaet {id: $bello})", "SET x.name = ' ', x.name_norm = ''", "node_fields",
     "name"),
    ("MATCH (x:Entitaet {id: $bello})", "SET x.name = 'Bel\u0000lo'", "node_fields", "name"),
    ("MATCH (x:TimelineEintrag {user_id: $u}) WITH x LIMIT 1", "SET x.titel = ''",
     "node_fields", "titel"),
    ("MATCH (x:TimelineEintrag {user_id: $u}) WITH x LIMIT 1",
     "SET x.titel = reduce(t = '', i IN range(1, 201) | t + 'x')", "node_fields", "titel"),
    ("MATCH (:Entitaet {user_id: $u})-[x:HAT]->()", "SET x.id = ''", "fact_fields", "id"),
    ("MATCH (:Entitaet {user_id: $u})-[x:HAT]->()", "SET x.auftrag_id = 'a\nb'",
     "fact_fields", "auftrag_id"),
    ("MATCH (:Entitaet {user_id: $u})-[x:HAT]->()", "SET x.notiz = 'von Hand'",
     "fact_fields", "notiz (unknown)"),
    ("MATCH (:Entitaet {user_id: $u})-[x:HAT]->()", "SET x.wert = 'Sommerreifen'",
     "fact_fields", "wert (unknown)"),
    ("MATCH (x:Entitaet {id: $bello})", "SET x.farbe = 'braun'", "node_fields",
     "farbe (unknown)"),
    ("MATCH (x:TimelineEintrag {user_id: $u}) WITH x LIMIT 1", "SET x.ort = 'Kassel'",
     "node_fields", "ort (unknown)"),
    # (the review: Cypher's trim keeps U+00A0, Python's strip does not; a name of
    # invisible characters only is refused by export)
    ("MATCH (x:TimelineEintrag {user_id: $u}) WITH x LIMIT 1", "SET x.titel = '\u00a0'",
     "node_fields", "titel"),
    ("MATCH (:Entitaet {user_id: $u})-[x:HAT]->()", "SET x.auftrag_id = ' \u00a0'",
     "fact_fields", "auftrag_id"),
    ("MATCH (x:TimelineEintrag {user_id: $u}) WITH x LIMIT 1", "SET x.titel = '\u202e'",
     "node_fields", "titel"),
    ("MATCH (x:Entitaet {id: $bello})", "SET x.name = '\u200b', x.name_norm = ''",
     "node_fields", "name (nothing visible)"),
])
def test_a_text_an_export_refuses_is_reported(
    world: World, tmp_path: Any, anchor: str, change: str, check: str, words: str
) -> None:
    """Found by a stranger's attack: a value, name or title out of bounds, or a property
    set by hand, made `kg export` refuse the store ("run `kg check`") while `kg check`
    found it clean. Each is planted here; export refuses it and check names it."""
    assert world.check(check).ok
    world.cypher(f"{anchor} {change}", bello=world.bello)
    with pytest.raises(KgError, match="run `kg check`"):
        world.pair.store.run(world.pair.store.memory.export(tmp_path / "x.jsonl", world.u))
    found = fails(world, check)
    assert any(words in sample for sample in found.samples), found.samples


def test_a_text_an_export_takes_is_not_reported(world: World, tmp_path: Any) -> None:
    """The other side (the review): a title with a zero-width space (no whitespace to
    Python) an export takes as it is, and so does check."""
    world.cypher("MATCH (x:TimelineEintrag {user_id: $u}) SET x.titel = '\u200b'")
    world.pair.store.run(world.pair.store.memory.export(tmp_path / "x.jsonl", world.u))
    assert '"titel":"\u200b"' in (tmp_path / "x.jsonl").read_text(encoding="utf-8")
    assert world.check("fact_fields").ok and world.check("node_fields").ok


@pytest.mark.parametrize(("anchor", "change", "check", "words"), [
    ("MATCH (:Entitaet {user_id: $u})-[x:HAT]->()", "SET x.character_id = 'nova '",
     "fact_fields", "character_id"),
    ("MATCH (:Entitaet {user_id: $u})-[x:HAT]->()",
     "SET x.auftrag_id = reduce(t = '', i IN range(1, 200) | t + 'a') + '\u00a0'",
     "fact_fields", "auftrag_id"),
    ("MATCH (x:TimelineEintrag {user_id: $u}) WITH x LIMIT 1", "SET x.titel = ' Umzug'",
     "node_fields", "titel"),
    ("MATCH (x:Entitaet {id: $bello})", "SET x.name = 'Bello\u00a0'", "node_fields", "name"),
])
def test_a_text_an_export_would_change_is_reported(
    world: World, tmp_path: Any, anchor: str, change: str, check: str, words: str
) -> None:
    """Whitespace at either end, which an export strips (a stranger's attack): a fact of
    character "nova " was reached by no surface (each strips the id it is given), its
    export wrote it as "nova", and kg check found it clean. Check names it now, and the
    export refuses it (it wrote it stripped, so a restore merged "nova " into "nova")."""
    assert world.check(check).ok
    world.cypher(f"{anchor} {change}", bello=world.bello)
    found = fails(world, check)
    assert any(words in sample for sample in found.samples), found.samples
    with pytest.raises(KgError, match=f"its {words} .* whitespace at either end.*kg check"):
        world.pair.store.run(world.pair.store.memory.export(tmp_path / "x.jsonl", world.u))
    assert not (tmp_path / "x.jsonl").exists()


def test_the_text_bounds_are_the_exports() -> None:
    """`kg.check.TEXTS` names every bounded text of the export's records with its bound:
    a text an export would refuse that check does not know of fails here."""
    from pydantic.fields import FieldInfo

    from kg.transfer.records import AuftragRec, EintragRec, EntitaetRec, FaktRec

    def bounds(metadata: Any) -> int | None:
        return next((m.max_length for m in metadata
                     if getattr(m, "max_length", None) is not None
                     and getattr(m, "min_length", None) == 1), None)

    def bounded(info: FieldInfo) -> int | None:
        """The bound of a text field, also of an optional one (`Id | None`)."""
        inner = [bounds(getattr(a, "__metadata__", ())) for a in get_args(info.annotation)]
        return bounds(info.metadata) or next((b for b in inner if b is not None), None)

    derived = ("beziehung", "subjekt", "objekt", "wert", "abgeloest_durch")
    for cls, label in ((EntitaetRec, "Entitaet"), (EintragRec, "TimelineEintrag"),
                       (AuftragRec, "Auftrag"), (FaktRec, "fact")):
        texts = {name: most for name, info in cls.model_fields.items()
                 if name not in derived and (most := bounded(info)) is not None}
        assert texts == kg.check.TEXTS[label], label
    assert bounded(FaktRec.model_fields["wert"]) == kg.check.TEXTS["Wert"]["wert"]


@pytest.mark.parametrize(("change", "words"), [
    ("SET x.ergebnis = '{\"x\"'", "not an order's result"),
    ("SET x.ergebnis = '{}'", "not an order's result"),
    ("SET x.ergebnis = replace(x.ergebnis, '\"' + x.id + '\"', '\"' + x.id + '-b\"')",
     "belongs to another order"),
    ("SET x.status = CASE x.status WHEN 'ok' THEN 'teilweise' ELSE 'ok' END", "has status"),
    ("SET x.anzahl_tripel = x.anzahl_tripel + 1", "anzahl_tripel is"),
    # (a stranger's attack: "anzahl_tripel is 4, the ergebnis holds 4")
    ("SET x.anzahl_tripel = toString(x.anzahl_tripel)", "anzahl_tripel is '"),
])
def test_order_results(world: World, change: str, words: str) -> None:
    """An order's stored result changed outside the library: a replay of the order
    answered with it (or failed, where it did not parse), and the export refused the
    record, while kg check found the store clean. Every order the world's pair wrote (a
    move among them) is clean."""
    assert world.check("order_results").ok
    (row,) = world.cypher(f"MATCH (x:Auftrag {{user_id: $u}}) WITH x ORDER BY x.id LIMIT 1 "
                          f"{change} RETURN x.id AS id")
    found = fails(world, "order_results", str(row["id"]))
    assert found.count == 1 and words in found.samples[0], found.samples


@pytest.mark.parametrize("per_query", [1, 2, 10_000])
@pytest.mark.parametrize("plant", ["deleted", "another_pair"])
def test_order_results_finds_a_fact_an_order_wrote_gone(
    world: World, plant: str, per_query: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fact deleted with all its versions, or moved to another pair, by hand (a
    stranger's attack): the order's result still said "geschrieben" with its id, an
    export and import carried it on, and kg check was clean. A fact corrected or
    superseded keeps its versions: the world (Ärztin superseded) is clean. The facts are
    looked up `per_query` at a time (a subject's split over queries, too)."""
    monkeypatch.setattr(kg.check, "ORDER_FACTS", per_query)
    monkeypatch.setattr(kg.check, "ORDER_NAMED", per_query)  # (looked up as it goes)
    assert world.check("order_results").ok
    fid = one_fact(world, "HAT")
    change = {"deleted": "DELETE r, w", "another_pair": "SET r.character_id = 'zora'"}[plant]
    world.cypher(f"MATCH (:Entitaet {{user_id: $u}})-[r {{id: $id}}]->(w) {change}", id=fid)
    found = fails(world, "order_results")
    assert found.count == 1 and f"names fact {fid} (geschrieben)" in found.samples[0], (
        found.samples)
    # Two facts of one order gone: one finding, naming both (the review: it counted two).
    (order,) = world.cypher("MATCH (a:Auftrag {user_id: $u}) WHERE a.ergebnis CONTAINS $id "
                            "RETURN a.ergebnis AS ergebnis", id=fid)
    other = next(r["fakt_id"] for r in json.loads(order["ergebnis"])["ergebnisse"]
                 if r["fakt_id"] not in (None, fid) and r["ausgang"] == "geschrieben")
    world.cypher("MATCH (:Entitaet {user_id: $u})-[r {id: $id}]->() DELETE r", id=other)
    found = fails(world, "order_results")
    assert found.count == 1 and "names facts " in found.samples[0], found.samples
    assert f"{fid} (geschrieben)" in found.samples[0], found.samples
    assert f"{other} (geschrieben)" in found.samples[0], found.samples


@pytest.mark.parametrize("page", [2, 3, 1000])
def test_order_results_reads_every_order_of_every_pair_once_page_by_page(
    world: World, page: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages repeat the last id of the page before (the keyset's start): each order is
    still read once, in every pair of the user, whatever the page size."""
    count = "MATCH (x:Auftrag {user_id: $u}) RETURN count(x) AS n"
    (nova,) = world.cypher(count)
    world.pair.other("luna").write(t("Lena", "beruf", wert="Ärztin"))
    world.pair.other("luna").write(t("Lena", "hobby", wert="Schach"))
    monkeypatch.setattr(kg.check, "ORDER_PAGE", page)
    assert world.check("order_results").ok
    world.cypher("MATCH (x:Auftrag {user_id: $u}) SET x.ergebnis = '{}'")
    found = fails(world, "order_results")
    assert nova["n"] >= 4 and found.count == nova["n"] + 2, (found.count, found.samples)


@pytest.mark.parametrize(("change", "words"), [
    ("SET r.herkunft = 'geraten'", "herkunft geraten"),
    ("REMOVE r.herkunft", "herkunft missing"),
    # (a stranger's attack: the check could not run, and named no fact)
    ("SET r.herkunft = ['mensch']", "herkunft LIST<STRING NOT NULL>"),
])
def test_fact_herkunft(world: World, change: str, words: str) -> None:
    assert world.check("fact_herkunft").ok
    fid = one_fact(world, "BEGLEITET")
    world.cypher(f"MATCH (:Entitaet {{user_id: $u}})-[r {{id: $id}}]->() {change}", id=fid)
    assert words in fails(world, "fact_herkunft", fid).samples[0]


@pytest.mark.parametrize(("change", "ok"), [
    ("SET r.staerke_decay = 0.0", False),  # (the attack) touched today, set to 0: it rests
    ("SET r.staerke_decay = 0.7", False),
    ("SET r.last_touched = datetime({date: r.decay_am, timezone: 'UTC'}) - duration('P30D'), "
     "r.staerke_decay = exp(-$rate * 30)", True),  # as a sweep wrote it (KG_DECAY_RATE)
    ("SET r.last_touched = datetime({date: r.decay_am, timezone: 'UTC'}) - duration('P30D')",
     False),  # untouched for 30 days, yet at 1
    ("REMOVE r.decay_am SET r.staerke_decay = 0.9", False),  # no sweep reached it
])
def test_decay_strength(world: World, change: str, ok: bool) -> None:
    """Found by a stranger's attack: a strength of 0 on a fact touched today passed `kg
    check` (only its range was proven), and the fact rested, out of every Mappe, until
    the next sweep. A strength is the sweep's function of last_touched and decay_am."""
    assert world.check("decay_strength").ok
    fid = one_fact(world, "HAT_HAUSTIER")
    world.cypher(f"MATCH (:Entitaet {{user_id: $u}})-[r {{id: $id}}]->() {change}", id=fid,
                 rate=world.pair.store.memory.db.settings.decay_rate)
    if ok:
        assert world.check("decay_strength").ok
    else:
        fails(world, "decay_strength", fid)


@pytest.mark.parametrize("value", [1.5, -0.1])
def test_fact_strength(world: World, value: float) -> None:
    assert world.check("fact_strength").ok
    fid = one_fact(world, "LIEGT_IN")
    world.cypher("MATCH (:Entitaet {user_id: $u})-[r {id: $id}]->() SET r.staerke_decay = $v",
                 id=fid, v=value)
    fails(world, "fact_strength", fid)


@pytest.mark.parametrize(("rel", "objekt", "change"), [
    ("HAT", None, "SET r.aktiv = false"),  # inactive without a reason
    ("HAT", None, "SET r.t_invalid = datetime()"),  # active, yet ended
    ("HAT", None, "SET r.grund = 'abgeloest'"),  # active with a reason
    ("HAT", None, "SET r.abgeloest_durch = [r.id]"),  # active, yet followed by a value
    ("HAT", None, "SET r.aktiv = false, r.grund = 'verblasst', r.t_invalid = datetime(), "
                  "r.t_expired = datetime()"),  # decay is no reason to be inactive
    ("HAT", None, "SET r.aktiv = false, r.grund = 'berichtigt', "
                  "r.t_invalid = r.t_valid + duration('P1D'), r.t_expired = datetime()"),
    # (the attack) a pet superseded: a mehrwertig value is taken back, never superseded
    ("HAT_HAUSTIER", None, "SET r.aktiv = false, r.grund = 'abgeloest', "
                           "r.t_invalid = datetime('2026-06-01T00:00:00Z')"),
    # (the attack) cancelled, yet resting on no event
    ("BERUF", "Lehrerin", "SET r.aktiv = false, r.grund = 'abgesagt', r.t_invalid = r.t_valid"),
])
def test_fact_aktiv(world: World, rel: str, objekt: str | None, change: str) -> None:
    assert world.check("fact_aktiv").ok
    fid = one_fact(world, rel, objekt)
    world.cypher(f"MATCH (:Entitaet {{user_id: $u}})-[r {{id: $id}}]->() {change}", id=fid)
    fails(world, "fact_aktiv", fid)


@pytest.mark.parametrize("case", ["gap", "ended_with_nothing_after"])
def test_einwertig_followed(world: World, case: str) -> None:
    """Found by a stranger's attack: Berlin's end moved back by hand to October, where
    Kassel begins in December (no residence in between); Kassel, the current value,
    marked superseded with nothing after it (no residence at all). Both passed `kg
    check`, and every read showed them."""
    assert world.check("einwertig_followed").ok
    if case == "gap":
        (berlin,) = world.cypher(
            "MATCH (:Entitaet {user_id: $u})-[r:WOHNT_IN]->(:Entitaet {name: 'Berlin'}) "
            "WHERE r.t_expired IS NULL REMOVE r.timeline_bis "
            "SET r.t_invalid = datetime('2026-10-01T00:00:00Z') RETURN r.id AS id")
        fid = berlin["id"]
    else:
        fid = one_fact(world, "WOHNT_IN", "Kassel")
        world.cypher("MATCH (:Entitaet {user_id: $u})-[r {id: $id}]->() SET r.aktiv = false, "
                     "r.grund = 'abgeloest', r.t_invalid = datetime()", id=fid)
    found = fails(world, "einwertig_followed", fid)
    assert "nothing holds after it" in found.samples[0]


def test_einwertig_followed_takes_a_partner_followed_at_its_far_end(pair: Pair) -> None:
    """Ben–Tom ends where Tom–Lena begins: at Tom's end something holds, at Ben's
    nothing; a symmetric relation is followed at either end."""
    pair.write(t("Ben", "partner", "Tom"), zeitpunkt="2026-01-01T00:00:00Z")
    pair.write(t("Tom", "partner", "Lena"), zeitpunkt="2026-03-01T00:00:00Z")
    pair.store.run(pair.store.memory.decay_run(pair.user_id, day=TODAY))
    report = pair.store.run(pair.store.memory.check(pair.user_id))
    assert report.ok, [(c.name, c.samples) for c in report.violations]
    ended = pair.cypher("MATCH (:Entitaet {user_id: $u})-[r:PARTNER]-() WHERE r.grund = "
                        "'abgeloest' AND r.t_expired IS NULL RETURN DISTINCT r.id AS id",
                        u=pair.user_id)
    assert len(ended) == 1
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r:PARTNER]-() WHERE r.aktiv "
                "SET r.t_valid = datetime('2026-04-01T00:00:00Z')", u=pair.user_id)
    found = pair.store.run(pair.store.memory.check(pair.user_id))
    (followed,) = [c for c in found.checks if c.name == "einwertig_followed"]
    assert not followed.ok and ended[0]["id"] in followed.samples[0]


def test_a_check_that_cannot_run_names_the_checks_that_find_why(world: World) -> None:
    """A stranger's attack (2026-12-06): a check whose query met a value of the wrong type
    said "run `kg check` to find it", inside `kg check`. It says which checks name the
    value, and what the server said."""
    world.cypher("MATCH (t:TimelineEintrag {user_id: $u}) SET t.beginn = 'bald'")
    report = world.report()
    stuck = [c for c in report.checks if c.detail and "could not run" in c.detail]
    assert stuck, [(c.name, c.detail) for c in report.violations]
    for detail in (c.detail or "" for c in stuck):
        assert "run `kg check`" not in detail and "`fact_fields` and `node_fields`" in detail
        assert "the server:" in detail, detail
    (fields,) = [c for c in report.checks if c.name == "node_fields"]
    assert not fields.ok and "beginn" in fields.samples[0], fields


def test_einwertig_followed_finds_a_squeezed_end_where_nothing_begins(pair: Pair) -> None:
    """A stranger's attack (2026-12-06): Köln from an event "in April 2026", then Hamburg
    from June; Köln's end moved back by hand to 15 March, between its stored start and
    its event's day. `kg check` called it clean (an end before the start read as a value
    squeezed to nothing), and `kg history` showed Köln "April 2026 bis 15. März 2026",
    the as-of Mappe of May no residence. A value squeezed to nothing by one of a month's
    event it began inside of (Berlin on 24 March 2027, Kassel "in March 2027") ends
    where that one begins, and stays clean."""
    pair.write({**t("Lena", "wohnt_in", "Köln"),
                "ereignis": {"titel": "Lena zieht nach Köln", "beginn": "2026-04-01",
                             "genauigkeit": "monat"}})
    pair.write(t("Lena", "wohnt_in", "Hamburg"), zeitpunkt="2026-06-01T00:00:00Z")
    pair.write({**t("Tom", "wohnt_in", "Berlin"),
                "ereignis": {"titel": "Tom zieht nach Berlin", "beginn": "2027-03-24"}})
    squeezed = pair.write({**t("Tom", "wohnt_in", "Kassel"),
                           "ereignis": {"titel": "Tom zieht nach Kassel",
                                        "beginn": "2027-03-01", "genauigkeit": "monat"}})
    assert squeezed.ergebnisse[0].ausgang == "abgeloest"
    pair.store.run(pair.store.memory.decay_run(pair.user_id, day=TODAY))
    report = pair.store.run(pair.store.memory.check(pair.user_id))
    assert report.ok, [(c.name, c.samples) for c in report.violations]
    (koeln,) = pair.cypher(
        "MATCH (:Entitaet {user_id: $u, name: 'Lena'})-[r:WOHNT_IN]->(:Entitaet {name: 'Köln'}) "
        "WHERE r.t_expired IS NULL SET r.t_invalid = datetime('2026-03-15T00:00:00Z') "
        "RETURN r.id AS id", u=pair.user_id)
    found = pair.store.run(pair.store.memory.check(pair.user_id))
    (followed,) = [c for c in found.checks if c.name == "einwertig_followed"]
    assert not followed.ok and followed.count == 1, followed
    assert koeln["id"] in followed.samples[0] and "where no value begins" in followed.samples[0]


def test_einwertig_followed_keeps_a_covered_value_whose_event_moved_later(pair: Pair) -> None:
    """The review of the squeezed rule (2026-12-06): a take-back keeps a squeezed value
    that another covers squeezed, its end fixed at its start; its own event moved later
    then reads it from the new day with the old end, where no value begins. That state
    is the writer's (it holds nowhere, before and after), and the check must pass it,
    or its backup would not restore."""
    def event(titel: str, beginn: str, genauigkeit: str = "tag") -> dict[str, str]:
        return {"titel": titel, "beginn": beginn, "genauigkeit": genauigkeit}

    koeln = pair.write({**t("Lena", "wohnt_in", "Köln"),
                        "ereignis": event("Lena zieht nach Köln", "2027-03-10")})
    pair.write({**t("Lena", "wohnt_in", "Hamburg"),
                "ereignis": event("Lena zieht nach Hamburg", "2027-03-01", "monat")})
    pair.write(t("Lena", "wohnt_in", "München"), zeitpunkt="2027-03-05T00:00:00Z")
    taken = pair.store.run(pair.store.memory.write(pair.order(
        berichtigungen=[{"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "Hamburg",
                         "herkunft": "mensch"}])))
    assert taken.ergebnisse[0].ausgang == "berichtigt"
    entry = koeln.ergebnisse[0].timeline_id
    assert entry is not None
    pair.store.run(pair.store.memory.timeline_move(pair.user_id, "nova", entry,
                                                   date(2027, 3, 20)))
    pair.store.run(pair.store.memory.decay_run(pair.user_id, day=TODAY))
    report = pair.store.run(pair.store.memory.check(pair.user_id))
    assert report.ok, [(c.name, c.samples) for c in report.violations]


@pytest.mark.parametrize("rel", ["wohnt_in", "partner"])
def test_einwertig_followed_keeps_a_squeezed_value_after_a_cancel_and_a_later_move(
    pair: Pair, rel: str
) -> None:
    """A stranger's hunt for false positives (2026-12-06): Berlin by an event on the 24th,
    Kassel "in December" (Berlin began inside it: squeezed), Hamburg from 1 December,
    13:00; Kassel's event cancelled (Berlin stays squeezed, its end fixed at its start);
    then Berlin's event moved to the 28th. The same with partners of Anna. The check
    called the writer's state a gap, and the user's backup would not restore."""
    def told(objekt: str, **extra: Any) -> dict[str, Any]:
        return {**t("Anna" if rel == "partner" else "Lena", rel, objekt), **extra}

    first = pair.write(told("Ben" if rel == "partner" else "Berlin", ereignis={
        "titel": "am 24.", "beginn": "2026-12-24"}))
    month = pair.write(told("Tom" if rel == "partner" else "Kassel", ereignis={
        "titel": "im Dezember", "beginn": "2026-12-01", "genauigkeit": "monat"}))
    pair.write(told("Lena" if rel == "partner" else "Hamburg"),
               zeitpunkt="2026-12-01T13:00:00Z")
    mem = pair.store.memory
    pair.store.run(mem.timeline_cancel(pair.user_id, "nova",
                                       str(month.ergebnisse[0].timeline_id)))
    pair.store.run(mem.timeline_move(pair.user_id, "nova", str(first.ergebnisse[0].timeline_id),
                                     date(2026, 12, 28)))
    pair.store.run(mem.decay_run(pair.user_id, day=TODAY))
    report = pair.store.run(mem.check(pair.user_id))
    assert report.ok, [(c.name, c.samples) for c in report.violations]


# -- item 2 ----------------------------------------------------------------------------


def copy_fact(world: World, fid: str, start: str, end_match: str, rel: str) -> str:
    """A second edge with the properties of fact `fid` (a new id) from `start`."""
    new = uuid.uuid4().hex
    world.cypher(
        f"MATCH (:Entitaet {{user_id: $u}})-[r {{id: $id}}]->() "
        f"MATCH (s:Entitaet {{id: $start}}) {end_match} "
        f"CREATE (s)-[c:{rel}]->(o) SET c = properties(r), c.id = $new",
        id=fid, start=start, new=new)
    return new


def test_einwertig_unique(world: World) -> None:
    assert world.check("einwertig_unique").ok
    fid = one_fact(world, "WOHNT_IN", "Kassel")
    copy_fact(world, fid, world.lena,
              "CREATE (o:Entitaet {id: $new + 'e', user_id: $u, name: 'Hamburg', "
              "name_norm: 'hamburg'})", "WOHNT_IN")
    found = fails(world, "einwertig_unique", world.lena)
    # The pair by user and character: two users have a pair "nova" (a stranger's attack).
    assert f"WOHNT_IN in pair ({world.u}, nova)" in found.samples[0], found.samples


def test_einwertig_unique_counts_a_symmetric_relation_from_both_ends(world: World) -> None:
    assert world.check("einwertig_unique").ok
    fid = one_fact(world, "PARTNER")  # Lena -> Max; now Max -> Anna as well
    copy_fact(world, fid, world.max,
              "CREATE (o:Entitaet {id: $new + 'e', user_id: $u, name: 'Anna', "
              "name_norm: 'anna'})", "PARTNER")
    fails(world, "einwertig_unique", world.max)


@pytest.mark.parametrize("case", ["same_entity", "same_value", "symmetric_reverse"])
def test_duplicate_facts(world: World, case: str) -> None:
    assert world.check("duplicate_facts").ok
    if case == "same_entity":
        fid = one_fact(world, "HAT_HAUSTIER")
        new = copy_fact(world, fid, world.lena, f"MATCH (o:Entitaet {{id: '{world.bello}'}})",
                        "HAT_HAUSTIER")
    elif case == "same_value":
        fid = one_fact(world, "IST_EIN")
        new = copy_fact(world, fid, world.bello,
                        "CREATE (o:Wert {wert: 'Hund', user_id: $u})", "IST_EIN")
    else:
        fid = one_fact(world, "PARTNER")
        new = copy_fact(world, fid, world.max, f"MATCH (o:Entitaet {{id: '{world.lena}'}})",
                        "PARTNER")
    found = fails(world, "duplicate_facts", new)
    assert fid in found.samples[0]


def test_duplicate_values(world: World) -> None:
    """A value in another case is the same value (the writer compares in lower case): a
    store written before that rule may hold "Hund" and "hund" both active, and
    duplicate_facts, which compares exactly, does not see it."""
    assert world.check("duplicate_values").ok
    fid = one_fact(world, "IST_EIN")
    new = copy_fact(world, fid, world.bello, "CREATE (o:Wert {wert: 'hUND', user_id: $u})",
                    "IST_EIN")
    found = fails(world, "duplicate_values", new)
    assert fid in found.samples[0]
    assert world.check("duplicate_facts").ok


def test_a_value_held_twice_in_two_cases_is_mended_as_the_docs_say(world: World) -> None:
    """The remedy docs/decay-and-check.md gives for an old store's "Winterreifen" and
    "winterreifen" both active: correct it (both go), then tell it once."""
    fid = one_fact(world, "HAT")
    copy_fact(world, fid, world.lena,
              "CREATE (o:Wert {wert: 'winterreifen', user_id: $u})", "HAT")
    fails(world, "duplicate_values", fid)
    order = world.pair.order()
    order["berichtigungen"] = [{"herkunft": "mensch",
                                "subjekt": "Lena", "beziehung": "hat", "wert": "Winterreifen"}]
    fixed = world.pair.store.run(world.pair.store.memory.write(order))
    assert [r.ausgang for r in fixed.ergebnisse] == ["berichtigt"]
    assert world.cypher("MATCH (:Entitaet {id: $lena})-[r:HAT]->() WHERE r.aktiv "
                        "RETURN count(r) AS n", lena=world.lena) == [{"n": 0}]
    world.pair.write(t("Lena", "hat", wert="Winterreifen"))
    assert world.check("duplicate_values").ok
    held = [f.wert for f in world.pair.mappe("Lena").fakten if f.beziehung == "hat"]
    assert held == ["Winterreifen"]


# -- item 3 ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["unknown_type", "from_timeline_entry", "from_value_node"])
def test_relation_in_canon(world: World, case: str) -> None:
    assert world.check("relation_in_canon").ok
    new = uuid.uuid4().hex
    start = {
        "unknown_type": "MATCH (s:Entitaet {id: $lena}) MATCH (o:Entitaet {id: $bello}) "
                        "CREATE (s)-[:KENNT {id: $new}]->(o)",
        "from_timeline_entry": "MATCH (s:TimelineEintrag {id: $entry}) "
                               "MATCH (o:Entitaet {id: $bello}) "
                               "CREATE (s)-[:WOHNT_IN {id: $new}]->(o)",
        "from_value_node": "MATCH (s:Wert {wert: 'Hund', user_id: $u}) "
                           "MATCH (o:Entitaet {id: $bello}) "
                           "CREATE (s)-[:BESITZT {id: $new}]->(o)",
    }[case]
    world.cypher(start, lena=world.lena, bello=world.bello, entry=world.moved_entry, new=new)
    fails(world, "relation_in_canon", new)


@pytest.mark.parametrize(("rel", "end"), [
    ("BERUF", "MATCH (o:Entitaet {id: $bello})"),  # a value relation to an entity
    ("WOHNT_IN", "CREATE (o:Wert {wert: 'Kassel', user_id: $u})"),  # an entity one to a value
])
def test_relation_form(world: World, rel: str, end: str) -> None:
    assert world.check("relation_form").ok
    new = uuid.uuid4().hex
    world.cypher(
        f"MATCH (s:Entitaet {{id: $lena}}) {end} "
        f"CREATE (s)-[r:{rel}]->(o) SET r = {{id: $new, user_id: $u, character_id: 'nova', "
        "herkunft: 'mensch', aktiv: false, grund: 'berichtigt', t_valid: datetime(), "
        "t_invalid: datetime(), t_recorded: datetime(), t_expired: datetime(), "
        "last_touched: datetime(), staerke_decay: 1.0}",
        lena=world.lena, bello=world.bello, new=new)
    found = fails(world, "relation_form", new)
    assert rel in found.samples[0]


@pytest.mark.parametrize("case", ["orphan", "shared", "outgoing"])
def test_wert_nodes(world: World, case: str) -> None:
    assert world.check("wert_nodes").ok
    plant = {
        "orphan": "CREATE (:Wert {wert: 'niemandes', user_id: $u})",
        "shared": "MATCH (:Entitaet {id: $lena})-[r:HAT]->(w:Wert) MATCH (m:Entitaet {id: $max}) "
                  "CREATE (m)-[c:HAT]->(w) SET c = properties(r), c.id = randomUUID()",
        "outgoing": "MATCH (:Entitaet {id: $lena})-[:HAT]->(w:Wert) "
                    "MATCH (b:Entitaet {id: $bello}) CREATE (w)-[:GEHOERT {id: randomUUID()}]->(b)",
    }[case]
    world.cypher(plant, lena=world.lena, max=world.max, bello=world.bello)
    found = fails(world, "wert_nodes")
    assert {"orphan": "0 in", "shared": "2 in", "outgoing": "1 out"}[case] in found.samples[0]
    # What a maintainer can look for: the value and its facts (a stranger's attack: only
    # an element id was named).
    words = {"orphan": "niemandes of no fact", "shared": "Winterreifen of ",
             "outgoing": "Winterreifen of "}[case]
    assert found.samples[0].startswith(words), found.samples
    if case != "orphan":
        fid = one_fact(world, "HAT")
        assert fid in found.samples[0], found.samples


# -- item 4 ----------------------------------------------------------------------------


def test_nachfolger_unique(world: World) -> None:
    assert world.check("nachfolger_unique").ok
    world.cypher(
        "MATCH (f:TimelineEintrag {id: $first}) "
        "CREATE (f)-[:NACHFOLGER]->(n:TimelineEintrag) "
        "SET n = f {.*, id: randomUUID(), aktiv: true}", first=world.first_entry)
    found = fails(world, "nachfolger_unique", world.first_entry)
    assert "2 successors" in found.samples[0]


def test_nachfolger_cycles(world: World) -> None:
    assert world.check("nachfolger_cycles").ok
    world.cypher(
        "MATCH (f:TimelineEintrag {id: $first}), (m:TimelineEintrag {id: $moved}) "
        "CREATE (m)-[:NACHFOLGER]->(f)", first=world.first_entry, moved=world.moved_entry)
    found = fails(world, "nachfolger_cycles", world.first_entry)
    assert found.count == 2 and world.moved_entry in found.samples


@pytest.mark.parametrize(("entry", "change"), [
    ("first", "SET e.aktiv = true"),  # a moved entry still active: two active in one chain
    ("moved", "SET e.aktiv = false"),  # the end inactive without being cancelled
    ("moved", "SET e.abgesagt = true"),  # cancelled, yet active
    ("first", "SET e.abgesagt = true"),  # a cancelled entry cannot have a successor
])
def test_timeline_active_end(world: World, entry: str, change: str) -> None:
    assert world.check("timeline_active_end").ok
    eid = world.first_entry if entry == "first" else world.moved_entry
    world.cypher(f"MATCH (e:TimelineEintrag {{id: $eid}}) {change}", eid=eid)
    fails(world, "timeline_active_end", eid)


@pytest.mark.parametrize("target", ["missing", "not_first", "other_pair", "another_event"])
def test_timeline_references(world: World, target: str) -> None:
    """(another_event: a stranger's attack, 2026-12-06) a fact pointed at another event
    of its own pair passed, its start on no day of that event's chain."""
    assert world.check("timeline_references").ok  # (Lena's move, moved since, is clean)
    rel = "HAT_HAUSTIER"
    if target == "missing":
        ref = "no-such-entry"
    elif target == "not_first":
        ref = world.moved_entry
    else:
        writer = world.pair if target == "another_event" else world.pair.other("luna")
        other = writer.write(t("Lena", "hobby", wert="Lesen", ereignis={
            "titel": "Lesekreis", "beginn": "2026-10-01"}))
        ref = str(other.ergebnisse[0].timeline_id)
        rel = "WOHNT_IN" if target == "another_event" else rel
        assert world.check("timeline_references").ok
    fid = one_fact(world, rel, "Kassel" if rel == "WOHNT_IN" else None)
    world.cypher("MATCH (:Entitaet {user_id: $u})-[r {id: $id}]->() SET r.timeline_id = $ref",
                 id=fid, ref=ref)
    found = fails(world, "timeline_references", fid)
    if target == "another_event":
        assert "on no day of that chain" in found.samples[0], found.samples


# -- item 5 ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["object_of_another_user", "fact_of_another_user",
                                  "value_of_another_user"])
def test_one_user_per_fact(world: World, case: str) -> None:
    assert world.check("one_user_per_fact").ok
    fid = one_fact(world, "BEGLEITET")
    stranger = world.u + "-fremd"
    if case == "object_of_another_user":
        fid = copy_fact(world, fid, world.bello,
                        "CREATE (o:Entitaet {id: $new + 'e', user_id: $u + '-fremd', "
                        "name: 'Lena', name_norm: 'lena'})", "BEGLEITET")
    elif case == "fact_of_another_user":
        world.cypher("MATCH (:Entitaet {user_id: $u})-[r {id: $id}]->() SET r.user_id = $x",
                     id=fid, x=stranger)
    else:
        fid = one_fact(world, "HAT")
        world.cypher("MATCH (:Entitaet {user_id: $u})-[r {id: $id}]->(w:Wert) "
                     "SET w.user_id = $x", id=fid, x=stranger)
    [sample] = fails(world, "one_user_per_fact", fid).samples
    # Whose the fact is, and its ends' (the fact's own user was not shown: a stranger's
    # attack read "(u → u)" for a fact of another user between two of u's entities).
    fact_user = stranger if case == "fact_of_another_user" else world.u
    assert f"fact of {fact_user}: {world.u} → " in sample, sample


def test_one_user_per_fact_of_a_user_sees_a_stranger_s_fact_into_its_entities(
    world: World,
) -> None:
    """A fact of another user's entity that ends at one of this user's showed in this
    user's Mappe (with the stranger's facts beyond it at degree 2), while `kg check -u`
    of this user stayed clean: only the stranger's scope or the whole store found it."""
    stranger = world.u + "-fremd"
    world.cypher(
        "MATCH (k:Entitaet {user_id: $u, name: 'Kassel'}) "
        "CREATE (p:Entitaet {id: $x + '-paris', user_id: $x, name: 'Paris', name_norm: 'paris'}) "
        "CREATE (p)-[:LIEGT_IN {id: $x + '-f', user_id: $u, character_id: 'nova', version: 1, "
        "  herkunft: 'modell', aktiv: true, t_valid: datetime(), t_recorded: datetime(), "
        "  staerke_decay: 1.0, last_touched: datetime()}]->(k)", x=stranger)
    fails(world, "one_user_per_fact", stranger + "-f")


@pytest.mark.parametrize("case", ["successor_of_another_pair", "betrifft_another_user"])
def test_timeline_pair(world: World, case: str) -> None:
    assert world.check("timeline_pair").ok
    if case == "successor_of_another_pair":
        world.cypher("MATCH (e:TimelineEintrag {id: $moved}) SET e.character_id = 'luna'",
                     moved=world.moved_entry)
    else:
        world.cypher(
            "MATCH (e:TimelineEintrag {id: $moved}) "
            "CREATE (e)-[:BETRIFFT]->(:Entitaet {id: randomUUID(), user_id: $u + '-fremd', "
            "name: 'Fremd', name_norm: 'fremd'})", moved=world.moved_entry)
    fails(world, "timeline_pair", world.first_entry if case.startswith("succ")
          else world.moved_entry)


@pytest.mark.parametrize("case", ["two_people", "successor_names_another",
                                  "successor_names_none"])
def test_timeline_person(world: World, case: str) -> None:
    """An entry naming two people was listed twice by `kg timeline` (once per person),
    and a move copied both links; `kg check` and an import took it."""
    assert world.check("timeline_person").ok
    assert world.cypher("MATCH (:TimelineEintrag {id: $first})-[:BETRIFFT]->(p) "
                        "RETURN p.name AS name", first=world.first_entry) == [{"name": "Lena"}]
    if case == "two_people":
        world.cypher("MATCH (e:TimelineEintrag {id: $moved}), (m:Entitaet {id: $max}) "
                     "CREATE (e)-[:BETRIFFT]->(m)", moved=world.moved_entry, max=world.max)
        found = fails(world, "timeline_person", world.moved_entry)
        assert "names 2" in found.samples[0]
    elif case == "successor_names_another":
        world.cypher("MATCH (e:TimelineEintrag {id: $moved})-[b:BETRIFFT]->() DELETE b "
                     "WITH DISTINCT e MATCH (m:Entitaet {id: $max}) CREATE (e)-[:BETRIFFT]->(m)",
                     moved=world.moved_entry, max=world.max)
        fails(world, "timeline_person", world.moved_entry)
    else:
        world.cypher("MATCH (e:TimelineEintrag {id: $moved})-[b:BETRIFFT]->() DELETE b",
                     moved=world.moved_entry)
        fails(world, "timeline_person", world.moved_entry)


def test_ereignis_person(world: World) -> None:
    """(The attack) the link of an event deleted: the event was nobody's, and `kg check`
    passed. Contract rule 7 links an event of a person to the person."""
    assert world.check("ereignis_person").ok
    world.cypher("MATCH (e:TimelineEintrag {user_id: $u})-[b:BETRIFFT]->() DELETE b")
    fails(world, "ereignis_person", world.first_entry)


def test_an_ereignis_without_its_person_is_mended_by_a_link(world: World) -> None:
    """The remedy was to cancel the event and add it again: a cancel takes back the
    facts valid from it, so the record showed a cancel that never happened. `kg timeline
    link` names the person on every entry of the chain that names nobody, and nothing
    else changes: the check is clean, the dates, facts and orders are as before."""
    world.cypher("MATCH (e:TimelineEintrag {user_id: $u})-[b:BETRIFFT]->() DELETE b")
    fails(world, "ereignis_person", world.first_entry)
    facts = "MATCH (:Entitaet {user_id: $u})-[r]->() RETURN count(r) AS n, collect(r.id) AS ids"
    before = world.cypher(facts)
    orders = "MATCH (a:Auftrag {user_id: $u}) RETURN count(a) AS n"
    orders_before = world.cypher(orders)
    entries = ("MATCH (e:TimelineEintrag {user_id: $u}) RETURN e {.*} AS entry "
               "ORDER BY e.id")
    entries_before = world.cypher(entries)
    store, mem = world.pair.store, world.pair.store.memory
    chain = store.run(mem.timeline_link(world.u, "nova", world.first_entry, world.lena))
    assert [(e.id, e.person_name) for e in chain] == [
        (world.first_entry, "Lena"), (world.moved_entry, "Lena")]
    assert world.report().ok
    assert world.cypher(facts) == before and world.cypher(orders) == orders_before
    assert world.cypher(entries) == entries_before  # every property: days, states, times
    # Again: nothing to do, the same answer.
    again = store.run(mem.timeline_link(world.u, "nova", world.moved_entry, world.lena))
    assert again == chain
    assert world.cypher("MATCH (e:TimelineEintrag {user_id: $u})-[b:BETRIFFT]->() "
                        "RETURN count(b) AS n") == [{"n": 2}]


def test_cli_links_an_entry_by_the_persons_name(world: World, cli_env: dict[str, str]) -> None:
    world.cypher("MATCH (e:TimelineEintrag {user_id: $u})-[b:BETRIFFT]->() DELETE b")
    runner = CliRunner()
    base = ["timeline", "link", world.moved_entry, "-u", world.u, "-c", "nova"]
    linked = runner.invoke(app, [*base, "--betrifft", "Lena", "--json"], env=cli_env)
    assert linked.exit_code == 0, linked.output
    assert [e["person_name"] for e in json.loads(linked.stdout)] == ["Lena", "Lena"]
    refused = runner.invoke(app, [*base, "--betrifft", "Max"], env=cli_env)
    assert refused.exit_code == 8 and "a chain names one person" in refused.output
    assert "Traceback" not in refused.output
    unknown = runner.invoke(app, [*base, "--betrifft", "Niemand"], env=cli_env)
    assert unknown.exit_code == 6 and "Traceback" not in unknown.output, unknown.output


def test_a_link_never_names_a_second_person_or_a_strangers_entity(world: World) -> None:
    store, mem = world.pair.store, world.pair.store.memory
    with pytest.raises(TimelineError, match=r"already names 'Lena'.*a chain names one person"):
        store.run(mem.timeline_link(world.u, "nova", world.first_entry, world.max))
    world.cypher("MATCH (e:TimelineEintrag {user_id: $u})-[b:BETRIFFT]->() DELETE b")
    stranger = Pair(world.pair.store, world.u + "-stranger")
    stranger.write(t("Fremd", "beruf", wert="Spion"))
    with pytest.raises(TimelineError, match="no entity with id"):
        store.run(mem.timeline_link(world.u, "nova", world.first_entry,
                                    stranger.id_of("Fremd")))
    with pytest.raises(TimelineError, match="no timeline entry 'nope'"):
        store.run(mem.timeline_link(world.u, "nova", "nope", world.lena))
    # Refused whole: no entry names anybody.
    assert world.cypher("MATCH (e:TimelineEintrag {user_id: $u})-[b:BETRIFFT]->() "
                        "RETURN count(b) AS n") == [{"n": 0}]


def test_a_backup_of_what_an_older_version_wrote_restores(
    world: World, tmp_path: Any
) -> None:
    """The review: an ereignis without its person (`kg timeline add` took one until
    this version) and a value held in two cases (written before values compared in lower
    case) made the import of the store's own export refuse the whole file, after the
    purge. The import takes them; `kg check` still names them."""
    world.cypher("MATCH (e:TimelineEintrag {user_id: $u})-[b:BETRIFFT]->() DELETE b")
    copy_fact(world, one_fact(world, "HAT"), world.lena,
              "CREATE (o:Wert {wert: 'winterreifen', user_id: $u})", "HAT")
    memory = world.pair.store.memory
    world.pair.store.run(memory.export(tmp_path / "backup.jsonl", world.u))
    world.pair.store.run(memory.purge(world.u))
    world.pair.store.run(memory.import_file(tmp_path / "backup.jsonl"))
    names = {c.name for c in world.report().violations}
    assert {"ereignis_person", "duplicate_values"} <= names, names


def test_an_export_refuses_a_cycle_of_successors(world: World, tmp_path: Any) -> None:
    """Found by a stranger's attack: two entries that follow each other. `kg check` named
    the cycle, and `kg export` wrote a file its own import refused."""
    world.cypher("MATCH (a:TimelineEintrag {id: $first}), (b:TimelineEintrag {id: $moved}) "
                 "CREATE (b)-[:NACHFOLGER]->(a)", first=world.first_entry,
                 moved=world.moved_entry)
    fails(world, "nachfolger_cycles")
    with pytest.raises(KgError, match=r"in a cycle of successors.*run `kg check`"):
        world.pair.store.run(world.pair.store.memory.export(tmp_path / "x.jsonl", world.u))


@pytest.mark.parametrize("bad", ["", "nova\nx", " ", "n" * 201, "nova ", "\u00a0nova"])
def test_pair_ids(world: World, bad: str) -> None:
    """`kg timeline add` once wrote entries for an empty character or one with a line
    break, which broke the user's export while `kg check` stayed clean."""
    assert world.check("pair_ids").ok
    world.cypher("MATCH (e:TimelineEintrag {id: $moved}) SET e.character_id = $bad",
                 moved=world.moved_entry, bad=bad)
    fails(world, "pair_ids", world.moved_entry)


# -- item 6 ----------------------------------------------------------------------------


@pytest.mark.parametrize(("plant", "words"), [
    ("WHERE r.aktiv SET r.decay_am = $old", "days ago"),  # the last sweep is stale
    ("WHERE r.aktiv REMOVE r.decay_am", "does not exist"),  # strengths, never a sweep
    ("WHERE type(r) = 'HAT' SET r.decay_am = $future", "after"),  # a day to come
])
def test_decay_has_a_run(world: World, plant: str, words: str) -> None:
    assert world.check("decay_has_a_run").ok
    world.cypher(f"MATCH (:Entitaet {{user_id: $u}})-[r]->() {plant}",
                 old=TODAY - timedelta(days=3), future=TODAY + timedelta(days=1))
    found = fails(world, "decay_has_a_run")
    assert "decay properties without a run" in (found.detail or "")
    assert words in (found.detail or "")
    world.sweep()
    assert world.check("decay_has_a_run").ok  # the sweep is the cure


def test_a_never_swept_store_has_decay_properties_without_a_run(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    report = pair.store.run(pair.store.memory.check(pair.user_id))
    (found,) = [c for c in report.checks if c.name == "decay_has_a_run"]
    assert found.count == 2 and "decay properties without a run" in (found.detail or "")


def test_decay_sweep_complete(world: World) -> None:
    assert world.check("decay_sweep_complete").ok
    fid = one_fact(world, "LIEGT_IN")
    world.cypher("MATCH (:Entitaet {user_id: $u})-[r {id: $id}]->() "
                 "SET r.decay_am = $before, r.last_touched = datetime() - duration('P30D')",
                 id=fid, before=TODAY - timedelta(days=1))
    found = fails(world, "decay_sweep_complete", fid)
    # (a stranger's attack: a restored backup left such edges, and the message did not
    # say what mends them, while `kg decay run --if-due` answered "already swept")
    assert "run `kg decay run` (without --if-due" in (found.detail or ""), found.detail
    world.sweep()
    assert world.check("decay_sweep_complete").ok


# -- item 7 ----------------------------------------------------------------------------


@pytest.mark.parametrize(("plant", "row"), [
    ("MATCH (e:Entitaet {id: $lena}) SET e.staerke_decay = 0.5", "label Entitaet"),
    ("MATCH (e:TimelineEintrag {id: $moved}) SET e.decay_am = date()", "label TimelineEintrag"),
    ("MATCH (:Entitaet {user_id: $u})-[r:NACHFOLGER|BETRIFFT]-() SET r.relevanz_decay = 0.3",
     "relationship BETRIFFT"),
    ("CREATE (:Notiz {user_id: $u, text: 'frei'})", "label Notiz"),
    ("MATCH (:Entitaet {user_id: $u})-[r:HAT_HAUSTIER]->() REMOVE r.staerke_decay, r.decay_am",
     "relationship HAT_HAUSTIER"),
])
def test_decay_table(world: World, plant: str, row: str) -> None:
    assert world.check("decay_table").ok
    world.cypher(plant, lena=world.lena, moved=world.moved_entry)
    found = fails(world, "decay_table")
    assert any(s.startswith(row + ":") for s in found.samples), found.samples


# -- the CLI -----------------------------------------------------------------------------


def test_cli_check_exit_codes_json_and_text(world: World, cli_env: dict[str, str]) -> None:
    runner = CliRunner()
    clean = runner.invoke(app, ["check", "--user", world.u, "--json"], env=cli_env)
    assert clean.exit_code == 0, clean.output
    data = json.loads(clean.stdout)
    assert data["ok"] is True and data["user_id"] == world.u
    assert len(data["checks"]) == len(CHECKS) and data["table"]

    fid = one_fact(world, "HAT")
    world.cypher("MATCH (:Entitaet {user_id: $u})-[r {id: $id}]->() SET r.herkunft = 'geraten'",
                 id=fid)
    broken = runner.invoke(app, ["check", "--user", world.u], env=cli_env)
    assert broken.exit_code == 1
    assert "FAIL 1 fact_herkunft" in broken.stdout and fid in broken.stdout
    assert "decay convention §4" in broken.stdout
    assert f"1 of {len(CHECKS)} checks found violations: fact_herkunft (1)" in broken.stdout
    as_json = json.loads(runner.invoke(app, ["check", "-u", world.u, "--json"],
                                       env=cli_env).stdout)
    bad = [c for c in as_json["checks"] if not c["ok"]]
    assert [(c["name"], c["count"], c["samples"][0][:32]) for c in bad] == [
        ("fact_herkunft", 1, fid)]


def test_a_check_of_a_user_with_nothing_in_the_store_is_refused(
    pair: Pair, cli_env: dict[str, str]
) -> None:
    """Found by a black-box attack: `kg check --user <typo>` printed every check ok,
    "clean: every invariant holds" and exit 0, so a monitoring job with a wrong --user
    reported clean forever. A user with nothing in the store is refused as `kg export`
    refuses it (exit 2); a user with only its lock node left is a user, and checked."""
    nobody = new_user_id("nobody")
    with pytest.raises(NothingStored, match=f"user {nobody!r} has nothing in this store"):
        pair.store.run(pair.store.memory.check(nobody))
    for args in (["check", "--user", nobody], ["check", "-u", nobody, "--json"]):
        done = CliRunner().invoke(app, args, env=cli_env)
        assert done.exit_code == 2, done.output
        assert "has nothing in this store" in done.stderr and "clean" not in done.output
        assert done.stdout == "" and "Traceback" not in done.output
    pair.cypher("CREATE (:Nutzer {id: $u, writes: 0})", u=pair.user_id)
    assert pair.store.run(pair.store.memory.check(pair.user_id)).ok


# -- item 8 (the writer's guards; the others in tests/test_guards.py) -------------------


def test_name_norm_is_the_name_as_the_writer_normalises_it(world: World) -> None:
    """A name_norm that is not the writer's normalisation of the name hides the entity
    from lookups by name. Compared in Python (NFKC and case folding are not Cypher's):
    a full-width, upper-case name whose name_norm the writer would give it is clean; a
    name_norm that keeps the case, or the writer's key with a space, is reported."""
    assert world.check("name_norm").ok
    world.cypher("MATCH (e:Entitaet {id: $id}) SET e.name = 'ＭＡＸ\u00ad', e.name_norm = 'max'",
                 id=world.max)
    assert world.check("name_norm").ok  # NFKC, case folded, the soft hyphen gone
    for wrong in ("Lena", "lena "):
        world.cypher("MATCH (e:Entitaet {id: $id}) SET e.name_norm = $wrong",
                     id=world.lena, wrong=wrong)
        found = fails(world, "name_norm", world.lena)
        assert found.count == 1 and f"stored {wrong!r}" in found.samples[0]
    world.cypher("MATCH (e:Entitaet {id: $id}) SET e.name_norm = 'lena'", id=world.lena)
    assert world.check("name_norm").ok


#: What `name_norm_rows` leaves out unread: a name of printable ASCII words with single
#: spaces (the query's regular expression, as Python reads it).
PLAIN = r"[!-~]+( [!-~]+)*"


def test_name_norm_rows_leaves_out_only_names_whose_norm_is_their_lower_case() -> None:
    assert f"e.name =~ '{PLAIN}'" in registry()["name_norm_rows"].text


@given(st.from_regex(rf"\A{PLAIN}\Z"))
def test_a_plain_ascii_name_normalises_to_its_lower_case(name: str) -> None:
    """Why the query may judge such names itself: the writer's normalisation of them is
    their lower case (fails if normalize_name ever changes what it does to ASCII)."""
    assert normalize_name(name) == name.lower()


def test_audit_retention(world: World) -> None:
    """Orders are forensics with a retention period instead of decay (the contract's
    graph model). Found by a review: nothing applied it unless an operator ran `kg audit
    prune` by hand, no document said to schedule it, and `kg check` never said the audit
    grew for good. An order older than the retention and the days a daily job may miss
    (as for the sweep) is reported with what to do; one within them is not; the prune
    mends it."""
    memory = world.pair.store.memory
    assert world.check("audit_retention").ok
    days = memory.db.settings.audit_retention_days
    allowed = int(memory.db.settings.decay_max_age_days)
    rows = world.cypher("MATCH (x:Auftrag {user_id: $u}) RETURN x.id AS id ORDER BY id LIMIT 2")
    inside, past = rows[0]["id"], rows[1]["id"]
    for order, back in ((inside, days + allowed - 1), (past, days + allowed + 1)):
        world.cypher("MATCH (x:Auftrag {user_id: $u, id: $id}) "
                     "SET x.erfasst = datetime() - duration({days: $back})", id=order, back=back)
    found = fails(world, "audit_retention", past)
    assert found.count == 1, found.samples
    assert found.detail is not None and "run `kg audit prune`" in found.detail, found.detail
    assert world.pair.store.run(memory.audit_prune()) >= 2  # both are past the retention
    assert world.check("audit_retention").ok
    assert {r["id"] for r in world.cypher("MATCH (x:Auftrag {user_id: $u}) RETURN x.id AS id")
            } & {inside, past} == set()


def test_einwertig_followed_finds_a_partner_ended_by_one_that_comes_before_it(
    pair: Pair,
) -> None:
    """A stranger's hunt (2026-12-06): Anna–Ben by an event on 24 December; Tom–Lena and
    Anna–Lena for the 24th in one order; Anna–Tom "in December" (it squeezes both, which
    began in its window); Ben–Lena and Anna–Ben from 3 December in one order; the event
    of the 24th cancelled. The cancel ended Anna–Ben of the 3rd on the 24th, followed by
    Anna–Lena, which holds nowhere and comes before it in Anna's partition (Anna–Tom,
    which squeezed it, begins before Anna–Ben): nobody had a partner from the 24th, and
    the check passed it (a partner may end where a squeezed one begins). The writer's
    state passes; that end, planted, is found."""
    mem = pair.store.memory
    first = pair.write({**t("Anna", "partner", "Ben"),
                        "ereignis": {"titel": "am 24.", "beginn": "2026-12-24"}})
    both = pair.write(t("Tom", "partner", "Lena"), t("Anna", "partner", "Lena"),
                      zeitpunkt="2026-12-24T00:00:00Z")
    pair.write({**t("Anna", "partner", "Tom"), "ereignis": {
        "titel": "im Dezember", "beginn": "2026-12-01", "genauigkeit": "monat"}})
    again = pair.write(t("Ben", "partner", "Lena"), t("Anna", "partner", "Ben"),
                       zeitpunkt="2026-12-03T00:00:00Z")
    pair.store.run(mem.timeline_cancel(pair.user_id, "nova",
                                       str(first.ergebnisse[0].timeline_id)))
    pair.store.run(mem.decay_run(pair.user_id, day=TODAY))
    report = pair.store.run(mem.check(pair.user_id))
    assert report.ok, [(c.name, c.samples) for c in report.violations]
    anna_ben, anna_lena = again.ergebnisse[1].fakt_id, both.ergebnisse[1].fakt_id
    (held,) = pair.cypher("MATCH (:Entitaet {user_id: $u})-[r:PARTNER {id: $id}]->() "
                          "WHERE r.t_expired IS NULL RETURN r.aktiv AS aktiv",
                          u=pair.user_id, id=anna_ben)
    assert held["aktiv"], "Anna–Ben of the 3rd holds on"
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r:PARTNER {id: $id}]->() "
                "WHERE r.t_expired IS NULL SET r.aktiv = false, r.grund = 'abgeloest', "
                "r.t_invalid = datetime('2026-12-24T00:00:00Z'), r.abgeloest_durch = [$al]",
                u=pair.user_id, id=anna_ben, al=anna_lena)
    found = pair.store.run(mem.check(pair.user_id))
    (followed,) = [c for c in found.checks if c.name == "einwertig_followed"]
    assert not followed.ok and followed.count == 1, followed
    assert anna_ben in followed.samples[0] and "nothing holds after it" in followed.samples[0]


def test_einwertig_followed_finds_a_partner_ended_at_one_it_squeezed_itself(pair: Pair) -> None:
    """A review (2026-12-06) of the rule above: Anna–Lena from 10 December, then Anna–Ben
    "in December" (Anna–Lena began in its window: placed before it, squeezed to nothing,
    followed by Anna–Ben). Anna–Ben ended by hand where Anna–Lena begins, naming it: the
    value that squeezed Anna–Lena is Anna–Ben itself, which the rule left out as a value
    of the ending one's own pair, and the check passed it."""
    mem = pair.store.memory
    pair.write(t("Anna", "partner", "Lena"), zeitpunkt="2026-12-10T00:00:00Z")
    month = pair.write({**t("Anna", "partner", "Ben"), "ereignis": {
        "titel": "im Dezember", "beginn": "2026-12-01", "genauigkeit": "monat"}})
    anna_ben = month.ergebnisse[0].fakt_id
    pair.store.run(mem.decay_run(pair.user_id, day=TODAY))
    report = pair.store.run(mem.check(pair.user_id))
    assert report.ok, [(c.name, c.samples) for c in report.violations]
    (lena,) = pair.cypher("MATCH (:Entitaet {user_id: $u, name: 'Anna'})-[r:PARTNER]-"
                          "(:Entitaet {name: 'Lena'}) WHERE r.t_expired IS NULL "
                          "RETURN r.id AS id, r.abgeloest_durch AS followers", u=pair.user_id)
    assert lena["followers"] == [anna_ben]
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r:PARTNER {id: $id}]-() "
                "WHERE r.t_expired IS NULL SET r.aktiv = false, r.grund = 'abgeloest', "
                "r.t_invalid = datetime('2026-12-10T00:00:00Z'), r.abgeloest_durch = [$al] "
                "REMOVE r.timeline_bis", u=pair.user_id, id=anna_ben, al=lena["id"])
    found = pair.store.run(mem.check(pair.user_id))
    (followed,) = [c for c in found.checks if c.name == "einwertig_followed"]
    assert not followed.ok and followed.count == 1, followed
    assert anna_ben in followed.samples[0] and "nothing holds after it" in followed.samples[0]
