"""The read path alone, against the round-trip floor measured in the same run.

    python -m bench.readpath --size 100k            # load (if needed), then measure
    python -m bench.readpath --size 1M --samples 500

A focused companion of `bench.run` for work on the read path: it grows a store of its
own with the bench's generator and bulk loader (and remembers in a state file what it
loaded, so a second run only measures), then times, interleaved entity by entity:

- the floor, two ways: `RETURN 1` in a held session (`session.run`) and through
  `driver.execute_query`; and `Database.query("ping")`, the library's own path;
- `Memory.mappe` (current), `Memory.mappe` as of a past instant, `Memory.mappen` of
  five entities of one pair (the turn's read), and the hub entities.

It prints p50 / p95 / p99 / max per reader and the ratios the goals are stated in.
Run it against an EMPTY database of its own (see bench/README.md), e.g. on port 7712.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench import bulk
from bench.generate import Config, user
from bench.loadavg import LoadSampler
from bench.run import Reservoir, Sample, parse_size, stats
from kg.api import Memory
from kg.decay import moment
from kg.settings import Settings

TODAY = date(2026, 11, 30)  # fixed, so a store loaded today is measured the same tomorrow


def _turns(g: Any, rng: random.Random, k: int = 5) -> list[list[str]]:
    """Five entities of one pair per turn (as a chat turn binds them)."""
    out = []
    for char in g.characters:
        ids = [e.id for e in g.entities if char in e.characters]
        if len(ids) >= k:
            out.append([g.user_id, char, *rng.sample(ids, k)])
    return out


async def load(memory: Memory, target: int, state: dict[str, Any], samples: int) -> None:
    """Grow the store to `target` fact edges, sampling entities as the users stream by."""
    cfg = Config(today=TODAY)
    rng = random.Random(8)
    res = Reservoir(samples, rng)
    res.items = [Sample(**s) for s in state.get("samples", [])]
    res.seen = state.get("seen", 0)
    turns: list[list[str]] = state.get("turns", [])
    hubs: list[dict[str, Any]] = state.get("hubs", [])
    facts = state.get("facts", 0)
    index = state.get("next_index", 0)

    def stream() -> Any:
        nonlocal facts, index
        while facts < target:
            g = user(cfg, memory.canon, index)
            index += 1
            facts += len(g.facts)
            for e in g.entities:
                for char in sorted(e.characters):
                    res.add(Sample(g.user_id, char, e.id, e.kind, e.name))
            if len(turns) < 400 or rng.random() < 400 / max(index, 1):
                turns.extend(_turns(g, rng))
            hubs.extend(asdict(Sample(g.user_id, "nova", h.id, h.kind, h.name)) for h in g.hubs)
            yield g

    loader = bulk.BulkLoader(memory.db, memory.canon)
    stats_ = await loader.load(stream())
    print(f"loaded {stats_.facts:,} facts in {stats_.seconds:.1f} s "
          f"({stats_.facts_per_s:,.0f}/s); store now {facts:,}")
    state.update(
        facts=facts, next_index=index, seen=res.seen,
        samples=[asdict(s) for s in res.items], turns=turns[-400:], hubs=hubs,
    )


async def floor_calls(memory: Memory) -> tuple[dict[str, Callable[[], Awaitable[Any]]], Any]:
    """`RETURN 1` sent three ways, on the library's own driver."""
    db = memory.db
    ping = db.queries["ping"].wire
    held = db.driver.session(database=db.name, default_access_mode="READ")

    async def session_run() -> None:
        result = await held.run(ping)
        [record async for record in result]

    async def execute_query() -> None:
        await db.driver.execute_query(ping, database_=db.name, routing_="r")

    return {
        "floor_session": session_run,
        "floor_execute_query": execute_query,
        "floor_db_query": lambda: db.query("ping"),
    }, held


async def measure(memory: Memory, state: dict[str, Any], n: int, rounds: int) -> dict[str, Any]:
    samples = [Sample(**s) for s in state["samples"]][:n]
    turns = state["turns"][:n]
    calls, held = await floor_calls(memory)
    gueltig = moment(TODAY) - timedelta(days=365)
    bekannt = datetime.now(UTC)

    def readers(i: int) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
        s = samples[i % len(samples)]
        t = turns[i % len(turns)]
        return [
            *calls.items(),
            ("mappe", lambda: memory.mappe(s.user_id, s.character_id, s.entity_id)),
            ("mappe_asof", lambda: memory.mappe(
                s.user_id, s.character_id, s.entity_id, gueltig_am=gueltig, bekannt_am=bekannt)),
            ("mappen5", lambda: memory.mappen(t[0], t[1], t[2:])),
        ]

    series: dict[str, list[float]] = {}
    try:
        for i in range(min(n, 200)):  # warm-up
            for _, call in readers(i):
                await call()
        for _ in range(rounds):
            for i in range(n):
                group = readers(i)
                k = i % len(group)  # rotate: the first call after a pause pays for waking up
                for name, call in group[k:] + group[:k]:
                    t0 = time.perf_counter_ns()
                    await call()
                    series.setdefault(name, []).append((time.perf_counter_ns() - t0) / 1e6)
        for h in state["hubs"]:
            for _ in range(3):
                await memory.mappe(h["user_id"], h["character_id"], h["entity_id"])
            for _ in range(5):
                t0 = time.perf_counter_ns()
                await memory.mappe(h["user_id"], h["character_id"], h["entity_id"])
                series.setdefault("hubs", []).append((time.perf_counter_ns() - t0) / 1e6)
    finally:
        await held.close()
    return {k: stats(v) for k, v in series.items()}


def show(out: dict[str, Any], load: dict[str, Any]) -> None:
    print(f"{'reader':22} {'n':>6} {'p50':>8} {'p95':>8} {'p99':>8} {'max':>8}  (ms)")
    for name, s in out.items():
        print(f"{name:22} {s['n']:>6} {s['p50']:>8.3f} {s['p95']:>8.3f} "
              f"{s['p99']:>8.3f} {s['max']:>8.3f}")
    # The goal holds the Mappe to the driver's own cheapest round trip (as bench.report
    # does); the library's `Database.query` is shown beside it, not counted.
    cheapest = min(("floor_session", "floor_execute_query"), key=lambda k: out[k]["p50"])
    m = out["mappe"]["p50"]
    print(f"mappe p50 / cheapest floor p50   {m / out[cheapest]['p50']:.2f}   (goal <= 2; "
          f"cheapest: {cheapest})")
    print(f"mappen5 p50 / mappe p50          {out['mappen5']['p50'] / m:.2f}   (goal <= 1.5)")
    if "hubs" in out:
        print(f"hubs max                         {out['hubs']['max']:.2f} ms (goal <= 15)")
    print(f"load average mean / max          {load.get('reads', {})}")


async def main_async(args: argparse.Namespace) -> None:
    memory = await Memory.open(Settings())
    state_file = Path(args.state or f"/tmp/kg-readpath-{urlsplit(Settings().neo4j_uri).port}.json")
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    try:
        target = parse_size(args.size)
        if state.get("facts", 0) < target:
            await load(memory, target, state, args.samples)
            state_file.write_text(json.dumps(state))
        sampler = LoadSampler().start()
        load_avg: dict[str, Any] = {}
        try:
            with sampler.phase(load_avg, "reads"):
                out = await measure(memory, state, args.samples, args.rounds)
        finally:
            sampler.stop()
        print(f"store: {state['facts']:,} fact edges; {args.samples} entities x {args.rounds}")
        show(out, load_avg)
    finally:
        await memory.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="100k", help="grow the store to this many fact edges")
    p.add_argument("--samples", type=int, default=300, help="entities (and turns) timed")
    p.add_argument("--rounds", type=int, default=2, help="passes over the samples")
    p.add_argument("--state", help="what was loaded, to grow or re-measure the same store "
                   "(default /tmp/kg-readpath-<bolt port>.json)")
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
