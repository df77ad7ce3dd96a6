"""The decay sweep on a graph of a million fact edges: its time and the heap it needs.

Run it against a separate, disposable Neo4j — it writes a million edges and, with
`--restart`, restarts the server (a fresh JVM, so the heap pools' peaks belong to the
sweep) — never against a store you keep:

    export KG_NEO4J_HOME=/tmp/kg-decay-bench KG_NEO4J_BOLT_PORT=7690 KG_NEO4J_HTTP_PORT=7477
    .venv/bin/kg server start
    export NEO4J_URI=bolt://127.0.0.1:7690
    .venv/bin/kg schema apply
    .venv/bin/python -m bench.decay_sweep --edges 1000000 --restart
    .venv/bin/kg server stop && rm -rf /tmp/kg-decay-bench

It refuses a database holding entities of anyone but its own `decay-bench-*` users.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any, cast

from bench.queries import attach
from cli.launcher import LocalServer
from kg.api import Memory, SyncMemory
from kg.check import run_checks
from kg.db import Record, Tx
from kg.decay import DecayRun
from kg.settings import Settings

PREFIX = "decay-bench-"
PER_ENTITY = (3, 2)  # HOBBY value facts, BEFREUNDET_MIT reference facts
MB = 1024 * 1024


def counts(sync: SyncMemory) -> dict[str, int]:
    rows = sync.run(
        sync.memory.db.query(
            "decay_bench_fact_count", prefix=PREFIX, rel_types=sync.memory.canon.rel_types
        )
    )
    return {"facts": rows[0]["facts"], "active": rows[0]["active"]}


def generate(sync: SyncMemory, edges: int, batch: int) -> None:
    """Batches of `batch` entities with five fact edges each, until `edges` exist."""
    db = sync.memory.db
    have = counts(sync)["facts"]
    n = 0
    began = time.monotonic()
    while have < edges:
        user = f"{PREFIX}{n:04d}"
        n += 1
        sync.run(
            db.write(
                # mypy cannot infer the type of a lambda with a default argument
                cast(
                    Callable[[Tx], Awaitable[list[Record]]],
                    lambda tx, user=user: tx.run(
                        "decay_bench_generate",
                        user_id=user,
                        entities=batch,
                        values=PER_ENTITY[0],
                        refs=PER_ENTITY[1],
                        now=datetime.now(UTC),
                        days=1500,
                        inactive=0.05,
                    ),
                )
            )
        )
        have = counts(sync)["facts"]
        print(
            f"  generated {have:>9,} fact edges ({time.monotonic() - began:.0f}s)", file=sys.stderr
        )


def restart() -> None:
    """Restart the bench server (a fresh JVM); never the default, shared one."""
    home = os.environ.get("KG_NEO4J_HOME")
    if not home or LocalServer.from_env().bolt_port == 7687:
        sys.exit("--restart needs KG_NEO4J_HOME and KG_NEO4J_BOLT_PORT of a bench server")
    server = LocalServer.from_env()
    server.stop()
    server.start()


async def sweep_measured(m: Memory, as_of: date, every: float) -> tuple[DecayRun, dict[str, int]]:
    """One sweep for `as_of`, with the heap sampled every `every` seconds while it runs."""
    seen = {"heap_used_max": 0, "tx_heap_max": 0, "heap_max": 0, "samples": 0}
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            heap = (await m.db.query("decay_bench_heap"))[0]
            tx = (await m.db.query("decay_bench_tx_heap"))[0]
            seen["heap_used_max"] = max(seen["heap_used_max"], heap["used"])
            seen["tx_heap_max"] = max(seen["tx_heap_max"], tx["tx_heap"] or 0)
            seen["heap_max"] = heap["max"]
            seen["samples"] += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), every)

    def progress(part: int, parts: int, edges: int) -> None:
        print(f"  slice {part:>2}/{parts}: {edges:>9,} edges", file=sys.stderr)

    sampler = asyncio.create_task(sample())
    try:
        result = await m.decay_run(day=as_of, progress=progress)
    finally:
        done.set()
        await sampler
    return result, seen


def sweep_figures(result: DecayRun, heap: dict[str, int]) -> dict[str, Any]:
    return {
        "swept": result.edges,
        "resting": result.resting,
        "seconds": result.seconds,
        "edges_per_second": round(result.edges / result.seconds) if result.seconds else None,
        "heap_used_peak_sampled_mb": round(heap["heap_used_max"] / MB),
        "tx_heap_estimate_peak_mb": round(heap["tx_heap_max"] / MB, 1),
        "heap_samples": heap["samples"],
    }


def checks_side_by_side(
    sync: SyncMemory, day: date, at_once: list[int], rounds: int
) -> dict[int, list[float]]:
    """The whole-store check's seconds with each number of checks side by side, taking
    turns, so a drift of the host's speed falls on every number alike."""
    seconds: dict[int, list[float]] = {k: [] for k in at_once}
    memory = sync.memory
    for _ in range(rounds):
        for k in at_once:
            began = time.monotonic()
            sync.run(run_checks(memory.db, memory.canon, day=day, at_once=k))
            seconds[k].append(round(time.monotonic() - began, 1))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edges", type=int, default=1_000_000, help="fact edges to have")
    parser.add_argument("--batch", type=int, default=10_000, help="entities per generator tx")
    parser.add_argument("--restart", action="store_true", help="restart the bench server first")
    parser.add_argument("--sample-every", type=float, default=1.0, help="heap sampling seconds")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--check-at-once", default="",
        help="also time the whole-store check with this many checks side by side, e.g. "
        "1,4,8 (each in turn, --check-rounds times)",
    )
    parser.add_argument("--check-rounds", type=int, default=3)
    args = parser.parse_args()
    try:
        at_once = [int(k) for k in args.check_at_once.split(",") if k.strip()]
    except ValueError:
        parser.error(f"--check-at-once takes numbers and commas, not {args.check_at_once!r}")
    if any(k < 1 for k in at_once):
        parser.error("--check-at-once: each number is at least 1")

    settings = Settings()
    with SyncMemory(settings) as sync:
        attach(sync.memory.db)
        foreign = sync.run(sync.memory.db.query("decay_bench_foreign", prefix=PREFIX))
        if foreign[0]["foreign"]:
            sys.exit(
                f"{settings.neo4j_uri} holds {foreign[0]['foreign']} entities of other "
                "users — run this only against a disposable bench server"
            )
        generate(sync, args.edges, args.batch)
    if args.restart:
        restart()

    figures: dict[str, Any] = {"uri": settings.neo4j_uri}
    # The first sweep for yesterday, the next for today: no sweep for a day not yet come.
    today = datetime.now(UTC).date() - timedelta(days=1)
    with SyncMemory(settings) as sync:
        attach(sync.memory.db)
        figures.update(counts(sync))
        figures["heap_max_mb"] = round(
            sync.run(sync.memory.db.query("decay_bench_heap"))[0]["max"] / MB
        )
        # First after a restart the page cache is cold; the next day's sweep finds it warm.
        first = sync.run(sweep_measured(sync.memory, today, args.sample_every))
        figures["sweep_first" + ("_after_restart" if args.restart else "")] = sweep_figures(*first)
        second = sync.run(sweep_measured(sync.memory, today + timedelta(days=1), args.sample_every))
        figures["sweep_next_day"] = sweep_figures(*second)
        peaks = sync.run(sync.memory.db.query("decay_bench_heap_peaks"))
        figures["heap_pool_peaks_since_start_mb"] = {
            r["name"].split("name=")[1].split(",")[0]: round(r["peak"] / MB) for r in peaks
        }
        began = time.monotonic()
        again = sync.run(sync.memory.decay_run(day=today + timedelta(days=1), if_due=True))
        figures["if_due_skipped"] = again.skipped
        figures["if_due_seconds"] = round(time.monotonic() - began, 3)
        began = time.monotonic()
        report = sync.run(sync.memory.check(day=today + timedelta(days=1)))
        figures["check_seconds"] = round(time.monotonic() - began, 1)
        figures["check_violations"] = {c.name: c.count for c in report.violations}
        if at_once:
            figures["check_seconds_by_at_once"] = checks_side_by_side(
                sync, today + timedelta(days=1), at_once, args.check_rounds
            )
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for key, value in figures.items():
        print(f"{key:<34} {value}")


if __name__ == "__main__":
    main()
