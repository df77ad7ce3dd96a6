"""The library's front door: `Memory` (async) and `SyncMemory` (a thin sync shim).

The chat backend awaits `Memory`; the CLI and sync callers use `SyncMemory`, which runs
the very same coroutines on its own event loop — there is no second copy of any
operation.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import re
import threading
import time
import uuid
from collections.abc import Coroutine
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Required, TypedDict, TypeVar, Unpack

from pydantic import Field, ValidationError

from kg import schema
from kg.canon import Canon, load_canon
from kg.db import Database
from kg.errors import (
    AmbiguousEntity,
    EntityNotFound,
    InvalidInput,
    UsageError,
)
from kg.mappe import (
    KNOWN_NOW,
    Mappe,
    MappeFakt,
    as_known_then,
    effective,
    read_mappen,
    symmetric_types,
    to_fakt,
)
from kg.models import (
    HERKUNFT,
    Absage,
    Auftrag,
    AuftragErgebnis,
    Entitaet,
    Frozen,
    Genauigkeit,
    Kandidat,
    NeuerEintrag,
    Tripel,
    When,
    clip,
    from_store,
    ident,
    instant,
    normalize_name,
    pair_ids,
    shown,
    stored_result,
    user_scope,
)
from kg.plain import describe
from kg.settings import MAPPE_CAP_MAX, MAPPEN_MAX, Settings, load_settings
from kg.timeline import Eintrag, Timeline
from kg.values import stored_instant

if TYPE_CHECKING:  # imported where used: a read (and `kg mappe`) never loads them
    from kg import transfer
    from kg.check import CheckReport
    from kg.decay import DecayRun
    from kg.decay import Progress as DecayProgress
    from kg.names import Renormalisiert
    from kg.writer import FaktenAgent

T = TypeVar("T")

#: The order `Memory.warm` rehearses: a new person's place and job. Orders of every shape
#: share its plans (`order_state` takes an order's lists in one map).
WARM_ORDER: tuple[dict[str, str], ...] = (
    {"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "Kassel", "herkunft": "mensch"},
    {"subjekt": "Lena", "beziehung": "beruf", "wert": "Ärztin", "herkunft": "mensch"},
)


class Status(Frozen):
    """What `kg status` reports."""

    uri: str
    version: str
    edition: str
    database: str
    schema_version: int = Field(description="Migrations the database records as applied "
                                "(those of a newer package too).")
    schema_needed: int = Field(description="Migrations this package has.")
    schema_problem: str | None = Field(None, description="What keeps this package from the "
                                       "database's schema, in words; None where it fits.")
    entities: int
    facts: int
    active_facts: int


class Aufloesung(Frozen):
    """A name resolved without writing: the entity, or the candidates."""

    entitaet: Kandidat | None = Field(None, description="The one entity of that name.")
    kandidaten: list[Kandidat] = Field(default_factory=list, description="All matches.")


class AuditEintrag(Frozen):
    auftrag_id: str
    character_id: str
    empfangen: datetime
    erfasst: datetime
    status: str
    anzahl: int
    ergebnis: AuftragErgebnis


class Memory:
    """The fact memory of all pairs in one Neo4j database (async)."""

    def __init__(self, db: Database, canon: Canon) -> None:
        self.db = db
        self.canon = canon

    @cached_property
    def agent(self) -> FaktenAgent:
        """The one writer; made (and its planner imported) on the first write."""
        from kg.writer import FaktenAgent

        return FaktenAgent(self.db, self.canon)

    @cached_property
    def timeline(self) -> Timeline:
        return Timeline(self.db, self.agent)

    @classmethod
    async def open(cls, settings: Settings | None = None, check_schema: bool = True) -> Memory:
        """Connect; refuses a database whose schema is older than this package needs."""
        settings = settings or load_settings()
        db = Database.open(settings)
        try:
            # The schema check is a query on the database: it proves the database
            # answers, so the check needs no query of its own (one round trip less).
            await db.verify(database=not check_schema)
            if check_schema:
                await schema.require_current(db)
        except BaseException:
            await db.close()
            raise
        return cls(db, load_canon(settings.kanon_datei))

    async def close(self) -> None:
        await self.db.close()

    def pair(self, user_id: str, character_id: str) -> Pair:
        """The calls that belong to one pair, bound to it (see `Pair`)."""
        return Pair(self, user_id, character_id)

    async def __aenter__(self) -> Memory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def warm(self) -> float:
        """Have the server plan a chat turn's queries before the first turn needs them;
        the seconds it took.

        After a start the server plans each query the first time it sees it, and the
        writer's and the Mappe's queries take ~1 s each to plan on a fast machine (several
        on a slow one): the first turn after a restart would wait for all of them. This
        sends them once now, for a user nobody has: an order rehearsed in a transaction
        that is rolled back (orders of every shape share its plans), and the reads of
        entities that do not exist. Nothing is written. Call it once the server is up, e.g. when the
        backend starts; `kg server start` does (docs/operations.md)."""
        began = time.perf_counter()
        user, character = f"kg-warm-{uuid.uuid4().hex}", "kg-warm"
        await self.agent.rehearse(Auftrag(
            auftrag_id="warm", user_id=user, character_id=character,
            tripel=[Tripel.model_validate(t) for t in WARM_ORDER],
        ))
        await self.entities(user, character)
        await self.resolve(user, character, "Lena")
        with contextlib.suppress(EntityNotFound):  # as expected: the plan is made anyway
            await self.mappen(user, character, [f"warm-{uuid.uuid4().hex}"])
        return time.perf_counter() - began

    # -- status and schema ------------------------------------------------------

    async def status(self) -> Status:
        info = (await self.db.query("server_info"))[0]
        counts = (await self.db.query("store_counts"))[0]
        states = await schema.status(self.db)
        return Status(
            uri=self.db.settings.neo4j_uri,
            version=info["version"],
            edition=info["edition"],
            database=self.db.name,
            schema_version=sum(s.status in ("applied", "newer") for s in states),
            schema_needed=sum(s.status != "newer" for s in states),
            schema_problem=None if (problem := schema.problem(states)) is None else str(problem),
            entities=counts["entities"],
            facts=counts["facts"],
            active_facts=counts["active_facts"],
        )

    # -- writing ----------------------------------------------------------------

    async def write(self, auftrag: Auftrag | dict[str, Any]) -> AuftragErgebnis:
        """Write an order through the Fakten-Agent (one transaction)."""
        if not isinstance(auftrag, Auftrag):
            auftrag = parse_order(auftrag)
        async with self.db.user_turn(auftrag.user_id):
            return await self.agent.write(auftrag)

    async def correct(
        self, user_id: str, character_id: str, **korrektur: Unpack[Korrektur]
    ) -> AuftragErgebnis:
        """Correct a wrong fact (retired as never true), optionally with its replacement;
        see `Korrektur` and `correction_order`."""
        return await self.write(correction_order(user_id, character_id, **korrektur))

    # -- entities ---------------------------------------------------------------

    async def resolve(self, user_id: str, character_id: str, name: str) -> Aufloesung:
        """A name → its entity or its candidates, without writing."""
        user_id, character_id = pair_ids(user_id, character_id)
        if not isinstance(name, str):
            raise InvalidInput(f"name is a {type(name).__name__}; give an entity's name")
        name_norm = normalize_name(name)
        if not name_norm:
            # As a write refuses it (name_leer): no entity can carry that name.
            raise InvalidInput(
                f"name {clip(shown(name), 60)} is empty once invisible characters are "
                "removed; give a name"
            )
        rows = await self.db.query(
            "entity_candidates",
            user_id=user_id,
            character_id=character_id,
            name_norm=name_norm,
            schwelle=self.db.settings.ruhe_schwelle,
        )

        from kg.writer import merkmal_text

        def kandidat(row: dict[str, Any]) -> Kandidat:
            merkmale = [
                merkmal_text(self.canon, m)
                for m in row["merkmale"]
                if m["rel"] is not None and m["other"] is not None
            ]
            return from_store(Kandidat, {"id": row["id"], "name": row["name"], "typ": row["typ"],
                                         "merkmale": merkmale}, "entity")

        found = [kandidat(r) for r in rows]
        return Aufloesung(entitaet=found[0] if len(found) == 1 else None, kandidaten=found)

    async def entity_id(self, user_id: str, character_id: str, name_or_id: str) -> str:
        """An id from a name or id; EntityNotFound / AmbiguousEntity otherwise."""
        user_id, character_id = pair_ids(user_id, character_id)
        if not isinstance(name_or_id, str):
            raise InvalidInput(f"name_or_id is a {type(name_or_id).__name__}; give an "
                               "entity's name or id")
        rows = await self.db.query(
            "entity_by_id", user_id=user_id, character_id=character_id, entity_id=name_or_id
        )
        if rows:
            return str(rows[0]["id"])
        found = await self.resolve(user_id, character_id, name_or_id)
        if found.entitaet:
            return found.entitaet.id
        if found.kandidaten:
            raise AmbiguousEntity(
                f"{len(found.kandidaten)} entities are named {clip(shown(name_or_id), 80)}; "
                "use an id",
                found.kandidaten,
            )
        raise EntityNotFound(f"user {clip(shown(user_id), 80)} has no entity named or with id "
                             f"{clip(shown(name_or_id), 80)}")

    async def entities(
        self, user_id: str, character_id: str, limit: int = 1000
    ) -> list[Entitaet]:
        """The user's entities (they belong to the user) with their type and active fact
        count in the pair (those belong to the pair: never another character's)."""
        check_limit(limit)
        user_id, character_id = pair_ids(user_id, character_id)
        rows = await self.db.query(
            "entities_list", user_id=user_id, character_id=character_id, limit=limit
        )
        return [from_store(Entitaet, r, "entity") for r in rows]

    # -- reading ----------------------------------------------------------------

    async def mappe(
        self,
        user_id: str,
        character_id: str,
        entity_id: str,
        *,
        gueltig_am: When | None = None,
        bekannt_am: When | None = None,
        cap: int | None = None,
    ) -> Mappe:
        """The Mappe of one entity (one query, one round trip).

        Without dates: the current record. `gueltig_am` (valid time) and `bekannt_am`
        (system time) take an instant or a date; a bare date means the end of that day
        (UTC). See `kg.mappe.as_of` for a read given only one of them.
        """
        check_cap(cap)
        return (
            await self.mappen(
                user_id, character_id, [entity_id],
                gueltig_am=gueltig_am, bekannt_am=bekannt_am, cap=cap,
            )
        )[0]

    async def mappen(
        self,
        user_id: str,
        character_id: str,
        entity_ids: list[str],
        *,
        gueltig_am: When | None = None,
        bekannt_am: When | None = None,
        cap: int | None = None,
    ) -> list[Mappe]:
        """The Mappen of all entities bound in a turn, in one read transaction."""
        check_cap(cap)
        user_id, character_id = pair_ids(user_id, character_id)
        if not isinstance(entity_ids, (list, tuple)):
            raise InvalidInput(
                f"entity_ids is a {type(entity_ids).__name__}; give a list of entity ids "
                "(mappe reads one)"
            )
        for i, entity_id in enumerate(entity_ids):
            if not isinstance(entity_id, str):
                raise InvalidInput(f"entity_ids[{i}] is a {type(entity_id).__name__}; give "
                                   "an entity's id")
        if len(entity_ids) > MAPPEN_MAX:
            raise InvalidInput(
                f"entity_ids holds {len(entity_ids):,} ids: one call reads at most "
                f"{MAPPEN_MAX} Mappen (the entities of a turn; each holds up to the cap's "
                "facts, in one query) — read them in several calls"
            )
        return await read_mappen(
            self.db,
            self.canon,
            user_id,
            character_id,
            entity_ids,
            gueltig_am=instant(gueltig_am, "gueltig_am"),
            bekannt_am=instant(bekannt_am, "bekannt_am"),
            cap=cap,
        )

    async def history(
        self,
        user_id: str,
        character_id: str,
        entity_id: str,
        beziehung: str | None = None,
        *,
        gueltig_am: When | None = None,
        bekannt_am: When | None = None,
    ) -> list[MappeFakt]:
        """Every value the entity's relations had (corrected ones never): as recorded
        now, or as known at `bekannt_am`; with `gueltig_am`, only the values that had
        begun by then. Dates as for `mappe`."""
        user_id, character_id = pair_ids(user_id, character_id)
        only = {} if beziehung is None else {"rel_types": [self.canon[beziehung].rel_type]}
        exists = await self.db.query(
            "entity_by_id", user_id=user_id, character_id=character_id, entity_id=entity_id
        )
        if not exists:  # a foreign id reads exactly like an unknown one, as in mappe()
            raise EntityNotFound(f"no entity with id {entity_id!r} for user {user_id!r}")
        # Unlike a Mappe (a moment), a history given only `bekannt_am` is everything
        # known then, begun or not: only `gueltig_am` asks for the values begun by then.
        valid, known = instant(gueltig_am, "gueltig_am"), instant(bekannt_am, "bekannt_am")
        rows = await self.db.query(
            "history",
            user_id=user_id,
            character_id=character_id,
            entity_id=entity_id,
            only=only,
            asof=known is not None,
            at={"bekannt_am": known or KNOWN_NOW},
            symmetric_types=symmetric_types(self.canon),
        )
        if known is not None:
            rows = [as_known_then(r) for r in rows]
        facts = [to_fakt(r, self.canon, history=True) for r in rows]
        if valid is None:
            return facts
        return [f for f, r in zip(facts, rows, strict=True) if effective(r)[0] <= valid]

    # -- timeline ---------------------------------------------------------------

    async def timeline_add(
        self, user_id: str, character_id: str, entry: NeuerEintrag | dict[str, Any],
        betrifft_id: str | None = None,
    ) -> Eintrag:
        """A timeline entry (a `NeuerEintrag`, or its fields as a dict, as an order's)."""
        user_id, character_id = pair_ids(user_id, character_id)
        if not isinstance(entry, NeuerEintrag):
            try:
                entry = NeuerEintrag.model_validate(entry)
            except ValidationError as exc:
                raise InvalidInput(f"the entry is invalid — {describe(exc)}") from None
        if entry.typ == "ereignis" and betrifft_id is None:
            raise InvalidInput(
                "an ereignis is an event of a person, linked to that person: name them "
                "(betrifft; `kg timeline add --betrifft`), or give the entry another typ "
                "(termin, geburtstag, deadline, jahrestag, erinnerung)"
            )
        async with self.db.user_turn(user_id):
            return await self.timeline.add(user_id, character_id, entry, betrifft_id)

    async def timeline_move(
        self,
        user_id: str,
        character_id: str,
        eintrag_id: str,
        beginn: date,
        ende: date | None = None,
        genauigkeit: Genauigkeit | None = None,
    ) -> Eintrag:
        user_id, character_id = pair_ids(user_id, character_id)
        if ende is not None and ende < beginn:
            raise InvalidInput(f"ende {ende} is before beginn {beginn}: give an ende on or "
                               "after it")
        async with self.db.user_turn(user_id):
            return await self.timeline.move(
                user_id, character_id, eintrag_id, beginn, ende, genauigkeit
            )

    async def timeline_cancel(
        self, user_id: str, character_id: str, eintrag_id: str
    ) -> Absage:
        user_id, character_id = pair_ids(user_id, character_id)
        async with self.db.user_turn(user_id):
            return await self.timeline.cancel(user_id, character_id, eintrag_id)

    async def timeline_active(self, user_id: str, character_id: str, eintrag_id: str) -> Eintrag:
        user_id, character_id = pair_ids(user_id, character_id)
        return await self.timeline.active(user_id, character_id, eintrag_id)

    async def timeline_chain(
        self, user_id: str, character_id: str, eintrag_id: str
    ) -> list[Eintrag]:
        user_id, character_id = pair_ids(user_id, character_id)
        return await self.timeline.chain(user_id, character_id, eintrag_id)

    async def timeline_link(
        self, user_id: str, character_id: str, eintrag_id: str, betrifft_id: str
    ) -> list[Eintrag]:
        """Name the person a timeline chain is about where its entries name nobody (a
        repair: see `Timeline.link`); returns the chain."""
        user_id, character_id = pair_ids(user_id, character_id)
        async with self.db.user_turn(user_id):
            return await self.timeline.link(user_id, character_id, eintrag_id, betrifft_id)

    async def timeline_window(
        self, user_id: str, character_id: str, von: date, bis: date
    ) -> list[Eintrag]:
        user_id, character_id = pair_ids(user_id, character_id)
        return await self.timeline.window(user_id, character_id, von, bis)

    # -- export, import, purge --------------------------------------------------

    async def export(
        self,
        path: str | Path,
        user_id: str,
        character_id: str | None = None,
        progress: transfer.Progress | None = None,
    ) -> transfer.ExportErgebnis:
        """Write a user's (or a pair's) data to a JSON Lines file (see kg.transfer)."""
        from kg import transfer

        user_id, character_id = user_scope(user_id, character_id)
        async with self.db.counted():  # (its read, then its file: one call)
            return await transfer.export_file(
                self.db, self.canon, file_path(path, "the export's path"), user_id,
                character_id, progress or transfer.no_progress,
            )

    async def import_file(
        self, path: str | Path, progress: transfer.Progress | None = None
    ) -> transfer.ImportErgebnis:
        """Validate an export file completely, then write it in one transaction."""
        from kg import transfer

        async with self.db.counted():  # (its checks and its write: one call)
            return await transfer.import_file(
                self.db, self.canon, file_path(path, "the import's path"),
                progress or transfer.no_progress,
            )

    async def purge(
        self, user_id: str, character_id: str | None = None
    ) -> transfer.PurgeErgebnis:
        """Delete a pair's (or a whole user's) data; every other pair stays untouched."""
        from kg import transfer

        user_id, character_id = user_scope(user_id, character_id)
        async with self.db.counted():  # (the purge, then the lock node: one call)
            return await transfer.purge(self.db, user_id, character_id)

    # -- decay and check --------------------------------------------------------

    async def decay_run(
        self,
        user_id: str | None = None,
        *,
        day: date | str | None = None,
        if_due: bool = False,
        progress: DecayProgress | None = None,
    ) -> DecayRun:
        """The daily sweep: staerke_decay and decay_am on every active fact edge (see
        kg.decay), computed for `day` (default: today, UTC). `if_due` does nothing when
        the day is swept already; `user_id` limits it to one user's edges (not recorded
        as the day's run)."""
        from kg.decay import sweep

        if user_id is not None:
            user_id = ident(user_id, "user_id")
        async with self.db.counted():  # (its slices and its record: one call)
            return await sweep(self.db, self.canon, as_day(day), if_due, user_id, progress)

    async def decay_forget_ahead(self) -> list[date]:
        """Delete the decay runs recorded for a day after tomorrow (see
        kg.decay.forget_runs_ahead); returns their days."""
        from kg.decay import forget_runs_ahead

        return await forget_runs_ahead(self.db)

    async def check(
        self, user_id: str | None = None, *, day: date | str | None = None
    ) -> CheckReport:
        """Prove the store's invariants (see kg.check); `user_id` checks one user's data,
        `day` is the day the decay runs' recency is judged against (default: today)."""
        from kg.check import run_checks

        if user_id is not None:
            user_id = ident(user_id, "user_id")
        async with self.db.counted():  # (its reads, side by side: one call)
            return await run_checks(self.db, self.canon, user_id, as_day(day))

    async def renormalize_names(
        self, user_id: str | None = None, *, dry_run: bool = False
    ) -> Renormalisiert:
        """Store every entity's name and lookup key (of `user_id`; of every user when
        None) as this version's writer stores them: after an upgrade whose rule strips
        more from a name (`kg check`'s name_norm and format_namesakes; see kg.names)."""
        from kg.check import refuse_nothing_stored
        from kg.names import renormalize

        if user_id is not None:
            user_id = ident(user_id, "user_id")
            await refuse_nothing_stored(
                self.db, user_id, nothing="no name was read (without --user: every user's)"
            )
        async with self.db.counted():  # (a transaction per user: one call)
            return await renormalize(self.db, user_id, dry_run)

    # -- audit ------------------------------------------------------------------

    async def audit(
        self, user_id: str, character_id: str | None = None, limit: int = 20
    ) -> list[AuditEintrag]:
        check_limit(limit)
        user_id, character_id = user_scope(user_id, character_id)
        rows = await self.db.query(
            "audit_list", user_id=user_id, character_id=character_id, limit=limit
        )
        return [
            from_store(AuditEintrag, {
                "auftrag_id": r["auftrag_id"],
                "character_id": r["character_id"],
                "empfangen": stored_instant(r["empfangen"], "order", r["auftrag_id"],
                                            "empfangen"),
                "erfasst": stored_instant(r["erfasst"], "order", r["auftrag_id"], "erfasst"),
                "status": r["status"],
                "anzahl": r["anzahl"],
                "ergebnis": stored_result(r["ergebnis"], r["auftrag_id"], user_id,
                                          r["character_id"], r["status"], r["anzahl"]),
            }, "order", r["auftrag_id"])
            for r in rows
        ]

    async def audit_prune(
        self, *, keep_days: int | None = None, now: datetime | None = None, batch: int = 10_000
    ) -> int:
        """Apply the audit's retention to every user: delete the orders recorded more than
        `keep_days` (default `KG_AUDIT_RETENTION_DAYS`) before `now` (default: this
        moment), `batch` per transaction until none is left; returns how many were
        deleted."""
        keep = self.db.settings.audit_retention_days if keep_days is None else keep_days
        if isinstance(keep, bool) or not isinstance(keep, int) or not 1 <= keep <= 36_500:
            # The audit holds the idempotency ids: kept for less than a day, a replay of an
            # order sent moments ago would be written again.
            raise InvalidInput(
                f"keep_days must be a whole number of days from 1 to 36500, not {keep!r} "
                "(the audit holds the orders' idempotency ids; KG_AUDIT_RETENTION_DAYS has "
                "the same bounds)"
            )
        if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= BATCH_MAX:
            # (0 deleted nothing and never ended: no batch was ever short of none)
            raise InvalidInput(f"batch must be a whole number from 1 to {BATCH_MAX:,}, not "
                               f"{batch!r} (the orders deleted per transaction)")
        before = (now or datetime.now(UTC)) - timedelta(days=keep)
        deleted = 0
        async with self.db.counted():  # (its batches: one call)
            while True:
                rows = await self.db.write(
                    lambda tx: tx.run("audit_prune", before=before, batch=batch))
                done = int(rows[0]["deleted"]) if rows else 0
                deleted += done
                if done < batch:
                    return deleted


class Pair:
    """The memory of one pair (user, character): the calls that belong to a pair, without
    threading the two ids through each. Get one with `Memory.pair(user_id, character_id)`;
    it holds no state of its own and is cheap to make per turn."""

    def __init__(self, memory: Memory, user_id: str, character_id: str) -> None:
        self.memory = memory
        self.user_id, self.character_id = pair_ids(user_id, character_id)

    async def write(self, order: Auftrag | dict[str, Any]) -> AuftragErgebnis:
        """An order of this pair: `user_id`/`character_id` are filled in, and an order
        that names another pair is refused (ids read as every surface reads them)."""
        data = order.model_dump() if isinstance(order, Auftrag) else dict(order)
        for key, mine in (("user_id", self.user_id), ("character_id", self.character_id)):
            if ident(data.setdefault(key, mine), key) != mine:
                raise InvalidInput(
                    f"the order names {key} {data[key]!r}, but this is the memory of the pair "
                    f"({self.user_id!r}, {self.character_id!r}); write it through that pair"
                )
        return await self.memory.write(data)

    async def resolve(self, name: str) -> Aufloesung:
        return await self.memory.resolve(self.user_id, self.character_id, name)

    async def entity_id(self, name_or_id: str) -> str:
        return await self.memory.entity_id(self.user_id, self.character_id, name_or_id)

    async def entities(self, limit: int = 1000) -> list[Entitaet]:
        return await self.memory.entities(self.user_id, self.character_id, limit)

    async def mappe(
        self,
        entity_id: str,
        *,
        gueltig_am: When | None = None,
        bekannt_am: When | None = None,
        cap: int | None = None,
    ) -> Mappe:
        return await self.memory.mappe(
            self.user_id, self.character_id, entity_id,
            gueltig_am=gueltig_am, bekannt_am=bekannt_am, cap=cap,
        )

    async def mappen(
        self,
        entity_ids: list[str],
        *,
        gueltig_am: When | None = None,
        bekannt_am: When | None = None,
        cap: int | None = None,
    ) -> list[Mappe]:
        return await self.memory.mappen(
            self.user_id, self.character_id, entity_ids,
            gueltig_am=gueltig_am, bekannt_am=bekannt_am, cap=cap,
        )

    async def history(
        self,
        entity_id: str,
        beziehung: str | None = None,
        *,
        gueltig_am: When | None = None,
        bekannt_am: When | None = None,
    ) -> list[MappeFakt]:
        return await self.memory.history(
            self.user_id, self.character_id, entity_id, beziehung,
            gueltig_am=gueltig_am, bekannt_am=bekannt_am,
        )

    async def timeline_add(
        self, entry: NeuerEintrag | dict[str, Any], betrifft_id: str | None = None
    ) -> Eintrag:
        return await self.memory.timeline_add(self.user_id, self.character_id, entry, betrifft_id)

    async def timeline_move(
        self,
        eintrag_id: str,
        *,
        beginn: date,
        ende: date | None = None,
        genauigkeit: Genauigkeit | None = None,
    ) -> Eintrag:
        return await self.memory.timeline_move(
            self.user_id, self.character_id, eintrag_id, beginn, ende, genauigkeit
        )

    async def timeline_cancel(self, eintrag_id: str) -> Absage:
        return await self.memory.timeline_cancel(self.user_id, self.character_id, eintrag_id)

    async def timeline_chain(self, eintrag_id: str) -> list[Eintrag]:
        return await self.memory.timeline_chain(self.user_id, self.character_id, eintrag_id)

    async def timeline_window(self, *, von: date, bis: date) -> list[Eintrag]:
        return await self.memory.timeline_window(self.user_id, self.character_id, von, bis)

    async def audit(self, limit: int = 20) -> list[AuditEintrag]:
        return await self.memory.audit(self.user_id, self.character_id, limit)


def parse_order(data: Any) -> Auftrag:
    """An order from JSON-like data, or InvalidInput that says what is wrong."""
    try:
        return Auftrag.model_validate(data)
    except ValidationError as exc:
        # Bounded: an order's error names what is wrong, never echoes a huge input.
        raise InvalidInput(clip(f"the order is invalid — {describe(exc)}", 1500)) from None


def as_day(day: date | str | None) -> date | None:
    """A day given to a sweep or a check: a date, or one as ISO text (YYYY-MM-DD)."""
    if day is None or (isinstance(day, date) and not isinstance(day, datetime)):
        return day
    if isinstance(day, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", day.strip()):
        with contextlib.suppress(ValueError):
            return date.fromisoformat(day.strip())
    raise InvalidInput(f"day must be a date (e.g. date(2026, 12, 5) or '2026-12-05'), not {day!r}")


def file_path(path: object, what: str) -> Path:
    """A file's path given to an export or an import: text or a path-like object (bytes,
    a NUL character and anything else are refused as the caller's input, not as a
    TypeError or ValueError)."""
    name = os.fspath(path) if isinstance(path, os.PathLike) else path
    if isinstance(name, str) and name.strip() and "\0" not in name:
        return Path(name)
    raise InvalidInput(f"{what} must be a file's path (a str or a pathlib.Path), not {path!r}")


#: The most rows a listing (`entities`, `audit`) takes as its `limit`.
LIMIT_MAX = 1_000_000_000


#: The most orders `audit_prune` deletes in one transaction.
BATCH_MAX = 1_000_000


def check_limit(limit: int, name: str = "limit") -> None:
    """A list's limit is a whole number from 1 to LIMIT_MAX."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIMIT_MAX:
        raise InvalidInput(f"{name} must be a whole number from 1 to {LIMIT_MAX:,}, not {limit!r}")


def check_cap(cap: int | None) -> None:
    """A Mappe's cap is a whole number from 1 to MAPPE_CAP_MAX (None: the setting's), and
    refused beyond it before any query runs: the query's memory grows with the square of
    the cap, and beyond the bound the server would refuse it for memory after seconds."""
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise InvalidInput(f"cap must be a whole number from 1 to {MAPPE_CAP_MAX:,}, not {cap!r}")
    if cap is not None and cap > MAPPE_CAP_MAX:
        raise InvalidInput(
            f"cap {cap:,} is more than a Mappe holds: at most {MAPPE_CAP_MAX:,} facts (a "
            "Mappe is a prompt's dossier, and its query's memory grows with the square of "
            f"the cap) — ask for {MAPPE_CAP_MAX:,} or fewer"
        )


class Korrektur(TypedDict, total=False):
    """What a correction names, by keyword: the wrong fact and its optional replacement."""

    #: Entities by name, or by id as {"id": ...} (as in an order).
    subjekt: Required[str | dict[str, str]]
    beziehung: Required[str]
    #: Required, no default: who says the fact was wrong.
    herkunft: Required[str]
    #: The wrong fact's object entity, or its value.
    objekt: str | dict[str, str] | None
    wert: str | None
    #: The replacement's object entity, or its value (at most one).
    neu_objekt: str | dict[str, str] | None
    neu_wert: str | None
    #: When the replacement began (the order's valid time); without it, where the
    #: corrected value began.
    zeitpunkt: datetime | str | None
    notiz: str | None
    auftrag_id: str | None


def zeitpunkt_without_replacement(zeitpunkt: str, replacement: str) -> InvalidInput:
    """A correction's `zeitpunkt` without a replacement (one rule for the library, the
    CLI and MCP, each naming its own fields): taken, it was dropped without a word."""
    return InvalidInput(
        f"{zeitpunkt} says when the replacement began: give {replacement} with it, or "
        "leave it out (a correction alone is never true, at no time)")


def correction_order(
    user_id: str, character_id: str, **korrektur: Unpack[Korrektur]
) -> Auftrag:
    """The order of a correction: the wrong fact (`objekt` or `wert`) retired as never
    true, and its replacement (`neu_objekt` or `neu_wert`) as a triple with the required
    `herkunft`, holding from `zeitpunkt`, else where the corrected value began.
    InvalidInput says what is wrong; an unknown keyword (a typo of `neu_objekt` would
    retire the wrong fact and write no replacement) is refused before anything else."""
    known = list(Korrektur.__annotations__)
    unknown = [k for k in korrektur if k not in known]
    if unknown:
        named = ", ".join(
            f"{k!r}" + "".join(f" (did you mean {m!r}?)"
                               for m in difflib.get_close_matches(k, known, 1))
            for k in unknown
        )
        what, it = ("is not a keyword", "it") if len(unknown) == 1 else ("are not keywords",
                                                                           "them")
        raise InvalidInput(
            f"{named} {what} of a correction; nothing was written — fix or remove {it} (a "
            f"correction takes {', '.join(known)})"
        )
    missing = [k for k in ("subjekt", "beziehung", "herkunft") if k not in korrektur]
    if missing:
        raise InvalidInput(
            f"a correction needs {', '.join(missing)}: the wrong fact's subjekt and "
            "beziehung, and the herkunft of the correction (mensch, nova, modell, recherche)"
        )
    subjekt, beziehung = korrektur["subjekt"], korrektur["beziehung"]
    herkunft = korrektur["herkunft"]
    objekt, wert = korrektur.get("objekt"), korrektur.get("wert")
    neu_objekt, neu_wert = korrektur.get("neu_objekt"), korrektur.get("neu_wert")
    notiz, auftrag_id = korrektur.get("notiz"), korrektur.get("auftrag_id")
    zeitpunkt = korrektur.get("zeitpunkt")
    if herkunft not in HERKUNFT:
        raise InvalidInput(
            f"herkunft is required and must be one of {', '.join(HERKUNFT)}, not {herkunft!r}"
        )
    data: dict[str, Any] = {
        # (An empty one is the order's to refuse, as any order's: not replaced.)
        "auftrag_id": f"berichtigung-{uuid.uuid4().hex}" if auftrag_id is None else auftrag_id,
        "user_id": user_id,
        "character_id": character_id,
        "berichtigungen": [
            {k: v for k, v in {"subjekt": subjekt, "beziehung": beziehung, "objekt": objekt,
                               "wert": wert, "notiz": notiz, "herkunft": herkunft}.items()
             if v is not None}
        ],
    }
    if zeitpunkt is not None:
        if neu_objekt is None and neu_wert is None:
            raise zeitpunkt_without_replacement("zeitpunkt", "neu_objekt or neu_wert")
        data["zeitpunkt"] = zeitpunkt
    if neu_objekt is not None or neu_wert is not None:
        replacement: dict[str, Any] = {
            "subjekt": subjekt, "beziehung": beziehung, "herkunft": herkunft
        }
        if neu_objekt is not None and neu_wert is not None:
            raise InvalidInput("give the replacement as neu_objekt or neu_wert, not both")
        if neu_objekt is not None:
            replacement["objekt"] = neu_objekt
        else:
            replacement["wert"] = str(neu_wert)
        try:
            Tripel.model_validate(replacement)
        except ValidationError as exc:
            raise InvalidInput(f"the replacement is invalid — {describe(exc)}") from None
        data["tripel"] = [replacement]
    return parse_order(data)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _no_running_loop(what: str) -> None:
    """Refuse a synchronous call from code that runs in an event loop: it would block
    that loop, and asyncio refuses to nest one (a bare RuntimeError)."""
    if _loop_running():
        raise UsageError(f"{what} is called from code that runs in an event loop: there, "
                         "use the async Memory (`memory = await Memory.open()`, then "
                         "`await memory.write(...)`)")


class SyncMemory:
    """`Memory` for synchronous callers: each call runs the async one on a private loop.

    One SyncMemory may be shared by several threads (a threaded web server's workers):
    its calls run one at a time, each to completion, on its one loop, where its driver
    and connections live; a thread that calls while another's call runs waits for it.
    For calls side by side, await `Memory` on one event loop instead. Never call it
    from code that runs inside one of its own calls (a coroutine it runs that hands work
    to a thread which calls it again): that thread would wait for the call it serves.
    """

    def __init__(self, settings: Settings | None = None, check_schema: bool = True) -> None:
        _no_running_loop("SyncMemory(...)")
        self._closed = False
        self._runner = asyncio.Runner()
        # A loop runs one `run` at a time: a second thread's would raise "This event
        # loop is already running" and leave its coroutine never awaited. Reentrant, so
        # that a call made from inside a running call fails as it did, not in a deadlock.
        self._turn = threading.RLock()
        try:
            self.memory = self._runner.run(Memory.open(settings, check_schema))
        except BaseException:
            self._runner.close()
            raise

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run any coroutine of `self.memory` (or the library) to completion; from any
        thread, after the call another thread is running."""
        if _loop_running():
            coro.close()  # never to run: no "coroutine ... was never awaited" warning
            _no_running_loop("SyncMemory.run(...)")
        with self._turn:
            if self._closed:  # (under the turn: a close in another thread comes first)
                coro.close()
                raise UsageError("this SyncMemory is closed: open a new one (`with "
                                 "SyncMemory() as store:` closes it at the block's end)")
            return self._runner.run(coro)

    def close(self) -> None:
        """Close the connections; a second close does nothing."""
        with self._turn:
            if self._closed:
                return
            self._closed = True
            try:
                self._runner.run(self.memory.close())
            finally:
                self._runner.close()

    def __enter__(self) -> SyncMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
