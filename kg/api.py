"""The library's front door: `Memory` (async) and `SyncMemory` (a thin sync shim).

The chat backend awaits `Memory`; the CLI and sync callers use `SyncMemory`, which runs
the very same coroutines on its own event loop — there is no second copy of any
operation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field

from kg import schema, transfer
from kg.canon import Canon, load_canon
from kg.check import CheckReport, run_checks
from kg.db import Database
from kg.decay import DecayRun, sweep
from kg.decay import Progress as DecayProgress
from kg.errors import AmbiguousEntity, EntityNotFound, InvalidInput
from kg.mappe import Mappe, MappeFakt, read_mappen, to_fakt
from kg.models import (
    Auftrag,
    AuftragErgebnis,
    Entitaet,
    Frozen,
    Genauigkeit,
    Kandidat,
    NeuerEintrag,
    clip,
    normalize_name,
)
from kg.settings import Settings, load_settings
from kg.timeline import Eintrag, Timeline
from kg.writer import FaktenAgent

T = TypeVar("T")


class Status(Frozen):
    """What `kg status` reports."""

    uri: str
    version: str
    edition: str
    database: str
    schema_version: int
    schema_needed: int
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
        self.agent = FaktenAgent(db, canon)
        self.timeline = Timeline(db)

    @classmethod
    async def open(cls, settings: Settings | None = None, check_schema: bool = True) -> Memory:
        """Connect; refuses a database whose schema is older than this package needs."""
        settings = settings or load_settings()
        db = Database.open(settings)
        try:
            await db.verify()
            if check_schema:
                await schema.require_current(db)
        except BaseException:
            await db.close()
            raise
        return cls(db, load_canon(settings.kanon_datei))

    async def close(self) -> None:
        await self.db.close()

    async def __aenter__(self) -> Memory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

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
            schema_version=sum(s.status == "applied" for s in states),
            schema_needed=len(states),
            entities=counts["entities"],
            facts=counts["facts"],
            active_facts=counts["active_facts"],
        )

    # -- writing ----------------------------------------------------------------

    async def write(self, auftrag: Auftrag | dict[str, Any]) -> AuftragErgebnis:
        """Write an order through the Fakten-Agent (one transaction)."""
        if not isinstance(auftrag, Auftrag):
            auftrag = parse_order(auftrag)
        return await self.agent.write(auftrag)

    # -- entities ---------------------------------------------------------------

    async def resolve(self, user_id: str, character_id: str, name: str) -> Aufloesung:
        """A name → its entity or its candidates, without writing."""
        rows = await self.db.query(
            "entity_candidates",
            user_id=user_id,
            character_id=character_id,
            name_norm=normalize_name(name),
        )

        def kandidat(row: dict[str, Any]) -> Kandidat:
            merkmale = []
            for m in row["merkmale"]:
                rel = self.canon.by_type.get(m["rel"])
                text = (rel.vorwaerts if m["out"] else rel.rueckwaerts) if rel else m["rel"]
                merkmale.append(f"{text} {m['other']}")
            return Kandidat(id=row["id"], name=row["name"], typ=row["typ"], merkmale=merkmale)

        found = [kandidat(r) for r in rows]
        return Aufloesung(entitaet=found[0] if len(found) == 1 else None, kandidaten=found)

    async def entity_id(self, user_id: str, character_id: str, name_or_id: str) -> str:
        """An id from a name or id; EntityNotFound / AmbiguousEntity otherwise."""
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
                f"{len(found.kandidaten)} entities are named {name_or_id!r}; use an id",
                found.kandidaten,
            )
        raise EntityNotFound(f"user {user_id!r} has no entity named or with id {name_or_id!r}")

    async def entities(
        self, user_id: str, character_id: str | None = None, limit: int = 1000
    ) -> list[Entitaet]:
        rows = await self.db.query(
            "entities_list", user_id=user_id, character_id=character_id, limit=limit
        )
        return [Entitaet(**r) for r in rows]

    # -- reading ----------------------------------------------------------------

    async def mappe(
        self,
        user_id: str,
        character_id: str,
        entity_id: str,
        gueltig_am: datetime | None = None,
        bekannt_am: datetime | None = None,
        cap: int | None = None,
    ) -> Mappe:
        """The Mappe of one entity (one query, one round trip)."""
        return (
            await read_mappen(
                self.db,
                self.canon,
                user_id,
                character_id,
                [entity_id],
                gueltig_am,
                bekannt_am,
                cap,
            )
        )[0]

    async def mappen(
        self,
        user_id: str,
        character_id: str,
        entity_ids: list[str],
        gueltig_am: datetime | None = None,
        bekannt_am: datetime | None = None,
        cap: int | None = None,
    ) -> list[Mappe]:
        """The Mappen of all entities bound in a turn, in one read transaction."""
        return await read_mappen(
            self.db, self.canon, user_id, character_id, entity_ids, gueltig_am, bekannt_am, cap
        )

    async def history(
        self, user_id: str, character_id: str, entity_id: str, beziehung: str | None = None
    ) -> list[MappeFakt]:
        """Every value the entity's relations ever had (corrected ones never)."""
        rel_types = [self.canon[beziehung].rel_type] if beziehung else None
        rows = await self.db.query(
            "history",
            user_id=user_id,
            character_id=character_id,
            entity_id=entity_id,
            rel_types=rel_types,
        )
        return [to_fakt(r, self.canon, history=True) for r in rows]

    # -- timeline ---------------------------------------------------------------

    async def timeline_add(
        self, user_id: str, character_id: str, entry: NeuerEintrag, betrifft_id: str | None = None
    ) -> Eintrag:
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
        if ende is not None and ende < beginn:
            raise InvalidInput(f"ende {ende} is before beginn {beginn}; give a later --ende")
        return await self.timeline.move(
            user_id, character_id, eintrag_id, beginn, ende, genauigkeit
        )

    async def timeline_cancel(
        self, user_id: str, character_id: str, eintrag_id: str
    ) -> dict[str, list[str]]:
        return await self.timeline.cancel(user_id, character_id, eintrag_id)

    async def timeline_active(self, user_id: str, character_id: str, eintrag_id: str) -> Eintrag:
        return await self.timeline.active(user_id, character_id, eintrag_id)

    async def timeline_chain(
        self, user_id: str, character_id: str, eintrag_id: str
    ) -> list[Eintrag]:
        return await self.timeline.chain(user_id, character_id, eintrag_id)

    async def timeline_window(
        self, user_id: str, character_id: str, von: date, bis: date
    ) -> list[Eintrag]:
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
        return await transfer.export_file(
            self.db, self.canon, Path(path), user_id, character_id,
            progress or transfer.no_progress,
        )

    async def import_file(
        self, path: str | Path, progress: transfer.Progress | None = None
    ) -> transfer.ImportErgebnis:
        """Validate an export file completely, then write it in one transaction."""
        return await transfer.import_file(
            self.db, self.canon, Path(path), progress or transfer.no_progress
        )

    async def purge(
        self, user_id: str, character_id: str | None = None
    ) -> transfer.PurgeErgebnis:
        """Delete a pair's (or a whole user's) data; every other pair stays untouched."""
        return await transfer.purge(self.db, user_id, character_id)

    # -- decay and check --------------------------------------------------------

    async def decay_run(
        self,
        as_of: date | None = None,
        if_due: bool = False,
        user_id: str | None = None,
        progress: DecayProgress | None = None,
    ) -> DecayRun:
        """The daily sweep: staerke_decay and decay_am on every active fact edge (see
        kg.decay). `if_due` does nothing when the day is swept already; `user_id` limits
        it to one user's edges (not recorded as the day's run)."""
        return await sweep(self.db, self.canon, as_of, if_due, user_id, progress)

    async def check(self, user_id: str | None = None, on: date | None = None) -> CheckReport:
        """Prove the store's invariants (see kg.check); `user_id` checks one user's data."""
        return await run_checks(self.db, self.canon, user_id, on)

    # -- audit ------------------------------------------------------------------

    async def audit(
        self, user_id: str, character_id: str | None = None, limit: int = 20
    ) -> list[AuditEintrag]:
        rows = await self.db.query(
            "audit_list", user_id=user_id, character_id=character_id, limit=limit
        )
        return [
            AuditEintrag(
                auftrag_id=r["auftrag_id"],
                character_id=r["character_id"],
                empfangen=r["empfangen"].to_native(),
                erfasst=r["erfasst"].to_native(),
                status=r["status"],
                anzahl=r["anzahl"],
                ergebnis=AuftragErgebnis.model_validate_json(r["ergebnis"]),
            )
            for r in rows
        ]

    async def audit_prune(self, before: datetime) -> int:
        rows = await self.db.write(lambda tx: tx.run("audit_prune", before=before))
        return int(rows[0]["deleted"]) if rows else 0


def parse_order(data: Any) -> Auftrag:
    """An order from JSON-like data, or InvalidInput that says what is wrong."""
    from pydantic import ValidationError

    try:
        return Auftrag.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(clip(str(p), 40) for p in e['loc'][:5]) or 'order'}: {clip(e['msg'], 200)}"
            for e in exc.errors()[:5]
        )
        raise InvalidInput(f"the order is invalid — {problems}") from None


class SyncMemory:
    """`Memory` for synchronous callers: each call runs the async one on a private loop."""

    def __init__(self, settings: Settings | None = None, check_schema: bool = True) -> None:
        self._runner = asyncio.Runner()
        try:
            self.memory = self._runner.run(Memory.open(settings, check_schema))
        except BaseException:
            self._runner.close()
            raise

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run any coroutine of `self.memory` (or the library) to completion."""
        return self._runner.run(coro)

    def close(self) -> None:
        try:
            self._runner.run(self.memory.close())
        finally:
            self._runner.close()

    def __enter__(self) -> SyncMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
