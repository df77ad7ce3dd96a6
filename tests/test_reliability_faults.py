"""Reliability: faults (and the server side of security) on a private Neo4j of this module.

The shared server on 7687 is never touched: this module starts its own Neo4j with the
project's launcher (home under tmp, its own ports and a distinctive password), and in
the middle of a write load stops it (SIGTERM), kills it (SIGKILL) and freezes it
(SIGSTOP, a hung server or a dropped network). Shown each time:

* every order the library could not confirm raised WriteNotConfirmed, nothing else;
* reads during the outage fail with ServerUnavailable within a bound the settings
  give (measured), never hang;
* after the restart nothing is half-applied: each order is in the graph completely
  (its audit node, every fact its result names, the entities it created) or not at all;
* replaying every unconfirmed order with the same auftrag_id yields exactly-once
  effects (`wiederholt` exactly for the orders that had committed unseen);
* `kg check` is clean, on this private server with every item (the decay sweep may run
  here, it is nobody else's data).

Then, on the same private server: auth is on and refuses wrong and missing
credentials, the password appears in no log, and the server listens on loopback only.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError
from typer.testing import CliRunner

from cli.launcher import LauncherError, LocalServer, _port_taken
from cli.launcher import free_port as launcher_free_port
from cli.main import app
from kg import schema
from kg.api import Memory, SyncMemory
from kg.errors import AuthFailed, KgError, ServerUnavailable, WriteNotConfirmed
from kg.models import AuftragErgebnis
from kg.settings import Settings
from tests.conftest import new_user_id
from tests.reliability_support import (
    Stopwatch,
    Workload,
    cypher,
    ledger_violations,
    read_ledger,
    size,
    violations,
)

#: Distinctive, so a scan of logs and outputs finds it if it leaked anywhere.
PASSWORD = f"kg-rel-secret-{uuid.uuid4().hex}"
WRONG_PASSWORD = f"kg-rel-wrong-{uuid.uuid4().hex}"
WRITERS = 6
BEFORE_FAULT = size(15, 300)  # orders confirmed in a round before the fault strikes
ROUNDS = size(1, 3)  # rounds of each fault
CHARACTERS = ("nova", "luna")


class PrivateServer(LocalServer):
    """The project's launcher, with a C1-only JIT: it roughly halves the start time of
    this throwaway server on a small machine; it changes speed, not behaviour."""

    def configure(self) -> None:
        super().configure()
        conf = self.home / "conf" / "neo4j.conf"
        # A shutdown waits 10 s (default) for transactions the closed Bolt connector
        # left open; 2 s proves the same and keeps the test short.
        conf.write_text(
            conf.read_text()
            + "server.jvm.additional=-XX:TieredStopAtLevel=1\n"
            + "db.shutdown_transaction_end_timeout=2s\n"
        )


def free_port(preferred: int) -> int:
    return preferred if not _port_taken(preferred) else launcher_free_port()


@dataclass
class Private:
    server: PrivateServer
    settings: Settings  # what the load uses: short retries, bounded transactions
    started: list[float] = field(default_factory=list)  # seconds per (re)start

    def start(self) -> None:
        began = time.monotonic()
        self.server.start()
        self.started.append(time.monotonic() - began)


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Private]:
    shared = LocalServer.from_env()
    try:
        shared.java()
    except LauncherError as exc:
        pytest.skip(f"no Java 17 for a private Neo4j: {exc}")
    if not (shared.jars / ".complete").exists():
        pytest.skip("the Neo4j jars are not fetched yet (run `kg server start` once)")
    server = PrivateServer(
        home=tmp_path_factory.mktemp("neo4j-private") / "home",
        jars=shared.jars,
        bolt_port=free_port(7692),
        http_port=free_port(7479),
        heap="1g",
        pagecache="256m",
        password=PASSWORD,
    )
    settings = Settings(
        neo4j_uri=server.uri,
        neo4j_password=PASSWORD,
        query_timeout=15,
        retry_time=2,
        connection_timeout=2,
    )
    here = Private(server, settings)
    here.start()
    try:
        with SyncMemory(settings, check_schema=False) as boot:
            boot.run(schema.apply(boot.memory.db))
        yield here
    finally:
        server.stop(kill=True)  # a throwaway: its clean shutdown was shown by a round


# -- one fault round -------------------------------------------------------------------


@dataclass
class Round:
    kind: str
    users: list[str]
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    confirmed: dict[str, AuftragErgebnis] = field(default_factory=dict)
    unconfirmed: dict[str, str] = field(default_factory=dict)  # auftrag_id → message
    other_errors: list[str] = field(default_factory=list)
    failed_write_seconds: list[float] = field(default_factory=list)
    read_seconds: dict[str, float] = field(default_factory=dict)
    read_errors: dict[str, str] = field(default_factory=dict)
    committed_unseen: int = 0
    replayed: int = 0
    figures: dict[str, object] = field(default_factory=dict)


async def during_outage(
    memory: Memory, user: str, label: str, found: Round, work: Workload | None
) -> None:
    """Every kind of read (and a write) during the outage: each must fail typed, fast."""

    async def timed(name: str, coro: Any) -> None:
        began = time.monotonic()
        try:
            await coro
            found.read_errors[f"{label}:{name}"] = "answered during the outage?!"
        except (ServerUnavailable, WriteNotConfirmed) as exc:
            found.read_errors[f"{label}:{name}"] = str(exc)
        except Exception as exc:
            found.read_errors[f"{label}:{name}"] = f"UNTYPED {type(exc).__name__}: {exc}"
        found.read_seconds[f"{label}:{name}"] = round(time.monotonic() - began, 2)

    reads = [
        timed("mappe", memory.mappe(user, "nova", "any-id")),
        timed("entities", memory.entities(user, "nova")),
        timed("timeline", memory.timeline_window(user, "nova", date(2026, 1, 1),
                                                 date(2026, 12, 31))),
        timed("audit", memory.audit(user)),
        timed("history", memory.history(user, "nova", "any-id")),
    ]
    if work is not None:
        order, _ = work.order(f"outage-{label}-{uuid.uuid4().hex[:6]}")
        found.sent[order["auftrag_id"]] = order
        reads.append(timed("write", memory.write(order)))  # WriteNotConfirmed is one
    await asyncio.gather(*reads)
    if work is not None:
        message = found.read_errors[f"{label}:write"]
        found.unconfirmed[order["auftrag_id"]] = message
        assert "was not confirmed" in message, message


async def settled(memory: Memory, timeout: float = 30.0) -> None:
    """Wait until the server runs no transaction but the one asking."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = await cypher(memory, "SHOW TRANSACTIONS YIELD transactionId RETURN count(*) AS n")
        if rows[0]["n"] <= 1:
            return
        await asyncio.sleep(0.2)
    raise AssertionError("transactions of the load still run 30 s after the thaw")


async def run_round(private: Private, kind: str, settings: Settings) -> Round:
    tag = uuid.uuid4().hex[:8]
    found = Round(kind, [new_user_id(f"rel-fault-{kind}") for _ in range(2)])
    memory = await Memory.open(settings)
    # A second client with the library's default timeouts, to measure those too (once:
    # a frozen server is bounded by the deadline instead, measured with `tuned`).
    defaults = None
    if kind == "term":
        defaults = await Memory.open(Settings(neo4j_uri=settings.neo4j_uri,
                                              neo4j_password=PASSWORD))
    rng = random.Random(f"{kind}-{tag}")
    works = {u: Workload(u, CHARACTERS, {}, rng) for u in found.users}
    halt = asyncio.Event()

    async def writer(i: int) -> None:
        n = 0
        while not halt.is_set():
            n += 1
            user = found.users[(i + n) % 2]
            order, _ = works[user].order(f"{kind}-{i}-{n}-{uuid.uuid4().hex[:6]}")
            found.sent[order["auftrag_id"]] = order
            began = time.monotonic()
            try:
                found.confirmed[order["auftrag_id"]] = await memory.write(order)
            except WriteNotConfirmed as exc:
                found.unconfirmed[order["auftrag_id"]] = str(exc)
                found.failed_write_seconds.append(time.monotonic() - began)
                await asyncio.sleep(0.05)  # a backend would back off too
            except Exception as exc:
                found.other_errors.append(f"{type(exc).__name__}: {exc}")

    phases: dict[str, float] = {}
    mark = time.monotonic()

    def phase(name: str) -> None:
        nonlocal mark
        now = time.monotonic()
        phases[name] = round(now - mark, 1)
        mark = now

    tasks = [asyncio.create_task(writer(i)) for i in range(WRITERS)]
    while len(found.confirmed) < BEFORE_FAULT and not found.other_errors:
        await asyncio.sleep(0.02)
    phase("load")
    pid = private.server.pid()
    assert pid is not None
    began = time.monotonic()
    stopping = None
    if kind == "freeze":
        os.killpg(pid, signal.SIGSTOP)
    else:
        stopping = asyncio.create_task(
            asyncio.to_thread(private.server.stop, 60.0, kind == "kill")
        )
    # The orders in flight meet the fault; a moment later the load stops starting new ones
    # (a backend backs off), then every kind of read and one more write meet the outage.
    await asyncio.sleep(0.2)
    halt.set()
    if stopping is not None:
        await stopping
    stop_seconds = time.monotonic() - began
    phase("fault")
    await asyncio.gather(
        *tasks,
        during_outage(memory, found.users[0], "tuned", found, works[found.users[0]]),
        *([during_outage(defaults, found.users[0], "defaults", found, None)]
          if defaults is not None else []),
    )
    phase("outage")
    if kind == "freeze":
        os.killpg(pid, signal.SIGCONT)
        # The thawed server still works off what it had buffered (a COMMIT may be among
        # it): judge the graph once no transaction of the load runs any more.
        await settled(memory)
    else:
        await asyncio.to_thread(private.start)

    phase("restart")
    # Nothing half-applied: before any replay, each order is in the graph completely or
    # not at all, and the ones the callers saw confirmed are there with their result.
    before = {u: await read_ledger(memory, u) for u in found.users}
    for user, ledger in before.items():
        mine = {k: v for k, v in found.confirmed.items() if found.sent[k]["user_id"] == user}
        problems = ledger_violations(ledger, mine)
        assert problems == [], problems[:5]
        for auftrag_id in (k for k in found.unconfirmed if found.sent[k]["user_id"] == user):
            found.committed_unseen += auftrag_id in ledger.stored

    phase("verify")
    # Replaying every unconfirmed order: written now, or `wiederholt` if it had committed.
    acknowledged = dict(found.confirmed)
    for auftrag_id in found.unconfirmed:
        order = found.sent[auftrag_id]
        result = await memory.write(order)
        stored = before[order["user_id"]].stored.get(auftrag_id)
        assert result.wiederholt == (stored is not None), auftrag_id
        if stored is not None:
            assert result.ergebnisse == stored.ergebnisse
        acknowledged[auftrag_id] = result
        found.replayed += 1
    phase("replay")
    for user in found.users:
        ledger = await read_ledger(memory, user)
        mine = {k: v for k, v in acknowledged.items() if found.sent[k]["user_id"] == user}
        assert set(ledger.stored) == set(mine), "every order sent is stored exactly once"
        problems = ledger_violations(ledger, mine)
        assert problems == [], problems[:5]  # kg check: at the end, once, every item
    phase("verify_after")
    assert not any(PASSWORD in m for m in [*found.unconfirmed.values(),
                                           *found.read_errors.values(), *found.other_errors])
    found.figures.update(
        orders=len(found.sent),
        confirmed=len(found.confirmed),
        unconfirmed=len(found.unconfirmed),
        committed_unseen=found.committed_unseen,
        replayed=found.replayed,
        stop_seconds=round(stop_seconds, 1),
        max_failed_write_seconds=round(max(found.failed_write_seconds, default=0), 2),
        read_seconds=found.read_seconds,
        phases=phases,
    )
    await memory.close()
    if defaults is not None:
        await defaults.close()
    return found


def assert_round(found: Round, bound: dict[str, float]) -> None:
    assert found.other_errors == [], found.other_errors[:5]
    assert found.unconfirmed, "the fault struck no order: nothing was proven"
    for name, message in found.read_errors.items():
        assert not message.startswith(("UNTYPED", "answered")), (name, message)
    for name, seconds in found.read_seconds.items():
        assert seconds < bound[name.split(":")[0]], (name, seconds)


def bound_of(settings: Settings) -> float:
    """How long a read may take to fail while the server refuses connections: the
    managed-transaction retries plus one connection attempt, and a little slack."""
    return settings.retry_time + settings.connection_timeout + 1.5


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["term", "kill"])
def test_stop_or_kill_in_the_middle_of_a_write_load(private: Private, kind: str) -> None:
    for n in range(ROUNDS):
        watch = Stopwatch(f"fault {'SIGTERM' if kind == 'term' else 'SIGKILL'} round {n + 1}")
        found = asyncio.run(run_round(private, kind, private.settings))
        bounds = {"tuned": bound_of(private.settings), "defaults": bound_of(Settings())}
        assert_round(found, bounds)
        watch.figures.update(found.figures, restarts=[round(s, 1) for s in private.started[1:]])
        print(watch.report())


@pytest.mark.slow
def test_a_frozen_server_fails_reads_and_writes_within_the_deadline(private: Private) -> None:
    """SIGSTOP: the port still accepts, nothing answers. Without a client deadline the
    driver waits for the server's receive hint (120 s); with it, reads and writes fail
    with ServerUnavailable / WriteNotConfirmed after query_timeout + retries."""
    tight = Settings(neo4j_uri=private.server.uri, neo4j_password=PASSWORD,
                     query_timeout=4, retry_time=1, connection_timeout=1)
    deadline = tight.query_timeout + tight.retry_time + tight.connection_timeout
    for n in range(ROUNDS):
        watch = Stopwatch(f"fault SIGSTOP round {n + 1}")
        found = asyncio.run(run_round(private, "freeze", tight))
        assert_round(found, {"tuned": deadline + 1.5})
        assert max(found.failed_write_seconds) < deadline + 1.5
        watch.figures.update(found.figures)
        print(watch.report())


@pytest.mark.slow
def test_the_private_store_is_fully_clean_after_every_fault(private: Private) -> None:
    """With the decay sweep run (this server is ours alone), every item of kg check."""
    with SyncMemory(private.settings) as store:
        store.run(store.memory.decay_run())
        report = store.run(store.memory.check())
        assert report.ok, [f"{c.name}: {c.samples}" for c in report.violations]
        rows = store.run(cypher(store.memory, "MATCH (n:Nutzer) RETURN n.id AS id"))
        users = [r["id"] for r in rows]
        for user in users:
            extra = store.run(violations(store.memory, user, check=False))
            assert extra == [], (user, extra)
    print(f"[fault check] users={len(users)}, checks={len(report.checks)}, violations=0, "
          f"starts={[round(s, 1) for s in private.started]}")


# -- security on the private server ---------------------------------------------------


def test_auth_is_on_and_refuses_missing_and_wrong_credentials(
    private: Private, caplog: pytest.LogCaptureFixture
) -> None:
    conf = (private.server.home / "conf" / "neo4j.conf").read_text()
    assert "dbms.security.auth_enabled=true" in conf.splitlines()
    caplog.set_level(logging.DEBUG, logger="neo4j")
    # No credentials at all: refused.
    with pytest.raises(AuthError), GraphDatabase.driver(private.server.uri, auth=None) as d:
        d.verify_connectivity()
    # A wrong password: refused, and the library says so without echoing it.
    wrong = Settings(neo4j_uri=private.server.uri, neo4j_password=WRONG_PASSWORD)
    with pytest.raises(AuthFailed) as refused:
        SyncMemory(wrong)
    assert "wrong password" in str(refused.value)
    assert WRONG_PASSWORD not in str(refused.value)
    # The right one works, and the server itself reports auth enabled.
    time.sleep(1)
    with SyncMemory(private.settings) as store:
        rows = store.run(store.memory.db.driver.execute_query(
            "SHOW SETTINGS YIELD name, value WHERE name = 'dbms.security.auth_enabled' "
            "RETURN value", database_=store.memory.db.name,
        )).records
        assert rows[0]["value"] == "true"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HELLO" in logged or "LOGON" in logged, "the driver's debug log was captured"
    assert PASSWORD not in logged and WRONG_PASSWORD not in logged


def test_cli_status_and_errors_never_show_the_password(private: Private) -> None:
    runner = CliRunner()
    env = {
        "NEO4J_URI": private.server.uri,
        "NEO4J_PASSWORD": PASSWORD,
        "KG_NEO4J_HOME": str(private.server.home),
        "KG_NEO4J_BOLT_PORT": str(private.server.bolt_port),
        "KG_NEO4J_HTTP_PORT": str(private.server.http_port),
    }
    outputs = []
    for args, extra, code in [
        (["status"], {}, 0),
        (["status", "--json"], {}, 0),
        (["server", "status"], {}, 0),
        (["server", "logs", "--lines", "400"], {}, 0),
        (["status"], {"NEO4J_PASSWORD": WRONG_PASSWORD}, 3),
        (["status"], {"NEO4J_URI": "bolt://127.0.0.1:1"}, 3),
        (["entities", "-u", "nobody", "-c", "nova"], {"NEO4J_URI": "bolt://127.0.0.1:1"}, 3),
    ]:
        result = runner.invoke(app, args, env=env | extra)
        assert result.exit_code == code, (args, result.output)
        assert "Traceback" not in result.output
        outputs.append(result.output)
    text = "\n".join(outputs)
    assert private.server.uri in text
    assert PASSWORD not in text and WRONG_PASSWORD not in text


def test_no_password_in_any_file_the_server_writes(private: Private) -> None:
    """Logs, conf, run files and the auth store: the password is nowhere in clear."""
    home = private.server.home
    scanned = 0
    for path in [*home.glob("logs/**/*"), *home.glob("conf/**/*"), *home.glob("run/**/*"),
                 *home.glob("data/dbms/**/*")]:
        if path.is_file():
            data = path.read_bytes()
            scanned += 1
            assert PASSWORD.encode() not in data, path
            assert WRONG_PASSWORD.encode() not in data, path
    assert scanned >= 3 and (home / "logs" / "console.log").exists()
    assert "Started" in private.server.log_tail(2000)


def listening(pgid: int) -> list[tuple[str, int]]:
    """Local (address, port) of every TCP socket in LISTEN of a process group (/proc)."""
    inodes: set[str] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[2]) != pgid:
                continue
            for fd in (proc / "fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except (OSError, IndexError, ValueError):
            continue
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] != "0A" or cols[9] not in inodes:  # 0A: LISTEN
                continue
            hexaddr, hexport = cols[1].split(":")
            raw = bytes.fromhex(hexaddr)
            # /proc prints each 32-bit word in host (little-endian) order.
            words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            address = socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6,
                                       words)
            found.append((address, int(hexport, 16)))
    return found


def test_the_launched_server_listens_on_loopback_only(private: Private) -> None:
    conf = (private.server.home / "conf" / "neo4j.conf").read_text().splitlines()
    assert "server.default_listen_address=127.0.0.1" in conf
    pid = private.server.pid()
    assert pid is not None
    sockets = listening(pid)
    ports = {port for _, port in sockets}
    assert {private.server.bolt_port, private.server.http_port} <= ports, sockets
    loopback = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}
    assert all(address in loopback for address, _ in sockets), sockets
    print(f"[loopback] listening sockets of the private server: {sorted(sockets)}")


def test_errors_of_an_unreachable_server_are_typed_and_fast() -> None:
    """Nothing listens: opening fails with ServerUnavailable within the bound."""
    settings = Settings(neo4j_uri=f"bolt://127.0.0.1:{free_port(7699)}",
                        neo4j_password=PASSWORD, connection_timeout=2, retry_time=2)
    began = time.monotonic()
    with pytest.raises(ServerUnavailable) as failed:
        SyncMemory(settings)
    assert time.monotonic() - began < bound_of(settings)
    assert PASSWORD not in str(failed.value) and isinstance(failed.value, KgError)
