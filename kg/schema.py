"""Schema migrations: numbered, idempotent `.cypher` files, recorded in the graph.

Each applied file leaves a `(:SchemaMigration {version, name, checksum, applied_at})`
node. A file whose checksum differs from the recorded one is an error, never a silent
re-run; the library refuses a database whose schema is older than it needs.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kg.db import Database, Tx
from kg.errors import QueryLoadError, SchemaError, SchemaOutdated
from kg.queries import cypher_dir
from kg.values import instant

_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.cypher$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    checksum: str
    statements: tuple[str, ...]


class MigrationState(BaseModel):
    """One migration and whether (and when) it is applied."""

    model_config = ConfigDict(frozen=True)

    version: int = Field(description="Number from the file name.")
    name: str = Field(description="Name from the file name.")
    applied_at: datetime | None = Field(description="When it was applied; None if pending.")
    status: str = Field(description="applied, pending, changed (file differs) or newer "
                        "(applied by a newer package: this one has no such file).")


def split_statements(text: str) -> list[str]:
    """Statements of a migration file: comment lines dropped, split at ';'."""
    body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//"))
    return [s.strip() for s in body.split(";") if s.strip()]


def migrations(root: Path | None = None) -> list[Migration]:
    """The package's migrations in order."""
    found: list[Migration] = []
    for path in sorted(((root or cypher_dir()) / "migrations").glob("*.cypher")):
        match = _FILE.match(path.name)
        if not match:
            raise QueryLoadError(f"{path.name}:1: migration files are named NNNN_name.cypher")
        text = path.read_text(encoding="utf-8")
        statements = split_statements(text)
        if not statements:
            raise QueryLoadError(f"{path.name}:1: migration has no statement")
        found.append(
            Migration(
                version=int(match.group(1)),
                name=match.group(2),
                checksum=hashlib.sha256(text.encode()).hexdigest(),
                statements=tuple(statements),
            )
        )
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise QueryLoadError(f"migrations must be numbered 1..n without gaps: {versions}")
    return found


async def _recorded(db: Database) -> dict[int, dict[str, Any]]:
    rows = await db.query("schema_applied")
    return {int(r["version"]): r for r in rows}


async def status(db: Database) -> list[MigrationState]:
    """Each of the package's migrations, and each the database records beyond them (a
    newer package applied it)."""
    recorded = await _recorded(db)
    states = []
    known = migrations()
    for m in known:
        row = recorded.get(m.version)
        if row is None:
            state, at = "pending", None
        else:
            state = "applied" if row["checksum"] == m.checksum else "changed"
            at = _applied_at(row)
        states.append(
            MigrationState(version=m.version, name=m.name, applied_at=at, status=state)
        )
    states += [
        MigrationState(version=version, name=str(row["name"]), applied_at=_applied_at(row),
                       status="newer")
        for version, row in sorted(recorded.items()) if version > len(known)
    ]
    return states


def _applied_at(row: dict[str, Any]) -> datetime | None:
    us = row["applied_us"]
    return None if us is None else instant(us)


def problem(states: list[MigrationState]) -> SchemaError | None:
    """What keeps this package from the database, in words, or None where the schema
    is the one it needs."""
    changed = [s for s in states if s.status == "changed"]
    if changed:
        return SchemaError(
            f"migration {changed[0].version:04d}_{changed[0].name} differs from the applied "
            "one — see `kg schema status`; applied migrations must not change: restore "
            "the file that was applied (reinstall the package version that applied it), "
            "and put a change of the schema into a new numbered migration."
        )
    newer = _newer(states)
    if newer is not None:
        return newer
    pending = [s for s in states if s.status == "pending"]
    if pending:
        return SchemaOutdated(
            f"the database schema is at version {len(states) - len(pending)}, this package "
            f"needs {len(states)} — run `kg schema apply`."
        )
    return None


def _newer(states: list[MigrationState]) -> SchemaError | None:
    newer = [s for s in states if s.status == "newer"]
    if not newer:
        return None
    return SchemaError(
        f"the database schema is at version {newer[-1].version}, newer than this package "
        f"knows ({len(states) - len(newer)}; {newer[0].version:04d}_{newer[0].name} was "
        "applied by a newer kg) — use that kg, or a newer release of this one."
    )


async def apply(db: Database) -> list[MigrationState]:
    """Apply pending migrations in order; an applied file that changed is an error, and
    so is a database a newer package migrated (this one would run its older files
    beside migrations it does not know)."""
    recorded = await _recorded(db)
    known = migrations()
    newer = _newer(await status(db))
    if newer is not None:
        raise newer
    for m in known:  # (all checked before any is applied)
        row = recorded.get(m.version)
        if row is not None and row["checksum"] != m.checksum:
            raise SchemaError(
                f"migration {m.version:04d}_{m.name} was applied with checksum "
                f"{str(row['checksum'])[:12]} but the file now has {m.checksum[:12]} — "
                "applied migrations must not change: restore the file that was applied "
                "(reinstall the package version that applied it), and put a change of the "
                "schema into a new numbered migration; nothing was applied."
            )
    for m in known:
        if m.version in recorded:
            continue
        # Schema statements cannot share a transaction with data writes: one each.
        for statement in m.statements:
            async with db.driver.session(database=db.name) as session:
                try:
                    await (await session.run(statement)).consume()
                except Exception as exc:
                    raise db.translate(exc) from exc

        async def record(tx: Tx, m: Migration = m) -> None:
            await tx.run("schema_record", version=m.version, name=m.name, checksum=m.checksum)

        await db.write(record)
    return await status(db)


async def require_current(db: Database) -> int:
    """The schema version, or SchemaOutdated/SchemaError when it does not fit."""
    states = await status(db)
    error = problem(states)
    if error is not None:
        raise error
    return len(states)

