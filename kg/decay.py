"""The daily decay sweep: what serves as memory decays, what is recorded as fact stays.

The decay sits where the search runs — on the fact edge (contract rule 9, the decay
convention §1.1; docs/contract.md). For every ACTIVE fact edge the sweep writes
`staerke_decay = exp(-rate · days since last_touched)` and `decay_am` (the day it was
computed for). It never changes `aktiv` (inactive means superseded or corrected, never
faded), never touches inactive facts, entities, timeline entries or the audit, and never
deletes anything; an edge below the resting threshold only drops out of the Mappe until
the writer re-asserts it (strength back to 1).

The strength is computed for the start of the as-of day (00:00 UTC), so a sweep is a
pure function of `last_touched` and the day: running it twice gives the same numbers,
and a fact touched later that day keeps 1. The global sweep walks the entities in
slices of their ids (an index seek each), each slice batched with
`CALL { ... } IN TRANSACTIONS`, so a million edges never sit in one transaction and the
caller can show progress. A global sweep is recorded as one `(:DecayLauf {tag})` per
day; `if_due` skips a day that is recorded already.
"""

from __future__ import annotations

import math
import shlex
import time as clock
from collections.abc import Callable
from datetime import UTC, date, datetime, time

from pydantic import Field

from kg.canon import Canon
from kg.db import Database, Record
from kg.errors import InvalidInput
from kg.models import Frozen
from kg.values import native as _native

#: Called after each slice: (slices done, slices in all, edges swept so far).
Progress = Callable[[int, int, int], None]

#: Lower bounds of the id slices: entity ids are hex uuids, so 16 even slices; the first
#: slice starts at '' and the last has no upper bound, so every string id is in one.
SLICE_STARTS: tuple[str, ...] = ("", *"123456789abcdef")


class DecayRun(Frozen):
    """The outcome of `kg decay run`."""

    day: date = Field(description="The day the strengths were computed for (decay_am).")
    user_id: str | None = Field(
        None, description="The user a scoped sweep covered; None: every fact edge."
    )
    edges: int = Field(description="Active fact edges swept.")
    resting: int = Field(description="Of those, how many now rest below the threshold.")
    threshold: float = Field(description="The resting threshold the count used.")
    seconds: float = Field(description="Duration of the sweep in seconds.")
    skipped: bool = Field(
        False, description="True when if_due found the day swept already; nothing was written."
    )
    recorded: bool = Field(
        False, description="True when a DecayLauf node records the run (global sweeps only)."
    )


def slices(starts: tuple[str, ...] = SLICE_STARTS) -> list[tuple[str, str | None]]:
    """The [from, to) id ranges of the sweep; they cover every string exactly once."""
    return list(zip(starts, [*starts[1:], None], strict=True))


def moment(day: date) -> datetime:
    """The instant a sweep for `day` computes strengths for: its start, UTC."""
    return datetime.combine(day, time.min, tzinfo=UTC)


def strength(last_touched: datetime, at: datetime, rate: float) -> float:
    """exp(-rate · days since last_touched), 1 for a touch at or after `at` (pure)."""
    days = (at - last_touched).total_seconds() / 86400
    return 1.0 if days <= 0 else math.exp(-rate * days)


def today() -> date:
    return datetime.now(UTC).date()


def _from_record(row: Record, user_id: str | None, threshold: float) -> DecayRun:
    return DecayRun(
        day=_native(row["tag"]),
        user_id=user_id,
        edges=row["edges"] or 0,
        resting=row["resting"] or 0,
        threshold=threshold,
        seconds=row["seconds"] or 0.0,
        skipped=True,
        recorded=user_id is None,
    )


async def state(
    db: Database, canon: Canon, user_id: str | None, day: date | None = None, samples: int = 5
) -> Record:
    """Active fact edges, those with a strength, the newest decay_am up to `day`, those
    dated after it, and the ones the newest sweep missed."""
    rows = await db.query(
        "decay_state", user_id=user_id, rel_types=canon.rel_types, day=day or today(),
        samples=samples,
    )
    return rows[0]


async def done_already(
    db: Database, canon: Canon, day: date, user_id: str | None
) -> DecayRun | None:
    """The day's sweep if it has run: its DecayLauf (global), or for a scoped sweep the
    user's newest decay_am reaching the day."""
    threshold = db.settings.ruhe_schwelle
    if user_id is None:
        row = await db.read(lambda tx: tx.one("decay_run_find", day=day))
        return _from_record(row, None, threshold) if row else None
    newest = _native((await state(db, canon, user_id, day=day))["newest"])
    if newest is not None and newest >= day:
        return DecayRun(day=day, user_id=user_id, edges=0, resting=0, threshold=threshold,
                        seconds=0.0, skipped=True)
    return None


async def sweep(
    db: Database,
    canon: Canon,
    day: date | None = None,
    if_due: bool = False,
    user_id: str | None = None,
    progress: Progress | None = None,
) -> DecayRun:
    """Sweep every active fact edge (of one user when `user_id` is set) for `day`."""
    settings = db.settings
    day = day or today()
    if day > today():
        # kg check calls a decay_am after today a day no sweep can have measured yet, and
        # every edge would rest until then: the Mappen of the store would empty.
        raise InvalidInput(
            f"cannot sweep for {day.isoformat()}, a day that has not come (today is "
            f"{today().isoformat()}, UTC): give today or an earlier day"
        )
    if user_id is not None:
        # A monitoring job with a typo in --user would report a sweep of nothing forever.
        from kg.check import refuse_nothing_stored

        await refuse_nothing_stored(
            db, user_id, "nothing was swept (`kg decay run` without --user sweeps every user)"
        )
    if if_due:
        done = await done_already(db, canon, day, user_id)
        if done is not None:
            return done
    if day < today():
        await _refuse_going_back(db, canon, day, user_id)
    parts = slices()
    edges = resting = 0
    began = clock.monotonic()
    async with db.auto_commit() as session:
        for n, (lo, hi) in enumerate(parts, start=1):
            # A slice that deadlocked with a write runs again.
            rows = await session.run_again(
                "decay_sweep",
                id_from=lo,
                id_to=hi,
                user_id=user_id,
                rel_types=canon.rel_types,
                rate=settings.decay_rate,
                moment=moment(day),
                day=day,
                schwelle=settings.ruhe_schwelle,
                batch=settings.decay_batch,
            )
            edges += rows[0]["edges"]
            resting += rows[0]["resting"]
            if progress is not None:
                progress(n, len(parts), edges)
    seconds = round(clock.monotonic() - began, 3)
    if user_id is None:
        await record(db, day, edges, resting, seconds)
    return DecayRun(
        day=day, user_id=user_id, edges=edges, resting=resting,
        threshold=settings.ruhe_schwelle, seconds=seconds, recorded=user_id is None,
    )


async def _refuse_going_back(
    db: Database, canon: Canon, day: date, user_id: str | None
) -> None:
    """A sweep for a day before the one the edges were swept for would write the older,
    higher strengths over the newer ones (resting facts would wake up in the Mappe) and
    date the sweep back, so that kg check calls it stale: refused. (A sweep for today
    is not asked: no sweep is for a day that has not come, and one for today overwrites a
    decay_am after today that a hand edit or an import left.)"""
    async with db.auto_commit("READ") as session:  # (a whole store's pass: maintenance time)
        rows = await session.run("decay_newest", user_id=user_id, rel_types=canon.rel_types)
    newest = _native(rows[0]["newest"])
    if newest is None or newest <= day:
        return
    scope = f"of user {user_id!r}" if user_id is not None else "of the store"
    if newest > today():
        # No sweep writes a day after today (it is refused above), so the edge was edited
        # by hand or imported: "give that day" would be refused as a day that has not
        # come. A sweep for today sets decay_am on every active edge in scope, that one's
        # too.
        command = "kg decay run" + (f" --user {shlex.quote(user_id)}" if user_id else "")
        raise InvalidInput(
            f"cannot sweep for {day.isoformat()}: a fact edge {scope} carries decay_am "
            f"{newest.isoformat()}, after today ({today().isoformat()}, UTC) — a day no "
            "sweep can have measured, written by hand or by an import (`kg check` reports "
            f"it under decay_has_a_run); sweep for today instead (`{command}`, without "
            "--day), which writes today's decay_am over it"
        )
    raise InvalidInput(
        f"cannot sweep for {day.isoformat()}: the fact edges {scope} were swept for "
        f"{newest.isoformat()} already, and a sweep for an earlier day would undo that "
        f"one: give {newest.isoformat()} or a later day"
    )


async def forget_runs_ahead(db: Database) -> list[date]:
    """Delete the sweeps recorded for a day after tomorrow (`kg check`: decay_has_a_run):
    no sweep can have reached it, and `--if-due` would skip that day as done. Returns
    their days, oldest first."""
    rows = await db.write(lambda tx: tx.run("decay_runs_ahead_delete"))
    return [_native(tag) for tag in rows[0]["tags"]]


async def record(db: Database, day: date, edges: int, resting: int, seconds: float) -> None:
    """Record the day's global sweep; a second sweep of the same day replaces the figures."""
    await db.write(
        lambda tx: tx.run(
            "decay_run_record", day=day, edges=edges, resting=resting, seconds=seconds
        )
    )
