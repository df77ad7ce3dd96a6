"""The foundation: server, registry, migrations, status, typed errors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from cli.launcher import PLAN_BY_SIZE, LocalServer, free_port
from kg import schema
from kg.api import Memory, SyncMemory
from kg.db import FirstRuns
from kg.errors import (
    AuthFailed,
    ConfigError,
    DatabaseNotFound,
    NothingStored,
    SchemaError,
    SchemaOutdated,
    ServerUnavailable,
)
from kg.models import NeuerEintrag
from kg.queries import registry
from kg.settings import Settings, load_settings
from tests.conftest import Pair, new_user_id, raw_cypher, t


def test_every_registered_query_explains_on_the_real_server(store: SyncMemory) -> None:
    async def explain_all() -> list[str]:
        failures = []
        for query in registry():
            params = {p: None for p in query.params}
            try:
                await store.memory.db.driver.execute_query(
                    "EXPLAIN " + query.text, params, database_=store.memory.db.name
                )
            except Exception as exc:  # collect every failure, then report
                failures.append(f"{query.name}: {exc}")
        return failures

    assert store.run(explain_all()) == []


def test_status_reports_version_schema_and_counts(store: SyncMemory) -> None:
    status = store.run(store.memory.status())
    assert status.version.startswith("5.26")
    assert status.edition == "community"
    assert status.schema_version == status.schema_needed == len(schema.migrations())
    assert status.entities >= 0 and status.facts >= status.active_facts >= 0


def test_schema_apply_is_idempotent_and_recorded(store: SyncMemory) -> None:
    store.run(schema.apply(store.memory.db))
    states = store.run(schema.status(store.memory.db))
    assert [s.status for s in states] == ["applied"] * len(states)
    rows = store.run(raw_cypher(store, "MATCH (m:SchemaMigration) RETURN count(m) AS n"))
    assert rows[0]["n"] == len(states)


def test_schema_status_gives_each_migrations_time_as_recorded(store: SyncMemory) -> None:
    """`schema_applied` sends the times as epoch microseconds: the same instants, to the
    microsecond, as the stored DateTimes; a record without one shows none."""
    rows = store.run(raw_cypher(
        store, "MATCH (m:SchemaMigration) RETURN m.version AS v, m.applied_at AS at"
    ))
    stored = {r["v"]: r["at"].to_native() for r in rows}
    states = store.run(schema.status(store.memory.db))
    assert {s.version: s.applied_at for s in states} == stored
    assert all(s.applied_at.tzinfo is not None for s in states if s.applied_at)
    assert any(s.applied_at.microsecond for s in states if s.applied_at)  # not cut to seconds

    at = store.run(raw_cypher(
        store, "MATCH (m:SchemaMigration {version: 1}) WITH m, m.applied_at AS at "
        "REMOVE m.applied_at RETURN at"
    ))[0]["at"]
    try:
        states = store.run(schema.status(store.memory.db))
        assert [s.applied_at for s in states if s.version == 1] == [None]
        assert states[0].status == "applied"
    finally:
        store.run(raw_cypher(
            store, "MATCH (m:SchemaMigration {version: 1}) SET m.applied_at = $at", at=at
        ))


def test_changed_migration_is_an_error_not_a_rerun(store: SyncMemory) -> None:
    rows = store.run(
        raw_cypher(store, "MATCH (m:SchemaMigration {version: 1}) RETURN m.checksum AS c")
    )
    original = rows[0]["c"]
    store.run(
        raw_cypher(store, "MATCH (m:SchemaMigration {version: 1}) SET m.checksum = 'tampered'")
    )
    try:
        with pytest.raises(SchemaError, match="must not change"):
            store.run(schema.apply(store.memory.db))
        with pytest.raises(SchemaError, match="differs"):
            store.run(schema.require_current(store.memory.db))
    finally:
        store.run(
            raw_cypher(
                store, "MATCH (m:SchemaMigration {version: 1}) SET m.checksum = $c", c=original
            )
        )


def test_a_changed_migration_stops_apply_before_it_applies_any(store: SyncMemory) -> None:
    """`kg schema apply` applied the pending migrations before the changed one, then
    refused; and it advised "add a new numbered file" where every other command said
    "restore the file that was applied". It checks every file first now, applies
    nothing, and both say the same."""
    last = len(schema.migrations())
    [kept] = store.run(raw_cypher(
        store, "MATCH (m:SchemaMigration {version: 1}) RETURN properties(m) AS p"))
    [changed] = store.run(raw_cypher(
        store, "MATCH (m:SchemaMigration {version: $v}) RETURN m.checksum AS c", v=last))
    store.run(raw_cypher(store, "MATCH (m:SchemaMigration {version: 1}) DELETE m"))
    store.run(raw_cypher(
        store, "MATCH (m:SchemaMigration {version: $v}) SET m.checksum = 'x'", v=last))
    try:
        said = []
        for refused in (schema.apply(store.memory.db), schema.require_current(store.memory.db)):
            with pytest.raises(SchemaError) as error:
                store.run(refused)
            said.append(str(error.value))
        pending = [s.status for s in store.run(schema.status(store.memory.db))][:1]
        assert pending == ["pending"], pending
        for words in said:
            assert "restore the file that was applied (reinstall the package version that " \
                   "applied it), and put a change of the schema into a new numbered " \
                   "migration" in words, words
    finally:
        store.run(raw_cypher(store, "MERGE (m:SchemaMigration {version: 1}) SET m = $p",
                             p=kept["p"]))
        store.run(raw_cypher(
            store, "MATCH (m:SchemaMigration {version: $v}) SET m.checksum = $c", v=last,
            c=changed["c"]))
    assert store.run(store.memory.status()).schema_problem is None


def test_a_changed_migration_gets_the_same_words_from_kg_status(store: SyncMemory) -> None:
    """A stranger's attack (2026-12-07): with an applied migration's record changed, `kg
    status` said "run `kg schema apply`", which then refused ("applied migrations must
    not change"); every other command said what was wrong."""
    from typer.testing import CliRunner

    from cli.main import app

    rows = store.run(
        raw_cypher(store, "MATCH (m:SchemaMigration {version: 1}) RETURN m.checksum AS c"))
    original = rows[0]["c"]
    store.run(raw_cypher(store, "MATCH (m:SchemaMigration {version: 1}) SET m.checksum = 'x'"))
    try:
        result = CliRunner().invoke(app, ["status"])
        assert result.exit_code == 4, result.output
        assert "0001_constraints differs from the applied one" in result.output
        assert "kg schema apply" not in result.output, result.output
        assert store.run(store.memory.status()).schema_problem is not None
        # (--json exited 0 with the problem in its answer, where the text form and `kg
        # schema status --json` exit 4.)
        as_json = CliRunner().invoke(app, ["status", "--json"])
        assert as_json.exit_code == 4, as_json.output
        assert "differs from the applied one" in json.loads(as_json.stdout)["schema_problem"]
    finally:
        store.run(raw_cypher(
            store, "MATCH (m:SchemaMigration {version: 1}) SET m.checksum = $c", c=original))
    assert store.run(store.memory.status()).schema_problem is None


def test_a_database_a_newer_package_migrated_is_refused(
    store: SyncMemory, neo4j_settings: Settings
) -> None:
    """A stranger's attack (2026-12-07): a store that records a migration this package
    does not have (a newer kg applied it) read "schema version 4 of 4", and every command
    wrote on into a schema it does not know. It is refused now, as an outdated one is,
    and `kg schema apply` runs none of its older files beside it."""
    from typer.testing import CliRunner

    from cli.main import app

    beyond = len(schema.migrations()) + 1
    store.run(raw_cypher(
        store, "CREATE (:SchemaMigration {version: $v, name: 'kuenftig', checksum: 'x', "
        "applied_at: datetime()})", v=beyond))
    try:
        states = store.run(schema.status(store.memory.db))
        assert [(s.version, s.name, s.status) for s in states[-1:]] == [
            (beyond, "kuenftig", "newer")]
        for refused in (schema.require_current(store.memory.db), schema.apply(store.memory.db)):
            with pytest.raises(SchemaError, match=f"schema is at version {beyond}, newer than "
                               f"this package knows \\({beyond - 1};"):
                store.run(refused)
        with pytest.raises(SchemaError, match="newer than this package"):
            SyncMemory(neo4j_settings)
        status = CliRunner().invoke(app, ["status"])
        assert status.exit_code == 4 and f"version {beyond} of {beyond - 1}" in status.output
        assert "a newer kg" in status.output, status.output
        listed = CliRunner().invoke(app, ["schema", "status"])
        assert listed.exit_code == 4 and "kuenftig" in listed.output, listed.output
    finally:
        store.run(raw_cypher(store, "MATCH (m:SchemaMigration {version: $v}) DELETE m",
                             v=beyond))
    assert store.run(store.memory.status()).schema_problem is None


def test_library_refuses_an_outdated_schema(store: SyncMemory, neo4j_settings: Settings) -> None:
    rows = store.run(
        raw_cypher(store, "MATCH (m:SchemaMigration {version: 1}) RETURN properties(m) AS p")
    )
    props = rows[0]["p"]
    store.run(raw_cypher(store, "MATCH (m:SchemaMigration {version: 1}) DELETE m"))
    try:
        with pytest.raises(SchemaOutdated, match="kg schema apply"):
            SyncMemory(neo4j_settings)
    finally:
        store.run(raw_cypher(store, "CREATE (m:SchemaMigration) SET m = $p", p=props))


def test_wrong_password_is_a_typed_error_without_the_password(neo4j_settings: Settings) -> None:
    bad = neo4j_settings.model_copy(update={"neo4j_password": SecretStr("definitely-wrong-pw")})
    with pytest.raises(AuthFailed) as caught:
        asyncio.run(Memory.open(bad))
    assert "definitely-wrong-pw" not in str(caught.value)
    assert "NEO4J_PASSWORD" in str(caught.value)


@pytest.mark.parametrize("check_schema", [True, False])
def test_unknown_database_is_a_typed_error(neo4j_settings: Settings, check_schema: bool) -> None:
    """With the schema check, its query is what finds the database missing; without it,
    a query of its own."""
    bad = neo4j_settings.model_copy(update={"neo4j_database": "nosuchdb"})
    with pytest.raises(DatabaseNotFound, match="nosuchdb"):
        asyncio.run(Memory.open(bad, check_schema=check_schema))


@pytest.mark.parametrize("name", ["system", "SYSTEM"])
def test_the_system_database_is_refused_as_the_store(
    neo4j_settings: Settings, cli_env: dict[str, str], name: str
) -> None:
    """NEO4J_DATABASE=system reached the server, which takes administration commands
    only there: `kg status` ended with its raw "Not a recognised system command" and exit
    1. It is refused with the configuration, before any connection (exit 2)."""
    with pytest.raises(ConfigError, match="NEO4J_DATABASE: the system database"):
        load_settings(neo4j_uri=neo4j_settings.neo4j_uri, neo4j_database=name)
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "status"], capture_output=True, text=True,
        env={**os.environ, **cli_env, "NEO4J_DATABASE": name}, timeout=60, check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "the system database holds Neo4j's administration" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_an_empty_database_name_is_the_default(
    neo4j_settings: Settings, cli_env: dict[str, str]
) -> None:
    """An empty NEO4J_DATABASE (a `.env` line left blank) went to the driver as "", and
    `kg status` printed an empty database line. It is unset: the default, neo4j."""
    assert load_settings(neo4j_uri=neo4j_settings.neo4j_uri,
                         neo4j_database=" ").neo4j_database == "neo4j"
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "status"], capture_output=True, text=True,
        env={**os.environ, **cli_env, "NEO4J_DATABASE": ""}, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "database  neo4j\n" in done.stdout, done.stdout


@pytest.mark.parametrize("check_schema", [True, False])
def test_opening_the_store_costs_one_query(neo4j_settings: Settings, check_schema: bool) -> None:
    """Every command opens the store: the schema check doubles as the proof that the
    database answers, so there is no separate ping before it."""

    async def queries() -> int:
        async with await Memory.open(neo4j_settings, check_schema=check_schema) as memory:
            return memory.db.round_trips

    assert asyncio.run(queries()) == 1


def test_unreachable_server_fails_fast_with_a_hint() -> None:
    bad = Settings(neo4j_uri="bolt://127.0.0.1:1", connection_timeout=1, retry_time=0)
    with pytest.raises(ServerUnavailable, match=r"not reachable at bolt://127\.0\.0\.1:1"):
        asyncio.run(Memory.open(bad))


def test_the_drivers_sockets_turn_nagles_algorithm_off(neo4j_settings: Settings) -> None:
    """The async driver's Bolt sockets must have TCP_NODELAY: with Nagle on, every new
    connection waits ~40 ms for the server's delayed ACK (kg.db._TcpSocket). The driver's
    socket module is private, so this also notices a driver that makes its sockets some
    other way (then kg.db changes nothing, and this fails)."""
    import socket
    from urllib.parse import urlsplit

    from neo4j._async_compat.network import _bolt_socket

    made = _bolt_socket.socket(socket.AF_INET)  # type: ignore[attr-defined]
    uri = urlsplit(neo4j_settings.neo4j_uri)

    async def connect() -> int:
        made.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_connect(made, (uri.hostname, uri.port or 7687))
        transport, _ = await loop.create_connection(asyncio.Protocol, sock=made)
        try:
            return made.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        finally:
            transport.close()

    assert asyncio.run(connect()) != 0


@pytest.mark.parametrize("by", ["number", "name"])
def test_only_a_name_is_resolved_in_a_thread(neo4j_settings: Settings, by: str) -> None:
    """The driver resolves addresses with asyncio's `getaddrinfo`, in a thread of the
    loop's executor (~4 ms of a `kg` command to start it and join it). A numeric address
    is resolved on the spot (kg.db._resolve_numeric_hosts_inline); a name still goes to
    the executor. The driver's resolver is private, so this also fails when a driver
    version resolves some other way, where kg.db changes nothing."""
    import concurrent.futures
    import ipaddress
    import socket
    from urllib.parse import urlsplit

    from kg.db import _is_numeric_host

    uri = urlsplit(neo4j_settings.neo4j_uri)
    host, port = uri.hostname or "127.0.0.1", uri.port or 7687
    if by == "number" and not _is_numeric_host(host):
        host = str(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][4][0])
    if by == "name" and _is_numeric_host(host):
        if not ipaddress.ip_address(host).is_loopback:
            pytest.skip(f"the test server's address {host} has no name known here")
        host = "localhost"
    assert _is_numeric_host(host) == (by == "number")
    submitted: list[object] = []

    class Recording(concurrent.futures.ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            submitted.append(fn)
            return super().submit(fn, *args, **kwargs)

    netloc = f"[{host}]" if ":" in host else host
    settings = neo4j_settings.model_copy(
        update={"neo4j_uri": f"{uri.scheme}://{netloc}:{port}"}
    )

    async def open_and_read() -> list[Any]:
        asyncio.get_running_loop().set_default_executor(Recording(max_workers=1))
        memory = await Memory.open(settings)
        try:
            return await memory.db.query("ping")
        finally:
            await memory.close()

    assert asyncio.run(open_and_read())
    assert bool(submitted) == (by == "name")


def test_a_transaction_sends_its_begin_with_its_first_query(neo4j_settings: Settings) -> None:
    """`Database.read` / `write` have the driver send BEGIN with the first query (one round
    trip less per transaction, as the driver does for `execute_query`). The switch is
    private to the driver: this fails when a driver version no longer has it, where
    kg.db falls back to the driver's own way."""
    from kg.db import Database, _begin_with_first_query

    async def check() -> tuple[bool, bool]:
        db = Database.open(neo4j_settings)
        try:
            session = db.driver.session(database=db.name)
            async with session:
                switch = _begin_with_first_query(session)
                with switch:
                    inside = bool(getattr(session, "_pipelined_begin", False))
                rows = await db.write(lambda tx: tx.run("ping"))
            return inside and switch is getattr(session, "_pipelined_begin", None), bool(rows)
        finally:
            await db.close()

    assert asyncio.run(check()) == (True, True)


def test_an_orders_last_query_goes_with_its_commit(neo4j_settings: Settings) -> None:
    """The writer's last query (`order_apply`), whose rows it never reads, is queued and
    goes out with the COMMIT (`Tx.with_commit`): an order is two sends, BEGIN with
    `order_state`, then `order_apply` with the COMMIT. Its first run in a client goes
    alone, as every query's does (`FirstRuns`). The connection's interface is private to
    the driver: this fails when a driver version no longer has it, where the writer
    waits for every query's answer (a round trip more, still correct)."""
    from neo4j._async.io._bolt._base import AsyncBolt

    user = new_user_id("commit")
    sends: list[list[str]] = []
    # The driver's method is untyped: its type, for the spy's call.
    original: Callable[[Any], Coroutine[Any, Any, None]] = AsyncBolt.send_all

    async def spy(self: Any) -> None:
        sends.append([r.message for r in self.responses if r is not None])
        await original(self)

    async def orders() -> list[list[list[str]]]:
        memory = await Memory.open(neo4j_settings)
        seen = []
        try:
            AsyncBolt.send_all = spy  # type: ignore[method-assign]
            for i in range(3):
                sends.clear()
                await memory.write({
                    "auftrag_id": f"turn-{i}", "user_id": user, "character_id": "nova",
                    "tripel": [t("Mia", "wohnt_in", f"Stadt {i}")],
                })
                seen.append(list(sends))
            return seen
        finally:
            AsyncBolt.send_all = original  # type: ignore[method-assign]
            await memory.purge(user)
            await memory.close()

    first, *planned = asyncio.run(orders())
    assert first == [["begin", "run", "pull"], ["run", "pull"], ["commit"]]
    assert planned == [[["begin", "run", "pull"], ["run", "pull", "commit"]]] * 2


async def lock_node_after(
    settings: Settings, user: str, attempt: Callable[[Memory], Awaitable[None]]
) -> list[dict[str, Any]]:
    """Run `attempt` on a store, then read `user`'s lock node (a list of its id, or empty
    when nothing of the user was written); the user is purged afterwards."""
    memory = await Memory.open(settings)
    try:
        await attempt(memory)
        return await raw_cypher(memory, "MATCH (n:Nutzer {id: $u}) RETURN n.id AS id", u=user)
    finally:
        with contextlib.suppress(NothingStored):  # (nothing of the user written)
            await memory.purge(user)
        await memory.close()


@pytest.mark.parametrize("unusable", ["failed", "closed"])
def test_a_query_for_the_commit_of_an_unusable_transaction_is_refused_and_never_sent(
    neo4j_settings: Settings, unusable: str
) -> None:
    """A transaction whose query failed (the caller swallowed the failure), or that is
    closed already (here committed by hand, as no caller of kg should), has handed its
    connection back to the pool. A query queued there for the COMMIT (`Tx.with_commit`)
    went out with the connection's next use, on its own: half a transaction committed.
    It is refused as `run` refuses it, and nothing of it is ever written."""
    from neo4j.exceptions import Neo4jError

    from kg.db import Tx
    from kg.errors import KgError

    user = new_user_id(unusable)

    async def work(tx: Tx) -> None:
        if unusable == "failed":
            with contextlib.suppress(Neo4jError):  # the caller swallows the failure
                await tx.run("import_lock")  # no user_id: the server refuses it
        else:
            await tx.run("ping")
            await tx._tx._commit()  # type: ignore[no-untyped-call]
        await tx.with_commit("import_lock", user_id=user)

    async def attempt(memory: Memory) -> None:
        db = memory.db
        async with db.first_runs.alone("import_lock", 1.0):
            pass  # planned: it would be queued
        with pytest.raises(KgError, match=f"Transaction {unusable}"):
            await db.write(work)
        for _ in range(3):  # every pooled connection's next use
            await db.write(lambda tx: tx.run("ping"))
            await db.query("ping")

    assert asyncio.run(lock_node_after(neo4j_settings, user, attempt)) == []


def test_nothing_may_follow_the_query_that_goes_with_the_commit(
    neo4j_settings: Settings,
) -> None:
    """A query after `with_commit` would run before the one queued for the COMMIT, in
    the wrong order: it is refused, the transaction is rolled back, and nothing of it
    is written."""
    from kg.db import Tx

    user = new_user_id("after")

    async def work(tx: Tx) -> None:
        await tx.with_commit("import_lock", user_id=user)
        await tx.run("ping")

    async def attempt(memory: Memory) -> None:
        for _ in range(2):  # the first run goes alone, the second is queued
            with pytest.raises(RuntimeError, match="'ping' after 'import_lock', which "
                               "goes with the COMMIT: it must be the transaction's last"):
                await memory.db.write(work)

    assert asyncio.run(lock_node_after(neo4j_settings, user, attempt)) == []


def test_single_reads_go_on_a_pooled_connection_without_a_session(
    neo4j_settings: Settings,
) -> None:
    """`Database.query` sends a single read on a connection of the driver's pool, without
    a session (see `kg.db._DirectReads`). The pool's interface is private to the driver:
    this fails when a driver version no longer has it, where reads take a session each."""
    from kg.db import Database

    async def check() -> tuple[list[str], list[dict[str, object]]]:
        db = Database.open(neo4j_settings)
        sessions: list[str] = []
        original = db.driver.session

        def session(**kwargs: object) -> object:
            sessions.append(str(kwargs.get("default_access_mode")))
            return original(**kwargs)  # type: ignore[arg-type]

        db.driver.session = session  # type: ignore[assignment,method-assign]
        try:
            assert db.direct is not None
            rows = await db.query("ping")
            return sessions, rows
        finally:
            await db.close()

    sessions, rows = asyncio.run(check())
    assert sessions == [] and len(rows) == 1


def pooled_timeouts(db: Any) -> set[tuple[bool, object]]:
    """(read timeout is the server's hint, write timeout) of every pooled connection."""
    pool = db.driver._pool
    return {
        (c.socket.get_read_timeout() == c.connection_hints.get("connection.recv_timeout_seconds"),
         c.socket.get_write_timeout())
        for cs in pool.connections.values() for c in cs
    }


def test_the_library_waits_on_its_sockets_without_timers_and_puts_them_back(
    neo4j_settings: Settings,
) -> None:
    """With a socket timeout set (the server's hint, 120 s; the driver's write timeout,
    30 s), the driver waits on its socket through a task and a timer. A direct read takes
    off those longer than its own deadline (`query_timeout + connection_timeout`, 35 s by
    default: the read timeout) and keeps the shorter ones, which still notice a silent
    server sooner (the write timeout; the read timeout where `query_timeout` is raised);
    transactions and anything outside the library keep them all, and every connection
    goes back to the pool as it was. This fails when a driver version renames the
    socket's timeouts, where direct reads keep them (slower, still correct)."""
    from neo4j._async_compat.network import _bolt_socket

    from kg.db import Database, Tx

    async def check(settings: Settings) -> dict[str, set[tuple[Any, Any]]]:
        db = Database.open(settings)
        seen: dict[str, set[tuple[Any, Any]]] = {}
        where = ["outside"]
        original = _bolt_socket.AsyncBoltSocketBase._wait_for_io

        async def spy(self: Any, name: str, timeout: Any, *args: Any, **kwargs: Any) -> Any:
            seen.setdefault(where[0], set()).add((name, timeout))
            return await original(self, name, timeout, *args, **kwargs)

        async def work(tx: Tx) -> object:
            where[0] = "transaction"
            return await tx.run("ping")

        try:
            await db.query("ping")  # the connection exists, its timeouts as the driver set them
            _bolt_socket.AsyncBoltSocketBase._wait_for_io = spy  # type: ignore[method-assign]
            where[0] = "direct read"
            await db.query("ping")
            await db.write(work)
            where[0] = "driver's own session"
            async with db.driver.session(database=db.name) as session:
                await (await session.run("RETURN 1")).consume()
            seen["left in the pool"] = pooled_timeouts(db)
            return seen
        finally:
            _bolt_socket.AsyncBoltSocketBase._wait_for_io = original  # type: ignore[method-assign]
            await db.close()

    seen = asyncio.run(check(neo4j_settings))
    assert seen["direct read"] == {("read", None), ("write", 30.0)}
    for outside in ("transaction", "driver's own session"):
        assert {t for _, t in seen[outside]} == {120, 30.0}, seen
    assert seen["left in the pool"] == {(True, 30.0)}
    # a deadline longer than the server's hint: the read timeout stays too
    patient = asyncio.run(check(neo4j_settings.model_copy(update={"query_timeout": 300.0})))
    assert patient["direct read"] == {("read", 120), ("write", 30.0)}
    assert patient["left in the pool"] == {(True, 30.0)}


def test_a_page_of_rows_is_read_without_the_socket_timers_within_its_deadline(
    neo4j_settings: Settings,
) -> None:
    """`AutoCommit.page` (the order check's pages) reads its rows within a client-side
    deadline of its own, and without the socket's timeouts that are no shorter (the
    server's hint of 120 s, for a page's 120 s; a task and a timer per socket read
    otherwise). Shorter ones stay (the write timeout, 30 s; the hint, for a deadline of
    300 s); `run` keeps them all, every connection goes back to the pool as it was, and
    a page that misses its deadline is a typed error. This fails when a driver version
    renames the session's connection or the socket's timeouts, where pages keep the
    timers (slower, still correct)."""
    from neo4j import Record as DriverRecord

    user = new_user_id("page")

    async def check() -> tuple[dict[str, set[object]], set[tuple[bool, object]]]:
        memory = await Memory.open(neo4j_settings)
        db = memory.db
        seen: dict[str, set[object]] = {}
        where = ["run"]
        original = DriverRecord.data

        def spy(self: Any, *keys: Any) -> Any:
            pool = db.driver._pool
            seen.setdefault(where[0], set()).update(
                (c.socket.get_read_timeout(), c.socket.get_write_timeout())
                for cs in pool.connections.values() for c in cs if c.in_use)
            return original(self, *keys)

        try:
            for i in range(3):
                await memory.write({"auftrag_id": f"turn-{i}", "user_id": user,
                                    "character_id": "nova",
                                    "tripel": [t("Mia", "wohnt_in", f"Stadt {i}")]})
            DriverRecord.data = spy  # type: ignore[method-assign]
            params = {"user_id": user, "character_id": "nova", "after": "", "limit": 10}
            async with db.auto_commit("READ") as q:
                assert len(await q.run("order_result_page", **params)) == 3
                where[0] = "page"
                assert len(await q.page("order_result_page", 120.0, **params)) == 3
                where[0] = "page within 300 s"
                assert len(await q.page("order_result_page", 300.0, **params)) == 3
                with pytest.raises(ServerUnavailable, match="did not answer within"):
                    await q.page("order_result_page", 1e-9, **params)
            return seen, pooled_timeouts(db)
        finally:
            DriverRecord.data = original  # type: ignore[method-assign]
            await memory.purge(user)
            await memory.close()

    seen, left = asyncio.run(check())
    assert seen["run"] == {(120, 30.0)}
    assert seen["page"] == {(None, 30.0)}  # the write timeout is shorter: it stays
    assert seen["page within 300 s"] == {(120, 30.0)}  # so is the hint here
    assert left == {(True, 30.0)}


def test_a_page_whose_rows_stop_coming_misses_its_deadline(neo4j_settings: Settings) -> None:
    """The page's deadline covers its rows, not only the RUN's answer: while they are read
    the socket's read timeout is off, and a server that answers the RUN and then falls
    silent would otherwise hold `kg check` until the query ended (forever, for a hung
    server). Here the rows are slow to come (the server scans 30 M numbers for none), and
    the page is a typed error within its deadline; the pool stays usable."""
    import dataclasses

    from kg.queries import Registry

    slow = "UNWIND range(1, 30000000) AS x WITH x WHERE x < 0 RETURN x"

    async def check() -> object:
        memory = await Memory.open(neo4j_settings)
        db = memory.db
        try:
            ping = db.queries["ping"]
            db.queries = Registry([ping, dataclasses.replace(ping, name="slow_page", text=slow)])
            async with db.auto_commit("READ") as q:
                with pytest.raises(ServerUnavailable, match="did not answer within 0s"):
                    await q.page("slow_page", 0.3)
            async with db.auto_commit("READ") as q:
                assert len(await q.page("ping", 5.0)) == 1
            return pooled_timeouts(db)
        finally:
            await memory.close()

    assert asyncio.run(check()) == {(True, 30.0)}


def test_a_failed_or_cancelled_direct_read_leaves_the_pool_usable(
    neo4j_settings: Settings,
) -> None:
    """A read the server refuses leaves its connection reset (the driver sends RESET as
    it reads the FAILURE); a read cancelled by the caller's deadline closes its
    connection (what the server still sends is unknown). Either way the next reads
    answer, and no connection stays in use."""
    from kg.db import Database

    slow = "UNWIND range(1, 30000000) AS x WITH x WHERE x < 0 RETURN count(x) AS n"

    async def check() -> list[object]:
        db = Database.open(neo4j_settings)
        try:
            direct = db.direct
            assert direct is not None
            seen: list[object] = []
            with pytest.raises(Exception, match=r"Invalid input|SyntaxError") as refused:
                await direct.run("RETURN nonsense(", {})
            seen.append(type(refused.value).__name__)
            # reset and back in the pool alive, with its socket's timeouts as they were
            seen.append(pooled_timeouts(db))
            seen.append((await direct.run("RETURN 1 AS n", {}))[0]["n"])
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await direct.run(slow, {})
            seen.append((await direct.run("RETURN 2 AS n", {}))[0]["n"])
            pool = direct._pool
            seen.append(sum(c.in_use for cs in pool.connections.values() for c in cs))
            return seen
        finally:
            await db.close()

    assert asyncio.run(check()) == ["CypherSyntaxError", {(True, 30.0)}, 1, 2, 0]


def test_reads_fall_back_to_a_session_where_the_pool_is_not_as_expected(
    neo4j_settings: Settings,
) -> None:
    """Where the first direct read finds the driver's private interface changed (here: its
    pool's `acquire` takes other arguments), reads take a session each from then on,
    and the caller never sees the difference; once direct reads have gone through, such
    an error is a real one and is raised."""
    from kg.db import Database

    class Changed:
        async def acquire(self, *args: object) -> object:
            raise TypeError("acquire() takes 3 positional arguments but 7 were given")

        async def release(self, *connections: object) -> None:
            raise AssertionError("nothing was acquired")

    async def check() -> tuple[object, bool, str]:
        db = Database.open(neo4j_settings)
        try:
            assert db.direct is not None
            db.direct._pool = Changed()
            rows = await db.query("ping")
            fell_back = db.direct is None
            proven = Database.open(neo4j_settings)
            try:
                await proven.query("ping")
                assert proven.direct is not None and proven.direct.proven
                proven.direct._pool = Changed()
                with pytest.raises(TypeError) as raised:
                    await proven.query("ping")
            finally:
                await proven.close()
            return rows, fell_back, str(raised.value)
        finally:
            await db.close()

    rows, fell_back, message = asyncio.run(check())
    assert rows and fell_back and "positional arguments" in message


def test_a_read_after_close_is_refused(neo4j_settings: Settings) -> None:
    """Closing the driver empties its pool but would let a direct read open a connection
    that nobody closes again: after `close`, reads are refused as the driver refuses a
    session. And in words, typed: a stranger's attack (2026-12-07) got the base KgError
    "Driver closed" from a `Memory` after `close()`, where a closed `SyncMemory` says
    UsageError."""
    from kg.db import Database
    from kg.errors import UsageError

    async def check() -> list[str]:
        db = Database.open(neo4j_settings)
        await db.query("ping")
        await db.close()
        with pytest.raises(UsageError) as refused:
            await db.query("ping")
        memory = await Memory.open(neo4j_settings)
        await memory.close()
        said = [str(refused.value)]
        for call in (memory.mappe("u1", "nova", "x"), memory.write({
                "auftrag_id": "closed", "user_id": "u1", "character_id": "nova",
                "tripel": [t("Lena", "hobby", wert="Schach")]})):
            with pytest.raises(UsageError) as refused:
                await call
            said.append(str(refused.value))
        return said

    for said in asyncio.run(check()):
        assert said.startswith("this Memory is closed: open a new one"), said


def test_a_read_the_server_marks_safe_to_repeat_is_retried(neo4j_settings: Settings) -> None:
    """A failure whose diagnostic record says `_idempotent` (as the driver's own
    auto-commit retry reads it) is sent again; any other client error is not."""
    from neo4j.exceptions import Neo4jError

    from kg.db import Database
    from kg.errors import KgError

    def failure(idempotent: bool) -> Neo4jError:
        return Neo4jError._hydrate_gql(
            gql_status="50N42", message="refused for now", description="refused",
            neo4j_code="Neo.ClientError.Statement.ExecutionFailed",
            diagnostic_record={"OPERATION": "", "OPERATION_CODE": "0",
                               "CURRENT_SCHEMA": "/", "_idempotent": idempotent},
        )

    async def check(idempotent: bool) -> tuple[int, object]:
        db = Database.open(neo4j_settings)
        try:
            direct = db.direct
            assert direct is not None
            real = direct.run
            calls = 0

            async def run(text: str, params: dict[str, object]) -> object:
                nonlocal calls
                calls += 1
                if calls == 1:
                    raise failure(idempotent)
                return await real(text, params)

            direct.run = run  # type: ignore[method-assign,assignment]
            try:
                rows = await db.query("ping")
            except KgError as exc:
                return calls, type(exc).__name__
            return calls, len(rows)
        finally:
            await db.close()

    assert asyncio.run(check(True)) == (2, 1)
    assert asyncio.run(check(False)) == (1, "KgError")


def test_a_querys_first_run_goes_alone_and_the_others_wait_for_it() -> None:
    """`FirstRuns` (pure, no server): while a query's first run is in flight, runs of the
    same query wait until it is answered, at most `bound` seconds; other queries, and
    runs after it, do not wait; a lost connection (`forget`) makes every query new."""
    async def scenario() -> list[str]:
        runs = FirstRuns()
        log: list[str] = []
        release = asyncio.Event()

        async def run(name: str, label: str, bound: float = 5.0) -> None:
            async with runs.alone(name, bound):
                log.append(f"{label} starts")
                if label == "first":
                    await release.wait()
                log.append(f"{label} ends")

        first = asyncio.create_task(run("mappe", "first"))
        await asyncio.sleep(0)
        waiting = asyncio.create_task(run("mappe", "second"))
        other = asyncio.create_task(run("order", "other query"))
        impatient = asyncio.create_task(run("mappe", "bounded", bound=0.05))
        await asyncio.wait_for(other, 1)
        await asyncio.wait_for(impatient, 1)  # its bound passed: it went regardless
        await asyncio.sleep(0.05)
        log.append("first released")
        release.set()
        await asyncio.gather(first, waiting)
        await run("mappe", "later")
        runs.forget()
        release.clear()
        anew = asyncio.create_task(run("mappe", "first"))
        await asyncio.sleep(0)
        after_forget = asyncio.create_task(run("mappe", "after forget"))
        await asyncio.sleep(0.05)
        log.append("first released")
        release.set()
        await asyncio.gather(anew, after_forget)
        return log

    assert asyncio.run(scenario()) == [
        "first starts", "other query starts", "other query ends",
        "bounded starts", "bounded ends",
        "first released", "first ends", "second starts", "second ends",
        "later starts", "later ends",
        "first starts", "first released", "first ends",
        "after forget starts", "after forget ends",
    ]


def test_a_failed_first_run_lets_the_waiting_runs_go_and_the_next_is_first_again() -> None:
    """A first run that fails (perhaps before the server planned it) releases the runs
    that waited for it, and the query's next run is its first again: later runs wait
    for that one."""

    async def scenario() -> list[str]:
        runs = FirstRuns()
        log: list[str] = []

        async def run(label: str, fail: bool = False) -> None:
            async with runs.alone("mappe", 5.0):
                log.append(f"{label} starts")
                await asyncio.sleep(0.02)
                if fail:
                    log.append(f"{label} fails")
                    raise RuntimeError("the server went away")
                log.append(f"{label} ends")

        results = await asyncio.wait_for(
            asyncio.gather(run("failing", fail=True), run("waiting"), return_exceptions=True),
            1,
        )
        log.append(type(results[0]).__name__)
        await asyncio.wait_for(asyncio.gather(run("first again"), run("after it")), 1)
        return log

    assert asyncio.run(scenario()) == [
        "failing starts", "failing fails", "waiting starts", "waiting ends", "RuntimeError",
        "first again starts", "first again ends", "after it starts", "after it ends",
    ]


def test_concurrent_orders_and_reads_on_a_new_client_plan_each_query_once(
    store: SyncMemory, neo4j_settings: Settings,
) -> None:
    """A new client's first run of each query goes alone: a burst of orders (distinct
    users) and Mappe reads right after the client opens sends no run of a query while its
    first run is still unanswered, both in write transactions (`Tx.rows`) and in single
    reads, and every order succeeds. (`store`: the schema is applied.)"""
    class Watched(FirstRuns):
        def __init__(self) -> None:
            super().__init__()
            self.log: list[tuple[str, bool, float, float]] = []

        @asynccontextmanager
        async def alone(self, name: str, bound: float) -> AsyncIterator[None]:
            first = name not in self._runs
            async with super().alone(name, bound):
                start = time.monotonic()
                try:
                    yield
                finally:
                    self.log.append((name, first, start, time.monotonic()))

    users = [new_user_id("first") for _ in range(6)]

    async def burst() -> tuple[list[tuple[str, bool, float, float]], int]:
        memory = await Memory.open(neo4j_settings)
        watched = Watched()
        memory.db.first_runs = watched
        try:
            async def turn(user: str) -> int:
                pair = memory.pair(user, "nova")
                result = await pair.write({
                    "auftrag_id": "turn-1", "user_id": user, "character_id": "nova",
                    "tripel": [t("Mia", "wohnt_in", "Hamburg"), t("Mia", "hat_haustier", "Bello")],
                })
                entity = await pair.entity_id("Mia")
                facts = await pair.mappe(entity)
                return len(result.ergebnisse) + len(facts.fakten)

            counts = await asyncio.gather(*(turn(user) for user in users))
            return watched.log, sum(counts)
        finally:
            for user in users:
                await memory.purge(user)
            await memory.close()

    log, count = asyncio.run(burst())
    assert count == len(users) * 4
    firsts = {name: (start, end) for name, first, start, end in log if first}
    assert {name for name, *_ in log} == set(firsts)  # every query ran first once
    assert {"order_state", "order_apply", "mappe"} <= set(firsts)  # both paths watched
    early = [
        name for name, first, start, _ in log
        if not first and start < firsts[name][1]
    ]
    assert early == []
    assert len(log) > len(firsts)  # the same queries ran again, after their first


def cached_plans_cleared(store: SyncMemory) -> int:
    """Empty the server's plan cache; the number of plans it held."""
    return store.run(store.memory.db.clear_plans())


def test_orders_and_reads_of_any_size_share_one_plan_per_query(
    store: SyncMemory, pair: Pair
) -> None:
    """The server plans each query once, whatever the size of its lists and texts: the
    launcher (and compose.yaml) turn off the setting that keys a cached plan by each
    parameter's size bucket (0, 1, 10, 100, ...), under which an order of a new shape
    was planned anew (~1 s; docs/operations.md). Fails against a server that plans by
    size, with the setting to change, and where an order's lists are sent apart (the
    server types an empty list apart from a list of texts)."""
    short = Pair(store, new_user_id("s" * 100))  # a user id of another size bucket

    def turn(who: Pair, tag: str, size: int, read: int, *more: dict[str, Any],
             asof: str | None = None, **extra: Any) -> None:
        who.write(*(t(f"{tag}{i}", "wohnt_in", f"Ort{tag}{i}") for i in range(size)), *more,
                  **extra)
        ids = [e.id for e in store.run(store.memory.entities(who.user_id, who.character_id))]
        store.run(
            store.memory.mappen(who.user_id, who.character_id, ids[:read], gueltig_am=asof)
        )

    # The plan cache is the server's: another client's queries (or clears) meanwhile
    # change the count, so up to three tries, each on new names.
    try:
        for attempt in range(3):
            cached_plans_cleared(store)
            turn(pair, f"A{attempt}x", 1, 1)
            one_shape = cached_plans_cleared(store)
            turn(pair, f"B{attempt}x", 3, 2)
            turn(pair, f"C{attempt}x", 12, 7)
            turn(short, f"D{attempt}x", 2, 1)
            # Lists the first order left empty, filled (values, partners, a transitive
            # relation), and a time where it had none, then an as-of read: the writer's
            # query and the Mappe's send them in one map, as the server types an empty
            # list apart from a list of texts, and null apart from a value.
            turn(pair, f"E{attempt}x", 0, 1, t(f"E{attempt}x", "beruf", wert="Koch"),
                 t(f"E{attempt}x", "partner", f"F{attempt}x"),
                 t(f"Ort{attempt}x", "liegt_in", f"Land{attempt}x"),
                 zeitpunkt="2024-05-01T10:00:00Z", asof="2025-01-01")
            all_shapes = cached_plans_cleared(store)
            if all_shapes == one_shape >= 3:
                break
    finally:
        store.run(store.memory.purge(short.user_id))
    assert one_shape >= 3  # the writer's queries, the entity list and the Mappe
    assert all_shapes == one_shape, (
        f"{all_shapes} plans for the queries of one turn's {one_shape}: the server plans "
        f"other shapes of the parameters anew: their sizes (set {PLAN_BY_SIZE}=false in "
        "its configuration), or their types (a list left empty, or a null, where the "
        "first turn sent a value: send it inside a map)"
    )


class NamesSent:
    """Stands in for a `Database`'s query registry and notes the name of every query
    looked up in it: the queries sent."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.names: set[str] = set()

    def __getitem__(self, name: str) -> Any:
        self.names.add(name)
        return self.registry[name]


def test_histories_and_timeline_calls_of_every_shape_share_one_plan_per_query(
    store: SyncMemory, pair: Pair
) -> None:
    """A history of all relations, of one, and as known at a time; an entry of an entity
    and of none, of a day, a span and a month; moves of each shape, reads of a chain and
    of its active end, and a cancel: each query they send is planned once. Fails where
    an optional value is sent bare (the server types a null apart from a text, an empty
    list apart from a list of texts): the history's relation filter, the entry's entity,
    before they went into maps; and where one query runs both alone and after a write in
    its transaction (the server keys a plan by that too): the entry's entity check,
    before `timeline_create` made it, ran `entity_by_id` after the user's lock, which a
    history runs alone; and `Memory.timeline_active`, when it read
    `timeline_chain_ends`, which a move runs after the lock."""
    memory = store.memory
    sent = NamesSent(memory.db.queries)
    pair.write(t("Lena", "wohnt_in", "Kassel"), t("Lena", "beruf", wert="Koch"))
    lena = pair.id_of("Lena")
    u, c = pair.user_id, pair.character_id

    def every_shape() -> None:
        store.run(memory.history(u, c, lena))
        store.run(memory.history(u, c, lena, "wohnt_in"))
        store.run(memory.history(u, c, lena, bekannt_am="2026-01-01T00:00:00Z"))
        store.run(memory.history(u, c, lena, "beruf", gueltig_am="2025-01-01"))
        day = store.run(memory.timeline_add(u, c, NeuerEintrag(
            typ="termin", titel="A", beginn=date(2025, 3, 1))))
        span = store.run(memory.timeline_add(u, c, NeuerEintrag(
            titel="B", beginn=date(2025, 3, 1), ende=date(2025, 3, 5)), lena))
        month = store.run(memory.timeline_add(u, c, NeuerEintrag(
            typ="termin", titel="C", beginn=date(2025, 3, 1), genauigkeit="monat")))
        store.run(memory.timeline_move(u, c, day.id, date(2025, 4, 1)))
        span = store.run(memory.timeline_move(u, c, span.id, date(2025, 4, 1), date(2025, 4, 3)))
        month = store.run(memory.timeline_move(u, c, month.id, date(2025, 5, 1), None, "tag"))
        store.run(memory.timeline_window(u, c, date(2025, 1, 1), date(2025, 12, 31)))
        store.run(memory.timeline_chain(u, c, day.id))
        store.run(memory.timeline_active(u, c, day.id))
        store.run(memory.timeline_cancel(u, c, span.id))

    # The plan cache is the server's: another client's queries meanwhile add plans, so
    # up to three tries.
    for _ in range(3):
        cached_plans_cleared(store)
        sent.names.clear()
        memory.db.queries = sent  # type: ignore[assignment]
        try:
            every_shape()
        finally:
            memory.db.queries = sent.registry
        plans = cached_plans_cleared(store)
        if plans == len(sent.names):
            break
    assert len(sent.names) >= 10  # history, entity_by_id, user_lock, timeline_*, order_*
    assert plans == len(sent.names), (
        f"{plans} plans for the {len(sent.names)} queries sent ({sorted(sent.names)}): a "
        "query was planned anew for another shape of its parameters (a null, or an empty "
        "list, where another call sent a value: send the optional value inside a map)"
    )


def test_the_writer_finds_entities_by_their_indexes_whatever_the_store_holds(
    store: SyncMemory,
) -> None:
    """Planned without the lists' sizes, `order_state` still looks the order's entities up
    by name and by id through their indexes, never by walking all of the user's entities
    (which a small store's statistics made the planner choose). Also on an empty store,
    where the count of an entity's namesakes sought the user's entities by `user_id`
    alone until it named its index."""
    query = registry()["order_state"]
    values = {
        name: store.run(raw_cypher(store, f"RETURN {expression} AS v"))[0]["v"]
        for name, expression in query.examples
    }
    values["refs"].update(ids=["some-id"], trans_ids=["other-id"], trans_names=["bern"])

    async def plan() -> list[str]:
        db = store.memory.db
        _, summary, _ = await db.driver.execute_query(
            "EXPLAIN " + query.text, values, database_=db.name
        )

        def walk(step: dict[str, Any]) -> Iterator[str]:
            yield f"{step['operatorType']} {step.get('args', {}).get('Details', '')}"
            for child in step.get("children", []):
                yield from walk(child)

        assert summary.plan is not None
        return list(walk(summary.plan))

    # A hint, once in the text, is always used; on a larger store the planner seeks by
    # index without it too, so the text is checked as well as the plan.
    assert query.text.count("USING INDEX e:Entitaet(") == 4
    assert query.text.count("USING INDEX n:Entitaet(user_id, name_norm)") == 1  # namesakes
    steps = store.run(plan())
    walks = [s for s in steps if "Entitaet(user_id)" in s or s.startswith("NodeByLabelScan")]
    assert walks == []
    assert sum("UNIQUE e:Entitaet(id)" in s for s in steps) >= 2  # $refs.ids, $refs.trans_ids


def warm_traces(store: SyncMemory) -> int:
    """Nodes and relationships of a warm-up's user or character (there must be none)."""
    (row,) = store.run(raw_cypher(
        store, "MATCH (n) WHERE n.user_id STARTS WITH 'kg-warm-' OR n.id STARTS WITH "
        "'kg-warm-' WITH count(n) AS nodes OPTIONAL MATCH ()-[r]->() WHERE r.character_id "
        "= 'kg-warm' WITH nodes, count(r) AS edges RETURN nodes + edges AS n"
    ))
    return int(row["n"])


def test_warming_plans_a_turns_queries_and_writes_nothing(
    store: SyncMemory, pair: Pair
) -> None:
    """`Memory.warm` has the server plan the writer's and the readers' queries (the
    orders rehearsed and rolled back), so a first turn of the usual shape after a start
    finds every plan made; the store holds nothing more than before."""
    memory = store.memory
    # The plan cache is the server's: another client's queries meanwhile change the
    # counts, so up to three tries, each with a new user's first turn.
    for attempt in range(3):
        cached_plans_cleared(store)
        assert store.run(memory.warm()) > 0
        warmed = cached_plans_cleared(store)
        assert warm_traces(store) == 0
        cached_plans_cleared(store)
        store.run(memory.warm())
        user = pair.other(pair.character_id)
        user.user_id = f"{pair.user_id}-{attempt}"
        try:
            user.write(t("Lena", "wohnt_in", "Kassel"), t("Lena", "beruf", wert="Lehrerin"))
            user.write(t("Ben", "hobby", wert="Schach"))
            store.run(memory.entities(user.user_id, user.character_id))
            found = store.run(memory.resolve(user.user_id, user.character_id, "Lena"))
            store.run(memory.mappen(user.user_id, user.character_id, [found.kandidaten[0].id]))
            turned = cached_plans_cleared(store)
        finally:
            store.run(memory.purge(user.user_id))
        if turned == warmed >= 5:
            break
    # order_state and order_apply (one plan each for orders of any shape), the entity
    # list, the name's lookup, the Mappen
    assert warmed >= 5
    assert turned == warmed  # the turn planned nothing new


def test_kg_server_start_plans_the_queries_or_says_why_not(
    neo4j_settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After `kg server start`, the warm-up runs against the server just started; where it
    cannot (no schema, no server), a note says why, and the start still succeeds."""
    from cli.server import _warm

    password = neo4j_settings.neo4j_password.get_secret_value()
    port = int(neo4j_settings.neo4j_uri.rsplit(":", 1)[1])
    _warm(LocalServer(home=tmp_path, jars=tmp_path, bolt_port=port, password=password))
    assert "Planned a chat turn's queries" in capsys.readouterr().out
    _warm(LocalServer(home=tmp_path, jars=tmp_path, bolt_port=free_port(), password=password))
    captured = capsys.readouterr()
    assert "note: the queries were not planned ahead: Neo4j is not reachable" in captured.err
    assert "Traceback" not in captured.err + captured.out


def test_a_sync_memory_misused_says_what_to_do(neo4j_settings: Settings) -> None:
    """Found by a stranger's attack: a SyncMemory used after close raised "RuntimeError:
    Runner is closed", and one made or called inside a running event loop "Runner.run()
    cannot be called from a running event loop" with "coroutine ... was never awaited"
    warnings. Each is a UsageError that says what to do, and leaves no coroutine
    unawaited; a second close does nothing."""
    import warnings

    from kg.errors import UsageError

    store = SyncMemory(neo4j_settings)
    store.close()
    store.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine never awaited would warn
        with pytest.raises(UsageError, match="this SyncMemory is closed: open a new one"):
            store.run(store.memory.status())

        async def inside(open_one: SyncMemory | None) -> None:
            with pytest.raises(UsageError, match="runs in an event loop: there, use the "
                               "async Memory"):
                if open_one is None:
                    SyncMemory(neo4j_settings)
                else:
                    open_one.run(open_one.memory.status())

        asyncio.run(inside(None))
        with SyncMemory(neo4j_settings) as open_one:
            asyncio.run(inside(open_one))
            assert open_one.run(open_one.memory.status()).facts >= 0  # still serves
