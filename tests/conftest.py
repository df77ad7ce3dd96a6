"""A real Neo4j for every integration test, and per-test isolation by user id.

Where the server comes from, in order: `NEO4J_URI` if set; else testcontainers'
Neo4j 5.26 when a Docker engine answers; else the project's local launcher, started
once per test session (and stopped after it, unless it was already running).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from kg import schema
from kg.api import SyncMemory
from kg.launcher import LocalServer
from kg.settings import LOCAL_DEFAULT_PASSWORD, Settings


def _docker_engine_answers() -> bool:
    if not shutil.which("docker"):
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def neo4j_settings() -> Iterator[Settings]:
    if os.environ.get("NEO4J_URI"):
        yield Settings()
        return
    if _docker_engine_answers():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community", password=LOCAL_DEFAULT_PASSWORD) as box:
            yield Settings(
                neo4j_uri=box.get_connection_url(),
                neo4j_username="neo4j",
                neo4j_password=LOCAL_DEFAULT_PASSWORD,
            )
        return
    server = LocalServer.from_env()
    started_here = not server.bolt_answers()
    if started_here:
        server.start()
    try:
        yield Settings(neo4j_uri=server.uri, neo4j_password=server.password)
    finally:
        if started_here:
            server.stop()


@pytest.fixture(scope="session")
def store(neo4j_settings: Settings) -> Iterator[SyncMemory]:
    """One connected store for the session, schema applied."""
    bootstrap = SyncMemory(neo4j_settings, check_schema=False)
    try:
        bootstrap.run(schema.apply(bootstrap.memory.db))
    finally:
        bootstrap.close()
    sync = SyncMemory(neo4j_settings)
    yield sync
    sync.close()


@dataclass
class Pair:
    """A fresh (user, character) pair: tests isolate themselves by unique user ids."""

    store: SyncMemory
    user_id: str
    character_id: str = "nova"
    _n: int = 0

    def order(self, *tripel: dict[str, Any], **extra: Any) -> dict[str, Any]:
        self._n += 1
        return {
            "auftrag_id": extra.pop("auftrag_id", f"turn-{self._n}-{uuid.uuid4().hex[:6]}"),
            "user_id": self.user_id,
            "character_id": extra.pop("character_id", self.character_id),
            "tripel": list(tripel),
            **extra,
        }

    def write(self, *tripel: dict[str, Any], **extra: Any) -> Any:
        return self.store.run(self.store.memory.write(self.order(*tripel, **extra)))

    def id_of(self, name: str) -> str:
        return self.store.run(self.store.memory.entity_id(self.user_id, self.character_id, name))

    def mappe(self, name: str, **kw: Any) -> Any:
        return self.store.run(
            self.store.memory.mappe(self.user_id, self.character_id, self.id_of(name), **kw)
        )

    def cypher(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Raw Cypher for assertions and for planting violations (tests only)."""
        return self.store.run(raw_cypher(self.store, query, **params))

    def other(self, character_id: str) -> Pair:
        return Pair(self.store, self.user_id, character_id)


async def raw_cypher(store: SyncMemory, query: str, **params: Any) -> list[dict[str, Any]]:
    driver = store.memory.db.driver
    records, _, _ = await driver.execute_query(query, params, database_=store.memory.db.name)
    return [r.data() for r in records]


@pytest.fixture
def pair(store: SyncMemory) -> Pair:
    return Pair(store, f"test-{uuid.uuid4().hex[:12]}")


def t(
    subjekt: Any,
    beziehung: str,
    objekt: Any = None,
    *,
    wert: str | None = None,
    herkunft: str = "mensch",
    **extra: Any,
) -> dict[str, Any]:
    """A triple for an order."""
    triple: dict[str, Any] = {"subjekt": subjekt, "beziehung": beziehung, "herkunft": herkunft}
    if objekt is not None:
        triple["objekt"] = objekt
    if wert is not None:
        triple["wert"] = wert
    triple.update(extra)
    return triple
