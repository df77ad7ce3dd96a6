"""A quick write loop: 5-triple orders through the Fakten-Agent, 1 and 4 writers.

Each writer is its own user (orders of one user are serialised by its lock), writing
150 orders that revisit 20 people, 7 cities and 11 pets. Run against a started server:

    python -m bench.writes          # NEO4J_URI etc. as for the library
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

from kg.api import Memory
from kg.errors import KgError
from kg.settings import Settings

ORDERS_PER_WRITER = 150


def order(user: str, i: int, people: int = 20, run: str = "loop") -> dict[str, Any]:
    """The bench's 5-triple order: a person's residence and job (einwertig, superseded on
    a revisit), a pet, a hobby, and where the city lies."""
    person = f"P{i % people}"
    return {
        "auftrag_id": f"{run}-{i}",
        "user_id": user,
        "character_id": "nova",
        "tripel": [
            {
                "subjekt": person,
                "beziehung": "wohnt_in",
                "objekt": f"Stadt{i % 7}",
                "herkunft": "mensch",
            },
            {"subjekt": person, "beziehung": "beruf", "wert": f"B{i % 3}", "herkunft": "mensch"},
            {
                "subjekt": person,
                "beziehung": "hat_haustier",
                "objekt": f"T{i % 11}",
                "herkunft": "nova",
            },
            {"subjekt": person, "beziehung": "hobby", "wert": f"H{i % 5}", "herkunft": "mensch"},
            {
                "subjekt": f"Stadt{i % 7}",
                "beziehung": "liegt_in",
                "objekt": "Land",
                "herkunft": "modell",
            },
        ],
    }


async def main() -> None:
    memory = await Memory.open(Settings())
    try:
        for writers in (1, 4):
            latencies: list[float] = []

            async def writer(latencies: list[float] = latencies) -> None:
                user = f"bench-loop-{uuid.uuid4().hex[:8]}"
                for i in range(ORDERS_PER_WRITER):
                    start = time.perf_counter()
                    await memory.write(order(user, i))
                    latencies.append(time.perf_counter() - start)

            began, cpu = time.perf_counter(), time.process_time()
            await asyncio.gather(*(writer() for _ in range(writers)))
            wall = time.perf_counter() - began
            # The client's one thread and the server share the machine's cores.
            cpu_ms = (time.process_time() - cpu) / len(latencies) * 1000
            latencies.sort()
            p50 = latencies[len(latencies) // 2] * 1000
            p99 = latencies[int(len(latencies) * 0.99)] * 1000
            print(
                f"{writers} writer(s): {len(latencies)} orders, p50 {p50:.2f} ms, "
                f"p99 {p99:.2f} ms, {len(latencies) / wall:.0f} orders/s, "
                f"client CPU {cpu_ms:.2f} ms per order"
            )
    finally:
        await memory.close()


if __name__ == "__main__":
    # No options: the parser answers --help (instead of connecting first).
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    try:
        asyncio.run(main())
    except KgError as exc:  # no server, a wrong password: say so, no traceback
        raise SystemExit(f"error: {exc}") from None
