"""Run the benchmark suite: grow the store to each size and measure it.

    python -m bench.run --sizes 10k,100k,1M

against an EMPTY database of its own (see bench/README.md for the commands that start
one). The store grows from one size to the next (user i of the seed is always the same
graph), and at each size it measures the floor (the library's path, a held session's
`session.run` and `execute_query`), the Mappe (current and as of a past instant), the
turn's Mappen (5 entities in one call), the naive baseline, PostgreSQL 15 (one dossier
and a turn's five), writes, the bulk load, the CLI start (with bench/cli_start.py), the
decay sweep and memory, each phase with the machine's load average, and holds the
largest size to the goals (bench/report.py). Every run writes files of its own,
bench/results/<stamp>.json and .md (the stamp is the start, UTC, e.g. 2026-11-30T1745:
results are never overwritten); the plot goes to docs/bench-mappe.png and the README's
figures table is regenerated from the run.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import importlib.util
import io
import json
import math
import os
import platform
import pstats
import random
import resource
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from neo4j import RoutingControl

from bench import bulk, report
from bench.generate import JOBS, Config, UserGraph, user
from bench.loadavg import LoadSampler
from bench.naive import Naive
from kg.api import Memory
from kg.decay import moment
from kg.mappe import mappe_params
from kg.models import Auftrag
from kg.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def parse_size(text: str) -> int:
    text = text.strip().lower().replace("_", "")
    factor = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * factor)


def _non_negative(text: str) -> int:
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative: give 0 or more")
    return n


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is less than 1: give 1 or more")
    return n


def size_label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


def stats(ms: list[float]) -> dict[str, float]:
    """Nearest-rank percentiles of a list of milliseconds."""
    xs = sorted(ms)
    if not xs:
        return {"n": 0}

    def pct(q: float) -> float:
        return round(xs[max(0, math.ceil(q * len(xs)) - 1)], 3)

    return {
        "n": len(xs),
        "p50": pct(0.50),
        "p95": pct(0.95),
        "p99": pct(0.99),
        "max": round(xs[-1], 3),
        "mean": round(sum(xs) / len(xs), 3),
    }


async def timed(
    calls: Sequence[Callable[[], Awaitable[Any]]], warm: int | None = None
) -> list[float]:
    """Run the first `warm` calls (all by default) as a warm-up pass, then time every
    call once; milliseconds."""
    for call in calls[: len(calls) if warm is None else warm]:
        await call()
    out = []
    for call in calls:
        t = time.perf_counter_ns()
        await call()
        out.append((time.perf_counter_ns() - t) / 1e6)
    return out


@dataclass
class Sample:
    user_id: str
    character_id: str
    entity_id: str
    kind: str
    name: str
    #: The entities a turn that names this one binds: itself first, then up to four more
    #: of the same user known to the same character (the turn reader reads them at once).
    turn: list[str] = field(default_factory=list)


TURN = 5  # entities per turn for the turn reader


def turn_of(g: UserGraph, character_id: str, entity_id: str) -> list[str]:
    """`entity_id` and up to TURN - 1 other entities of the user in the pair, drawn
    deterministically (the same entity always gets the same turn)."""
    others = sorted(e.id for e in g.entities if character_id in e.characters and e.id != entity_id)
    rng = random.Random(f"turn:{character_id}:{entity_id}")
    return [entity_id, *rng.sample(others, min(TURN - 1, len(others)))]


@dataclass
class Reservoir:
    """Deterministic reservoir sampling over the entities as users stream by."""

    k: int
    rng: random.Random
    items: list[Sample] = field(default_factory=list)
    seen: int = 0

    def add(self, item: Sample) -> bool:
        """Offer an item; True if it was kept."""
        self.seen += 1
        if len(self.items) < self.k:
            self.items.append(item)
            return True
        j = self.rng.randrange(self.seen)
        if j < self.k:
            self.items[j] = item
            return True
        return False


@dataclass
class Grower:
    """The users loaded so far and what the measurements draw from them."""

    cfg: Config
    memory: Memory
    reservoir: Reservoir
    next_index: int = 0
    facts: int = 0
    hubs: list[Sample] = field(default_factory=list)
    #: Users no order has touched yet, oldest first (each round of writes takes new ones).
    writers: list[tuple[str, list[str], list[str]]] = field(default_factory=list)
    #: Users orders were written on (their facts differ from PostgreSQL's copy).
    written: set[str] = field(default_factory=set)
    #: The write warm-up's users, to write on again once no untouched ones are to spare.
    warmed: list[tuple[str, list[str], list[str]]] = field(default_factory=list)

    def stream(self, target: int, seen: Callable[[UserGraph], None]) -> Iterator[UserGraph]:
        while self.facts < target:
            g = user(self.cfg, self.memory.canon, self.next_index)
            self.next_index += 1
            self.facts += len(g.facts)
            seen(g)
            yield g

    def observe(self, g: UserGraph) -> None:
        for e in g.entities:
            for char in sorted(e.characters):
                sample = Sample(g.user_id, char, e.id, e.kind, e.name)
                if self.reservoir.add(sample):
                    sample.turn = turn_of(g, char, e.id)
        self.hubs += [Sample(g.user_id, "nova", h.id, h.kind, h.name) for h in g.hubs]
        if len(self.writers) < WRITER_POOL and not g.hubs:
            people = [e.name for e in g.entities if e.kind == "person" and "nova" in e.characters]
            cities = [e.name for e in g.entities if e.kind == "ort" and "nova" in e.characters]
            if people and cities:
                self.writers.append((g.user_id, people[:20], cities))

    def take(self, n: int) -> list[tuple[str, list[str], list[str]]]:
        """`n` users no order has touched yet, for one round of writes."""
        if len(self.writers) < n:
            raise SystemExit(
                f"only {len(self.writers)} users left to write on, {n} needed: fewer "
                "--write-rounds, or larger --sizes"
            )
        out, self.writers = self.writers[:n], self.writers[n:]
        self.written.update(user_id for user_id, *_ in out)
        return out

    def warm_users(self, n: int, keep: int) -> list[tuple[str, list[str], list[str]]]:
        """`n` users for the write warm-up: untouched ones while `keep` remain for the
        timed rounds, then the warm-up's own again, in turn (untimed, so their longer
        histories cost nothing but the warm-up's time)."""
        if len(self.writers) - n >= keep:
            out = self.take(n)
            self.warmed += out
            return out
        if len(self.warmed) < n:
            raise SystemExit(
                f"only {len(self.writers)} users left to write on, {keep} kept for the "
                "timed rounds: fewer --write-rounds, or larger --sizes"
            )
        self.warmed = self.warmed[n:] + self.warmed[:n]
        return self.warmed[-n:]


# -- the measurements ----------------------------------------------------------------


def mappe_query(memory: Memory, s: Sample) -> Callable[[], Awaitable[Any]]:
    """The Mappe's one query without mapping to the model: where the Python cost lies."""
    db = memory.db
    params = mappe_params(db.settings, memory.canon, s.user_id, s.character_id, [s.entity_id])
    return lambda: db.plain_query("mappe", **params)


@dataclass(frozen=True)
class AsOf:
    """The point of the as-of reader: valid at `gueltig_am`, as known at `bekannt_am`."""

    gueltig_am: datetime
    bekannt_am: datetime


def as_of_point(today: date, loaded_at: datetime) -> AsOf:
    """A year before `today` lies inside the generated data (facts were recorded over the
    three years before it, superseded values began 400-1,400 days back); known as of the
    moment after the load, so the read takes every loaded version."""
    return AsOf(gueltig_am=moment(today) - timedelta(days=365), bekannt_am=loaded_at)


async def reads(
    memory: Memory,
    naive: Naive,
    dossier: Any,
    samples: list[Sample],
    asof: AsOf,
    seed: int = 0,
) -> dict[str, list[float]]:
    """Every reader on every sampled entity, interleaved (the floor three ways, Mappe,
    the turn's Mappen, as-of Mappe, Mappe query, naive, SQL floor, SQL per entity, SQL
    per turn), so load from elsewhere on the machine falls on all of them alike. A
    warm-up pass over every entity comes first (naive: the first 100).

    The readers run in a new order for each entity (shuffled, seeded by `seed`): a reader
    pays or gains for what ran just before it, so in a fixed order each figure carried
    its neighbours' effect. There the held-session floor always followed another ping,
    the Mappe query alone the as-of read of the same entity, and the Mappe came three
    pings after the naive reader's dozens of queries. On the 1M store, four runs each,
    alternating: Mappe p50 1.20-1.43 ms in the fixed order, 1.14-1.27 ms shuffled;
    held-session floor 0.34-0.35 ms fixed, 0.39-0.44 ms shuffled.

    The floor is `RETURN 1` (the registry's `ping`) sent three ways: the library's path
    (`Database.query`, as the Mappe goes), `session.run` in a session held for the whole
    phase, and `driver.execute_query`; the last two are the driver's own round trips, the
    cheaper of them the floor the Mappe is held to."""
    db = memory.db
    ping = db.queries["ping"].wire
    held = db.driver.session(database=db.name, default_access_mode="READ")

    async def floor_session() -> None:
        result = await held.run(ping)
        await result.single()

    async def floor_execute_query() -> None:
        await db.driver.execute_query(ping, database_=db.name, routing_=RoutingControl.READ)

    async def pg_read(s: Sample) -> None:
        dossier.read(s.user_id, s.character_id, s.entity_id)

    async def pg_turn(s: Sample) -> None:
        dossier.read_many(s.user_id, s.character_id, s.turn)

    async def pg_ping() -> None:
        dossier.ping()

    def readers(s: Sample) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
        out: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("floor", lambda: db.query("ping")),
            ("floor_session", floor_session),
            ("floor_execute_query", floor_execute_query),
            ("mappe", lambda: memory.mappe(s.user_id, s.character_id, s.entity_id)),
            ("mappen_turn", lambda: memory.mappen(s.user_id, s.character_id, s.turn)),
            (
                "mappe_asof",
                lambda: memory.mappe(
                    s.user_id,
                    s.character_id,
                    s.entity_id,
                    gueltig_am=asof.gueltig_am,
                    bekannt_am=asof.bekannt_am,
                ),
            ),
            ("mappe_query", mappe_query(memory, s)),
            ("naive", lambda: naive.mappe(s.user_id, s.character_id, s.entity_id)),
        ]
        if dossier is not None:
            out += [
                ("pg_floor", pg_ping),
                ("postgres", lambda: pg_read(s)),
                ("postgres_turn", lambda: pg_turn(s)),
            ]
        return out

    rng = random.Random(seed)

    def shuffled(s: Sample) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
        order = readers(s)
        rng.shuffle(order)
        return order

    try:
        for i, s in enumerate(samples):
            for name, call in shuffled(s):
                if name != "naive" or i < 100:
                    await call()
        series: dict[str, list[float]] = {}
        for s in samples:
            for name, call in shuffled(s):
                t = time.perf_counter_ns()
                await call()
                series.setdefault(name, []).append((time.perf_counter_ns() - t) / 1e6)
        return series
    finally:
        await held.close()


#: Seconds the store sits idle before each call of `idle_reads`: a chat reads the Mappe
#: once per turn, with the user's typing in between, not in a tight loop.
IDLE_PAUSE = 0.05
#: Entities `idle_reads` times (each reader once per entity: ~4 × 50 ms of pauses each).
IDLE_SAMPLES = 60


async def idle_reads(
    memory: Memory,
    dossier: Any,
    samples: list[Sample],
    pause: float = IDLE_PAUSE,
    seed: int = 0,
) -> dict[str, list[float]]:
    """The floor, the Mappe and PostgreSQL's floor and dossier, each after `pause`
    seconds in which the bench sent nothing, in a new random order for each entity.

    In `reads` the calls follow each other within a millisecond or two. Measured on the
    1M store (2026-12-02, `RETURN 1` through the library, 300 calls per pause): p50 0.41 ms
    back to back, 0.81 ms after 2 ms idle, 1.45 ms after 5, 1.94 ms after 10, 2.13 ms after
    50; PostgreSQL's `SELECT 1` (psycopg) 0.07, 0.11, 0.22, 0.33 and 0.52 ms. A chat's
    read comes after seconds: this is its figure, beside the goals' interleaved one."""
    db = memory.db

    def readers(s: Sample) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
        async def pg_ping() -> None:
            dossier.ping()

        async def pg_read() -> None:
            dossier.read(s.user_id, s.character_id, s.entity_id)

        out: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("floor", lambda: db.query("ping")),
            ("mappe", lambda: memory.mappe(s.user_id, s.character_id, s.entity_id)),
        ]
        if dossier is not None:
            out += [("pg_floor", pg_ping), ("postgres", pg_read)]
        return out

    rng = random.Random(seed)
    series: dict[str, list[float]] = {}
    for s in samples:
        order = readers(s)
        rng.shuffle(order)
        for name, call in order:
            time.sleep(pause)  # the whole process idles, as a chat backend between turns
            t = time.perf_counter_ns()
            await call()
            series.setdefault(name, []).append((time.perf_counter_ns() - t) / 1e6)
    return series


async def parity(
    memory: Memory,
    naive: Naive,
    pg: Any,
    samples: list[Sample],
    written: set[str],
    asof: AsOf,
) -> dict[str, Any]:
    """Do the three readers return the same facts? (ids of facts, history, derived)
    Also counts the entities whose as-of Mappe differs from the current one (its facts
    or history): the as-of reader has older versions to read, not a copy of today."""
    same_naive = same_pg = compared = asof_differs = 0
    turn_equal = turn_pg_equal = 0
    differ: list[str] = []

    def ids(m: Any) -> tuple[Any, ...]:
        return (
            [f.id for f in m.fakten],
            sorted(h.id for h in m.historie),
            sorted(d.objekt.id for d in m.abgeleitet),
            m.typ,
        )

    def sql_ids(p: dict[str, Any]) -> tuple[Any, ...]:
        return (
            [f["id"] for f in p["fakten"]],
            sorted(h["id"] for h in p["historie"]),
            sorted(d["x_id"] for d in p["abgeleitet"]),
            p["typ"],
        )

    for s in samples:
        m = await memory.mappe(s.user_id, s.character_id, s.entity_id)
        # The turn reader: the Mappen of the turn in one call are the single Mappen.
        turn = await memory.mappen(s.user_id, s.character_id, s.turn)
        singles = [m] + [
            await memory.mappe(s.user_id, s.character_id, e) for e in s.turn[1:]
        ]
        turn_equal += [ids(x) for x in turn] == [ids(x) for x in singles]
        if [ids(x) for x in turn] != [ids(x) for x in singles]:
            differ.append(f"turn {s.entity_id}")
        past = await memory.mappe(
            s.user_id,
            s.character_id,
            s.entity_id,
            gueltig_am=asof.gueltig_am,
            bekannt_am=asof.bekannt_am,
        )
        asof_differs += (
            sorted(f.id for f in past.fakten),
            sorted(h.id for h in past.historie),
        ) != (sorted(f.id for f in m.fakten), sorted(h.id for h in m.historie))
        mine = ids(m)
        n = await naive.mappe(s.user_id, s.character_id, s.entity_id)
        theirs = (n["fakten"], sorted(n["historie"]), sorted(n["abgeleitet"]), n["typ"])
        same_naive += mine == theirs
        if mine != theirs:
            differ.append(f"naive {s.entity_id}")
        if pg is not None and s.user_id not in written:  # SQL never saw the writes
            compared += 1
            sql = sql_ids(pg.read(s.user_id, s.character_id, s.entity_id))
            same_pg += mine == sql
            if mine != sql:
                differ.append(f"postgres {s.entity_id}")
            sql_turn = [sql_ids(p) for p in pg.read_many(s.user_id, s.character_id, s.turn)]
            turn_pg_equal += sql_turn == [ids(x) for x in turn]
            if sql_turn != [ids(x) for x in turn]:
                differ.append(f"postgres turn {s.entity_id}")
    return {
        "checked": len(samples),
        "naive_equal": same_naive,
        "turn_equal": turn_equal,
        "postgres_checked": compared,
        "postgres_equal": same_pg if pg is not None else None,
        "postgres_turn_equal": turn_pg_equal if pg is not None else None,
        "differ": differ[:10],
        "asof_differs_from_current": asof_differs,
    }


#: Untimed orders before the write phases of each size (see `warm_writes`), four writers
#: at once: 8,000 since 2026-12-02, run T0157 on (20, then 200 before; see bench/README.md,
#: "seventh" and "eighth").
WRITE_WARMUP = 8000
#: Untouched users the bench keeps at hand for writing: the warm-up's (four every 200
#: orders: 160 for 8,000) and the timed rounds' (5 per round with the settings of 1 and
#: 4 writers).
WRITER_POOL = 200
#: Warm-up users are new every this many orders, so no person's history grows long.
WARM_USER_ORDERS = 50
#: Timed rounds per writer setting (since 2026-12-02; one before): see `write_figures`.
WRITE_ROUNDS = 5


@dataclass
class WritePhase:
    """One timed phase of orders: each order's latency (ms), the phase's wall time (s)
    and how many orders ended in each status."""

    latencies: list[float]
    seconds: float
    statuses: dict[str, int]

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds


async def writes(
    memory: Memory,
    writers: list[tuple[str, list[str], list[str]]],
    concurrency: int,
    orders: int,
    tag: str,
) -> WritePhase:
    """5-triple orders through the Fakten-Agent; `concurrency` writers, one user each."""
    per_writer = max(1, orders // concurrency)
    latencies: list[float] = []
    statuses: dict[str, int] = {}

    def order(user_id: str, people: list[str], cities: list[str], k: int) -> Auftrag:
        person = people[k % len(people)]
        friend = f"Freund {tag}-{k}"
        return Auftrag.model_validate(
            {
                "auftrag_id": f"bench-{tag}-{user_id}-{k}",
                "user_id": user_id,
                "character_id": "nova",
                "tripel": [
                    {
                        "subjekt": person,
                        "beziehung": "wohnt_in",
                        "objekt": cities[k % len(cities)],
                        "herkunft": "mensch",
                    },
                    {
                        "subjekt": person,
                        "beziehung": "hobby",
                        "wert": f"Hobby {tag}-{k}",
                        "herkunft": "mensch",
                    },
                    {
                        "subjekt": person,
                        "beziehung": "beruf",
                        "wert": JOBS[k % len(JOBS)],
                        "herkunft": "mensch",
                    },
                    {
                        "subjekt": person,
                        "beziehung": "befreundet_mit",
                        "objekt": friend,
                        "herkunft": "nova",
                    },
                    {
                        "subjekt": friend,
                        "beziehung": "wohnt_in",
                        "objekt": cities[(k + 1) % len(cities)],
                        "herkunft": "nova",
                    },
                ],
            }
        )

    async def writer(user_id: str, people: list[str], cities: list[str]) -> None:
        for k in range(per_writer):
            auftrag = order(user_id, people, cities, k)
            t = time.perf_counter_ns()
            result = await memory.write(auftrag)
            latencies.append((time.perf_counter_ns() - t) / 1e6)
            statuses[result.status] = statuses.get(result.status, 0) + 1

    start = time.perf_counter()
    await asyncio.gather(*(writer(*w) for w in writers[:concurrency]))
    return WritePhase(latencies, time.perf_counter() - start, statuses)


async def warm_writes(
    memory: Memory,
    users: Callable[[int], list[tuple[str, list[str], list[str]]]],
    orders: int,
    tag: str,
) -> dict[str, Any]:
    """Untimed orders of the timed phases' shape, four writers at once, until `orders`
    are written: four new users from `users` every WARM_USER_ORDERS orders each
    (`Grower.warm_users`: generated users, as the timed rounds write on; fresh ones,
    named by name only, warmed the server for a kind of user the timed rounds then did
    not find: run 2026-12-02T0205, four writers' first timed rounds at 94 and 132
    orders/s after the warm-up's last at 206-247).

    The server's JIT compiler takes thousands of orders to settle on the writer's code
    (measured with bench.serverprofile on a restarted server: it still took a third to a
    half of the server's CPU after 200 orders, four writers reached ~135 orders/s after
    1,000, ~210 after 3,000, 240-320 after 6,000-9,000, 340-410 after ~12,000); the first
    orders after a size step also plan the writer's queries again (the statistics changed
    tenfold). A chat backend writes after every turn, on a server that runs for days: the
    steady state is the figure. The timed rounds' users are never among the warm-up's.
    Returns the warm-up's own rate, round by round (the way there)."""
    rates: list[float] = []
    done = 0
    start = time.perf_counter()
    while done < orders:
        n = min(4 * WARM_USER_ORDERS, orders - done)
        phase = await writes(memory, users(4), 4, n, f"{tag}-{len(rates)}")
        rates.append(round(phase.rate, 1))
        done += len(phase.latencies)
    seconds = time.perf_counter() - start
    return {
        "orders": done,
        "seconds": round(seconds, 2),
        "orders_per_s": round(done / seconds, 1) if seconds else None,
        "first_rounds_per_s": rates[:3],
        "last_rounds_per_s": rates[-3:],
    }


def write_figures(concurrency: int, phases: list[WritePhase]) -> dict[str, Any]:
    """The figures of one writer setting over its rounds: latency percentiles over every
    order of every round; orders/s the median of the rounds' rates (each round's, and
    their spread, kept beside it). A round of 200 orders lasts about a second, so a
    single stall of the host (~0.2-0.5 s seen in Neo4j's pause monitor) moved one
    round's rate by a quarter; the median of several is not at its mercy."""
    latencies = [ms for p in phases for ms in p.latencies]
    statuses: dict[str, int] = {}
    for p in phases:
        for status, n in p.statuses.items():
            statuses[status] = statuses.get(status, 0) + n
    rates = [round(p.rate, 1) for p in phases]
    return {
        "writers": concurrency,
        "rounds": len(phases),
        "orders": len(latencies),
        "seconds": round(sum(p.seconds for p in phases), 3),
        "orders_per_s": round(statistics.median(p.rate for p in phases), 1),
        "orders_per_s_rounds": rates,
        "statuses": statuses,
        **{k: v for k, v in stats(latencies).items() if k != "n"},
    }


def cli_start(s: Sample, runs: int) -> dict[str, Any] | None:
    """`kg mappe <entity> --json` as a whole process, `runs` times after 3 warm-up runs:
    wall p50 / p95 and CPU per run (seconds). Timed the way `bench/cli_start.py` times
    it, with its command; None when that script is not part of this checkout."""
    if importlib.util.find_spec("bench.cli_start") is None:
        return None
    from bench import cli_start as script

    command = getattr(script, "kg_command", None)
    time_runs = getattr(script, "timed", None)
    if command is None or time_runs is None:
        return None
    argv = [*command(), "mappe", s.entity_id, "-u", s.user_id, "-c", s.character_id, "--json"]
    walls, cpu = time_runs(argv, runs)
    ms = stats([w * 1000 for w in walls])
    return {
        "runs": runs,
        "p50_s": round(ms["p50"] / 1000, 3),
        "p95_s": round(ms["p95"] / 1000, 3),
        "cpu_s_per_run": round(cpu, 3),
    }


async def heap_used(memory: Memory) -> int | None:
    records, _, _ = await memory.db.driver.execute_query(
        "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes "
        "RETURN attributes.HeapMemoryUsage.value.properties.used AS used",
        database_=memory.db.name,
    )
    return int(records[0]["used"]) if records else None


def du(path: Path) -> int | None:
    if not path.exists():
        return None
    total = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total


def rss_peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def profile_mappe(memory: Memory, s: Sample, asof: AsOf | None = None) -> dict[str, Any]:
    """PROFILE of the mappe query for one entity (current, or as of `asof`): db hits per
    operator, biggest first."""
    params = mappe_params(
        memory.db.settings, memory.canon, s.user_id, s.character_id, [s.entity_id],
        gueltig_am=asof.gueltig_am if asof else None,
        bekannt_am=asof.bekannt_am if asof else None,
    )
    text = "PROFILE " + memory.db.queries["mappe"].wire
    async with memory.db.driver.session(database=memory.db.name) as session:
        result = await session.run(text, params)
        summary = await result.consume()
    plan = summary.profile or {}
    ops: list[dict[str, Any]] = []

    def walk(node: dict[str, Any], depth: int) -> None:
        args = node.get("args", {})
        ops.append(
            {
                "depth": depth,
                "operator": node.get("operatorType", "?").split("@")[0],
                "db_hits": node.get("dbHits", 0),
                "rows": node.get("rows", 0),
                "details": str(args.get("Details", ""))[:160],
            }
        )
        for child in node.get("children", []):
            walk(child, depth + 1)

    walk(plan, 0)
    return {
        "entity": asdict(s),
        "db_hits": sum(o["db_hits"] for o in ops),
        "available_after_ms": summary.result_available_after,
        "top": sorted(ops, key=lambda o: -o["db_hits"])[:10],
        "plan": ops,
    }


async def python_profile(memory: Memory, samples: list[Sample]) -> list[dict[str, Any]]:
    """Where the Mappe's Python time goes (cProfile over the library call)."""
    prof = cProfile.Profile()
    prof.enable()
    for s in samples:
        await memory.mappe(s.user_id, s.character_id, s.entity_id)
    prof.disable()
    out = io.StringIO()
    st = pstats.Stats(prof, stream=out)
    rows = []
    for (filename, _line, func), (_cc, _nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        rows.append(
            {
                "function": f"{Path(filename).name}:{func}",
                "tottime_ms": tt * 1000,
                "cumtime_ms": ct * 1000,
            }
        )
    per = len(samples) or 1
    top = sorted(rows, key=lambda r: -r["tottime_ms"])[:12]
    return [
        {
            "function": r["function"],
            "self_ms_per_mappe": round(r["tottime_ms"] / per, 4),
            "cum_ms_per_mappe": round(r["cumtime_ms"] / per, 4),
        }
        for r in top
    ]


# -- one size ----------------------------------------------------------------------


async def measure(
    args: argparse.Namespace,
    memory: Memory,
    grower: Grower,
    target: int,
    pg: Any,
    result: dict[str, Any],
    sampler: LoadSampler,
) -> dict[str, Any]:
    label = size_label(target)
    load: dict[str, Any] = {}  # the load average over each phase, by phase
    out: dict[str, Any] = {"size": label, "target_facts": target, "loadavg": load}
    log = result["log"]

    def say(text: str) -> None:
        line = f"[{datetime.now(UTC):%H:%M:%S}] {label}: {text}"
        print(line, flush=True)
        log.append(line)

    first_index = grower.next_index
    say(f"loading into Neo4j from user {first_index}")
    loader = bulk.BulkLoader(
        memory.db, memory.canon, batch_facts=args.batch, concurrency=args.load_concurrency
    )
    with sampler.phase(load, "load"):
        loaded = await loader.load(grower.stream(target, grower.observe))
    out["load"] = {
        "users": loaded.users,
        "facts": loaded.facts,
        "entities": loaded.entities,
        "eintraege": loaded.eintraege,
        "batches": loaded.batches,
        "seconds": round(loaded.seconds, 2),
        "facts_per_s": round(loaded.facts_per_s),
    }
    say(f"loaded {loaded.facts} facts in {loaded.seconds:.1f} s ({loaded.facts_per_s:,.0f}/s)")
    # Neo4j samples an index in the background once enough of it changed, and replans a
    # query whose statistics moved at its next use: 200-450 ms each, which run
    # 2026-12-01T0820 still met in the timed 1-writer phase ("Discarded stale query ...
    # IndexSelectivity" in debug.log). Resample now, wait, clear the plans.
    await memory.db.driver.execute_query(
        "CALL db.prepareForReplanning()", database_=memory.db.name
    )
    status = await memory.status()
    out["store"] = {
        "users": grower.next_index,
        "entities": status.entities,
        "facts": status.facts,
        "active_facts": status.active_facts,
    }

    if args.check:
        t = time.perf_counter()
        with sampler.phase(load, "check"):
            report_ = await memory.check(day=args.today)
        out["check"] = {
            "seconds": round(time.perf_counter() - t, 2),
            "ok": report_.ok,
            "violations": [f"{c.name}: {c.count} {c.samples[:2]}" for c in report_.violations],
        }
        say(f"kg check: ok={report_.ok} in {out['check']['seconds']} s")

    if pg is not None:
        from bench import postgres

        say("loading into PostgreSQL")
        t = time.perf_counter()
        with sampler.phase(load, "pg_load"):
            n = postgres.load(
                pg.dsn,
                memory.canon,
                (user(grower.cfg, memory.canon, i) for i in range(first_index, grower.next_index)),
            )
        seconds = time.perf_counter() - t
        out["pg_load"] = {
            "facts": n,
            "seconds": round(seconds, 2),
            "facts_per_s": round(n / seconds),
        }

    samples = list(grower.reservoir.items)
    kinds: dict[str, int] = {}
    for s in samples:
        kinds[s.kind] = kinds.get(s.kind, 0) + 1
    out["samples"] = {"n": len(samples), "kinds": kinds}

    naive = Naive(memory.db, memory.canon)
    dossier = None
    if pg is not None:
        from bench import postgres

        dossier = postgres.Dossier(
            pg.dsn, memory.canon, memory.db.settings.mappe_cap, memory.db.settings.ruhe_schwelle
        )
    asof = as_of_point(args.today, datetime.now(UTC))
    out["asof"] = {
        "gueltig_am": asof.gueltig_am.isoformat(),
        "bekannt_am": asof.bekannt_am.isoformat(),
    }
    # What the bench holds by now (its generated data, the loaders' leftovers) is not
    # garbage, but each full collection walks all of it again and stops the timed call
    # that triggered it: 20-40 ms at the 1M step. A long-running chat backend freezes its
    # start-up heap the same way; the library's own garbage is collected as ever (each
    # phase reports its collections beside its load average).
    gc.collect()
    gc.freeze()
    say(f"reads on {len(samples)} entities, interleaved")
    with sampler.phase(load, "reads"):
        series = await reads(memory, naive, dossier, samples, asof, args.seed)
    for key, values in series.items():
        out[key] = stats(values)
    say(
        f"floor p50 {out['floor']['p50']} ms (held session.run "
        f"{out['floor_session']['p50']} ms, execute_query "
        f"{out['floor_execute_query']['p50']} ms), Mappe p50 {out['mappe']['p50']} ms "
        f"p99 {out['mappe']['p99']} ms, {TURN}-Mappen turn p50 "
        f"{out['mappen_turn']['p50']} ms p99 {out['mappen_turn']['p99']} ms, as-of Mappe "
        f"p50 {out['mappe_asof']['p50']} ms p99 {out['mappe_asof']['p99']} ms, naive p50 "
        f"{out['naive']['p50']} ms"
        + (
            f", postgres p50 {out['postgres']['p50']} ms, postgres turn p50 "
            f"{out['postgres_turn']['p50']} ms"
            if dossier
            else ""
        )
        + f" (load average {load['reads']['mean_1m']})"
    )
    idle = samples[:IDLE_SAMPLES]
    say(f"reads after {IDLE_PAUSE * 1000:.0f} ms idle on {len(idle)} entities")
    with sampler.phase(load, "idle_reads"):
        idle_series = await idle_reads(memory, dossier, idle, seed=args.seed)
    out["after_idle"] = {
        "pause_ms": IDLE_PAUSE * 1000, **{k: stats(v) for k, v in idle_series.items()}
    }
    if grower.hubs:
        hub_calls = [
            (lambda h=h: memory.mappe(h.user_id, h.character_id, h.entity_id))
            for h in grower.hubs
            for _ in range(20)
        ]
        with sampler.phase(load, "hubs"):
            out["hubs"] = {"entities": len(grower.hubs), **stats(await timed(hub_calls))}
        # Their neighbours too: the Mappe of a hub city's resident walks the city's
        # hundreds of facts in its degree 2 (the bench's hubs are all the pair nova's).
        residents = await memory.db.query(
            "bench_hub_neighbours", hub_ids=[h.entity_id for h in grower.hubs],
            character_id="nova", per=10, schwelle=memory.db.settings.ruhe_schwelle,
        )
        resident_calls = [
            (lambda r=r: memory.mappe(r["user_id"], "nova", r["entity_id"]))
            for r in residents
            for _ in range(5)
        ]
        with sampler.phase(load, "hub_neighbours"):
            out["hub_neighbours"] = {
                "entities": len(residents), **stats(await timed(resident_calls))
            }
    out["parity"] = await parity(
        memory, naive, dossier, samples[: args.parity], grower.written, asof
    )
    say(f"parity {out['parity']}")
    if dossier is not None:
        dossier.close()

    out["writes"] = {}
    # The readers have their warm-up pass; the writers get theirs (`warm_writes`).
    if args.write_warmup > 0:
        say(f"write warm-up, {args.write_warmup} orders")
        with sampler.phase(load, "write_warmup"):
            keep = args.write_rounds * 5  # the timed rounds' users: 1 + 4 each
            out["write_warmup"] = await warm_writes(
                memory,
                lambda n: grower.warm_users(n, keep),
                args.write_warmup,
                f"{label}-warm-{uuid.uuid4().hex[:6]}",
            )
        say(f"write warm-up: {out['write_warmup']}")
    # The settings take turns, round by round, so a slow stretch of the machine falls on
    # both alike (as the readers are interleaved entity by entity).
    say(f"writes, 1 and 4 writers, {args.write_rounds} rounds each")
    phases: dict[int, list[WritePhase]] = {1: [], 4: []}
    for _ in range(args.write_rounds):
        for conc, done in phases.items():
            with sampler.phase(load, f"writes_{conc}"):
                # Users of their own each round: on the same users, every round would
                # find their people's histories longer by the rounds before it (in the
                # first try of rounds, run 2026-12-02T0157: one writer p50 11 ms at
                # 1 M against 4.8 in T0012 with one round).
                done.append(
                    await writes(
                        memory, grower.take(conc), conc, args.orders,
                        f"{label}-{conc}-{uuid.uuid4().hex[:6]}",
                    )
                )
    for conc, done in phases.items():
        out["writes"][str(conc)] = write_figures(conc, done)
        say(
            f"writes, {conc} writer(s): p50 {out['writes'][str(conc)]['p50']} ms, "
            f"{out['writes'][str(conc)]['orders_per_s_rounds']} orders/s"
        )

    if args.cli_runs and grower.reservoir.items:
        s0 = grower.reservoir.items[0]
        with sampler.phase(load, "cli"):
            cli = cli_start(s0, args.cli_runs)
        if cli is not None:
            out["cli_start"] = cli
            say(f"CLI start p50 {cli['p50_s']} s ({cli['runs']} runs)")

    say("decay sweep")
    t = time.perf_counter()
    with sampler.phase(load, "decay"):
        run = await memory.decay_run(day=args.today)
    out["decay"] = {
        "seconds": round(time.perf_counter() - t, 2),
        "edges": run.edges,
        "resting": run.resting,
        "via": "kg.decay (Memory.decay_run)",
    }
    say(f"decay {run.edges} edges in {out['decay']['seconds']} s")

    home = Path(args.neo4j_home) if args.neo4j_home else None
    out["memory"] = {
        "store_bytes": du(home / "data" / "databases" / "neo4j") if home else None,
        "tx_log_bytes": du(home / "data" / "transactions" / "neo4j") if home else None,
        "heap_used_bytes": await heap_used(memory),
        "pg_bytes": pg.size_bytes() if pg is not None else None,
        "bench_rss_peak_bytes": rss_peak(),
    }
    return out


async def memory_settings(memory: Memory) -> dict[str, str | None]:
    """The server's heap (its maximum) and page cache as it runs with them: the bench's
    own environment need not be the one the server was started with."""
    records, _, _ = await memory.db.driver.execute_query(
        "SHOW SETTINGS YIELD name, value "
        "WHERE name IN ['server.memory.heap.max_size', 'server.memory.pagecache.size'] "
        "RETURN name, value",
        database_=memory.db.name,
    )
    found = {r["name"]: r["value"] for r in records}
    return {
        "heap": found.get("server.memory.heap.max_size"),
        "pagecache": found.get("server.memory.pagecache.size"),
    }


def machine(
    args: argparse.Namespace, server_version: str, pg_version: str | None,
    neo4j_memory: dict[str, str | None],
) -> dict[str, Any]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem = next(
            ln for ln in Path("/proc/meminfo").read_text().splitlines() if ln.startswith("MemTotal")
        )
        mem_gib = round(int(mem.split()[1]) / 1024 / 1024, 1)
    except (OSError, StopIteration):
        mem_gib = 0.0
    import neo4j
    import psycopg

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem_gib,
        "os": platform.platform(),
        "python": platform.python_version(),
        "neo4j_server": server_version,
        "neo4j_driver": neo4j.__version__,
        "neo4j_driver_kind": (
            "with the Rust extension"
            if importlib.util.find_spec("neo4j._rust") is not None
            else "pure Python"
        ),
        "neo4j_heap": neo4j_memory["heap"],
        "neo4j_pagecache": neo4j_memory["pagecache"],
        "postgres": pg_version,
        "psycopg": psycopg.__version__,
        "git": _git(),
    }


def _git() -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip() or None
    except OSError:
        return None


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    settings = Settings()
    memory = await Memory.open(settings)
    pg = None
    sampler = LoadSampler(fsync_dir=args.neo4j_home).start()
    result: dict[str, Any] = {
        "date": args.today.isoformat(),
        "stamp": args.stamp,
        "log": [],
        "command": " ".join(["python -m bench.run", *sys.argv[1:]]),
    }
    try:
        status = await memory.status()
        if status.entities and not args.allow_nonempty:
            raise SystemExit(
                f"{settings.neo4j_uri} already holds {status.entities} entities: the "
                "benchmark grows an empty store of its own (see bench/README.md), or pass "
                "--allow-nonempty"
            )
        if args.postgres:
            from bench import postgres
            from cli.launcher import free_port

            pg = postgres.PgCluster(Path(args.pg_dir), free_port())
            pg.start()
        cfg = Config(seed=args.seed, prefix=args.prefix, today=args.today)
        grower = Grower(cfg, memory, Reservoir(args.samples, random.Random(args.seed)))
        result["config"] = {
            "seed": args.seed,
            "samples": args.samples,
            "orders": args.orders,
            "write_warmup": args.write_warmup,
            "write_rounds": args.write_rounds,
            "batch_facts": args.batch,
            "load_concurrency": args.load_concurrency,
            "turn": TURN,
            # The readers' order for each entity (see `reads`); older results: "fixed".
            "reader_order": "shuffled",
            "cli_runs": args.cli_runs,
            "mappe_cap": settings.mappe_cap,
            "ruhe_schwelle": settings.ruhe_schwelle,
            "uri": settings.neo4j_uri,
        }
        result["machine"] = machine(
            args, status.version, pg.version() if pg else None, await memory_settings(memory)
        )
        result["sizes"] = []
        for target in sorted(args.sizes):
            result["sizes"].append(
                await measure(args, memory, grower, target, pg, result, sampler)
            )
            _save(args, result)  # keep what is measured even if a later size fails
        largest = result["sizes"][-1]
        sample = next(s for s in grower.reservoir.items if s.kind == "person")
        result["profile"] = {
            "typical": await profile_mappe(memory, sample),
            "typical as of": await profile_mappe(
                memory, sample, as_of_point(args.today, datetime.now(UTC))
            ),
        }
        if grower.hubs:
            result["profile"]["hub"] = await profile_mappe(memory, grower.hubs[0])
        result["python_profile"] = await python_profile(memory, grower.reservoir.items[:200])
        largest["memory"]["bench_rss_peak_bytes"] = rss_peak()
        return result
    finally:
        sampler.stop()
        await memory.close()
        if pg is not None:
            pg.stop(remove=not args.keep_postgres)


def stamp_for(out: Path, started: datetime) -> str:
    """The run's file stem: its start to the minute, UTC (2026-11-30T1745); to the second
    if a result of that minute exists already. A run never overwrites another's files."""
    stamp = f"{started:%Y-%m-%dT%H%M}"
    if (out / f"{stamp}.json").exists() or (out / f"{stamp}.md").exists():
        stamp = f"{started:%Y-%m-%dT%H%M%S}"
    if (out / f"{stamp}.json").exists():
        raise SystemExit(f"{out / stamp}.json exists already; results are never overwritten")
    return stamp


def _save(args: argparse.Namespace, result: dict[str, Any]) -> Path:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{args.stamp}.json"
    path.write_text(json.dumps(result, indent=2, default=str, ensure_ascii=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m bench.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--sizes", default="10k,100k,1M", help="total fact edges per step, e.g. 10k,100k,1M"
    )
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--prefix", default="bench", help="user ids are <prefix>-u000000, ...")
    ap.add_argument("--samples", type=int, default=1000, help="entities the readers are timed on")
    ap.add_argument(
        "--parity",
        type=int,
        default=100,
        help="sampled entities on which Mappe, naive and SQL must agree",
    )
    ap.add_argument(
        "--orders", type=_positive, default=200, help="write orders per writer setting and round"
    )
    ap.add_argument(
        "--write-rounds",
        type=_positive,
        default=WRITE_ROUNDS,
        help="timed rounds per writer setting, the settings taking turns; orders/s is the "
        "median of the rounds",
    )
    ap.add_argument(
        "--write-warmup",
        type=_non_negative,
        default=WRITE_WARMUP,
        help="untimed write orders (four writers, users of their own) before each size's "
        "write phases: the server's JIT takes thousands to settle",
    )
    ap.add_argument("--batch", type=int, default=5000, help="facts per load transaction")
    ap.add_argument("--load-concurrency", type=int, default=2)
    ap.add_argument(
        "--cli-runs",
        type=int,
        default=20,
        help="runs of `kg mappe ... --json` per size for the CLI start (0: none; needs "
        "bench/cli_start.py)",
    )
    ap.add_argument("--no-postgres", dest="postgres", action="store_false")
    ap.add_argument("--pg-dir", default="/tmp/kg-bench-pg")
    ap.add_argument("--keep-postgres", action="store_true")
    ap.add_argument(
        "--no-check", dest="check", action="store_false", help="skip `kg check` after each load"
    )
    ap.add_argument(
        "--neo4j-home",
        default=os.environ.get("KG_NEO4J_HOME"),
        help="the server's NEO4J_HOME, for the store size on disk",
    )
    ap.add_argument("--allow-nonempty", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--plot", default=str(ROOT / "docs" / "bench-mappe.png"))
    args = ap.parse_args(argv)
    args.sizes = [parse_size(s) for s in args.sizes.split(",")]
    started = datetime.now(UTC)
    args.today = started.date()
    args.stamp = stamp_for(Path(args.out), started)
    result = asyncio.run(main_async(args))
    path = _save(args, result)
    md = report.write(result, path.with_suffix(".md"), Path(args.plot))
    print(f"results: {path}\nreport:  {md}\nplot:    {args.plot}")
    if report.shown_in_readme(md):
        print("README:  bench/README.md (its figures table is this run's)")


if __name__ == "__main__":
    main()


__all__ = ["date", "main"]
