"""What `kg check`'s order_results costs: every order's stored result read and parsed.

    python -m bench.check_orders --orders 100000 [--facts 20000]

Writes one 5-triple order for a user of its own (`check-orders-<random>`), copies its
audit record `--orders` times (each copy's result names the copy, as the writer would
have stored it), with `--facts` more facts at Lena (hobbies, in orders of 200), then
times, `--rounds` times each, taking turns: the order check alone,
and the whole `kg check --user` of that user, whose other checks have little to do.
Also the parsing alone, per result, of a page of them in memory. The user is purged at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import uuid
from typing import Any

from bench.queries import attach
from kg.api import SyncMemory
from kg.check import ORDER_PAGE, Checks, SessionPerQuery, read_result
from kg.db import Database
from kg.errors import NothingStored
from kg.models import Auftrag
from kg.settings import Settings

ORDER = [
    {"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "Berlin"},
    {"subjekt": "Lena", "beziehung": "beruf", "wert": "Ärztin"},
    {"subjekt": "Lena", "beziehung": "hat_haustier", "objekt": "Bello"},
    {"subjekt": "Bello", "beziehung": "ist_ein", "wert": "Hund"},
    {"subjekt": "Lena", "beziehung": "partner", "objekt": "Max"},
]


async def copy(db: Database, user: str, copies: int) -> None:
    async with db.auto_commit() as q:  # it batches itself: IN TRANSACTIONS
        await q.run("check_orders_copy", user_id=user, character_id="nova",
                    auftrag_id="seed", copies=copies)


def hobbies(sync: SyncMemory, user: str, facts: int) -> None:
    """`facts` more facts at Lena, as a human of a long chat has them: the facts each
    order names are looked for among the edges of their subject."""
    for first in range(0, facts, 200):
        sync.run(sync.memory.write(Auftrag.model_validate({
            "auftrag_id": f"hobbies-{first}", "user_id": user, "character_id": "nova",
            "tripel": [{"subjekt": "Lena", "beziehung": "hobby", "wert": f"Hobby {i}",
                        "herkunft": "mensch"} for i in range(first, min(first + 200, facts))],
        })))


def measure(
    settings: Settings, orders: int, rounds: int, user: str | None = None, facts: int = 0
) -> dict[str, Any]:
    """The figures of one run (seconds per round, µs per order and per parse), on the
    orders of `user` (by default `check-orders-<random>`), who is purged at the end."""
    user = user or f"check-orders-{uuid.uuid4().hex[:8]}"
    with SyncMemory(settings) as sync:
        memory = sync.memory
        attach(memory.db)
        try:
            sync.run(memory.write(Auftrag.model_validate({
                "auftrag_id": "seed", "user_id": user, "character_id": "nova",
                "tripel": [{**t, "herkunft": "mensch"} for t in ORDER],
            })))
            hobbies(sync, user, facts)
            began = time.monotonic()
            sync.run(copy(memory.db, user, orders))
            planted = time.monotonic() - began
            one = Checks(SessionPerQuery(memory.db), own_transactions=True)
            alone: list[float] = []
            whole: list[float] = []
            for _ in range(rounds):
                began = time.monotonic()
                found = sync.run(one.order_results(user, 5))
                alone.append(time.monotonic() - began)
                if not found.ok:
                    raise SystemExit(f"order_results found the copies broken: {found.samples}")
                began = time.monotonic()
                report = sync.run(memory.check(user))
                whole.append(time.monotonic() - began)
            rows = sync.run(memory.db.query("order_result_page", user_id=user,
                                            character_id="nova", after="", limit=ORDER_PAGE))
            began = time.perf_counter()
            for row in rows:
                read_result(row)
            parse_us = (time.perf_counter() - began) / len(rows) * 1e6
        finally:
            with contextlib.suppress(NothingStored):  # never hide the error that got here
                sync.run(memory.purge(user))
    total = orders + 1 + -(-facts // 200)  # the copies, the seed, the orders of hobbies
    return {
        "orders": total, "planted_s": planted, "alone_s": alone, "whole_s": whole,
        "per_order_us": statistics.median(alone) / total * 1e6, "parse_us": parse_us,
        "other_violations": [c.name for c in report.violations],
        "load": os.getloadavg()[0],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--orders", type=int, default=100_000, help="copies of the order")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--facts", type=int, default=0, help="more facts at the orders' subject")
    args = p.parse_args()
    f = measure(Settings(), args.orders, args.rounds, facts=args.facts)
    print(f"planted {f['orders']:,} orders in {f['planted_s']:.1f} s "
          f"({args.facts:,} more facts at their subject)")
    print(f"order_results alone   {[round(s, 1) for s in f['alone_s']]} s, median "
          f"{f['per_order_us']:.0f} µs per order")
    print(f"whole check --user    {[round(s, 1) for s in f['whole_s']]} s "
          f"(violations besides: {f['other_violations']})")
    print(f"parsing alone         {f['parse_us']:.1f} µs per result")
    print(f"load average          {f['load']:.2f}")


if __name__ == "__main__":
    main()
