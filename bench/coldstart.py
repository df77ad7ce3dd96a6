"""The first orders after a server start: Neo4j's default plan cache against the launcher's.

Neo4j 5 keys a cached plan by the query and the size bucket of each list and text
parameter; the launcher turns that off (`internal.cypher.use_parameter_size=false`,
docs/operations.md "One plan per query"). This starts two disposable instances of the
launcher, one with Neo4j's default and one as the launcher configures it, and on each,
with `--facts` generated facts loaded, right after a restart:

- **burst**: `--burst` orders of one user sent at once by one client, the time until
  all are answered: with each query's first run alone (`kg.db.FirstRuns`, the
  library's way), and with every run sent at once, taking turns `--burst-rounds`
  times, each after a restart;
- **varied**: `--orders` orders of varied shapes (1-12 triples of 8 relations) for 10
  users, one after another, each followed by the Mappen of 1-5 of the user's entities;
- **varied after a warm-up**: the same, for 10 new users, right after a restart and
  `Memory.warm()` (what `kg server start` runs), the warm-up's seconds apart.

Each varied run also counts the plans the server cached for it (the warm-up's among
them): one per query and shape it planned. `--only launcher` skips Neo4j's default.

    .venv/bin/python -m bench.coldstart

It needs the launcher's jars (`kg server start` fetches them once) and touches no other
store: each instance has its own home and free ports, removed afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

from bench.bulk import BulkLoader
from bench.generate import Config, UserGraph, users
from cli.launcher import LocalServer
from cli.worked_example import tripel
from kg import schema
from kg.api import Memory
from kg.db import FirstRuns
from kg.settings import Settings

PEOPLE = ["Anna", "Ben", "Lena", "Mia", "Tom", "Paul", "Eva", "Jonas"]
PLACES = ["Kassel", "Bonn", "Hamburg", "Berlin", "Köln"]
PETS = ["Bello", "Minka", "Rex"]
SLOW = 0.2  # seconds: an order this slow was planned, not just run


def triple(rng: random.Random) -> dict[str, Any]:
    p = rng.choice(PEOPLE)
    match rng.randrange(8):
        case 0:
            return tripel(p, "wohnt_in", rng.choice(PLACES))
        case 1:
            return tripel(p, "beruf", wert=rng.choice(["Ärztin", "Lehrer", "Koch"]))
        case 2:
            return tripel(p, "geschwister", rng.choice(PEOPLE))
        case 3:
            return tripel(p, "hat_haustier", rng.choice(PETS))
        case 4:
            return tripel(p, "hobby", wert=rng.choice(["Schach", "Laufen"]))
        case 5:
            return tripel(p, "befreundet_mit", rng.choice(PEOPLE))
        case 6:
            return tripel(p, "partner", rng.choice(PEOPLE))
        case _:
            return tripel(rng.choice(PLACES), "liegt_in", "Deutschland")


def order(user: str, auftrag_id: str, triples: list[dict[str, Any]]) -> dict[str, Any]:
    return {"auftrag_id": auftrag_id, "user_id": user, "character_id": "nova", "tripel": triples}


class AllAtOnce(FirstRuns):
    """Sends every run at once, a query's first run or not (the library's way before
    `FirstRuns`)."""

    @asynccontextmanager
    async def alone(self, name: str, bound: float) -> AsyncIterator[None]:
        yield


async def burst(settings: Settings, n: int, first_runs_alone: bool = True) -> float:
    """Seconds until `n` concurrent orders of one user are all answered."""
    user = f"cold-{uuid.uuid4().hex[:8]}"
    async with await Memory.open(settings) as memory:
        if not first_runs_alone:
            memory.db.first_runs = AllAtOnce()
        began = time.perf_counter()
        await asyncio.gather(*(
            memory.write(order(user, f"b{i}", [tripel(f"Person {i}", "wohnt_in", "Kassel"),
                                               tripel(f"Person {i}", "hobby", wert="Schach")]))
            for i in range(n)
        ))
        seconds = time.perf_counter() - began
        await memory.purge(user)
    return seconds


async def varied(
    settings: Settings, n: int, seed: int, warm: bool = False
) -> tuple[dict[str, list[float]], int, float]:
    """The orders' and the Mappen's seconds, the plans cached by the end, the warm-up's
    seconds (0.0 without)."""
    rng = random.Random(seed)
    users = [f"cold-{uuid.uuid4().hex[:8]}" for _ in range(10)]
    took: dict[str, list[float]] = {"order": [], "mappen": []}
    written: list[str] = []
    async with await Memory.open(settings) as memory:
        warmed = await memory.warm() if warm else 0.0
        for i in range(n):
            user = rng.choice(users)
            written.append(user)
            triples = [triple(rng) for _ in range(rng.choice([1, 1, 2, 3, 5, 8, 12]))]
            began = time.perf_counter()
            await memory.write(order(user, f"v{i}", triples))
            took["order"].append(time.perf_counter() - began)
            listed = await memory.entities(user, "nova")
            ids = [e.id for e in rng.sample(listed, min(len(listed), rng.choice([1, 1, 2, 5])))]
            began = time.perf_counter()
            await memory.mappen(user, "nova", ids)
            took["mappen"].append(time.perf_counter() - began)
        plans = await memory.db.clear_plans()
        for user in sorted(set(written)):  # a user never drawn has nothing to purge
            await memory.purge(user)
    return took, plans, warmed


def figures(xs: list[float]) -> str:
    ordered = sorted(xs)
    return (
        f"total {sum(xs):6.1f} s  p50 {statistics.median(xs) * 1000:5.0f} ms  "
        f"p90 {ordered[int(0.9 * len(xs))] * 1000:5.0f} ms  max {ordered[-1] * 1000:5.0f} ms  "
        f"over {SLOW * 1000:.0f} ms: {sum(x > SLOW for x in xs):3d}  "
        f"last 100: {sum(xs[-100:]):5.1f} s"
    )


def run(plan_by_size: bool, args: argparse.Namespace) -> list[str]:
    server = LocalServer.disposable("bench-coldstart-", plan_by_size=plan_by_size)
    settings = Settings(neo4j_uri=server.uri, neo4j_password=server.password)
    label = "Neo4j's default (a plan per size)" if plan_by_size else "the launcher's (one plan)"
    try:
        server.start()
        asyncio.run(prepare(settings, args.facts))
        bursts: dict[str, list[float]] = {"first runs alone": [], "every run at once": []}
        for _ in range(args.burst_rounds):
            for how, alone in (("first runs alone", True), ("every run at once", False)):
                server.stop()
                server.start()
                bursts[how].append(asyncio.run(burst(settings, args.burst, alone)))
        lines = [f"{label}:"] + [
            f"  burst of {args.burst} orders of one user after a start, {how}: "
            + ", ".join(f"{s:.1f}" for s in took) + " s"
            for how, took in bursts.items()
        ]
        for warm in (False, True):
            server.stop()
            server.start()
            took, plans, warmed = asyncio.run(varied(settings, args.orders, args.seed, warm))
            after = f"a warm-up ({warmed:.1f} s)" if warm else "a start"
            lines += [
                f"  {args.orders} varied orders after {after}, {plans} plans cached:",
                f"    the orders:  {figures(took['order'])}",
                f"    their Mappen: {figures(took['mappen'])}",
            ]
    finally:
        server.stop()
        shutil.rmtree(server.home, ignore_errors=True)
    return lines


async def prepare(settings: Settings, facts: int) -> None:
    """The schema, and `facts` generated facts (bench/generate.py): on an empty store the
    statistics change with every order, and the server replans for that instead."""
    async with await Memory.open(settings, check_schema=False) as memory:
        await schema.apply(memory.db)

    def graphs() -> Iterator[UserGraph]:
        loaded = 0
        for g in users(Config(prefix="coldstart"), canon):
            if loaded >= facts:
                return
            loaded += len(g.facts)
            yield g

    async with await Memory.open(settings) as memory:
        canon = memory.canon
        await BulkLoader(memory.db, canon).load(graphs())
        await memory.db.driver.execute_query(
            "CALL db.prepareForReplanning()", database_=memory.db.name
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--orders", type=int, default=250)
    ap.add_argument("--burst", type=int, default=12)
    ap.add_argument("--burst-rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--facts", type=int, default=100_000, help="generated facts loaded first")
    ap.add_argument("--only", choices=("launcher",), help="skip Neo4j's default")
    args = ap.parse_args()
    began = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    lines = [f"bench.coldstart {began}, seed {args.seed}, {args.facts:,} facts loaded first"]
    for plan_by_size in (False,) if args.only else (True, False):
        ran = run(plan_by_size, args)
        print("\n".join(ran), flush=True)
        lines += ran
    print("\n".join(lines))


if __name__ == "__main__":
    main()
