"""The write path, measured on its own: 5-triple orders through `Memory.write`.

Two kinds of user: fresh ones (the bench's write loop, `bench.writes.order`) and users
with a long history, whose few people had their residence and job superseded `--history`
times each (as the bench's writer users have by the 1 M step). Prints, for each:

- one writer: p50 / p95 / p99 of a whole order;
- four writers on distinct users: orders/s;
- where one writer's time goes, client side: each query's round trip (sent, answered,
  decoded), the state's decoding and the plan in Python, the COMMIT's round trip, and
  the rest (the session, the retry wrapper, the Python around them);
- with `--profile`: the server's `PROFILE` of each query of an order on a history user
  (rolled back), db hits and time per operator that costs anything;
- with `--queued`: one writer's orders, alternately with `order_apply` sent with the
  COMMIT (`Tx.with_commit`, the writer's way) and waited for before it (the way before
  2026-12-03), p50 / p95 of each and their ratio, in the same process and store.

Run against a started server (the history is built once per store and reused):

    NEO4J_URI=bolt://127.0.0.1:7740 python -m bench.writepath [--history 200] [--profile]

To compare with another version of the code in the same store, run this file with that
version first on the path (a `git worktree` of it):

    PYTHONPATH=/tmp/base NEO4J_URI=... python bench/writepath.py
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import kg
import kg.writer
from bench.writes import order
from kg import db as kg_db
from kg.api import Memory
from kg.plan import Planner
from kg.settings import Settings

PEOPLE = 4  # per history user: each order revisits one of them
ORDERS = 150  # per writer and measurement


# -- client-side timing of the phases -----------------------------------------------

phases: dict[str, list[float]] = defaultdict(list)
captured: dict[str, dict[str, Any]] = {}


@contextmanager
def timed(name: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        phases[name].append(time.perf_counter() - start)


def instrument() -> None:
    """Time each named query's round trip, the state's decoding and the plan, by
    wrapping them (whatever queries the installed writer sends)."""
    rows = kg_db.Tx.rows

    async def timed_rows(
        self: kg_db.Tx, name: str, params: dict[str, Any], decode: Callable[[Any], Any]
    ) -> list[Any]:
        captured[name] = params
        with timed(f"query {name}"):
            return await rows(self, name, params, decode)

    kg_db.Tx.rows = timed_rows  # type: ignore[method-assign]
    # The last query, queued to go with the COMMIT where the installed writer does so:
    # its round trip is the COMMIT's.
    with_commit = getattr(kg_db.Tx, "with_commit", None)
    if with_commit is not None:

        async def timed_with_commit(self: kg_db.Tx, name: str, /, **params: Any) -> None:
            captured[name] = params
            with timed(f"queue {name} (sent with the COMMIT)"):
                await with_commit(self, name, **params)

        kg_db.Tx.with_commit = timed_with_commit  # type: ignore[method-assign]

    def wrap(owner: Any, attr: str, label: str) -> None:
        inner: Callable[..., Any] = getattr(owner, attr)

        def outer(*args: Any, **kwargs: Any) -> Any:
            with timed(label):
                return inner(*args, **kwargs)

        setattr(owner, attr, outer)

    wrap(kg.writer, "to_state", "python: decode the state")
    wrap(Planner, "plan", "python: plan")
    # The COMMIT's round trip, and the release of the connection after it (the driver's
    # `_commit`, private: where it is gone, not timed).
    try:
        from neo4j._async.work.transaction import AsyncTransactionBase
    except ImportError:
        return
    commit = getattr(AsyncTransactionBase, "_commit", None)
    if commit is not None:

        async def timed_commit(self: Any) -> Any:
            with timed("commit (round trip, release)"):
                return await commit(self)

        AsyncTransactionBase._commit = timed_commit  # type: ignore[method-assign]


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] * 1000


# -- the store ----------------------------------------------------------------------


async def history_users(memory: Memory, count: int, history: int) -> list[str]:
    """Users whose people have `history` superseded residences and jobs each, built
    once per store (by the writer itself, four users at a time)."""
    names = [f"writepath-h{history}-{n}" for n in range(count)]

    async def build(user: str) -> None:
        last = history * PEOPLE - 1
        if (await memory.write(order(user, last, PEOPLE, "history"))).wiederholt:
            return  # built before (the orders in between are replays if it was cut off)
        for i in range(last):
            await memory.write(order(user, i, PEOPLE, "history"))

    began = time.perf_counter()
    await asyncio.gather(*(build(u) for u in names))
    print(
        f"history: {count} users x {PEOPLE} people x {history} versions "
        f"ready in {time.perf_counter() - began:.0f} s"
    )
    return names


async def measure(memory: Memory, label: str, users: list[str], people: int) -> None:
    run = f"m{uuid.uuid4().hex[:6]}"
    # One writer, with its phases.
    phases.clear()
    latencies = []
    for i in range(ORDERS):
        start = time.perf_counter()
        await memory.write(order(users[0], i, people, run))
        latencies.append(time.perf_counter() - start)
    total = sum(latencies)
    print(
        f"{label}, 1 writer: p50 {pct(latencies, 0.5):.2f} ms, p95 {pct(latencies, 0.95):.2f} "
        f"ms, p99 {pct(latencies, 0.99):.2f} ms ({ORDERS} orders)"
    )
    spent = 0.0
    for name, values in phases.items():
        spent += sum(values)
        print(
            f"    {name:<32} p50 {pct(values, 0.5):6.2f} ms  mean/order "
            f"{sum(values) / ORDERS * 1000:6.2f} ms"
        )
    print(
        f"    {'rest: session, retry, Python':<32}        {'':6}   mean/order "
        f"{(total - spent) / ORDERS * 1000:6.2f} ms"
    )
    # Four writers on distinct users.
    run = f"m{uuid.uuid4().hex[:6]}"
    counts = []

    async def writer(user: str) -> None:
        for i in range(ORDERS):
            await memory.write(order(user, i, people, run))
        counts.append(ORDERS)

    began = time.perf_counter()
    await asyncio.gather(*(writer(u) for u in users[:4]))
    wall = time.perf_counter() - began
    print(f"{label}, 4 writers: {sum(counts) / wall:.0f} orders/s ({sum(counts)} orders)")


async def queued_against_waited(
    memory: Memory, rounds: int, prefix: str = "writepath-"
) -> dict[str, list[float]]:
    """One writer on two fresh users, its orders alternately with `order_apply` queued
    for the COMMIT and waited for on its own (the instrumented phases off): each way's
    seconds per order."""
    queued = kg_db.Tx.with_commit

    async def waited(self: kg_db.Tx, name: str, /, **params: Any) -> None:
        await self.rows(name, params, lambda record: record)

    run = f"q{uuid.uuid4().hex[:6]}"
    users = [f"{prefix}q-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    times: dict[str, list[float]] = {"queued": [], "waited": []}
    try:
        for i in range(rounds):
            for way, user in zip(("queued", "waited")[:: 1 if i % 2 else -1], users, strict=True):
                kg_db.Tx.with_commit = (  # type: ignore[method-assign]
                    queued if way == "queued" else waited
                )
                start = time.perf_counter()
                await memory.write(order(user, i, 20, run))
                times[way].append(time.perf_counter() - start)
    finally:
        kg_db.Tx.with_commit = queued  # type: ignore[method-assign]
    return times


def print_queued(times: dict[str, list[float]]) -> None:
    for way, values in times.items():
        print(f"order_apply {way:<7} p50 {pct(values, 0.5):.2f} ms, p95 {pct(values, 0.95):.2f} "
              f"ms ({len(values)} orders)")
    print(f"queued / waited p50: {pct(times['queued'], 0.5) / pct(times['waited'], 0.5):.3f}")


def operators(op: dict[str, Any]) -> list[tuple[str, int, str]]:
    """A profiled plan's operators: type, db hits, details."""
    details = str(op.get("args", {}).get("Details", ""))[:90]
    rows = [(op["operatorType"].split("@")[0], op.get("dbHits", 0), details)]
    for child in op.get("children", []):
        rows += operators(child)
    return rows


async def profile(memory: Memory, user: str) -> None:
    """PROFILE each query of one order on a history user, rolled back."""
    captured.clear()
    await memory.write(order(user, 0, PEOPLE, f"p{uuid.uuid4().hex[:6]}"))
    async with memory.db.driver.session(database=memory.db.name) as session:
        for name, params in captured.items():
            if "auftrag" in params:  # the order is written: profile it as another one
                params = {**params, "auftrag": {**params["auftrag"], "id": uuid.uuid4().hex}}
            tx = await session.begin_transaction()
            try:
                result = await tx.run("PROFILE " + memory.db.queries[name].wire, params)
                summary = await result.consume()
            finally:
                await tx.rollback()
            rows = operators(summary.profile or {})
            server = (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
            print(f"PROFILE {name}: {sum(r[1] for r in rows)} db hits, {server} ms on the server")
            for op, hit, details in sorted(rows, key=lambda r: -r[1])[:6]:
                if hit:
                    print(f"    {hit:7} db hits  {op:<28} {details}")


async def warm_up(memory: Memory) -> list[str]:
    """Warm the driver's pool and the server's query cache: 20 orders, each on a user of
    its own (returned, to be purged)."""
    users = [f"writepath-warm-{uuid.uuid4().hex[:8]}" for _ in range(20)]
    for i, user in enumerate(users):
        await memory.write(order(user, i, 20, "w"))
    return users


async def main() -> None:
    global ORDERS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--history",
        type=int,
        default=200,
        help="superseded versions per person of the history users",
    )
    parser.add_argument("--profile", action="store_true", help="PROFILE the queries too")
    parser.add_argument(
        "--skip", default="", help="leave out 'fresh', 'history' or 'measure' (both: only PROFILE)"
    )
    parser.add_argument("--orders", type=int, default=150, help="per writer and figure")
    parser.add_argument(
        "--queued", type=int, default=0, metavar="ROUNDS",
        help="only: order_apply sent with the COMMIT against waited for, ROUNDS orders each",
    )
    args = parser.parse_args()
    ORDERS = args.orders
    memory = await Memory.open(Settings())
    if args.queued:
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        try:
            warm = await warm_up(memory)
            print_queued(await queued_against_waited(memory, args.queued))
            print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            for user in warm:
                await memory.purge(user)
        finally:
            await memory.close()
        return
    instrument()
    print(
        f"kg from {os.path.dirname(kg.__file__)}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    try:
        for user in await warm_up(memory):
            await memory.purge(user)
        if args.skip not in ("fresh", "measure"):
            fresh = [f"writepath-fresh-{uuid.uuid4().hex[:8]}" for _ in range(4)]
            await measure(memory, "fresh users", fresh, 20)
        if args.skip != "history":
            users = await history_users(memory, 4, args.history)
            if args.skip != "measure":
                await measure(memory, f"history {args.history}", users, PEOPLE)
            if args.profile:
                await profile(memory, users[0])
        print(
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
            f"median of the phases above is per call"
        )
    finally:
        await memory.close()


if __name__ == "__main__":
    asyncio.run(main())
