"""A real Neo4j for every integration test, and per-test isolation by user id.

The test session never uses the user's own store. Where its server comes from, in
order: `KG_TEST_NEO4J_URI` if set (a disposable server you name, with
`KG_TEST_NEO4J_PASSWORD`); else testcontainers' Neo4j 5.26 when a Docker engine
answers; else a private instance of the project's local launcher, with its own home
(under the cache directory) and its own free ports, deleted when the session ends. A
server that merely answers on 7687 is never used.

For the session, `NEO4J_URI`/`NEO4J_PASSWORD` and the launcher's `KG_NEO4J_*` point at
that server, so CLI commands invoked by tests reach it and nothing else.

Every user a test writes starts with the session's own prefix (`new_user_id`). A
disposable server is deleted with everything on it; on a server you name, the session
purges exactly the users under its prefix at the end, never another session's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from unittest import mock

import pytest

from cli.launcher import LocalServer
from cli.worked_example import tripel
from kg import schema, timeline
from kg.api import Memory, SyncMemory
from kg.errors import NothingStored
from kg.plan import planner
from kg.settings import LOCAL_DEFAULT_PASSWORD, Settings

T = TypeVar("T")

#: The session's prefix of every user id a test writes. It lives in the environment, so a
#: child process a test starts (a CLI, a killed client) makes its users under it too.
SESSION_PREFIX = os.environ.setdefault("KG_TEST_SESSION", f"ts{uuid.uuid4().hex[:6]}-")
if not re.fullmatch(r"ts[0-9a-f]{6}-", SESSION_PREFIX):  # "" would purge every user
    raise RuntimeError(
        f"KG_TEST_SESSION is {SESSION_PREFIX!r}, not a test session's prefix such as "
        "'ts1a2b3c-': unset it, and the session makes its own"
    )


def new_user_id(kind: str = "test") -> str:
    """A fresh user id of this test session: `<session prefix><kind>-<random>`."""
    return f"{SESSION_PREFIX}{kind}-{uuid.uuid4().hex[:10]}"


#: How `DrawnIds` orders the ids: by a seed, or by creation, either way.
IdOrder = int | Literal["ascending", "descending"]


class DrawnIds:
    """The ids the planner gives new entities and facts (`kg.plan.planner.new_id`), and
    new timeline entries (`kg.timeline.new_entry_id`), in an order the test decides,
    while installed.

    The store breaks ties by id (of two values that begin at one instant, the one of the
    smaller id is named first), so with random ids a sequence can fail in one run and
    pass in the next: hypothesis cannot replay it, nor a test hold it. Here the order is
    part of the sequence: a seed (a state machine draws it, so a failure replays), or
    the order of creation, either way (a replay of a tie tests both). Each instance has
    a random prefix: entity ids are unique across the whole store."""

    def __init__(self, order: IdOrder = 0) -> None:
        self.order = order
        self.prefix = uuid.uuid4().hex[:8]
        self.n = 0
        self._installed = [mock.patch.object(planner, "new_id", self),
                           mock.patch.object(timeline, "new_entry_id", self)]
        for patch in self._installed:
            patch.start()

    def __call__(self) -> str:
        self.n += 1
        if self.order == "ascending":
            key = f"{self.n:024x}"
        elif self.order == "descending":
            key = f"{2**64 - self.n:024x}"
        else:
            key = hashlib.blake2b(f"{self.order}:{self.n}".encode(), digest_size=12).hexdigest()
        return self.prefix + key

    def restore(self) -> None:
        for patch in self._installed:
            patch.stop()


def end_of_sequence(store: SyncMemory, user_id: str, id_order: DrawnIds) -> None:
    """A state machine's teardown: `kg check` must be clean at the end of its sequence
    (the user swept first, as a daily sweep would: no check passes without one), unless
    the sequence failed already (hypothesis tears down while the step's error is on its
    way: that error is the finding, and a check failing after it would take its place);
    the user is purged and the ids' order restored in any case."""
    try:
        if sys.exc_info()[0] is None:
            store.run(store.memory.decay_run(user_id))
            report = store.run(store.memory.check(user_id))
            assert report.ok, [c for c in report.checks if not c.ok]
    finally:
        try:
            with contextlib.suppress(NothingStored):  # nothing was written
                store.run(store.memory.purge(user_id))
        finally:
            id_order.restore()


@contextlib.contextmanager
def held_port() -> Iterator[int]:
    """A port held as the kernel holds a client's ephemeral port: an outgoing loopback
    connection whose own (local) port it is. Nothing listens there, so a connect test
    finds it free, yet no server can listen on it while the connection lasts. (Bound
    without SO_REUSEADDR, as the kernel binds a client: a port with connections still in
    TIME_WAIT from an earlier server cannot be taken so, and another is drawn.)"""
    from cli.launcher import free_port

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        for _ in range(50):
            client = socket.socket()
            port = free_port()
            try:
                client.bind(("127.0.0.1", port))
            except OSError:
                client.close()
                continue
            with client:
                client.connect(server.getsockname())
                accepted, _ = server.accept()
                with accepted:
                    yield port
            return
        raise AssertionError("no port to hold in 50 draws")


def _docker_engine_answers() -> bool:
    if not shutil.which("docker"):
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def neo4j_settings() -> Iterator[Settings]:
    env = pytest.MonkeyPatch()
    try:
        if os.environ.get("KG_TEST_NEO4J_URI"):
            settings = Settings(
                neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                neo4j_password=os.environ.get("KG_TEST_NEO4J_PASSWORD", LOCAL_DEFAULT_PASSWORD),
            )
            env.setenv("NEO4J_URI", settings.neo4j_uri)
            env.setenv("NEO4J_PASSWORD", settings.neo4j_password.get_secret_value())
            yield settings
            return
        if _docker_engine_answers():
            from testcontainers.neo4j import Neo4jContainer

            box = Neo4jContainer("neo4j:5.26-community", password=LOCAL_DEFAULT_PASSWORD)
            box.with_env("NEO4J_internal_cypher_use__parameter__size", "false")  # as compose
            with box:
                env.setenv("NEO4J_URI", box.get_connection_url())
                env.setenv("NEO4J_PASSWORD", LOCAL_DEFAULT_PASSWORD)
                yield Settings(
                    neo4j_uri=box.get_connection_url(),
                    neo4j_username="neo4j",
                    neo4j_password=LOCAL_DEFAULT_PASSWORD,
                )
            return
        server = LocalServer.disposable("test-neo4j-")
        env.setenv("KG_NEO4J_HOME", str(server.home))
        env.setenv("KG_NEO4J_BOLT_PORT", str(server.bolt_port))
        env.setenv("KG_NEO4J_HTTP_PORT", str(server.http_port))
        env.setenv("KG_NEO4J_HEAP", server.heap)
        env.setenv("KG_NEO4J_PAGECACHE", server.pagecache)
        env.setenv("NEO4J_URI", server.uri)
        env.setenv("NEO4J_PASSWORD", server.password)
        env.setenv("KG_BROWSER_URL", server.browser_url)  # its own Browser, on its own port
        env.delenv("NEO4J_USERNAME", raising=False)
        env.delenv("NEO4J_DATABASE", raising=False)
        try:
            server.start()
            yield Settings(neo4j_uri=server.uri, neo4j_password=server.password)
        finally:
            server.stop()
            shutil.rmtree(server.home, ignore_errors=True)
    finally:
        env.undo()


@pytest.fixture(scope="session")
def store(neo4j_settings: Settings) -> Iterator[SyncMemory]:
    """One connected store for the session, schema applied."""
    bootstrap = SyncMemory(neo4j_settings, check_schema=False)
    try:
        bootstrap.run(schema.apply(bootstrap.memory.db))
    finally:
        bootstrap.close()
    sync = SyncMemory(neo4j_settings)
    try:
        yield sync
        if os.environ.get("KG_TEST_NEO4J_URI"):  # a named server outlives the session
            sync.run(purge_users_under(sync, SESSION_PREFIX))
    finally:
        sync.close()


async def users_under(target: SyncMemory | Memory, prefix: str) -> list[str]:
    """Every user id under `prefix` that anything in the store still carries."""
    rows = await raw_cypher(
        target,
        "CALL () { MATCH (n:Nutzer) WHERE n.id STARTS WITH $p RETURN n.id AS u "
        "UNION MATCH (n:Entitaet) WHERE n.user_id STARTS WITH $p RETURN n.user_id AS u "
        "UNION MATCH (n:Auftrag) WHERE n.user_id STARTS WITH $p RETURN n.user_id AS u "
        "UNION MATCH (n:TimelineEintrag) WHERE n.user_id STARTS WITH $p RETURN n.user_id AS u } "
        "RETURN u ORDER BY u",
        p=prefix,
    )
    return [row["u"] for row in rows]


async def purge_users_under(target: SyncMemory | Memory, prefix: str) -> list[str]:
    """Purge every user under `prefix` (the library's own purge, user by user); returns
    the users purged."""
    memory = target.memory if isinstance(target, SyncMemory) else target
    users = await users_under(target, prefix)
    for user in users:
        await memory.purge(user)
    return users


@dataclass
class Pair:
    """A fresh (user, character) pair: tests isolate themselves by unique user ids."""

    store: SyncMemory
    user_id: str
    character_id: str = "nova"
    _n: int = 0

    def order(self, *tripel: dict[str, Any], **extra: Any) -> dict[str, Any]:
        self._n += 1
        return {
            "auftrag_id": extra.pop("auftrag_id", f"turn-{self._n}-{uuid.uuid4().hex[:6]}"),
            "user_id": self.user_id,
            "character_id": extra.pop("character_id", self.character_id),
            "tripel": list(tripel),
            **extra,
        }

    def write(self, *tripel: dict[str, Any], **extra: Any) -> Any:
        return self.store.run(self.store.memory.write(self.order(*tripel, **extra)))

    def id_of(self, name: str) -> str:
        return self.store.run(self.store.memory.entity_id(self.user_id, self.character_id, name))

    def mappe(self, name: str, **kw: Any) -> Any:
        return self.store.run(
            self.store.memory.mappe(self.user_id, self.character_id, self.id_of(name), **kw)
        )

    def cypher(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Raw Cypher for assertions and for planting violations (tests only)."""
        return self.store.run(raw_cypher(self.store, query, **params))

    def other(self, character_id: str) -> Pair:
        return Pair(self.store, self.user_id, character_id)


async def raw_cypher(
    target: SyncMemory | Memory, query: str, **params: Any
) -> list[dict[str, Any]]:
    """Raw Cypher for assertions and for planting violations (tests only: the library
    itself runs named queries only)."""
    db = target.memory.db if isinstance(target, SyncMemory) else target.db
    records, _, _ = await db.driver.execute_query(query, params, database_=db.name)
    return [r.data() for r in records]


async def together(*reads: Awaitable[T]) -> list[T]:
    """Reads side by side, their answers in order (a test asking many as-of questions)."""
    return list(await asyncio.gather(*reads))


async def explain_with_examples(
    target: SyncMemory | Memory, text: str, examples: dict[str, str]
) -> None:
    """Evaluate each `:param` example expression as Neo4j Browser does, then EXPLAIN the
    query with those values (a query header's examples must run)."""
    values = {
        name: (await raw_cypher(target, f"RETURN {expression} AS v"))[0]["v"]
        for name, expression in examples.items()
    }
    await raw_cypher(target, "EXPLAIN " + text, **values)


@pytest.fixture
def cli_env(neo4j_settings: Settings) -> dict[str, str]:
    """NEO4J_* for a CLI run against the test server. The session points the environment
    at it already; naming the server here too keeps a CLI test from ever reaching
    another store, even when it is the first test to run."""
    return {
        "NEO4J_URI": neo4j_settings.neo4j_uri,
        "NEO4J_USERNAME": neo4j_settings.neo4j_username,
        "NEO4J_PASSWORD": neo4j_settings.neo4j_password.get_secret_value(),
        "NEO4J_DATABASE": neo4j_settings.neo4j_database,
    }


@pytest.fixture
def pair(store: SyncMemory) -> Iterator[Pair]:
    """A fresh pair; everything its user wrote is purged afterwards."""
    fresh = Pair(store, new_user_id())
    yield fresh
    with contextlib.suppress(NothingStored):  # the test wrote nothing, or purged it
        store.run(store.memory.purge(fresh.user_id))


#: A triple for an order: the worked example's builder, the one the tests share.
t = tripel
