"""A local Neo4j Community 5.26 server for machines without a Docker engine.

The official server and Browser jars are resolved from Maven Central with the
`pom.xml` beside this module into a NEO4J_HOME in the user cache directory (outside
the repository) and reused on every later start. The server is started with the
official Java launcher (`org.neo4j.server.startup.Neo4jCommand console`), so its
JVM flags are Neo4j's own; auth stays on, and it listens on loopback only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pydantic import Field

from kg.errors import KgError
from kg.settings import LOCAL_DEFAULT_PASSWORD, Settings, load_settings

NEO4J_VERSION = "5.26.30"
BROWSER_VERSION = "5.24.0"
#: The server setting that keys a query's cached plan by the size bucket (0, 1, 10, 100,
#: ...) of each list and text parameter. On (Neo4j's default), an order of another shape
#: than any before is planned anew (~1 s for the writer's queries); the launcher turns it
#: off (docs/operations.md, "One plan per query").
PLAN_BY_SIZE = "internal.cypher.use_parameter_size"


class LauncherError(KgError):
    """The local Neo4j launcher could not do what was asked."""

    exit_code = 5


class StartInterrupted(KeyboardInterrupt):
    """Ctrl-C while the server this start launched was starting: it was stopped again
    (its JVM runs in a session of its own, which the terminal's Ctrl-C does not reach,
    so it started on alone: a stranger's attack)."""


class LauncherSettings(Settings):
    """The library's settings and where the local server runs: read from the same
    environment and `.env`, so a password kept in `.env` reaches both."""

    neo4j_home: Path | None = Field(
        None, description="Home of the local launcher's server (KG_NEO4J_HOME)."
    )
    neo4j_bolt_port: int = Field(7687, ge=1, le=65535, description="Launcher's Bolt port.")
    neo4j_http_port: int = Field(7474, ge=1, le=65535, description="Launcher's HTTP port.")
    neo4j_heap: str = Field("2g", pattern=r"^[0-9]+[kKmMgG]?$", description="Launcher's heap.")
    neo4j_pagecache: str = Field(
        "2g", pattern=r"^[0-9]+[kKmMgG]?$", description="Launcher's page cache."
    )


@dataclass(frozen=True)
class LocalServer:
    """Where and how the local server runs."""

    home: Path
    jars: Path  # shared by every instance: fetched once per version
    bolt_port: int = 7687
    http_port: int = 7474
    heap: str = "2g"
    pagecache: str = "2g"
    password: str = field(default=LOCAL_DEFAULT_PASSWORD, repr=False)  # never printed
    #: True: Neo4j's default, a plan per size of the parameters (bench/coldstart.py
    #: compares the two); the launcher's servers plan each query once.
    plan_by_size: bool = False

    @classmethod
    def from_env(cls, settings: LauncherSettings | None = None) -> LocalServer:
        """The default server, adjustable with the KG_NEO4J_* settings (environment or
        `.env`, read like the library's `Settings`)."""
        s = settings or load_settings(LauncherSettings)
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        default = cache / "faktengedaechtnis" / f"neo4j-{NEO4J_VERSION}"
        return cls(
            home=s.neo4j_home or default,
            jars=default / "lib",
            bolt_port=s.neo4j_bolt_port,
            http_port=s.neo4j_http_port,
            heap=s.neo4j_heap,
            pagecache=s.neo4j_pagecache,
            password=s.neo4j_password.get_secret_value() or LOCAL_DEFAULT_PASSWORD,
        )

    @classmethod
    def disposable(cls, prefix: str, plan_by_size: bool = False) -> LocalServer:
        """An instance of its own, for a test session or a benchmark: a fresh home named
        `prefix...` beside the shared jars, free ports, a small heap and page cache. It
        touches no other store; whoever made it stops it and removes its home."""
        shared = cls.from_env()
        cache = shared.jars.parent.parent
        cache.mkdir(parents=True, exist_ok=True)
        return cls(
            home=Path(tempfile.mkdtemp(prefix=prefix, dir=cache)),
            jars=shared.jars,
            bolt_port=free_port(),
            http_port=free_port(),
            heap="1g",
            pagecache="512m",
            plan_by_size=plan_by_size,
        )

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def browser_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/browser/"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "console.log"

    @property
    def pid_file(self) -> Path:
        return self.home / "run" / "kg-launcher.pid"

    # -- pieces -----------------------------------------------------------------

    def java(self) -> Path:
        """A Java 17 runtime: JAVA_HOME, a JDK 17 under /usr/lib/jvm, or `java` on PATH."""
        candidates: list[Path] = []
        if os.environ.get("JAVA_HOME"):
            candidates.append(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
        candidates += sorted(Path("/usr/lib/jvm").glob("*17*/bin/java"))
        on_path = shutil.which("java")
        if on_path:
            candidates.append(Path(on_path))
        for java in candidates:
            if java.exists() and _java_major(java) == 17:
                return java
        raise LauncherError(
            "Java 17 is needed for Neo4j 5.26 and none was found (checked JAVA_HOME, "
            "/usr/lib/jvm, PATH) — install it, e.g. `apt-get install openjdk-17-jre-headless`."
        )

    def install(self) -> bool:
        """Resolve the jars once (shared by all instances); True if it downloaded."""
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        link = self.home / "lib"
        if link != self.jars and not link.exists():
            link.symlink_to(self.jars, target_is_directory=True)
        lib = self.jars
        marker = lib / ".complete"
        if marker.exists():
            return False
        mvn = shutil.which("mvn")
        if not mvn:
            raise LauncherError(
                "Apache Maven is needed once to fetch the Neo4j jars and `mvn` is not on "
                "PATH — install it, e.g. `apt-get install maven`."
            )
        lib.mkdir(parents=True, exist_ok=True)
        pom = Path(str(resources.files("cli.neo4j_local") / "pom.xml"))
        cmd = [
            mvn,
            "-q",
            "-B",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={lib}",
            f"-Dneo4j.version={NEO4J_VERSION}",
            f"-Dneo4j.browser.version={BROWSER_VERSION}",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, env=self._env())
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-20:])
            raise LauncherError(f"Maven could not fetch the Neo4j jars:\n{tail}")
        marker.write_text(f"neo4j {NEO4J_VERSION}, browser {BROWSER_VERSION}\n")
        return True

    def make_private(self) -> None:
        """The home, its store, config, logs and pid file belong to the owner alone:
        directories 0700, files 0600 (a home under /tmp is shared with every user)."""
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.home, 0o700)
        for sub in ("conf", "data", "logs", "run", "plugins", "import"):
            top = self.home / sub
            top.mkdir(mode=0o700, exist_ok=True)
            for path in (top, *top.rglob("*")):
                if path.is_symlink():
                    continue
                os.chmod(path, 0o700 if path.is_dir() else 0o600)

    def configure(self) -> None:
        """Write conf/neo4j.conf; set the initial password before the first start."""
        self.make_private()
        conf = self.home / "conf"
        # Neo4j rejects unknown or duplicated keys (strict validation), so this file
        # holds only real 5.26 settings; server.jvm.additional is the one repeatable key.
        _write_private(
            conf / "neo4j.conf",
            "\n".join(
                [
                    "server.default_listen_address=127.0.0.1",
                    f"server.bolt.listen_address=127.0.0.1:{self.bolt_port}",
                    f"server.http.listen_address=127.0.0.1:{self.http_port}",
                    "server.https.enabled=false",
                    "dbms.security.auth_enabled=true",
                    f"server.memory.heap.initial_size={self.heap}",
                    f"server.memory.heap.max_size={self.heap}",
                    f"server.memory.pagecache.size={self.pagecache}",
                    "dbms.usage_report.enabled=false",
                    "db.logs.query.enabled=OFF",
                    f"{PLAN_BY_SIZE}={str(self.plan_by_size).lower()}",
                    "server.jvm.additional=-XX:+UseG1GC",
                    "server.jvm.additional=-XX:-OmitStackTraceInFastThrow",
                    "server.jvm.additional=-XX:+UnlockExperimentalVMOptions",
                    "server.jvm.additional=-XX:+TrustFinalNonStaticFields",
                    "server.jvm.additional=-XX:+DisableExplicitGC",
                    "server.jvm.additional=-Djdk.nio.maxCachedBufferSize=1024",
                    "server.jvm.additional=-Dio.netty.tryReflectionSetAccessible=true",
                    "server.jvm.additional=--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "server.jvm.additional=--add-opens=java.base/java.io=ALL-UNNAMED",
                    "server.jvm.additional=--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                    "",
                ]
            ),
        )
        auth = self.home / "data" / "dbms" / "auth.ini"
        if not auth.exists() and not (self.home / "data" / "databases" / "system").exists():
            if len(self.password) < 8:
                raise LauncherError("NEO4J_PASSWORD must have at least 8 characters.")
            # What `neo4j-admin dbms set-initial-password` writes, written here so the
            # password is never on a command line (`ps` shows every user's arguments).
            auth.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _write_private(auth, initial_password_line("neo4j", self.password))

    def command(self) -> list[str]:
        """The java command of the official launcher (`console --dry-run`)."""
        done = self._neo4j("org.neo4j.server.startup.Neo4jCommand", "console", "--dry-run")
        lines = [ln for ln in done.stdout.splitlines() if "CommunityEntryPoint" in ln]
        if done.returncode != 0 or not lines:
            raise LauncherError(f"Neo4jCommand --dry-run failed:\n{done.stdout}{done.stderr}")
        return lines[-1].split()

    # -- lifecycle --------------------------------------------------------------

    def _pid_record(self) -> tuple[int, int | None] | None:
        """(pid, start time in clock ticks) from the pid file; None without a usable one."""
        try:
            fields = self.pid_file.read_text().split()
            return int(fields[0]), (int(fields[1]) if len(fields) > 1 else None)
        except (OSError, ValueError, IndexError):
            return None

    def owns(self, pid: int, started: int | None = None) -> bool:
        """True when `pid` is this home's Neo4j: alive (not a zombie), its command line
        runs Neo4j's launcher or entry point with this home, and it started when the pid
        file says. A pid the kernel has given to another process after a crash or a
        reboot fails one of these, and is never signalled."""
        if pid <= 1 or not _alive(pid) or not self._runs_this_home(pid):
            return False
        return started is None or _start_ticks(pid) == started

    def _runs_this_home(self, pid: int) -> bool:
        """True when the command line of `pid` runs Neo4j with this home: a path in it
        (an argument, or a part of one after `=` or between `:`) is the home or lies
        in it. Not a home whose path only begins with this one's (/tmp/kg and
        /tmp/kg-other)."""
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        words = [a.decode(errors="replace") for a in argv]
        home = str(self.home).rstrip("/")
        paths = (p for w in words for part in w.split("=") for p in part.split(":"))
        return any(w.startswith("org.neo4j.server.") for w in words) and any(
            p == home or p.startswith(home + "/") for p in paths
        )

    def pid(self) -> int | None:
        """The pid of the running server this launcher started, if any (verified): the
        process it recorded, or, where that one is gone (killed, or dead of memory) while
        the server it started runs on, the server's own (`_server_jvm`)."""
        record = self._pid_record()
        if record is not None and self.owns(*record):
            return record[0]
        return self._server_jvm()

    def _jvm_pid_file(self) -> int | None:
        """The pid in Neo4j's own pid file (run/neo4j.pid), unverified; None without one."""
        try:
            return int((self.home / "run" / "neo4j.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _server_jvm(self) -> int | None:
        """The server JVM's pid from Neo4j's own pid file, when that process lives, runs
        Neo4j with this home and, while the launcher's record is there, belongs to the
        process group of the process it records (Neo4j's bootloader, which leads its
        group: the JVM is its child, and stays in the group when the leader dies; a pid
        reused by another process is in another group). Else None."""
        pid = self._jvm_pid_file()
        if pid is None or pid <= 1 or not _alive(pid) or not self._runs_this_home(pid):
            return None
        record = self._pid_record()
        if record is not None:
            try:
                if os.getpgid(pid) != record[0]:
                    return None
            except OSError:
                return None
        return pid

    def clean_stale(self) -> str | None:
        """Remove a pid file that names no server of this home; say what was removed."""
        if not self.pid_file.exists():
            return None
        record = self._pid_record()
        if record is not None and self.owns(*record):
            return None
        self.pid_file.unlink(missing_ok=True)
        what = f"pid {record[0]}" if record else "no pid"
        return (
            f"removed the stale pid file {self.pid_file} ({what}: not this home's Neo4j — "
            "it had exited, or the pid now belongs to another process, which was left alone)"
        )

    def running(self) -> bool:
        return self.pid() is not None

    def _forget_dead_jvm(self, wait: float) -> None:
        """Neo4j keeps a pid file of its own (run/neo4j.pid) and refuses to start while
        that pid lives. A JVM killed a moment ago may still be dying, or linger as a
        zombie nobody reaps (a container whose pid 1 reaps nothing); after a crash its
        pid may also belong to another process by now. Wait up to `wait` seconds for this
        home's JVM to die (reaping it if it is ours), then drop the file unless that pid
        is still this home's Neo4j."""
        own = self.home / "run" / "neo4j.pid"
        pid = self._jvm_pid_file()
        if pid is None:
            return
        deadline = time.monotonic() + wait
        while True:
            with contextlib.suppress(ChildProcessError):  # not our child: its parent reaps
                os.waitpid(pid, os.WNOHANG)
            living = _alive(pid) and self._runs_this_home(pid)
            if not living or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        if not living:
            own.unlink(missing_ok=True)

    def _ports_configured(self) -> tuple[int, int] | None:
        """The Bolt and HTTP ports this home's neo4j.conf was written with (those its
        running server listens on); None when the file or a port is missing."""
        try:
            text = (self.home / "conf" / "neo4j.conf").read_text(encoding="utf-8")
        except OSError:
            return None
        found = dict(re.findall(r"^server\.(bolt|http)\.listen_address=[^:\n]*:(\d+)$",
                                text, re.MULTILINE))
        if "bolt" not in found or "http" not in found:
            return None
        return int(found["bolt"]), int(found["http"])

    def _refuse_other_ports(self) -> None:
        """A home's server runs on the ports it was started with: asked for others, say
        so at once (waiting for Bolt on a port nobody listens on took three minutes and
        named only the port asked for; a stranger's hunt)."""
        ports = self._ports_configured()
        if ports is None or ports == (self.bolt_port, self.http_port):
            return
        if not _port_taken(ports[0]):
            return  # not listening (yet, or any more): start waits or starts anew as before
        raise LauncherError(
            f"the server of {self.home} runs already, on Bolt {ports[0]} and HTTP "
            f"{ports[1]}, not on the ports asked for (Bolt {self.bolt_port}, HTTP "
            f"{self.http_port}): set KG_NEO4J_BOLT_PORT={ports[0]} and "
            f"KG_NEO4J_HTTP_PORT={ports[1]} (and NEO4J_URI=bolt://127.0.0.1:{ports[0]}) to "
            "use it, or stop it first (`kg server stop`) to start it on the new ports."
        )

    def start(self, timeout: float = 180.0, port_wait: float = 30.0) -> str | None:
        """Start the server and return once Bolt answers; idempotent. Returns a note
        when a stale pid file was cleaned up first."""
        if self.running():
            self._refuse_other_ports()
            try:
                self.wait_ready(timeout)
                return None
            except LauncherError:
                if self.running():
                    raise
                # It was dying (killed a moment ago) and is gone now: start anew.
        crashed = self.pid_file.exists()
        note = self.clean_stale()
        self._forget_dead_jvm(wait=port_wait if crashed else 0.0)
        # Right after a crash the old JVM may still hold its ports for a moment: wait
        # for them (only then — a port of a foreign process is reported at once).
        deadline = time.monotonic() + (port_wait if crashed else 0.0)
        while True:
            taken = [p for p in (self.bolt_port, self.http_port) if _port_taken(p)]
            if not taken or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        if taken:
            raise LauncherError(
                f"port {taken[0]} on 127.0.0.1 is taken by another process — stop it, or "
                "set KG_NEO4J_BOLT_PORT / KG_NEO4J_HTTP_PORT (and NEO4J_URI)."
            )
        self.java()
        self.install()
        self.configure()
        self.log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        log_fd = os.open(self.log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with open(log_fd, "ab") as log:
            proc = subprocess.Popen(
                [
                    str(self.java()),
                    "-cp",
                    f"{self.home}/lib/*",
                    "org.neo4j.server.startup.Neo4jCommand",
                    "console",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self._env(),
                start_new_session=True,
                umask=0o077,  # the store, logs and files Neo4j writes: the owner's alone
            )
        try:
            # The start time tells this process apart from a later one given the same pid.
            started = _start_ticks(proc.pid)
            _write_private(self.pid_file,
                           f"{proc.pid} {started}\n" if started else f"{proc.pid}\n")
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise LauncherError(
                        f"Neo4j exited with code {proc.returncode} during start. "
                        f"Log tail ({self.log_file}):\n{self.log_tail()}"
                    )
                if self.bolt_answers() and self.http_answers():
                    return note
                time.sleep(0.3)
        except KeyboardInterrupt:
            self.stop()
            # (And whatever of its session is left: a JVM it started before the pid
            # file named it. The session is the launched process's own.)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()  # (reaped: no zombie of it in this process)
            raise StartInterrupted from None
        raise LauncherError(
            f"Neo4j did not answer on {self.uri} within {timeout:.0f}s. "
            f"Log tail ({self.log_file}):\n{self.log_tail()}"
        )

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.bolt_answers():
                return
            if not self.running():
                break
            time.sleep(0.3)
        raise LauncherError(f"Neo4j is not answering on {self.uri}:\n{self.log_tail()}")

    def stop(self, timeout: float = 60.0, kill: bool = False) -> bool:
        """Stop the server (SIGTERM, SIGKILL after timeout or with kill); True if it ran.

        Only a pid verified as this home's Neo4j is signalled (`owns`); a stale pid file
        is removed (`clean_stale` says so) and nothing is signalled."""
        record = self._pid_record()
        pids = [record[0]] if record is not None and self.owns(*record) else []
        jvm = self._server_jvm()  # (the recorded process's child, or left on its own)
        if jvm is not None and jvm not in pids:
            pids.append(jvm)
        if not pids:
            self.clean_stale()
            return False
        for pid in pids:
            _signal(pid, signal.SIGKILL if kill else signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not any(_alive(pid) for pid in pids):
                break
            time.sleep(0.2)
        else:
            if record is not None and self.owns(*record):
                _signal(record[0], signal.SIGKILL)
            if jvm is not None and self._server_jvm() == jvm:
                _signal(jvm, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        return True

    def bolt_answers(self) -> bool:
        """True when the Bolt port accepts connections and answers `RETURN 1`."""
        from neo4j import GraphDatabase
        from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

        if not _port_taken(self.bolt_port):
            return False
        try:
            with GraphDatabase.driver(
                self.uri, auth=("neo4j", self.password), connection_timeout=2
            ) as driver:
                driver.verify_connectivity()
            return True
        except (ServiceUnavailable, SessionExpired, OSError):
            return False
        except Neo4jError:
            return True  # it answers; auth problems are reported by the caller

    def http_answers(self) -> bool:
        """True when the web server (and with it the Browser) answers."""
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/", timeout=2) as r:
                return bool(r.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def log_tail(self, lines: int = 25) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log yet)"
        return "\n".join(text.splitlines()[-lines:])

    # -- helpers ----------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["NEO4J_HOME"] = str(self.home)
        env["NEO4J_CONF"] = str(self.home / "conf")
        java = self.java()
        env["JAVA_HOME"] = str(java.parent.parent)
        return env

    def _neo4j(self, main: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.java()), "-cp", f"{self.home}/lib/*", main, *args],
            capture_output=True,
            text=True,
            env=self._env(),
        )


def _java_major(java: Path) -> int | None:
    try:
        out = subprocess.run(
            [str(java), "-version"], capture_output=True, text=True, timeout=30
        ).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)', out)
    return int(match.group(1)) if match else None


def initial_password_line(user: str, password: str, iterations: int = 1024) -> str:
    """A line of Neo4j's `data/dbms/auth.ini` (what `set-initial-password` writes):
    `user:SHA-256,<hash>,<salt>,<iterations>:` with the hash of Neo4j's SecureHasher
    (Shiro's SimpleHash: SHA-256 of salt + password, then hashed again iterations-1
    times)."""
    salt = secrets.token_bytes(32)
    digest = hashlib.sha256(salt + password.encode("utf-8")).digest()
    for _ in range(iterations - 1):
        digest = hashlib.sha256(digest).digest()
    return f"{user}:SHA-256,{digest.hex()},{salt.hex()},{iterations}:\n"


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (0600), also when it existed before."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with open(fd, "w", encoding="utf-8") as f:
        f.write(text)


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command's name (field 3 first): the
    name is in parentheses and may hold spaces and parentheses itself. OSError when the
    process is gone."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _start_ticks(pid: int) -> int | None:
    """When a process started (clock ticks after boot, /proc/<pid>/stat field 22)."""
    try:
        return int(stat_fields(pid)[19])
    except (OSError, ValueError, IndexError):
        return None


def _signal(pid: int, sig: int) -> None:
    """Signal the server's process group when it leads one (it does: it was started in
    a new session), else the process alone; a process gone meanwhile is no error."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass


def port_bindable(port: int) -> bool:
    """Whether a server could listen on 127.0.0.1:`port` now: bound and listening the
    way servers do (SO_REUSEADDR), so a closed connection in TIME_WAIT does not count; a
    listener does, and so does a live connection whose own port this is, which a connect
    test misses (nothing answers there; Linux may even let such a port be bound, and
    refuses only the listen)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen(1)
        except OSError:
            return False
        return True


def _server_ports() -> range:
    """Ports for servers, outside the range the kernel hands to outgoing connections
    (/proc/sys/net/ipv4/ip_local_port_range; Linux's default 32768-60999): a port drawn
    there cannot become some client's own port in the seconds before the server binds
    it, as a port the system picks (bind to 0) can. Below that range where there is room,
    else above it; where the range takes nearly all ports, the default's lower part."""
    try:
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text(encoding="utf-8")
        low, high = (int(x) for x in text.split()[:2])
    except (OSError, ValueError):
        low, high = 32768, 60999
    if low >= 21000:
        return range(20000, min(low, 32768))
    if high <= 64000:
        return range(high + 1, 65536)
    return range(20000, 32768)


_SERVER_PORTS = _server_ports()
_given: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that a server can listen on now, drawn at random outside
    the kernel's range for outgoing connections (`_server_ports`) and never twice in one
    process."""
    for _ in range(1000):
        port = secrets.choice(_SERVER_PORTS)
        if port not in _given and port_bindable(port):
            _given.add(port)
            return port
    raise LauncherError(
        f"no free TCP port on 127.0.0.1 in {min(_SERVER_PORTS)}..{max(_SERVER_PORTS)}"
        " after 1000 tries: stop servers you no longer need, or set the ports yourself."
    )


def _port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie child still answers kill(0); ask the kernel for its state.
    try:
        state = stat_fields(pid)[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
