"""The derivations on a lattice of places, against a chain as deep, in the same run.

    python -m bench.lattice                      # 8, 10 and 12 levels
    python -m bench.lattice --levels 12 --samples 20

Lena lives in P0; each place of level i lies in both places of level i+1, so her
Mappe derives 2L places over 2^(L+1) - 2 paths. A chain of the same depth (one place a
level: L paths) is the baseline: same facts per level's step, no paths to multiply.
Each reader is timed interleaved with the others (`Memory.mappe` now and as of a day),
and the figures are p50 / p95 / max with the ratio lattice / chain. The stories are
written under users of their own (`bench-lattice-…`) and purged afterwards. Run it
against a database of its own (see bench/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import time
from datetime import UTC, datetime
from typing import Any

from bench.loadavg import LoadSampler
from bench.run import stats
from kg.api import Memory
from kg.errors import NothingStored
from kg.settings import Settings

CHARACTER = "nova"
AS_OF = datetime(2030, 1, 1, tzinfo=UTC)


def places(levels: int, width: int) -> list[list[str]]:
    """P0, then `width` places a level."""
    return [["P0"]] + [[f"L{i}{chr(97 + k)}" for k in range(width)]
                       for i in range(1, levels + 1)]


async def tell(memory: Memory, user: str, levels: int, width: int) -> str:
    """Write the story; return Lena's entity id."""
    grid = places(levels, width)
    tripel = [{"subjekt": a, "beziehung": "liegt_in", "objekt": b, "herkunft": "modell"}
              for upper, lower in itertools.pairwise(grid) for a in upper for b in lower]
    for k in range(0, len(tripel), 40):
        await memory.write({"auftrag_id": f"{user}-{k}", "user_id": user,
                            "character_id": CHARACTER, "tripel": tripel[k:k + 40],
                            "zeitpunkt": "2020-01-01T00:00:00Z"})
    await memory.write({"auftrag_id": f"{user}-lena", "user_id": user,
                        "character_id": CHARACTER, "zeitpunkt": "2021-01-01T00:00:00Z",
                        "tripel": [{"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "P0",
                                    "herkunft": "mensch"}]})
    return await memory.entity_id(user, CHARACTER, "Lena")


async def purge(memory: Memory, user: str) -> None:
    with contextlib.suppress(NothingStored):  # (nothing left of an earlier run)
        await memory.purge(user)


async def measure(
    memory: Memory, levels: int, samples: int, prefix: str = "bench-lattice"
) -> dict[str, dict[str, Any]]:
    """p50 / p95 / max of each reader at one depth; the stories' users (`prefix`-…) are
    purged afterwards. A read that derives other than 2L (the chain: L) places exits."""
    stories = {"lattice": 2, "chain": 1}
    lena = {}
    for name, width in stories.items():
        user = f"{prefix}-{name}-{levels}"
        await purge(memory, user)
        lena[name] = (user, await tell(memory, user, levels, width))
    readers = [(f"{name}_{when}", user, eid, at) for name, (user, eid) in lena.items()
               for when, at in (("now", None), ("asof", AS_OF))]
    series: dict[str, list[float]] = {}
    derived: dict[str, int] = {}
    try:
        for _, user, eid, at in readers:  # warm-up
            await memory.mappe(user, CHARACTER, eid, cap=100, gueltig_am=at)
        for i in range(samples):
            k = i % len(readers)  # rotate: the first call after a pause pays for waking up
            for name, user, eid, at in readers[k:] + readers[:k]:
                t0 = time.perf_counter_ns()
                m = await memory.mappe(user, CHARACTER, eid, cap=100, gueltig_am=at)
                series.setdefault(name, []).append((time.perf_counter_ns() - t0) / 1e6)
                derived[name] = len(m.abgeleitet)
    finally:
        for user, _ in lena.values():
            await purge(memory, user)
    want = {"lattice": 2 * levels, "chain": levels}
    for name, n in derived.items():  # a figure of a wrong answer is no figure
        if n != want[name.split("_")[0]]:
            raise SystemExit(f"{name}: {n} derivations, expected {want[name.split('_')[0]]}")
    return {name: stats(xs) for name, xs in series.items()}


async def main_async(args: argparse.Namespace) -> None:
    memory = await Memory.open(Settings())
    sampler = LoadSampler().start()
    load: dict[str, Any] = {}
    try:
        print(f"{'levels':>6} {'paths':>6} {'reader':14} {'n':>4} {'p50':>9} {'p95':>9} "
              f"{'max':>9}  (ms)  lattice/chain p50")
        for levels in args.levels:
            with sampler.phase(load, f"{levels} levels"):
                out = await measure(memory, levels, args.samples)
            for name, s in out.items():
                paths = 2 ** (levels + 1) - 2 if name.startswith("lattice") else levels
                base = out.get(name.replace("lattice", "chain"), s)
                ratio = f"{s['p50'] / base['p50']:.1f}" if name.startswith("lattice") else ""
                print(f"{levels:>6} {paths:>6} {name:14} {s['n']:>4} {s['p50']:>9.1f} "
                      f"{s['p95']:>9.1f} {s['max']:>9.1f}        {ratio}")
        print("load average (1 min) mean / max: " + ", ".join(
            f"{name} {v['mean_1m']} / {v['max_1m']}" for name, v in load.items()))
    finally:
        sampler.stop()
        await memory.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", type=lambda s: [int(x) for x in s.split(",")],
                   default=[8, 10, 12], help="depths of the lattice, comma-separated")
    p.add_argument("--samples", type=int, default=15, help="reads of each reader and depth")
    asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    main()
