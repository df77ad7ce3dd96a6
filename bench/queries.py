"""The bench's own named queries: `bench/cypher/*.cypher`, never part of the package.

They are loaded with the package's registry loader (same header format, same load
errors) on top of the package's queries, and attached to a `Database` so bench code
runs them by name like any other query.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from kg.db import Database
from kg.queries import Registry
from kg.queries import registry as package_registry

BENCH_CYPHER = Path(__file__).resolve().parent / "cypher"


@cache
def registry() -> Registry:
    """The package's queries plus the bench's, parsed once."""
    return package_registry().including(BENCH_CYPHER)


def attach(db: Database) -> Database:
    """Let `db` run the bench's queries too; returns it."""
    db.queries = registry()
    return db
