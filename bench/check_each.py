"""Where `kg check`'s time goes: each of its queries alone, one after the other.

    python -m bench.check_each --rounds 3

Runs the whole check of the store NEO4J_URI names (`kg.check.run_checks`) `--rounds`
times with one query at a time (`kg check` runs four side by side), and prints each
query's median seconds over the rounds, slowest first, with its share of their sum.
Reads only. On the bench's 1 M store (`python -m bench.run` leaves it behind) a round
takes a few minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import defaultdict
from typing import Any

from kg.api import Memory
from kg.check import SessionPerQuery, run_checks


async def main(rounds: int) -> None:
    seconds: dict[str, list[float]] = defaultdict(list)
    timed = SessionPerQuery.run, SessionPerQuery.page

    async def run(self: SessionPerQuery, name: str, /, **params: Any) -> Any:
        t = time.perf_counter()
        try:
            return await timed[0](self, name, **params)
        finally:
            seconds[name].append(time.perf_counter() - t)

    async def page(self: SessionPerQuery, name: str, /, within: float, **params: Any) -> Any:
        t = time.perf_counter()
        try:
            return await timed[1](self, name, within, **params)
        finally:
            seconds[name].append(time.perf_counter() - t)

    SessionPerQuery.run, SessionPerQuery.page = run, page  # type: ignore[method-assign]
    async with await Memory.open() as memory:
        whole = []
        for i in range(rounds):
            before = {name: len(s) for name, s in seconds.items()}
            t = time.perf_counter()
            report = await run_checks(memory.db, memory.canon, at_once=1)
            whole.append(time.perf_counter() - t)
            print(f"round {i + 1}: {whole[-1]:.1f} s, clean: {report.ok}", flush=True)
            # A query that runs page by page (order_results) is summed per round.
            for name, s in seconds.items():
                if len(s) - before.get(name, 0) > 1:
                    seconds[name][before.get(name, 0):] = [sum(s[before.get(name, 0):])]
    medians = {name: statistics.median(s) for name, s in seconds.items()}
    total = sum(medians.values())
    print(f"\nthe whole check, one query at a time: median {statistics.median(whole):.1f} s "
          f"over {rounds} rounds; per query (median s, share):")
    for name, m in sorted(medians.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<34} {m:8.2f}  {m / total:6.1%}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args().rounds))
