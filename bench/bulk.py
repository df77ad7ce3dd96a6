"""The bulk path: load generated users with batched `UNWIND`, keeping every invariant.

This is how a large graph gets into the store without going through the Fakten-Agent
one order at a time. It writes exactly the shape the agent writes (docs/graph-model.md):

- one `Nutzer` lock node per user (MERGE, so a user that already wrote keeps its node);
- `Entitaet` nodes with unique ids (the uniqueness constraint checks that), each owned
  by one user;
- `TimelineEintrag` nodes with `BETRIFFT` to the person and `NACHFOLGER` chains;
- reference facts as relationships between two entities of the same user, value facts
  with a `Wert` node of their own (with `user_id`), one relationship per version of a
  fact (a superseded fact: its closed first version and its current second one); the
  relationship type is checked against the canon here, before it reaches
  `CREATE (s)-[:$(row[2])]->(o)`.

It does *not* decide anything the agent decides (supersession, types, names): the data
must already be consistent, as `bench/generate.py` makes it. A batch of users is one
write transaction; `concurrency` batches are in flight at once (batches never share a
user, so they do not contend for locks). `Memory.check` (`kg check`) verifies the result.

Where the time goes (a profile of the server during a load): most of it is the commit
(turning the transaction's state into records, the log and the store), which nothing
here can shrink without changing what is stored. What the loader can spare, it does: the
entities and every fact of a batch are one query (`bench_load_facts`), so a fact finds
its two nodes by position in the batch instead of by two unique-index seeks, and its row
carries small integers instead of two 32-character ids; instants travel as epoch seconds
(cheaper to pack and to read than ISO text: the generator records whole seconds); and
the query plans without an `Eager` (which would buffer every row before writing).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from bench.generate import UserGraph
from bench.queries import attach
from kg.canon import Canon
from kg.db import Database, Tx


@dataclass
class LoadStats:
    """What one load wrote and how long it took (wall time, generation included)."""

    users: int = 0
    entities: int = 0
    facts: int = 0
    eintraege: int = 0
    batches: int = 0
    seconds: float = 0.0
    user_ids: list[str] = field(default_factory=list)

    @property
    def facts_per_s(self) -> float:
        return self.facts / self.seconds if self.seconds else 0.0


class BulkLoader:
    """Batched UNWIND writes of generated users through the library's Database."""

    def __init__(
        self, db: Database, canon: Canon, batch_facts: int = 5_000, concurrency: int = 2
    ) -> None:
        self.db = attach(db)
        self.canon = canon
        self.batch_facts = batch_facts
        self.concurrency = concurrency

    def rows(self, graphs: list[UserGraph]) -> dict[str, list[Any]]:
        """The parameter lists of one batch (pure). Rows are lists, instants whole epoch
        seconds: the driver packs those several times faster than maps of datetimes, and
        the server reads them faster than ISO text. A fact names its nodes by position in
        the batch's entities, and only its own user's positions are handed out."""
        users: list[str] = []
        entities: list[list[Any]] = []
        eintraege: list[dict[str, Any]] = []
        links: list[dict[str, Any]] = []
        refs: list[list[Any]] = []
        values: list[list[Any]] = []
        by_type = self.canon.by_type
        for u, g in enumerate(graphs):
            users.append(g.user_id)
            at = {e.id: len(entities) + k for k, e in enumerate(g.entities)}
            entities += [
                [e.id, e.user_id, e.name, e.name_norm, _epoch(e.erstellt)] for e in g.entities
            ]
            for t in g.eintraege:
                props = t.props()
                props.update(
                    beginn=t.beginn.isoformat(),
                    t_recorded=t.t_recorded.isoformat(),
                    ersetzt_am=_iso(t.ersetzt_am),
                )
                eintraege.append({"props": props, "betrifft": t.betrifft_id})
                if t.nachfolger_id:
                    links.append({"von": t.id, "nach": t.nachfolger_id})
            for f in g.facts:
                if f.rel not in by_type:  # types only ever come from the canon
                    raise ValueError(f"relationship type {f.rel!r} is not in the canon")
                rest = None
                if not f.aktiv or f.timeline_id or f.timeline_bis:
                    rest = {
                        "t_invalid": _epoch(f.t_invalid),
                        "t_expired": _epoch(f.t_expired),
                        "grund": f.grund,
                        "timeline_id": f.timeline_id,
                        "timeline_bis": f.timeline_bis,
                        "abgeloest_durch": f.abgeloest_durch,
                    }
                tail = [
                    f.id,
                    f.version,
                    f.character_id,
                    f.herkunft,
                    _epoch(f.t_valid),
                    _epoch(f.t_recorded),
                    f.aktiv,
                    f.staerke_decay,
                    _epoch(f.last_touched),
                    _iso(f.decay_am),
                    rest,
                    u,
                    f.auftrag_id,
                ]
                try:
                    subjekt = at[f.subjekt_id]
                    if f.objekt_id is not None:
                        refs.append([subjekt, at[f.objekt_id], f.rel, *tail])
                    else:
                        values.append([subjekt, f.wert, f.rel, *tail])
                except KeyError as exc:
                    raise ValueError(
                        f"fact {f.id} of {g.user_id} links entity {exc.args[0]!r}, "
                        "which is not one of the user's"
                    ) from None
        return {
            "users": users,
            "entities": entities,
            "eintraege": eintraege,
            "links": links,
            "refs": refs,
            "values": values,
        }

    async def write_batch(self, graphs: list[UserGraph]) -> None:
        rows = self.rows(graphs)

        async def work(tx: Tx) -> None:
            await tx.run("bench_load_nutzer", users=rows["users"])
            await tx.run(
                "bench_load_facts",
                users=rows["users"],
                entities=rows["entities"],
                refs=rows["refs"],
                values=rows["values"],
            )
            if rows["eintraege"]:
                await tx.run("bench_load_eintraege", rows=rows["eintraege"])
            if rows["links"]:
                await tx.run("bench_load_nachfolger", rows=rows["links"])

        await self.db.write(work)

    async def load(self, graphs: Iterable[UserGraph]) -> LoadStats:
        """Load every graph; returns counts and wall time."""
        stats = LoadStats()
        start = time.perf_counter()
        pending: set[asyncio.Task[None]] = set()
        batch: list[UserGraph] = []
        size = 0

        async def flush() -> None:
            nonlocal batch, size
            if not batch:
                return
            while len(pending) >= self.concurrency:
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    pending.discard(task)
                    task.result()
            pending.add(asyncio.create_task(self.write_batch(batch)))
            stats.batches += 1
            batch, size = [], 0
            await asyncio.sleep(0)  # let the new task send its first query

        for g in graphs:
            batch.append(g)
            size += len(g.facts)
            stats.users += 1
            stats.entities += len(g.entities)
            stats.facts += len(g.facts)
            stats.eintraege += len(g.eintraege)
            stats.user_ids.append(g.user_id)
            if size >= self.batch_facts:
                await flush()
        await flush()
        if pending:
            for task in await asyncio.gather(*pending, return_exceptions=True):
                if isinstance(task, BaseException):
                    raise task
        stats.seconds = time.perf_counter() - start
        return stats


def _iso(value: date | datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _epoch(value: datetime | None) -> int | None:
    """An instant as whole seconds since the epoch; the generator records whole seconds,
    and anything finer would be lost here, so it is refused."""
    if value is None:
        return None
    if value.microsecond:
        raise ValueError(f"{value.isoformat()} is finer than a second")
    return int(value.timestamp())


async def counts(db: Database, user_ids: list[str]) -> dict[str, int]:
    """Entities, facts, active facts, value nodes and timeline entries of some users."""
    total: dict[str, int] = {}
    attach(db)
    for i in range(0, len(user_ids), 500):
        rows = await db.query("bench_counts", users=user_ids[i : i + 500])
        for key, value in rows[0].items():
            total[key] = total.get(key, 0) + int(value or 0)
    return total
