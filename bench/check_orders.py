"""What `kg check`'s order_results costs: every order's stored result read and parsed.

    python -m bench.check_orders --orders 100000

Writes one 5-triple order for a user of its own (`check-orders-<random>`), copies its
audit record `--orders` times (each copy's result names the copy, as the writer would
have stored it), then times, `--rounds` times each, taking turns: the order check alone,
and the whole `kg check --user` of that user, whose other checks have little to do.
Also the parsing alone, per result, in memory. The user is purged at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid

from bench.queries import attach
from kg.api import SyncMemory
from kg.check import Checks, _SessionPerQuery, result_problem
from kg.db import Database
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--orders", type=int, default=100_000, help="copies of the order")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    user = f"check-orders-{uuid.uuid4().hex[:8]}"
    with SyncMemory(Settings()) as sync:
        memory = sync.memory
        attach(memory.db)
        try:
            sync.run(memory.write(Auftrag.model_validate({
                "auftrag_id": "seed", "user_id": user, "character_id": "nova",
                "tripel": [{**t, "herkunft": "mensch"} for t in ORDER],
            })))
            began = time.monotonic()
            sync.run(copy(memory.db, user, args.orders))
            print(f"planted {args.orders:,} orders in {time.monotonic() - began:.1f} s")
            one = Checks(_SessionPerQuery(memory.db), own_transactions=True)
            alone: list[float] = []
            whole: list[float] = []
            for _ in range(args.rounds):
                began = time.monotonic()
                found = sync.run(one.order_results(user, 5))
                alone.append(time.monotonic() - began)
                assert found.ok, found.samples
                began = time.monotonic()
                report = sync.run(memory.check(user))
                whole.append(time.monotonic() - began)
            rows = sync.run(memory.db.query("order_result_rows", user_id=user))[:10_000]
            began = time.perf_counter()
            for row in rows:
                result_problem(row)
            parse_us = (time.perf_counter() - began) / len(rows) * 1e6
        finally:
            sync.run(memory.purge(user))
    n = args.orders + 1
    print(f"order_results alone   {[round(s, 1) for s in alone]} s, median "
          f"{statistics.median(alone) / n * 1e6:.0f} µs per order")
    print(f"whole check --user    {[round(s, 1) for s in whole]} s "
          f"(violations besides: {[c.name for c in report.violations]})")
    print(f"parsing alone         {parse_us:.1f} µs per result")
    print(f"load average          {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
