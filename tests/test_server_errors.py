"""Review items 5-7: configuration and server failures map to typed errors with true
words; the public default password is for loopback only."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
from neo4j.exceptions import Neo4jError
from pydantic import SecretStr

from cli.launcher import LauncherSettings
from kg.api import Memory, SyncMemory
from kg.db import Database, Tx
from kg.errors import (
    AuthFailed,
    ConfigError,
    MemoryLimitExceeded,
    ServerUnavailable,
    WriteNotConfirmed,
)
from kg.settings import LOCAL_DEFAULT_PASSWORD, Settings, is_loopback, load_settings
from tests.conftest import Pair, t


def server_error(code: str, message: str = "boom") -> Neo4jError:
    return Neo4jError._hydrate_neo4j(code=code, message=message)


def translated(exc: Exception) -> Exception:
    db = Database.__new__(Database)  # translate() reads only the settings, name and closed
    db.settings = Settings(neo4j_uri="bolt://127.0.0.1:7687")
    db.name, db.closed = "neo4j", False
    return db.translate(exc)


# -- settings ---------------------------------------------------------------------------


@pytest.mark.parametrize("uri", ["http://127.0.0.1:7474", "not a uri", "bolt://[::1",
                                 "bolt://", "bolt://127.0.0.1:99999", "bolt://:7687"])
def test_a_bad_uri_is_a_config_error(uri: str) -> None:
    with pytest.raises(ConfigError, match="NEO4J_URI"):
        load_settings(neo4j_uri=uri)


def test_a_bad_number_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_QUERY_TIMEOUT", "abc")
    with pytest.raises(ConfigError, match="KG_QUERY_TIMEOUT: Input should be a valid number"):
        load_settings()


def test_settings_come_from_arguments_then_environment_then_env_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The precedence of kg.settings, for the ecosystem's names and the KG_ ones, in any
    case, and for a subclass's own fields (the launcher's): what is passed in, then the
    environment, then `.env` in the working directory, then the default."""
    for name in list(os.environ):
        if name.upper().startswith(("KG_", "NEO4J_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        "# a comment\nNEO4J_URI=bolt://127.0.0.1:7001\nKG_MAPPE_CAP=11\n"
        "export KG_QUERY_TIMEOUT='12.5'\nKG_NEO4J_BOLT_PORT=7002\nKG_UNKNOWN=ignored\n"
    )
    from_file = load_settings(LauncherSettings)
    assert (from_file.neo4j_uri, from_file.mappe_cap, from_file.query_timeout,
            from_file.neo4j_bolt_port) == ("bolt://127.0.0.1:7001", 11, 12.5, 7002)
    assert from_file.neo4j_username == "neo4j" and from_file.retry_time == 5.0  # defaults

    monkeypatch.setenv("neo4j_uri", "bolt://127.0.0.1:7003")  # names in any case
    monkeypatch.setenv("KG_MAPPE_CAP", "13")
    from_env = load_settings(LauncherSettings)
    assert (from_env.neo4j_uri, from_env.mappe_cap, from_env.query_timeout) == (
        "bolt://127.0.0.1:7003", 13, 12.5
    )
    passed = Settings(neo4j_uri="bolt://127.0.0.1:7004", mappe_cap=14)
    assert (passed.neo4j_uri, passed.mappe_cap, passed.query_timeout) == (
        "bolt://127.0.0.1:7004", 14, 12.5
    )

    (tmp_path / ".env").write_text("KG_MAPPE_CAP=0\n")
    monkeypatch.delenv("KG_MAPPE_CAP")
    with pytest.raises(ConfigError, match="KG_MAPPE_CAP: Input should be greater than"):
        load_settings()


@pytest.mark.parametrize(("uri", "loopback"), [
    ("bolt://127.0.0.1:7687", True), ("neo4j://localhost", True), ("bolt://[::1]:7687", True),
    ("bolt://127.5.0.1", True), ("bolt://db.example.org:7687", False),
    ("bolt://10.0.0.5:7687", False), ("neo4j+s://localhost.example.org", False),
])
def test_the_default_password_is_for_loopback_only(uri: str, loopback: bool) -> None:
    assert is_loopback(uri) is loopback
    if loopback:
        settings: Settings = load_settings(neo4j_uri=uri, neo4j_password="")
        assert settings.neo4j_password.get_secret_value() == LOCAL_DEFAULT_PASSWORD
    else:
        with pytest.raises(ConfigError, match="NEO4J_PASSWORD is not set"):
            load_settings(neo4j_uri=uri, neo4j_password="")
        assert load_settings(neo4j_uri=uri, neo4j_password="s3cret-enough")


# -- server failures --------------------------------------------------------------------


def test_the_login_rate_limit_is_auth_failed_with_the_wait(neo4j_settings: Settings) -> None:
    """Review case 6a: three wrong passwords in a row gave a generic exit 1, and for
    ~5 s even the right password failed, unexplained."""
    wrong = neo4j_settings.model_copy(update={"neo4j_password": SecretStr("wrong-password-x")})
    seen: list[str] = []
    try:
        for _ in range(5):
            with pytest.raises(AuthFailed) as caught:
                SyncMemory(wrong).close()
            seen.append(str(caught.value))
        assert any("too many wrong passwords" in s and "5 s" in s for s in seen), seen
    finally:
        time.sleep(6)  # the server's lock (dbms.security.auth_lock_time) runs out
    SyncMemory(neo4j_settings, check_schema=False).close()  # the right one works again


def test_a_tls_uri_against_a_plain_server_says_so(neo4j_settings: Settings) -> None:
    """Review case 6b: it said "not reachable… start it" while the server ran."""
    for scheme in ("bolt+s", "bolt+ssc", "neo4j+ssc"):
        uri = neo4j_settings.neo4j_uri.replace("bolt://", f"{scheme}://")
        tls = neo4j_settings.model_copy(update={"neo4j_uri": uri, "connection_timeout": 3.0,
                                                "retry_time": 0.0})
        with pytest.raises(ServerUnavailable, match="not with TLS") as caught:
            SyncMemory(tls).close()
        assert "start it" not in str(caught.value)


def test_database_unavailable_is_worded_truly() -> None:
    """Review case 6d: it was worded as a deadlock or lock timeout under load."""
    found = translated(server_error("Neo.TransientError.General.DatabaseUnavailable"))
    assert isinstance(found, ServerUnavailable)
    assert "unavailable" in str(found) and "deadlock" not in str(found)
    lock = translated(server_error("Neo.TransientError.Transaction.DeadlockDetected"))
    assert "deadlock" in str(lock)


def test_a_server_side_commit_failure_is_server_unavailable() -> None:
    found = translated(server_error("Neo.DatabaseError.Transaction.TransactionCommitFailed",
                                    "No space left on device"))
    assert isinstance(found, ServerUnavailable)
    assert "No space left on device" in str(found)


@pytest.mark.parametrize("code", [
    "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
    "Neo.TransientError.General.OutOfMemoryError",
    "Neo.ClientError.General.TransactionOutOfMemoryError",
])
def test_a_query_refused_for_memory_says_what_to_do(code: str) -> None:
    """Found by a black-box attack: a Mappe refused for memory was "a transient error
    … retry later, or raise KG_RETRY_TIME" (`kg` exit 3), and the same query fails again
    the same way. Over one transaction's limit a retry fails the same; when the memory of
    all transactions ran out, other work may have held it (the review), so once more,
    later, may help, and a second refusal says it is this call."""
    found = translated(server_error(code, "dbms.memory.transaction.total.max threshold reached"))
    assert isinstance(found, MemoryLimitExceeded) and found.exit_code == 2
    words = str(found)
    if code.endswith("TransactionOutOfMemoryError"):
        assert "more memory than the server allows one transaction" in words
        assert "a retry would fail the same" in words
        assert "db.memory.transaction.max" in words
    else:
        assert "ran out while it ran" in words and "other work may have held" in words
        assert "try once more later" in words and "db.memory.transaction.total.max" in words
    assert "KG_RETRY_TIME" not in words and "Ask for less" in words
    assert "The refused transaction wrote nothing" in words
    assert "threshold reached" in words  # the server's own words name its limit


def test_a_query_refused_for_memory_is_sent_once(neo4j_settings: Settings) -> None:
    """Neo4j files a query refused for memory as transient, and the driver's managed
    transactions and the library's auto-commit reads retried it for KG_RETRY_TIME (a Mappe
    with a large cap took seconds per attempt) before the same refusal. A real refusal:
    a query that collects gigabytes of text, on both paths, with a retry time that would
    allow several attempts; it is sent once on each."""
    import dataclasses

    from kg.queries import Registry

    greedy = ("WITH reduce(s = '', i IN range(1, 100) | s + '0123456789') AS s "
              "UNWIND range(1, 4000000) AS i RETURN size(collect(s + i)) AS n")

    async def attempts() -> list[int]:
        memory = await Memory.open(neo4j_settings.model_copy(update={"retry_time": 30.0}))
        db = memory.db
        try:
            ping = db.queries["ping"]
            db.queries = Registry([ping, dataclasses.replace(ping, name="greedy", text=greedy)])
            async def in_transaction(tx: Tx) -> object:
                return await tx.run("greedy")

            sent = []
            for path in (db.query("greedy"), db.read(in_transaction)):
                before = db.round_trips
                with pytest.raises(MemoryLimitExceeded, match="try once more later"):
                    await path
                sent.append(db.round_trips - before)
            return sent
        finally:
            await memory.close()

    began = time.monotonic()
    assert asyncio.run(attempts()) == [1, 1]
    assert time.monotonic() - began < 30


def test_a_failed_commit_is_write_not_confirmed(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review case 6c: a commit failing on a full disk was a generic KgError, so a
    caller following the docs did not replay it. The server's answer is injected at the
    order's write query (a full disk cannot be made on demand); the real transaction is
    rolled back, and the replay writes the order."""
    real = Tx.with_commit

    async def failing(self: Tx, name: str, /, **params: Any) -> Any:
        if name == "order_apply":
            raise server_error("Neo.DatabaseError.Transaction.TransactionCommitFailed",
                               "Could not apply the transaction: No space left on device")
        return await real(self, name, **params)

    order = pair.order(t("Lena", "beruf", wert="Ärztin"))
    monkeypatch.setattr(Tx, "with_commit", failing)
    with pytest.raises(WriteNotConfirmed, match="replay it with the same auftrag_id"):
        pair.store.run(pair.store.memory.write(order))
    monkeypatch.setattr(Tx, "with_commit", real)
    assert pair.cypher("MATCH (a:Auftrag {user_id: $u}) RETURN a", u=pair.user_id) == []
    replayed = pair.store.run(pair.store.memory.write(order))
    assert replayed.status == "ok" and not replayed.wiederholt


def test_memory_open_reads_the_checked_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://db.example.org:7687")
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    with pytest.raises(ConfigError, match="NEO4J_PASSWORD is not set"):
        SyncMemory().close()
    with pytest.raises(ConfigError, match="NEO4J_PASSWORD is not set"):
        asyncio.run(Memory.open())  # the async front door uses the same load_settings()


def test_a_timeout_names_the_setting_that_ran_out(pair: Pair) -> None:
    """Found by a black-box attack: with KG_MAINTENANCE_TIMEOUT=2 an import, a purge or
    `kg check` that ran out said "did not finish within 30s" — the interactive
    KG_QUERY_TIMEOUT's value — so a user raised the wrong setting. The error names the
    seconds the transaction had and the setting they came from; a write order's
    timeout is the interactive one. A transaction the server ends while it waits for a
    lock, once it ran its time (LockClientStopped), ran out too: that said "it is
    shutting down or the transaction was terminated"."""
    settings = pair.store.memory.db.settings.model_copy(
        update={"maintenance_timeout": 0.5, "query_timeout": 0.7})
    pair.write(t("Lena", "hobby", wert="Schach"))

    async def run() -> None:
        async with await Memory.open(settings) as slow:
            # The user's lock node held by another transaction: the purge waits for it
            # until the server ends it (its monitor looks every 2 s), whatever the host.
            async with slow.db.driver.session(database=slow.db.name) as session:
                holder = await session.begin_transaction()
                await holder.run("MATCH (n:Nutzer {id: $u}) SET n.held = true",
                                 u=pair.user_id)
                try:
                    with pytest.raises(ServerUnavailable) as ran_out:
                        await slow.purge(pair.user_id)
                finally:
                    await holder.rollback()
            assert "within 0.5 s (KG_MAINTENANCE_TIMEOUT)" in str(ran_out.value), ran_out
            assert "raise KG_MAINTENANCE_TIMEOUT" in str(ran_out.value)

    asyncio.run(run())
    timed_out = server_error("Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration")
    assert "within 30 s (KG_QUERY_TIMEOUT)" in str(translated(timed_out))
    # The setting is the caller's, not guessed from the value (both 900 s here); a batch
    # of a batched job keeps the batches before it.
    db = Database.__new__(Database)
    db.settings, db.name = Settings(neo4j_uri="bolt://127.0.0.1:7687", query_timeout=900), "n"
    db.closed = False
    interactive = str(db.translate(timed_out))
    assert "within 900 s (KG_QUERY_TIMEOUT)" in interactive, interactive
    batch = str(db.translate(timed_out, db.budget(maintenance=True, whole=False)))
    assert "within 900 s (KG_MAINTENANCE_TIMEOUT)" in batch, batch
    assert "earlier batches stay, where it writes; running it again is safe" in batch, batch
    assert "the server ended the transaction, and nothing of it is committed" in interactive
