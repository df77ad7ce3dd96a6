"""Review items 1 and 7: the launcher signals only its own server, keeps its
password off every command line, and keeps its home private on a shared host."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli import launcher
from cli.launcher import LauncherError, LocalServer, free_port, initial_password_line, port_bindable
from cli.main import app
from kg.api import SyncMemory
from kg.settings import Settings
from tests.conftest import held_port

runner = CliRunner()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def home() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="kg-launcher-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def foreign() -> Iterator[subprocess.Popen[bytes]]:
    """`setsid sleep 1000`: a process of someone else's, as far as the launcher knows."""
    proc = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def stop(home: Path, *extra: str) -> Any:
    return runner.invoke(app, ["server", "stop", *extra], env={"KG_NEO4J_HOME": str(home)})


@pytest.mark.parametrize("content", ["{pid}\n", "{pid} 12345\n"])
def test_stop_never_signals_a_foreign_pid(
    home: Path, foreign: subprocess.Popen[bytes], content: str
) -> None:
    """Review case 1: it printed `stopped`, and the sleep was killed."""
    pid_file = home / "run" / "kg-launcher.pid"
    pid_file.parent.mkdir(parents=True)
    pid_file.write_text(content.format(pid=foreign.pid))
    for extra in ((), ("--kill",)):
        pid_file.write_text(content.format(pid=foreign.pid))
        got = stop(home, *extra)
        assert got.exit_code == 0, got.output
        assert "not running" in got.output and "stopped" not in got.output.replace(
            "not running", "")
        assert "stale pid file" in got.output
        assert not pid_file.exists()
        time.sleep(0.2)
        assert alive(foreign.pid)


def test_a_non_leader_pid_gives_no_traceback(home: Path) -> None:
    """Review case 1: a pid that leads no process group gave a traceback."""
    child = subprocess.Popen(["sleep", "1000"])  # in pytest's own process group
    try:
        pid_file = home / "run" / "kg-launcher.pid"
        pid_file.parent.mkdir(parents=True)
        pid_file.write_text(f"{child.pid}\n")
        got = stop(home)
        assert got.exit_code == 0 and "Traceback" not in got.output, got.output
        assert alive(child.pid)
        status = runner.invoke(app, ["server", "status"], env={
            "KG_NEO4J_HOME": str(home), "KG_NEO4J_BOLT_PORT": str(free_port())})
        assert status.exit_code == 3 and "Traceback" not in status.output
    finally:
        child.kill()
        child.wait()


def test_stop_never_signals_another_homes_server_named_in_neo4j_pid(home: Path) -> None:
    """The review of the stop's change: `stop` now also reads Neo4j's own pid file
    (run/neo4j.pid), which a crash leaves behind. A pid there that is now another
    home's Neo4j — one whose path only begins with this home's (/tmp/kg-x and
    /tmp/kg-x-other) — or a process outside the recorded bootloader's group is never
    this home's server."""
    import sys

    other = f"{home}-other"
    fake = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)",
                             "org.neo4j.server.CommunityEntryPoint", f"--home-dir={other}"],
                            start_new_session=True)
    try:
        time.sleep(0.3)
        jars = home / "jars"
        mine, theirs = LocalServer(home=home, jars=jars), LocalServer(home=Path(other), jars=jars)
        assert theirs._runs_this_home(fake.pid) and not mine._runs_this_home(fake.pid)
        (home / "run").mkdir(parents=True)
        (home / "run" / "neo4j.pid").write_text(f"{fake.pid}\n")
        got = stop(home)
        assert got.exit_code == 0 and "not running" in got.output, got.output
        assert alive(fake.pid) and mine.pid() is None
        # Its own home's, but outside the group of the process the launcher recorded.
        (Path(other) / "run").mkdir(parents=True)
        (Path(other) / "run" / "neo4j.pid").write_text(f"{fake.pid}\n")
        assert theirs._server_jvm() == fake.pid  # no record: the home decides
        (Path(other) / "run" / "kg-launcher.pid").write_text(f"{os.getpid()}\n")
        assert theirs._server_jvm() is None
    finally:
        fake.kill()
        fake.wait()
        shutil.rmtree(other, ignore_errors=True)


def test_a_garbage_pid_file_is_cleaned_up(home: Path) -> None:
    pid_file = home / "run" / "kg-launcher.pid"
    pid_file.parent.mkdir(parents=True)
    for garbage in ("", "abc", "-1", "1", "999999999", "0 0"):
        pid_file.write_text(garbage)
        got = stop(home)
        assert got.exit_code == 0 and "not running" in got.output, got.output
        assert not pid_file.exists()


def test_the_initial_password_line_is_what_neo4j_reads() -> None:
    line = initial_password_line("neo4j", "pässwort-1234")
    user, cred, flags = line.strip().split(":")
    algorithm, digest, salt, iterations = cred.split(",")
    assert (user, algorithm, iterations, flags) == ("neo4j", "SHA-256", "1024", "")
    assert len(bytes.fromhex(salt)) == 32 and len(bytes.fromhex(digest)) == 32
    assert initial_password_line("neo4j", "pässwort-1234") != line  # a fresh salt each time


def test_the_launcher_reads_the_settings(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for key, value in {"KG_NEO4J_HOME": str(home), "KG_NEO4J_BOLT_PORT": "7999",
                       "KG_NEO4J_HTTP_PORT": "7998", "KG_NEO4J_HEAP": "1g",
                       "KG_NEO4J_PAGECACHE": "256m", "NEO4J_PASSWORD": "a-long-secret"}.items():
        monkeypatch.setenv(key, value)
    server = LocalServer.from_env()
    assert (server.home, server.bolt_port, server.http_port, server.heap, server.pagecache,
            server.password) == (home, 7999, 7998, "1g", "256m", "a-long-secret")
    monkeypatch.setenv("KG_NEO4J_BOLT_PORT", "seventy")
    got = runner.invoke(app, ["server", "status"])
    assert got.exit_code == 2 and "KG_NEO4J_BOLT_PORT" in got.output, got.output


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow
def test_a_private_server_secret_private_and_restartable_after_a_crash(
    neo4j_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real server: a password of its own that never was on a command line; home,
    store, config and logs private; `start` right after a SIGKILL waits instead of
    failing (review case 1: exit 5 within ~0.3 s of a SIGKILL)."""
    shared = LocalServer.from_env()
    cache = shared.jars.parent.parent
    folder = Path(tempfile.mkdtemp(prefix="test-neo4j-", dir=cache))
    home = folder / "home"  # created by the launcher itself, under a folder of ours
    password = f"pw-{uuid.uuid4().hex}"
    server = LocalServer(home=home, jars=shared.jars, bolt_port=free_port(),
                         http_port=free_port(), heap="512m", pagecache="128m",
                         password=password)
    argvs: list[list[str]] = []
    real_run, real_popen = subprocess.run, subprocess.Popen

    def run(args: Any, *a: Any, **kw: Any) -> Any:
        argvs.append([str(x) for x in args])
        return real_run(args, *a, **kw)

    class Popen(real_popen):  # type: ignore[misc, valid-type]
        def __init__(self, args: Any, *a: Any, **kw: Any) -> None:
            argvs.append([str(x) for x in args])
            super().__init__(args, *a, **kw)

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(subprocess, "Popen", Popen)
    try:
        server.start()
        assert argvs and not any(password in " ".join(argv) for argv in argvs)
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    assert password.encode() not in (proc / "cmdline").read_bytes()
                except OSError:
                    continue
        settings = neo4j_settings.model_copy(update={"neo4j_uri": server.uri})
        from pydantic import SecretStr

        with SyncMemory(settings.model_copy(update={"neo4j_password": SecretStr(password)}),
                        check_schema=False) as store:
            assert store.run(store.memory.db.query("ping"))
        assert mode(home) == 0o700
        for sub in ("conf", "data", "logs", "run"):
            assert mode(home / sub) == 0o700, sub
        private = [home / "conf" / "neo4j.conf", home / "data" / "dbms" / "auth.ini",
                   server.pid_file, server.log_file, *(home / "logs").glob("*.log")]
        assert len(private) >= 5
        for path in private:
            assert mode(path) & 0o077 == 0, (path, oct(mode(path)))

        pid = server.pid()
        assert pid is not None and server.owns(pid)
        os.killpg(pid, signal.SIGKILL)  # a crash: the pid file stays behind
        began = time.monotonic()
        server.start()
        assert server.pid() not in (None, pid)
        assert server.bolt_answers()
        print(f"restart right after SIGKILL took {time.monotonic() - began:.1f}s")

        # Found by a stranger's attack: the recorded process (Neo4j's bootloader) killed
        # alone, its child the server JVM answering on: `stop` said "not running" and
        # left it, `start` called the port "taken by another process". The JVM's own pid
        # file (run/neo4j.pid) names it; both now find it, and stop stops it.
        bootloader = server.pid()
        assert bootloader is not None
        os.kill(bootloader, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(bootloader, 0)
        jvm = server.pid()
        assert jvm not in (None, bootloader) and server.owns(jvm), jvm
        assert server.start() is None and server.pid() == jvm  # running: nothing started
        # Found by a stranger's hunt: asked for other ports while it runs, start waited
        # three minutes for Bolt on the new port and named only that one.
        moved = dataclasses.replace(server, bolt_port=free_port(), http_port=free_port())
        began = time.monotonic()
        with pytest.raises(LauncherError, match=rf"runs already, on Bolt {server.bolt_port} "
                           rf"and HTTP {server.http_port}, not on the ports asked for"):
            moved.start()
        assert time.monotonic() - began < 5 and server.bolt_answers()
        assert server.stop() is True
        assert not alive(jvm) and not server.bolt_answers() and server.pid() is None
    finally:
        server.stop(kill=True)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_servers_port_is_free_below_the_clients_range_and_never_given_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A port the system picks (bind to 0) comes from the range it hands to outgoing
    connections: in the seconds before Neo4j binds it, a client can take it as its own.
    The launcher draws below that range, skips a port a live connection holds (which a
    connect test cannot see), and never gives one port twice in a process."""
    drawn = [free_port() for _ in range(50)]
    assert len(set(drawn)) == len(drawn)
    assert all(20000 <= p < 32768 for p in drawn)
    # Two ports to draw from, one held by a client's connection: the other is drawn.
    other = free_port()
    with held_port() as held:
        monkeypatch.setattr(launcher, "_SERVER_PORTS", [held, other])
        monkeypatch.setattr(launcher, "_given", set())
        assert not port_bindable(held)
        assert free_port() == other
        with pytest.raises(launcher.LauncherError, match="no free TCP port"):
            free_port()  # the one given already, the other held
    assert port_bindable(held)


@pytest.mark.slow
def test_a_start_stopped_with_ctrl_c_stops_the_server_it_launched() -> None:
    """A stranger's attack (2026-12-07): Ctrl-C 4 s into `kg server start --no-warm`
    exited 130 with nothing said, and the server answered 20 s later: its JVM runs in a
    session of its own, which the terminal's Ctrl-C does not reach. The start now stops
    the server it launched, and says so."""
    import _thread
    import threading

    shared = LocalServer.from_env()
    folder = Path(tempfile.mkdtemp(prefix="test-neo4j-", dir=shared.jars.parent.parent))
    home = folder / "home"
    bolt, http = free_port(), free_port()
    server = LocalServer(home=home, jars=shared.jars, bolt_port=bolt, http_port=http)
    launched: list[int] = []

    def ctrl_c_once_launched() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not server.pid_file.exists():
            time.sleep(0.05)
        record = server.pid_file.read_text().split() if server.pid_file.exists() else []
        launched.extend(int(x) for x in record[:1])
        time.sleep(1.0)  # (the JVM on its way up)
        _thread.interrupt_main()

    watcher = threading.Thread(target=ctrl_c_once_launched, daemon=True)
    # (interrupt_main does nothing where SIGINT is ignored, as in a job CI starts in the
    # background: Python's own handler for the test, as in a terminal.)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    watcher.start()
    try:
        done = CliRunner().invoke(app, ["server", "start", "--no-warm"], env={
            "KG_NEO4J_HOME": str(home), "KG_NEO4J_BOLT_PORT": str(bolt),
            "KG_NEO4J_HTTP_PORT": str(http), "KG_NEO4J_HEAP": "512m",
            "KG_NEO4J_PAGECACHE": "128m"})
        watcher.join(timeout=60)
        assert done.exit_code == 130, done.output
        assert "interrupted: the server this start launched was stopped again" in done.output
        assert launched and not alive(launched[0]), launched
        assert not server.running() and not server.pid_file.exists()
        assert port_bindable(bolt) and port_bindable(http)
    finally:
        signal.signal(signal.SIGINT, before)
        server.stop(kill=True)
        shutil.rmtree(folder, ignore_errors=True)
