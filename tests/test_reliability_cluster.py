"""Reliability: cluster-ready: routing URIs, access modes, read-your-own-writes.

A Neo4j cluster routes reads to secondaries and writes to the leader; the library is
ready for that when it (1) works with a `neo4j://` routing URI, (2) sends every read as
a read transaction and every write as a write transaction, and (3) carries bookmarks
from a caller's writes into its next reads. A standalone 5.x server answers routing
requests, so all three are shown here against the test server (docs/operations.md says
how a deployment outgrows one machine).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from kg.api import Memory, SyncMemory
from kg.errors import KgError
from kg.models import NeuerEintrag
from kg.settings import Settings
from tests.conftest import new_user_id
from tests.reliability_support import cypher


def routing(settings: Settings) -> Settings:
    _, rest = settings.neo4j_uri.split("://", 1)
    return Settings(
        neo4j_uri=f"neo4j://{rest}",
        neo4j_username=settings.neo4j_username,
        neo4j_password=settings.neo4j_password,
        neo4j_database=settings.neo4j_database,
    )


@pytest.fixture
def routed(neo4j_settings: Settings, store: SyncMemory) -> Iterator[SyncMemory]:
    with SyncMemory(routing(neo4j_settings)) as sync:
        yield sync


def order(user: str, n: int, **triple: Any) -> dict[str, Any]:
    return {"auftrag_id": f"c-{n}", "user_id": user, "character_id": "nova",
            "tripel": [{"herkunft": "mensch", **triple}]}


def test_the_library_works_through_a_routing_uri(routed: SyncMemory) -> None:
    memory = routed.memory
    assert memory.db.settings.neo4j_uri.startswith("neo4j://")
    user = new_user_id("rel-route")
    result = routed.run(memory.write(order(user, 1, subjekt="Lena", beziehung="wohnt_in",
                                           objekt="Kassel")))
    assert result.status == "ok"
    lena = routed.run(memory.entity_id(user, "nova", "Lena"))
    mappe = routed.run(memory.mappe(user, "nova", lena))
    assert [f.objekt.name for f in mappe.fakten if f.objekt] == ["Kassel"]
    entry = routed.run(memory.timeline_add(
        user, "nova", NeuerEintrag(typ="termin", titel="Umzug", beginn=date(2026, 11, 1))))
    moved = routed.run(memory.timeline_move(user, "nova", entry.id, date(2026, 12, 1)))
    assert routed.run(memory.timeline_active(user, "nova", entry.id)).id == moved.id
    assert [a.auftrag_id for a in routed.run(memory.audit(user))] == ["c-1"]


class AccessLog:
    """Records the access mode and bookmark manager of every session the driver opens,
    and of every single read sent on a pooled connection without one (`Database.direct`:
    the mode it acquires the connection for, which it also sends with the query)."""

    def __init__(self, memory: Memory) -> None:
        self.modes: list[str] = []
        self.managers: list[Any] = []
        #: The bookmarks each direct read was sent with.
        self.sent: list[Any] = []
        driver = memory.db.driver
        original = driver.session

        def session(**kwargs: Any) -> Any:
            self.modes.append(kwargs.get("default_access_mode", "?"))
            self.managers.append(kwargs.get("bookmark_manager"))
            return original(**kwargs)

        driver.session = session  # type: ignore[method-assign]
        direct = memory.db.direct
        assert direct is not None, "the installed driver takes a session per read"
        pool = direct._pool
        log = self

        class Pool:
            async def acquire(self, mode: str, *args: Any) -> Any:
                log.modes.append(mode)
                assert direct is not None  # as above: a method here does not see that
                log.managers.append(direct._bookmarks)
                connection = await pool.acquire(mode, *args)
                run = connection.run

                def sent(*run_args: Any, **kwargs: Any) -> Any:
                    # What the pool was asked with (deadline, database, bookmarks, ...)
                    # and what the RUN message carries.
                    log.sent.append((args[2], kwargs.get("bookmarks"), kwargs.get("mode")))
                    return run(*run_args, **kwargs)

                connection.run = sent
                return connection

            async def release(self, *connections: Any) -> None:
                for connection in connections:
                    del connection.run  # the class's own again
                await pool.release(*connections)

        direct._pool = Pool()

        def undo() -> None:
            driver.session = original  # type: ignore[method-assign]
            direct._pool = pool

        self.undo = undo

    def take(self) -> set[str]:
        modes, self.modes = set(self.modes), []
        return modes


def test_reads_are_read_transactions_and_writes_write_transactions(
    routed: SyncMemory, tmp_path: Path
) -> None:
    memory = routed.memory
    user = new_user_id("rel-mode")
    log = AccessLog(memory)
    try:
        run = routed.run
        run(memory.write(order(user, 1, subjekt="Lena", beziehung="hobby", wert="Lesen")))
        assert log.take() == {"WRITE"}
        entry = run(memory.timeline_add(
            user, "nova", NeuerEintrag(typ="termin", titel="Termin", beginn=date(2026, 11, 3))))
        assert "WRITE" in log.take()
        lena = run(memory.entity_id(user, "nova", "Lena"))
        reads: dict[str, Callable[[], Coroutine[Any, Any, object]]] = {
            "entity_id": lambda: memory.entity_id(user, "nova", "Lena"),
            "resolve": lambda: memory.resolve(user, "nova", "Lena"),
            "entities": lambda: memory.entities(user, "nova"),
            "mappe": lambda: memory.mappe(user, "nova", lena),
            "mappen": lambda: memory.mappen(user, "nova", [lena]),
            "history": lambda: memory.history(user, "nova", lena),
            "timeline_active": lambda: memory.timeline_active(user, "nova", entry.id),
            "timeline_chain": lambda: memory.timeline_chain(user, "nova", entry.id),
            "timeline_window": lambda: memory.timeline_window(
                user, "nova", date(2026, 1, 1), date(2026, 12, 31)),
            "audit": lambda: memory.audit(user),
            "check": lambda: memory.check(user),
            "status": lambda: memory.status(),
        }
        for name, call in reads.items():
            run(call())
            assert log.take() == {"READ"}, name
        writes: dict[str, Callable[[], Coroutine[Any, Any, object]]] = {
            "timeline_move": lambda: memory.timeline_move(user, "nova", entry.id,
                                                          date(2026, 11, 4)),
            "export": lambda: memory.export(tmp_path / "u.jsonl", user),
            "purge": lambda: memory.purge(user),
        }
        for name, call in writes.items():
            run(call())
            assert "WRITE" in log.take(), name
        # Every session shares the driver's bookmark manager: read-your-own-writes.
        assert log.managers and all(
            m is memory.db.driver.execute_query_bookmark_manager for m in log.managers
        )
    finally:
        log.undo()


def test_a_single_read_carries_the_bookmarks_of_the_callers_last_write(
    routed: SyncMemory,
) -> None:
    """On one server a read sees every committed write anyway, so reading one's own
    writes shows nothing about bookmarks there; what the read sends does: the bookmarks
    the shared manager holds after the write, the write's own among them."""
    memory = routed.memory
    user = new_user_id("rel-bm")
    manager = memory.db.driver.execute_query_bookmark_manager
    log = AccessLog(memory)
    try:
        routed.run(memory.write(order(user, 1, subjekt="Lena", beziehung="hobby",
                                      wert="Lesen")))
        lena = routed.run(memory.entity_id(user, "nova", "Lena"))
        routed.run(memory.write(order(user, 2, subjekt="Lena", beziehung="hobby",
                                      wert="Malen")))
        after_write = set(routed.run(manager.get_bookmarks()))
        log.sent.clear()
        routed.run(memory.mappe(user, "nova", lena))  # a single read (`plain_query`)
        routed.run(memory.mappe(user, "nova", lena))
        # (On one server a read's own bookmark is the last write's: the second read is
        # sent with the same.)
        assert after_write and [
            (set(pooled), set(run), mode) for pooled, run, mode in log.sent
        ] == [(after_write, after_write, "r")] * 2
    finally:
        log.undo()


def test_a_write_sent_as_a_read_is_refused_by_the_server(routed: SyncMemory) -> None:
    """The access mode is not a label: the server enforces it (a cluster would route
    the read to a secondary, which cannot write either)."""
    memory = routed.memory
    user = new_user_id("rel-ro")
    with pytest.raises(KgError, match=r"AccessMode|read access mode"):
        routed.run(memory.db.read(lambda tx: tx.run("user_lock", user_id=user, auftrag_id=None)))
    # Single reads run as auto-commit reads: the same holds for them.
    with pytest.raises(KgError, match=r"AccessMode|read access mode"):
        routed.run(memory.db.query("user_lock", user_id=user, auftrag_id=None))
    assert routed.run(cypher(memory, "MATCH (n:Nutzer {id: $u}) RETURN count(n) AS n",
                             u=user)) == [{"n": 0}]


def test_a_caller_reads_its_own_writes(routed: SyncMemory) -> None:
    """Each write advances the bookmarks; the very next read waits for them."""
    memory = routed.memory
    user = new_user_id("rel-ryow")
    manager = memory.db.driver.execute_query_bookmark_manager

    async def rounds() -> int:
        seen = 0
        previous = await manager.get_bookmarks()
        for n in range(20):
            city = f"Stadt {n}"
            await memory.write(order(user, n, subjekt="Lena", beziehung="wohnt_in",
                                     objekt=city))
            now = await manager.get_bookmarks()
            assert now and now != previous
            previous = now
            lena = await memory.entity_id(user, "nova", "Lena")
            mappe = await memory.mappe(user, "nova", lena)
            current = [f.objekt.name for f in mappe.fakten
                       if f.beziehung == "wohnt_in" and f.objekt]
            assert current == [city], (n, current)
            seen += 1
        return seen

    assert routed.run(rounds()) == 20
    # And concurrently: many callers at once, each reading what it just wrote.
    async def caller(k: int) -> None:
        u = f"{user}-{k}"
        await memory.write(order(u, 0, subjekt="Tom", beziehung="beruf", wert=f"Beruf {k}"))
        tom = await memory.entity_id(u, "nova", "Tom")
        mappe = await memory.mappe(u, "nova", tom)
        assert [f.wert for f in mappe.fakten if f.beziehung == "beruf"] == [f"Beruf {k}"]

    async def many() -> None:
        await asyncio.gather(*(caller(k) for k in range(16)))

    routed.run(many())
