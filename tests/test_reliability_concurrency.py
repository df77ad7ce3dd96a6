"""Reliability: concurrent writers on overlapping subjects lose and double nothing.

Eight writers, each a separate client (its own driver, connection pool and bookmark
manager, in its own thread — like eight chat-backend processes), write orders on two
users' overlapping names: einwertig and mehrwertig relations, symmetric ones, the same
new entity names, facts valid from the same timeline entries, and moves of those
entries. Some orders are sent by two writers at the same moment (same auftrag_id), some
are replayed later. Afterwards every invariant holds and the ledger is exact.

Bounded by default (8 writers x 40 steps); KG_STRESS=1 runs 8 x 560 steps, i.e. at
least 8 writers x 500 orders each.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import gc
import random
import threading
import uuid
import warnings
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import pytest

from kg.api import SyncMemory
from kg.errors import EntityNotFound, NothingStored, TimelineError
from kg.models import AuftragErgebnis, NeuerEintrag
from kg.settings import Settings
from tests.conftest import new_user_id
from tests.reliability_support import (
    PERSONEN,
    Stopwatch,
    Workload,
    cypher,
    events_created,
    holding_lock,
    ledger_violations,
    read_ledger,
    size,
    violations,
)

WRITERS = 8
#: Steps per writer; nine in ten send an order (new, racing duplicate or replay), one in
#: ten moves a timeline entry: the full size sends 504 orders per writer.
ORDERS = size(40, 560)
CHARACTERS = ("nova", "luna")


@dataclass
class Log:
    """What one writer sent and got back."""

    acknowledged: dict[str, AuftragErgebnis] = field(default_factory=dict)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    replays: list[tuple[AuftragErgebnis, AuftragErgebnis]] = field(default_factory=list)
    shared: dict[str, AuftragErgebnis] = field(default_factory=dict)
    moves: dict[str, int] = field(default_factory=dict)  # first entry id → moves done
    move_conflicts: int = 0
    errors: list[str] = field(default_factory=list)


#: Each racing duplicate, built once by whichever writer of its pair comes first and sent
#: by both: one order, its zeitpunkt (the clock when it was built) included. Built by each
#: writer, the two differed in it, and an order sent again with another zeitpunkt is
#: another order (refused).
_SHARED: dict[tuple[str, str], dict[str, Any]] = {}
_SHARED_LOCK = threading.Lock()


def shared_order(users: list[str], entries: dict[str, dict[str, list[str]]], pair: int,
                 step: int) -> dict[str, Any]:
    """The same order for both writers of a pair (seeded, built once)."""
    user = users[pair % len(users)]
    key = (user, f"shared-{pair}-{step}")
    with _SHARED_LOCK:
        if key not in _SHARED:
            work = Workload(user, CHARACTERS, entries[user], random.Random(f"{pair}-{step}"))
            _SHARED[key], _ = work.order(key[1])
        return copy.deepcopy(_SHARED[key])


def writer(
    index: int,
    settings: Settings,
    users: list[str],
    entries: dict[str, dict[str, list[str]]],
    barriers: list[threading.Barrier],
) -> Log:
    log = Log()
    rng = random.Random(index)
    with SyncMemory(settings) as store:
        memory = store.memory
        works = {u: Workload(u, CHARACTERS, entries[u], rng) for u in users}
        for step in range(ORDERS):
            user = users[(index + step) % len(users)]
            try:
                if step % 10 == 5:
                    # Writers 2k and 2k+1 send the very same order at the same moment.
                    pair = index // 2
                    order = shared_order(users, entries, pair, step)
                    barriers[pair].wait(timeout=120)
                    log.shared[order["auftrag_id"]] = store.run(memory.write(order))
                    log.orders[order["auftrag_id"]] = order
                elif step % 10 == 8 and log.acknowledged:
                    old_id = rng.choice(sorted(log.acknowledged))
                    again = store.run(memory.write(log.orders[old_id]))
                    log.replays.append((log.acknowledged[old_id], again))
                elif step % 10 == 3:
                    character = rng.choice(CHARACTERS)
                    first = rng.choice(entries[user][character])
                    active = store.run(memory.timeline_active(user, character, first))
                    day = date(2026, 1, 1) + timedelta(days=rng.randrange(365))
                    try:
                        store.run(memory.timeline_move(user, character, active.id, day))
                        log.moves[first] = log.moves.get(first, 0) + 1
                    except TimelineError:
                        log.move_conflicts += 1  # another writer moved it first
                else:
                    auftrag_id = f"w{index}-{step}-{uuid.uuid4().hex[:8]}"
                    order, _ = works[user].order(auftrag_id)
                    log.orders[auftrag_id] = order
                    log.acknowledged[auftrag_id] = store.run(memory.write(order))
            except Exception as exc:  # every failure is a finding: collected, asserted
                log.errors.append(f"writer {index} step {step}: {type(exc).__name__}: {exc}")
    return log


@pytest.mark.slow
def test_concurrent_writers_lose_and_double_nothing(
    store: SyncMemory, neo4j_settings: Settings
) -> None:
    watch = Stopwatch("concurrency")
    users = [new_user_id("rel-conc"), new_user_id("rel-conc")]
    memory = store.memory
    entries: dict[str, dict[str, list[str]]] = {}
    for user in users:
        entries[user] = {}
        for character in CHARACTERS:
            entries[user][character] = [
                store.run(memory.timeline_add(
                    user, character,
                    NeuerEintrag(typ="termin", titel=f"Umzug {k}", beginn=date(2026, 3, 1)),
                )).id
                for k in range(3)
            ]
    barriers = [threading.Barrier(2) for _ in range(WRITERS // 2)]
    with ThreadPoolExecutor(WRITERS) as pool:
        logs = list(pool.map(
            lambda i: writer(i, neo4j_settings, users, entries, barriers), range(WRITERS)
        ))

    errors = [e for log in logs for e in log.errors]
    assert errors == [], errors[:5]

    # Replays return the first result and say so.
    for original, again in (r for log in logs for r in log.replays):
        assert again.wiederholt and again.ergebnisse == original.ergebnisse
    # An order sent by two writers at once is written by exactly one of them.
    acknowledged: dict[str, AuftragErgebnis] = {}
    for pair in range(WRITERS // 2):
        a, b = logs[2 * pair].shared, logs[2 * pair + 1].shared
        assert a.keys() == b.keys()
        for auftrag_id in a:
            ra, rb = a[auftrag_id], b[auftrag_id]
            assert sorted([ra.wiederholt, rb.wiederholt]) == [False, True], auftrag_id
            assert ra.ergebnisse == rb.ergebnisse
            acknowledged[auftrag_id] = rb if ra.wiederholt else ra
    for log in logs:
        acknowledged.update(log.acknowledged)
    orders = {k: v for log in logs for k, v in log.orders.items()}

    found: list[str] = []
    for user in users:
        mine = {k: v for k, v in acknowledged.items() if orders[k]["user_id"] == user}
        found += violations_of(store, user)
        found += ledger_violations(store.run(read_ledger(memory, user)), mine)
        # Timeline: each chain is one line of exactly its moves, one active end; the
        # entries are the ones added, moved to and created by ereignis triples.
        moves = {first: sum(log.moves.get(first, 0) for log in logs)
                 for chars in entries[user].values() for first in chars}
        events = set().union(*(events_created(r, orders[k]) for k, r in mine.items()))
        shape = store.run(cypher(
            memory,
            "MATCH (t:TimelineEintrag {user_id: $u}) WHERE NOT ()-[:NACHFOLGER]->(t) "
            "MATCH p = (t)-[:NACHFOLGER*0..]->(end) WHERE NOT (end)-[:NACHFOLGER]->() "
            "RETURN t.id AS first, length(p) AS moves, "
            "size([n IN nodes(p) WHERE n.aktiv]) AS active, end.aktiv AS end_active",
            u=user,
        ))
        by_first = {row["first"]: row for row in shape}
        assert set(by_first) == set(moves) | events
        for first, n in moves.items():
            assert (by_first[first]["moves"], by_first[first]["active"]) == (n, 1), first
            assert by_first[first]["end_active"]
        # Every person's Mappe agrees with the graph: one current Wohnort per pair.
        for character in CHARACTERS:
            for name in PERSONEN:
                try:
                    eid = store.run(memory.entity_id(user, character, name))
                except EntityNotFound:
                    continue  # never written under this user
                mappe = store.run(memory.mappe(user, character, eid))
                wohnorte = [f for f in mappe.fakten
                            if f.beziehung == "wohnt_in" and f.subjekt.id == eid]
                assert len(wohnorte) <= 1, (user, character, name, wohnorte)
    assert found == [], found[:10]

    watch.figures.update(
        writers=WRITERS,
        orders_sent=sum(len(log.acknowledged) + len(log.shared) + len(log.replays)
                        for log in logs),
        orders_distinct=len(acknowledged),
        replays=sum(len(log.replays) for log in logs),
        racing_duplicates=sum(len(log.shared) for log in logs) // 2,
        moves=sum(sum(log.moves.values()) for log in logs),
        move_conflicts=sum(log.move_conflicts for log in logs),
        triples=sum(len(r.ergebnisse) for r in acknowledged.values()),
        violations=len(found),
    )
    print(watch.report())


def test_a_purge_racing_the_users_orders_never_breaks_the_users_lock(
    store: SyncMemory,
) -> None:
    """A purge deletes the user's lock node in the transaction that holds its lock.
    Orders that had found the node and waited for its lock went on, once the purge
    committed, under the lock of a node that was gone: nothing serialised them with each
    other, and their versions were recorded out of order and overlapping (2 of 5 rounds
    broke `fact_system_time` and `einwertig_overlap`)."""
    memory = store.memory

    def order(user: str, i: int) -> dict[str, Any]:
        return {"auftrag_id": f"p-{i}", "user_id": user, "character_id": "nova",
                "tripel": [{"subjekt": "Lena", "beziehung": "wohnt_in",
                            "objekt": f"Stadt{i}", "herkunft": "mensch"}]}

    async def round_(user: str) -> list[Any]:
        await memory.write(order(user, 100))  # the user and its lock node exist
        return await asyncio.gather(
            memory.purge(user), *(memory.write(order(user, i)) for i in range(10)),
            return_exceptions=True,
        )

    broken = []
    for _ in range(size(6, 30)):
        user = new_user_id("rel-purge")
        try:
            outcomes = store.run(round_(user))
            failed = [o for o in outcomes if isinstance(o, BaseException)]
            assert failed == [], failed
            try:
                report = store.run(memory.check(user))
            except NothingStored:
                continue  # the purge committed last: nothing of the user is left to break
            broken += [f"{c.name}: {c.count} {c.samples}" for c in report.violations
                       if not c.name.startswith("decay")]  # (no sweep ran)
        finally:
            with contextlib.suppress(NothingStored):  # (the purge went last)
                store.run(memory.purge(user))
    assert broken == []


def test_concurrent_cancels_and_moves_of_one_user_wait_and_never_deadlock(
    store: SyncMemory, caplog: pytest.LogCaptureFixture
) -> None:
    """A cancel or a move takes the user's lock, then its audited order read its state
    with the order's query, which took the lock a second time. With other writers of the
    user waiting for it, Neo4j saw a deadlock and failed one of them (3 cancelling
    processes, the attack): the driver retried it, with a warning on stderr. Now they
    wait their turn, and no transaction is failed."""
    memory = store.memory
    user = new_user_id("rel-cancel")
    try:
        ids: list[str] = []
        for i in range(12):
            written = store.run(memory.write({
                "auftrag_id": f"e-{i}", "user_id": user, "character_id": "nova",
                "tripel": [{"subjekt": f"P{i}", "beziehung": "wohnt_in", "objekt": f"Ort{i}",
                            "herkunft": "mensch",
                            "ereignis": {"titel": f"Umzug {i}", "beginn": "2026-11-01"}}]}))
            entry = written.ergebnisse[0].timeline_id
            assert entry is not None
            ids.append(entry)

        async def race() -> list[Any]:
            return await asyncio.gather(
                *(memory.timeline_cancel(user, "nova", e) for e in ids[:8]),
                *(memory.timeline_move(user, "nova", e, date(2026, 10, 1)) for e in ids[8:]),
                return_exceptions=True)

        with caplog.at_level("WARNING", logger="neo4j"):
            outcomes = store.run(race())
        assert [o for o in outcomes if isinstance(o, BaseException)] == []
        retried = [r.getMessage()[:160] for r in caplog.records if "retried" in r.getMessage()]
        assert retried == []
        report = store.run(memory.check(user))
        assert [c.name for c in report.violations if not c.name.startswith("decay")] == []
    finally:
        store.run(memory.purge(user))


def test_one_sync_memory_serves_several_threads(store: SyncMemory) -> None:
    """Found by a black-box attack: four threads calling `run` on one SyncMemory (a
    threaded web server's backend) — three raised `RuntimeError: This event loop is
    already running`, with "coroutine was never awaited" warnings, and one order was
    written. Every thread's orders are written now, and nothing is raised or warned."""
    memory = store.memory
    user = new_user_id("rel-threads")
    threads, per_thread = 6, 4
    start = threading.Barrier(threads)

    def writer(n: int) -> list[str]:
        start.wait()
        return [
            store.run(memory.write({
                "auftrag_id": f"t{n}-{i}", "user_id": user, "character_id": "nova",
                "tripel": [{"subjekt": f"P{n}", "beziehung": "hobby", "wert": f"Hobby {i}",
                            "herkunft": "mensch"}]})).status
            for i in range(per_thread)
        ]

    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            with ThreadPoolExecutor(threads) as pool:
                statuses = [s for done in pool.map(writer, range(threads)) for s in done]
            gc.collect()  # an unawaited coroutine warns as it is collected
        assert statuses == ["ok"] * threads * per_thread
        assert [str(w.message) for w in warned] == []
        written = store.run(memory.audit(user, "nova", limit=100))
        assert sorted(a.auftrag_id for a in written) == sorted(
            f"t{n}-{i}" for n in range(threads) for i in range(per_thread))
    finally:
        store.run(memory.purge(user))


def violations_of(store: SyncMemory, user: str) -> list[str]:
    return store.run(violations(store.memory, user))


def test_the_ledger_and_invariant_helpers_catch_planted_violations(
    store: SyncMemory,
) -> None:
    """The assertions above can fail: each planted fault is reported."""
    memory = store.memory
    user = new_user_id("rel-plant")
    order = {"auftrag_id": "p-1", "user_id": user, "character_id": "nova",
             "tripel": [{"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "Kassel",
                         "herkunft": "mensch"}]}
    result = store.run(memory.write(order))
    acknowledged = {"p-1": result}
    assert store.run(violations(memory, user)) == []
    assert ledger_violations(store.run(read_ledger(memory, user)), acknowledged) == []

    lost = {**acknowledged, "p-lost": result.model_copy(update={"auftrag_id": "p-lost"})}
    assert any("lost" in v for v in ledger_violations(store.run(read_ledger(memory, user)), lost))
    # A second Lena, a copy of the fact (same id), a fact no order accounts for.
    store.run(cypher(
        memory,
        "MATCH (l:Entitaet {user_id: $u, name: 'Lena'})-[r:WOHNT_IN]->(k) "
        "CREATE (l2:Entitaet {id: $u + '-lena', user_id: $u, name: 'Lena', name_norm: 'lena'}) "
        "CREATE (l)-[r2:WOHNT_IN]->(k) SET r2 = properties(r) "
        "CREATE (l2)-[r3:WOHNT_IN]->(k) SET r3 = properties(r), r3.id = $u + '-fact', "
        "  r3.auftrag_id = 'never-ordered'",
        u=user,
    ))
    found = store.run(violations(memory, user))
    assert any("duplicated by name" in v for v in found)
    assert any("dup_facts" in v for v in found)
    assert any("einwertig_unique" in v or "duplicate_facts" in v for v in found)
    ledger = ledger_violations(store.run(read_ledger(memory, user)), acknowledged)
    assert any("half-applied" in v for v in ledger)
    assert any("entities in the graph" in v for v in ledger)
    assert any("facts in the graph" in v for v in ledger)


def test_one_users_writes_behind_a_held_lock_leave_the_others_their_connections(
    store: SyncMemory, neo4j_settings: Settings
) -> None:
    """A stranger's attack (2026-12-07): with user A's lock held (a long purge, an
    import), a hundred of A's writes waited for it on the server, each holding one of
    the pool's connections: user B's Mappe and write then failed after waiting 10 s for
    one, with the base KgError. A user's writes now queue in the process, eight of them
    holding a connection (`USER_TURNS`); B is served at once. Where the pool is full
    all the same (two users' locks held, a pool of two), the call fails with
    ServerUnavailable, in words."""
    from kg.api import Memory
    from kg.errors import ServerUnavailable
    from tests.conftest import Pair, t

    a, b, c = (Pair(store, new_user_id(n)) for n in ("pool-a", "pool-b", "pool-c"))
    for p in (a, b, c):
        p.write(t("Lena", "hobby", wert="Schach"))
    lena_b = b.id_of("Lena")
    small = neo4j_settings.model_copy(update={"max_connections": 9, "connection_timeout": 1.0})

    async def scenario() -> None:
        async with await Memory.open(small) as memory:
            # (The holders' connections are another driver's: the store's.)
            async with holding_lock(store.memory, a.user_id):
                waiting = [asyncio.create_task(memory.write(
                    a.order(t("Lena", "hobby", wert=f"Hobby {i}")))) for i in range(16)]
                await asyncio.sleep(0.5)  # (A's first write waits for the lock)
                assert (await memory.mappe(b.user_id, "nova", lena_b)).fakten
                assert (await memory.write(b.order(t("Lena", "hobby", wert="Go")))).status == "ok"
            assert [r.status for r in await asyncio.gather(*waiting)] == ["ok"] * 16
        tight = small.model_copy(update={"max_connections": 2})
        async with await Memory.open(tight) as memory:
            async with holding_lock(store.memory, a.user_id), \
                    holding_lock(store.memory, c.user_id):
                waiting = [asyncio.create_task(memory.write(p.order(t("Lena", "hobby",
                                                                       wert="Skat"))))
                           for p in (a, c)]
                await asyncio.sleep(0.5)
                with pytest.raises(ServerUnavailable, match=r"every connection to Neo4j at "
                                   r".* was busy for 2 s .*nothing of this call ran"):
                    await memory.mappe(b.user_id, "nova", lena_b)
            assert [r.status for r in await asyncio.gather(*waiting)] == ["ok", "ok"]

    store.run(scenario())


def test_every_call_that_takes_a_users_lock_queues_for_it(
    store: SyncMemory, neo4j_settings: Settings, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review (2026-12-07): the queue covered orders, timeline changes and purges,
    while exports, imports and a Mappe read under the user's lock (where the user's
    writes commit during every plain read) waited for the lock on the server, each
    holding a connection: sixteen of them behind a held lock left user B none, and B's
    Mappe failed. They queue with the user's writes now."""
    from kg import mappe
    from kg.api import Memory
    from kg.errors import InvalidInput
    from tests.conftest import Pair, t

    a, b = (Pair(store, new_user_id(n)) for n in ("turn-a", "turn-b"))
    for p in (a, b):
        p.write(t("Lena", "hobby", wert="Schach"))
    lena_a, lena_b = a.id_of("Lena"), b.id_of("Lena")
    backup = tmp_path / "a.jsonl"
    store.run(store.memory.export(backup, a.user_id))
    monkeypatch.setattr(mappe, "STAND_READS", 0)  # (every Mappe read takes the lock)
    small = neo4j_settings.model_copy(update={"max_connections": 9, "connection_timeout": 1.0})

    async def scenario() -> list[Any]:
        async with await Memory.open(small) as memory:
            async with holding_lock(store.memory, a.user_id):
                calls: list[Coroutine[Any, Any, Any]] = [
                    memory.export(tmp_path / f"a{i}.jsonl", a.user_id) for i in range(6)]
                calls += [memory.import_file(backup) for _ in range(5)]
                calls += [memory.mappe(a.user_id, "nova", lena_a) for _ in range(5)]
                waiting = [asyncio.create_task(c) for c in calls]
                await asyncio.sleep(0.5)  # (A's first calls wait for the lock)
                assert (await memory.write(b.order(t("Lena", "hobby", wert="Go")))).status == "ok"
                monkeypatch.setattr(mappe, "STAND_READS", 3)
                assert (await memory.mappe(b.user_id, "nova", lena_b)).fakten
            return await asyncio.gather(*waiting, return_exceptions=True)

    done = store.run(scenario())
    assert all(getattr(r, "zeilen", 0) > 1 for r in done[:6]), done[:6]
    assert all(isinstance(r, InvalidInput) for r in done[6:11]), done[6:11]
    assert all(getattr(r, "fakten", None) for r in done[11:]), done[11:]


def test_a_write_that_waits_for_a_purge_of_its_user_never_deadlocks_it(
    store: SyncMemory, neo4j_settings: Settings
) -> None:
    """A stranger's attack (2026-12-07): orders sent while a long purge of their user
    ran failed after the retries ("DeadlockDetected"), or the purge ran again. A write
    waiting for the user's lock node holds a lock the purge's delete of that node needs
    (the node's NODE_RELATIONSHIP_GROUP_DELETE), while the purge holds the node: Neo4j
    ends one of them. The purge now leaves the lock node to a transaction of its own
    after it, which deletes it only while nothing of the user is there. Without retries
    (KG_RETRY_TIME=0), so that a deadlock would show: the purge and the write both go
    through, in the order they took the lock (which Neo4j picks: four rounds, so that
    the purge comes first in one of them almost surely; the old code failed there)."""
    from kg.api import Memory
    from tests.conftest import Pair, t

    at_once = neo4j_settings.model_copy(update={"retry_time": 0.0})

    async def scenario(a: Pair) -> tuple[Any, Any]:
        async with await Memory.open(at_once) as memory:
            async with holding_lock(store.memory, a.user_id):
                purging = asyncio.create_task(memory.purge(a.user_id))
                await asyncio.sleep(0.3)  # (the purge waits for the lock first)
                writing = asyncio.create_task(memory.write(a.order(t("Lena", "hobby",
                                                                     wert="Go"))))
                await asyncio.sleep(0.3)
            return await asyncio.gather(purging, writing)

    for round_ in range(4):
        a = Pair(store, new_user_id(f"purge-race-{round_}"))
        a.write(t("Lena", "hobby", wert="Schach"))
        purged, written = store.run(scenario(a))
        assert written.status == "ok", written
        if purged.fakten == 2:  # (the hobby and Lena's type) The purge took the lock
            # first: the user is there again, with the write alone, and keeps its node.
            assert [f.wert for f in a.mappe("Lena").fakten] == ["Go"]
            assert purged.nutzer == 0
            store.run(store.memory.purge(a.user_id))
        else:  # The write first: the purge took it too, and the lock node after it.
            assert (purged.fakten, purged.auftraege, purged.nutzer) == (3, 2, 1), purged
            with pytest.raises(NothingStored):
                store.run(store.memory.purge(a.user_id))


def test_a_write_whose_lock_node_a_purge_deleted_fails_in_words_once_retries_end(
    store: SyncMemory, neo4j_settings: Settings
) -> None:
    """A write that waited for the user's lock node while a purge deleted it runs again
    (`LockLost`); where the retries ran out (KG_RETRY_TIME=0 here), it reached the
    caller as the base KgError "Neo4j error at …: the lock node … was deleted", exit 1
    (a stranger's attack). It is not confirmed now, in words: nothing of it ran."""
    from neo4j import AsyncGraphDatabase

    from kg.api import Memory
    from kg.errors import WriteNotConfirmed
    from tests.conftest import Pair, t

    a = Pair(store, new_user_id("lock-lost"))
    a.write(t("Lena", "hobby", wert="Schach"))
    at_once = neo4j_settings.model_copy(update={"retry_time": 0.0})
    s = neo4j_settings

    async def scenario() -> None:
        driver = AsyncGraphDatabase.driver(
            s.neo4j_uri, auth=(s.neo4j_username, s.neo4j_password.get_secret_value()))
        try:
            async with await Memory.open(at_once) as memory, \
                    driver.session(database=s.neo4j_database) as session:
                purge = await session.begin_transaction()
                await (await purge.run("MATCH (n:Nutzer {id: $u}) DELETE n",
                                       u=a.user_id)).consume()
                writing = asyncio.create_task(memory.write(a.order(t("Lena", "hobby",
                                                                     wert="Go"))))
                await asyncio.sleep(0.5)
                await purge.commit()
                with pytest.raises(WriteNotConfirmed, match="the user's data was being purged"
                                   " — nothing of this call ran; send it again") as failed:
                    await writing
                assert failed.value.exit_code == 3
        finally:
            await driver.close()

    store.run(scenario())
    assert [f.wert for f in a.mappe("Lena").fakten] == ["Schach"]  # (the write: nothing)


def test_close_waits_for_the_calls_in_flight_and_refuses_new_ones(store: SyncMemory) -> None:
    """A stranger's attack (2026-12-07): `Memory.close()` closed the driver under the
    calls in flight. They went on, and one could commit after `close` returned (their
    cut-off sockets warned). `close` now refuses new calls at once (UsageError, nothing
    of them ran) and returns when the calls running have ended."""
    from kg.api import Memory
    from kg.errors import UsageError
    from tests.conftest import Pair, t

    a = Pair(store, new_user_id("close"))
    a.write(t("Lena", "hobby", wert="Schach"))
    lena = a.id_of("Lena")

    async def scenario() -> tuple[list[str], str]:
        memory = await Memory.open(store.memory.db.settings)
        seen: list[str] = []
        async with holding_lock(store.memory, a.user_id):
            writing = asyncio.create_task(memory.write(a.order(t("Lena", "hobby", wert="Go"))))
            await asyncio.sleep(0.5)  # (the write waits for the lock on the server)
            closing = asyncio.create_task(memory.close())
            await asyncio.sleep(0.2)
            seen.append(f"closed {closing.done()}")
            with pytest.raises(UsageError) as refused:
                await memory.mappe(a.user_id, "nova", lena)
        await closing
        seen.append(f"written before close returned {writing.done()}")
        seen.append(f"status {(await writing).status}")
        return seen, str(refused.value)

    seen, refused = store.run(scenario())
    assert seen == ["closed False", "written before close returned True", "status ok"], seen
    assert refused.startswith("this Memory is closed: open a new one"), refused
    assert sorted(f.wert for f in a.mappe("Lena").fakten if f.beziehung == "hobby") == [
        "Go", "Schach"]


def test_close_waits_for_every_step_of_a_purge_and_for_itself_never(
    store: SyncMemory,
) -> None:
    """A review (2026-12-07): a purge is two transactions (its data, then the user's lock
    node), and `close` refused the second after the first had committed: the caller was
    told "this Memory is closed" of a purge that had deleted everything. A call of
    several transactions counts as one now. Two closes at once both return (the first
    waited on an event the second replaced), and a close inside a call of the same
    Memory is refused (it waited for itself)."""
    from kg.api import Memory
    from kg.errors import UsageError
    from tests.conftest import Pair, t

    a = Pair(store, new_user_id("close-purge"))
    a.write(t("Lena", "hobby", wert="Schach"))

    async def scenario() -> tuple[Any, list[bool]]:
        memory = await Memory.open(store.memory.db.settings)
        async with holding_lock(store.memory, a.user_id):
            purging = asyncio.create_task(memory.purge(a.user_id))
            await asyncio.sleep(0.5)  # (the purge waits for the lock on the server)
            closing = [asyncio.create_task(memory.close()) for _ in range(2)]
            await asyncio.sleep(0.2)
        done, _ = await asyncio.wait(closing, timeout=10)
        return await purging, [c in done for c in closing]

    purged, closed = store.run(scenario())
    assert (purged.fakten, purged.nutzer) == (2, 1) and closed == [True, True], (purged, closed)

    async def inside() -> str:
        async with await Memory.open(store.memory.db.settings) as memory, memory.db.counted():
            with pytest.raises(UsageError) as refused:
                await memory.close()
        return str(refused.value)

    assert "inside a call of this Memory" in store.run(inside())


def test_close_waits_for_a_check_between_its_reads(store: SyncMemory) -> None:
    """A check is many reads, side by side. `close` waited only for the reads in flight,
    so a check it met between two of them failed on the next ("this Memory is closed")
    after the first had run: a stop's own note. A check (and an import, an export) is
    one call now. The first read (whether the store holds the user) says when the check
    has begun; the close starts right then."""
    from kg.api import Memory
    from tests.conftest import Pair, t

    a = Pair(store, new_user_id("close-check"))
    a.write(t("Lena", "hobby", wert="Schach"))

    async def scenario() -> tuple[Any, bool]:
        memory = await Memory.open(store.memory.db.settings)
        begun = asyncio.Event()
        query = memory.db.query

        async def first_then_flag(name: str, /, **params: Any) -> Any:
            try:
                return await query(name, **params)
            finally:
                begun.set()

        memory.db.query = first_then_flag  # type: ignore[method-assign]
        checking = asyncio.create_task(memory.check(a.user_id))
        await begun.wait()
        closing = asyncio.create_task(memory.close())
        report = await checking
        await closing
        return report, memory.db.closed

    report, closed = store.run(scenario())
    assert closed and [c.name for c in report.checks if not c.ok and
                       not c.name.startswith("decay")] == [], report


def test_a_purge_that_finds_only_the_lock_node_deletes_it_and_says_purged_already(
    store: SyncMemory,
) -> None:
    """The user's lock node goes after the purge, in a transaction of its own; a purge
    stopped between the two leaves it alone. A purge again deletes it and says "purged
    already", as after a purge that went through whole (a review: it answered a purge
    of zero facts, exit 0)."""
    from tests.conftest import Pair, t

    a = Pair(store, new_user_id("lone-lock"))
    a.write(t("Lena", "hobby", wert="Schach"))
    a.cypher("MATCH (n) WHERE n.user_id = $u DETACH DELETE n", u=a.user_id)
    assert a.cypher("MATCH (n:Nutzer {id: $u}) RETURN count(n) AS n", u=a.user_id) == [{"n": 1}]
    with pytest.raises(NothingStored, match=r"purged already: only its lock node was left .*"
                       r"; it is deleted now"):
        store.run(store.memory.purge(a.user_id))
    assert a.cypher("MATCH (n:Nutzer {id: $u}) RETURN count(n) AS n", u=a.user_id) == [{"n": 0}]
    with pytest.raises(NothingStored, match="has nothing in this store"):
        store.run(store.memory.purge(a.user_id))


def test_a_write_queued_behind_the_users_earlier_writes_keeps_its_deadline(
    store: SyncMemory, neo4j_settings: Settings
) -> None:
    """A review (2026-12-07): queued in the process, the k-th of a user's writes behind
    a held lock waited k times a write's deadline (behind a purge, without bound),
    where each failed after about the query timeout before. Every one ends within its
    own deadline now, typed, while the lock is still held; nothing of them is written."""
    from kg.api import Memory
    from kg.errors import ServerUnavailable, WriteNotConfirmed
    from tests.conftest import Pair, t

    a = Pair(store, new_user_id("queue"))
    a.write(t("Lena", "hobby", wert="Schach"))
    quick = neo4j_settings.model_copy(
        update={"query_timeout": 1.0, "retry_time": 0.5, "connection_timeout": 1.0})

    async def scenario() -> list[BaseException | Any]:
        async with await Memory.open(quick) as memory:
            async with holding_lock(store.memory, a.user_id):
                waiting = [asyncio.create_task(memory.write(
                    a.order(t("Lena", "hobby", wert=f"Hobby {i}")))) for i in range(20)]
                # (Each has 2.5 s in the queue, then its own deadline of 2.5 s: all end
                # within 5 s, and by 8 s the lock is let go. One after the other, each
                # ended by the server's 1 s, the twentieth ended after some 20 s.)
                done, _ = await asyncio.wait(waiting, timeout=8)
            return [task.exception() if task in done else "still waiting" for task in waiting]

    ended = store.run(scenario())
    assert all(isinstance(e, (ServerUnavailable, WriteNotConfirmed)) for e in ended), ended
    assert [f.wert for f in a.mappe("Lena").fakten] == ["Schach"]
