"""Where the server's time goes: a CPU profile of Neo4j while one reader runs, by part.

    python -m bench.readpath --size 1M                  # the store and its samples, once
    python -m bench.serverprofile --what mappe --seconds 20

`PROFILE` counts a query's db hits; it does not say what the server spends besides them,
nor what a db hit costs. This attaches async-profiler (from Maven Central, its
`tools.profiler:async-profiler` artifact) with the JDK's `jcmd` to the Neo4j that
`kg server start` runs for KG_NEO4J_HOME, samples the CPU time of all its threads
(`itimer`: no perf events needed) while one reader runs in a loop over the samples of
`bench.readpath`, then writes a flame graph (HTML) and the collapsed stacks to --out and
prints the server's CPU per call by part:

- running the plan (the operators, by the innermost one of each sample), and writing the
  records into Bolt's PackStream;
- taking the query in: the pre-parser, the query caches, the plan's lookup;
- committing (the transaction log and its fsync, applying to the store), and beginning
  and ending the transaction;
- Bolt's network threads (Netty), the JIT compiler, the garbage collector, the rest.

The readers: `mappe` (one entity), `turn` (the Mappen of five), `ping` (`RETURN 1`), each
through the library (`Database.plain_query`), as the bench times them; and `order`, the
5-triple order of `bench.writes` through `Memory.write` (one writer, a new user every 50
orders; it writes into the store). The profiler adds to what it measures: compare parts
within one profile, not calls across runs. A restarted server's JIT compiler takes
thousands of orders to settle on the writer's code: profile `order` after a warm loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import subprocess
import time
import uuid
import zipfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.writes import order
from cli.launcher import LocalServer, stat_fields
from kg.api import Memory
from kg.errors import KgError
from kg.mappe import mappe_params
from kg.settings import Settings

PROFILER = "tools.profiler:async-profiler:3.0"

#: The parts of the server's CPU, in the order a sample is given to the first that
#: matches one of its frames.
PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("writing the records (PackStream)", ("packstream/", "RecordMessage")),
    (
        "running the plan",
        # (A write query runs its plan when it is taken in: `initiate`.)
        (
            "PipeExecutionResult.serveResults",
            "StatementImpl.consume",
            "ClosingExecutionResult.initiate",
        ),
    ),
    ("taking the query in (pre-parser, caches, plan lookup)", ("QueryRouterImpl.executeQuery",)),
    (
        "committing (the log and its fsync, the store, the indexes)",
        ("KernelTransactionImplementation.commit",),
    ),
    (
        "beginning and ending the transaction",
        ("beginTransaction", "TransactionImpl.commit", "TransactionImpl.close"),
    ),
    ("Bolt's network threads (Netty)", ("io/netty/",)),
    ("JIT compiler", ("CompileBroker", "C2Compiler", "Compiler::")),
    ("garbage collector", ("G1", "GCTask", "[GC")),
)
OTHER = "the rest (Bolt's state machine, scheduling, the JVM)"
_PIPE = re.compile(r"([A-Za-z]+Pipe)[.$]")


@dataclass
class Summary:
    """Samples by part, and the plan's by operator (its innermost pipe)."""

    samples: int = 0
    parts: Counter[str] = field(default_factory=Counter)
    operators: Counter[str] = field(default_factory=Counter)


def summarize(collapsed: Iterable[str]) -> Summary:
    """Collapsed stacks (`frame;frame;... count`, root first) by part and operator."""
    out = Summary()
    for line in collapsed:
        line = line.strip()
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = stack.split(";")
        out.samples += n
        part = next(
            (name for name, marks in PARTS if any(m in f for f in frames for m in marks)), OTHER
        )
        out.parts[part] += n
        if part == "running the plan":
            pipes = [m.group(1) for f in frames if (m := _PIPE.search(f))]
            out.operators[pipes[-1] if pipes else "(outside an operator)"] += n
    return out


def report(s: Summary, calls: int, cpu_s: float) -> list[str]:
    """The server's CPU per call (`cpu_s`, its JVM's CPU time while the calls ran), by
    part in proportion to the samples. (The samples' own count says little about time:
    `itimer` fires on the kernel's ticks, not every interval asked for.)"""
    per_call_us = cpu_s / calls * 1e6

    def row(name: str, n: int) -> str:
        return f"  {name:<58} {per_call_us * n / s.samples:8.1f} µs  {n / s.samples:6.1%}"

    lines = [f"server CPU per call: {per_call_us:.1f} µs ({cpu_s:.2f} s of CPU for {calls} "
             f"calls; {s.samples} samples)"]
    lines += [row(name, n) for name, n in s.parts.most_common()]
    plan = s.parts["running the plan"]
    if plan:
        lines.append("running the plan, by operator (the innermost of each sample):")
        lines += [row(name, n) for name, n in s.operators.most_common(12)]
    return lines


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) a process has used, from /proc."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- the profiler -------------------------------------------------------------------------


def profiler_library(out: Path) -> Path:
    """async-profiler's native library for this machine, fetched once with Maven."""
    arch = {"x86_64": "linux-x64", "amd64": "linux-x64", "aarch64": "linux-arm64"}.get(
        platform.machine().lower()
    )
    if arch is None or platform.system() != "Linux":
        raise SystemExit(f"async-profiler is used here on Linux x64 or arm64 only, not "
                         f"{platform.system()} {platform.machine()}")
    lib = out / arch / "libasyncProfiler.so"
    if lib.exists():
        return lib
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SystemExit("`mvn` is not on PATH: install Maven (apt-get install maven)")
    done = subprocess.run(
        [mvn, "-q", "-B", "dependency:copy", f"-Dartifact={PROFILER}",
         f"-DoutputDirectory={out}"],
        capture_output=True, text=True, check=False,
    )
    jar = out / "async-profiler-3.0.jar"
    if done.returncode != 0 or not jar.exists():
        raise SystemExit(f"Maven could not fetch {PROFILER}:\n{done.stdout}{done.stderr}")
    with zipfile.ZipFile(jar) as z:
        z.extract(f"{arch}/libasyncProfiler.so", out)
    return lib


def server_jvm(launcher: int) -> int | None:
    """The server's own JVM: the launcher's pid is Neo4j's `console` command, which runs
    the server (`CommunityEntryPoint`) as its child."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            args = (proc / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if ppid == launcher and b"CommunityEntryPoint" in args:
            return int(proc.name)
    return None


class Attached:
    """Commands to async-profiler inside the server's JVM, through `jcmd`."""

    def __init__(self, server: LocalServer, lib: Path) -> None:
        launcher = server.pid()
        pid = server_jvm(launcher) if launcher is not None else None
        if pid is None:
            raise SystemExit(f"no Neo4j of {server.home} runs: start it with `kg server start`")
        jcmd = server.java().parent / "jcmd"
        if not jcmd.exists():
            raise SystemExit(f"{jcmd} is missing: a JDK is needed, not only a runtime "
                             "(apt-get install openjdk-17-jdk-headless)")
        self.pid, self.jcmd, self.lib = pid, jcmd, lib

    def __call__(self, command: str) -> None:
        # Quoted: jcmd would read `event=itimer` as an option of its own.
        done = subprocess.run(
            [str(self.jcmd), str(self.pid), "JVMTI.agent_load", str(self.lib), f'"{command}"'],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0 or "return code: 0" not in done.stdout:
            raise SystemExit(f"async-profiler refused {command!r}:\n{done.stdout}{done.stderr}")


# -- the load -------------------------------------------------------------------------------


async def loop(what: str, state: dict[str, Any], seconds: float, started: Any) -> int:
    """The reader (or writer) in a loop for `seconds`, after a warm-up; calls made."""
    memory = await Memory.open(Settings())
    try:
        db = memory.db
        turns = [t for t in state.get("turns", []) if len(t) >= 3]

        def params(user_id: str, character_id: str, ids: list[str]) -> dict[str, Any]:
            return mappe_params(db.settings, memory.canon, user_id, character_id, ids)

        if what == "order":
            # The bench's 5-triple order, one writer, a new user every 50 orders (each
            # revisits 20 people, so residences and jobs are superseded, but no user's
            # history grows without end).
            run = f"serverprofile-{uuid.uuid4().hex[:8]}"

            async def call(n: int) -> None:
                await memory.write(order(f"{run}-{n // 50}", n % 50, run="serverprofile"))

            warm = 200
        else:
            if what == "ping":
                calls: list[tuple[str, dict[str, Any]]] = [("ping", {})]
            elif what == "turn":
                calls = [("mappe", params(t[0], t[1], t[2:])) for t in turns]
            else:
                calls = [("mappe", params(s["user_id"], s["character_id"], [s["entity_id"]]))
                         for s in state["samples"]]
            if not calls:
                raise SystemExit(f"no {what} to read: run bench.readpath on this store first")

            async def call(n: int) -> None:
                name, p = calls[n % len(calls)]
                await db.plain_query(name, **p)

            warm = len(calls)
        for n in range(warm):
            await call(n)
        started()
        n, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            await call(n)
            n += 1
        return n
    finally:
        await memory.close()


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m bench.serverprofile", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--what", choices=("mappe", "turn", "ping", "order"), default="mappe")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--interval-us", type=int, default=200, help="one sample per this much CPU")
    ap.add_argument("--state", help="bench.readpath's state file (default: its for the port)")
    ap.add_argument("--out", default="/tmp/kg-serverprofile")
    args = ap.parse_args()
    settings = Settings()
    port = settings.neo4j_uri.rsplit(":", 1)[-1]
    state_file = Path(args.state or f"/tmp/kg-readpath-{port}.json")
    if not state_file.exists():
        raise SystemExit(f"{state_file} is missing: run `python -m bench.readpath` on this "
                         "store first (it loads the store and picks the samples)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    profiler = Attached(LocalServer.from_env(), profiler_library(out))
    stem = out / f"{args.what}-{time.strftime('%Y%m%dT%H%M%S')}"

    running = False
    cpu_at_start = 0.0

    def started() -> None:
        nonlocal running, cpu_at_start
        profiler(f"start,event=itimer,interval={args.interval_us}us")
        running = True
        cpu_at_start = cpu_seconds(profiler.pid)

    try:
        calls = asyncio.run(
            loop(args.what, json.loads(state_file.read_text()), args.seconds, started)
        )
    except KgError as exc:
        raise SystemExit(f"error: {exc}") from None
    finally:
        cpu = cpu_seconds(profiler.pid) - cpu_at_start
        if running:  # the flame graph and the stacks of what ran, even if it failed
            try:
                profiler(f"dump,file={stem}.html")
            finally:
                profiler(f"stop,file={stem}.collapsed,collapsed")
    with open(f"{stem}.collapsed", encoding="utf-8") as f:
        summary = summarize(f)
    print(f"{args.what}: {calls} calls in {args.seconds:g} s; flame graph {stem}.html")
    print("\n".join(report(summary, calls, cpu)))


if __name__ == "__main__":
    main()
