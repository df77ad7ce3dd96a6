"""The benchmark suite at a tiny size: generator, bulk path and readers are correct.

Timing is not tested here (benchmarks never gate CI); what is tested is that the bulk
path writes the shape `kg check` accepts and that the readers find what was generated.
Each test uses users of its own prefix, so it shares the test server with everyone.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from bench import bulk
from bench.generate import Config, UserGraph, user
from bench.naive import Naive
from bench.queries import registry as bench_registry
from kg.api import SyncMemory
from kg.canon import load_canon
from kg.queries import registry as package_registry
from tests.conftest import explain_with_examples


def config() -> Config:
    return Config(prefix=f"test-bench-{uuid.uuid4().hex[:10]}", today=datetime.now(UTC).date())


# -- the generator (pure) ---------------------------------------------------------------


def test_generator_is_deterministic_and_ids_follow_the_prefix() -> None:
    canon = load_canon()
    a, b = config(), config()
    one, again, other = user(a, canon, 5), user(a, canon, 5), user(b, canon, 5)
    assert [f.id for f in one.facts] == [f.id for f in again.facts]
    assert [(f.rel, f.wert, f.aktiv) for f in one.facts] == [
        (f.rel, f.wert, f.aktiv) for f in other.facts
    ]
    assert not {e.id for e in one.entities} & {e.id for e in other.entities}


def test_generator_makes_history_events_and_hubs_from_the_canon() -> None:
    canon = load_canon()
    cfg = config()
    graphs = [user(cfg, canon, i) for i in range(40)]
    facts = [f for g in graphs for f in g.facts]
    assert {f.rel for f in facts} <= set(canon.rel_types)
    einwertig = [f for f in facts if canon.by_type[f.rel].einwertig and f.rel != "TYP"]
    superseded = [f for f in einwertig if not f.aktiv]
    assert 0.12 < len(superseded) / len(einwertig) < 0.3  # about a fifth
    assert all(f.grund == "abgeloest" and f.t_invalid and f.t_expired for f in superseded)
    assert any(e.nachfolger_id for g in graphs for e in g.eintraege)  # moved events
    assert any(f.timeline_id for f in facts) and any(f.timeline_bis for f in facts)
    assert any(f.staerke_decay < 0.1 for f in facts if f.aktiv)  # some edges rest
    hub_user = graphs[2]
    assert hub_user.hubs
    hub = hub_user.hubs[0]
    assert sum(f.objekt_id == hub.id for f in hub_user.facts) >= 300
    assert any(len(g.characters) == 2 for g in graphs)


# -- the bulk path and the readers against the server -------------------------------------


def test_every_bench_query_explains_on_the_real_server(store: SyncMemory) -> None:
    """The bench's own queries (bench/cypher/), with their headers' `:param` examples."""
    failures = []
    for query in bench_registry():
        if query.name in package_registry().names():
            continue
        assert query.examples or not query.params, f"{query.name}: no ':param' examples"
        try:
            store.run(explain_with_examples(store, query.text, dict(query.examples)))
        except Exception as exc:  # collect every failure, then report
            failures.append(f"{query.name}: {exc}")
    assert failures == []


@pytest.fixture
def loaded(store: SyncMemory) -> tuple[list[UserGraph], bulk.LoadStats]:
    canon = store.memory.canon
    cfg = config()
    graphs = [user(cfg, canon, i) for i in (0, 1, 2)]  # user 2 carries the hubs
    stats = store.run(
        bulk.BulkLoader(store.memory.db, canon, batch_facts=400, concurrency=2).load(graphs)
    )
    return graphs, stats


def test_bulk_path_loads_every_fact_and_kg_check_stays_clean(
    store: SyncMemory, loaded: tuple[list[UserGraph], bulk.LoadStats]
) -> None:
    graphs, stats = loaded
    assert stats.users == 3 and stats.batches > 1
    assert stats.facts == sum(len(g.facts) for g in graphs)
    counts = store.run(bulk.counts(store.memory.db, [g.user_id for g in graphs]))
    assert counts == {
        "entities": sum(len(g.entities) for g in graphs),
        "facts": stats.facts,
        "active": sum(f.aktiv for g in graphs for f in g.facts),
        "werte": sum(f.wert is not None for g in graphs for f in g.facts),
        "eintraege": sum(len(g.eintraege) for g in graphs),
        "active_eintraege": sum(e.aktiv for g in graphs for e in g.eintraege),
    }
    for g in graphs:
        report = store.run(store.memory.check(user_id=g.user_id))
        assert report.ok, [f"{c.name}: {c.count} {c.samples}" for c in report.violations]


def test_mappe_of_generated_people_holds_their_residence_and_history(
    store: SyncMemory, loaded: tuple[list[UserGraph], bulk.LoadStats]
) -> None:
    graphs, _ = loaded
    memory = store.memory
    checked = 0
    for g in graphs[:2]:
        people = [e for e in g.entities if e.kind == "person" and "nova" in e.characters]
        for person in people[:6]:
            home = g.residence("nova", person.id)
            mappe = store.run(memory.mappe(g.user_id, "nova", person.id))
            assert mappe.typ == "person"
            strong = any(
                f.subjekt_id == person.id and f.rel == "WOHNT_IN" and f.aktiv
                and f.staerke_decay >= memory.db.settings.ruhe_schwelle
                for f in g.facts
            )
            if home and strong:
                assert any(
                    f.beziehung == "wohnt_in" and f.objekt and f.objekt.id == home
                    for f in mappe.fakten
                )
                checked += 1
            old = [f for f in g.facts if f.subjekt_id == person.id and f.grund == "abgeloest"]
            assert {h.id for h in mappe.historie} == {f.id for f in old}
    assert checked >= 3


def test_naive_baseline_reads_the_same_facts_as_the_mappe(
    store: SyncMemory, loaded: tuple[list[UserGraph], bulk.LoadStats]
) -> None:
    graphs, _ = loaded
    memory = store.memory
    naive = Naive(memory.db, memory.canon)
    g = graphs[0]
    for e in [e for e in g.entities if "nova" in e.characters][:8]:
        mappe = store.run(memory.mappe(g.user_id, "nova", e.id))
        other = store.run(naive.mappe(g.user_id, "nova", e.id))
        assert other["fakten"] == [f.id for f in mappe.fakten]
        assert sorted(other["historie"]) == sorted(h.id for h in mappe.historie)
        assert sorted(other["abgeleitet"]) == sorted(d.objekt.id for d in mappe.abgeleitet)
        assert other["typ"] == mappe.typ
    hub = graphs[2].hubs[0]
    assert len(store.run(memory.mappe(graphs[2].user_id, "nova", hub.id)).fakten) == (
        memory.db.settings.mappe_cap
    )
