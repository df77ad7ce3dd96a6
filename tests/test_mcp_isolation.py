"""Isolation through MCP: a server bound to a pair, and a token for a pair,
never return anything of another pair or another user.

The property of tests/test_reliability_isolation.py, driven through the MCP server:
hypothesis draws workloads over two users with two characters each, all on the same
names, with values and titles tagged by the pair that wrote them. Every pair writes
through the HTTP server with its own bearer token; the test records who owns what from
the answers. Then every pair reads through every read tool (and the stdio server bound
to the first pair reads too), and each answer must hold only its own pair's facts,
entries and tags, and only its own user's entities. Foreign ids are refused.

Bounded by default (5 workloads); KG_STRESS=1 runs 40.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.types import ReadResourceResult

from kg.api import SyncMemory
from kg.settings import Settings
from kg_mcp.binding import PairRef, TokenFile
from tests.conftest import new_user_id
from tests.mcp_support import HttpServer, Remote, everything, http_transport, stdio_transport
from tests.reliability_support import Stopwatch, size

WORKLOADS = size(5, 40)
CHARACTERS = ("nova", "luna")
PERSONEN = ("Lena", "Tom", "Anna")
ORTE = ("Kassel", "Berlin")
NAMES = PERSONEN + ORTE


@dataclass
class Ledger:
    """Who owns what, from the answers the pairs got back."""

    facts: dict[PairRef, set[str]] = field(default_factory=dict)
    entries: dict[PairRef, set[str]] = field(default_factory=dict)
    entities: dict[str, set[str]] = field(default_factory=dict)
    tags: dict[PairRef, str] = field(default_factory=dict)


class World:
    def __init__(self, tmp: Path, neo4j: Settings) -> None:
        self.users = [new_user_id("mcp-iso") for _ in range(2)]
        self.pairs = [PairRef(user_id=u, character_id=c) for u in self.users for c in CHARACTERS]
        tokens = TokenFile()
        secret: dict[PairRef, str] = {}
        for n, p in enumerate(self.pairs):
            tokens, secret[p] = tokens.with_new_token(f"pair-{n}", p)
        tokens.save(tmp / "tokens.json")
        log = tmp / "server.log"
        self.http = HttpServer(neo4j, tmp / "tokens.json", log)
        self.remotes = {p: Remote(http_transport(self.http.url, secret[p])) for p in self.pairs}
        # The stdio server is bound to the first pair by --user/--character.
        first = self.pairs[0]
        self.stdio = Remote(stdio_transport(neo4j, first.user_id, first.character_id, log))
        self.ledger = Ledger()
        for p in self.pairs:
            self.ledger.facts[p], self.ledger.entries[p] = set(), set()
            self.ledger.tags[p] = f"<{p.user_id}|{p.character_id}>"
        for u in self.users:
            self.ledger.entities[u] = set()

    def close(self) -> None:
        for r in [*self.remotes.values(), self.stdio]:
            r.close()
        self.http.stop()


@pytest.fixture(scope="module")
def world(
    store: SyncMemory, neo4j_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    w = World(tmp_path_factory.mktemp("mcp-iso"), neo4j_settings)
    try:
        yield w
    finally:
        w.close()
        for u in w.users:
            store.run(store.memory.purge(u))


step = st.tuples(
    st.integers(0, 3),  # pair
    st.sampled_from(["hobby", "wohnt_in", "geschwister", "beruf", "event", "correct"]),
    st.integers(0, len(PERSONEN) - 1),
    st.integers(0, len(PERSONEN) - 1),
    st.integers(0, 3),
)


def run_step(w: World, n: int, s: tuple[int, str, int, int, int]) -> None:
    pi, kind, a, b, k = s
    p = w.pairs[pi]
    remote, tag, ledger = w.remotes[p], w.ledger.tags[p], w.ledger
    person, other = PERSONEN[a], PERSONEN[b]
    if kind == "event":
        known = remote.ok("resolve", name=person)["entitaet"] is not None
        entry = remote.ok(
            "timeline_add",
            eintrag={"titel": f"{tag} {person} {n}", "beginn": f"2026-06-{1 + k:02d}",
                     "typ": "ereignis" if known else "termin"},
            betrifft=person if known else None,
        )
        ledger.entries[p].add(entry["id"])
        return
    t: dict[str, Any] = {"subjekt": person, "herkunft": "mensch"}
    args: dict[str, Any] = {"auftrag_id": f"iso-{uuid.uuid4().hex}", "tripel": [t]}
    if kind in ("hobby", "beruf"):
        t |= {"beziehung": kind, "wert": f"{tag} {kind} {k}"}
    elif kind == "wohnt_in":
        t |= {"beziehung": "wohnt_in", "objekt": ORTE[k % 2]}
        if k == 3:
            t["ereignis"] = {"titel": f"{tag} Umzug {n}", "beginn": "2026-11-01",
                             "genauigkeit": "monat"}
    elif kind == "geschwister":
        if person == other:
            return
        t |= {"beziehung": "geschwister", "objekt": other}
    elif kind == "correct":
        del args["tripel"]
        args["berichtigungen"] = [{"herkunft": "mensch", "subjekt": person, "beziehung": "hobby",
                                   "wert": f"{tag} hobby {k}"}]
    result = remote.ok("write", **args)
    for r in result["ergebnisse"]:
        for fid in [r["fakt_id"], *r["typ_fakten"]]:
            if fid:
                ledger.facts[p].add(fid)
        ledger.entities[p.user_id].update(
            i for i in (r["subjekt_id"], r["objekt_id"], *r["neue_entitaeten"]) if i
        )
        if r["timeline_id"]:
            ledger.entries[p].add(r["timeline_id"])


def ids_in(value: Any, key: str) -> set[str]:
    """Every value of `key` anywhere in a JSON answer."""
    found: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key and isinstance(v, str):
                found.add(v)
            found |= ids_in(v, key)
    elif isinstance(value, list):
        for v in value:
            found |= ids_in(v, key)
    return found


def check_pair(w: World, p: PairRef, remote: Remote) -> int:
    """Read everything as pair `p` through `remote`; returns the answers inspected."""
    ledger = w.ledger
    foreign_tags = [t for q, t in ledger.tags.items() if q != p]
    mine = ledger.facts[p]
    foreign_facts = set().union(*(f for q, f in ledger.facts.items() if q != p))
    foreign_entries = set().union(*(e for q, e in ledger.entries.items() if q != p))
    foreign_entities = set().union(*(e for u, e in ledger.entities.items() if u != p.user_id))
    answers = []
    known = [n for n in NAMES if remote.ok("resolve", name=n)["entitaet"]]
    for name in NAMES:
        answers.append(remote.call("resolve", name=name))
    for name in known:
        answers.append(remote.call("mappe", entitaet=name))
        answers.append(remote.call("history", entitaet=name))
    if known:
        answers.append(remote.call("mappen", entitaeten=known))
    answers.append(remote.call("entities"))
    answers.append(remote.call("timeline_list", von="2026-01-01", bis="2027-12-31"))
    answers.append(remote.call("status"))
    for result in answers:
        seen = everything(result)
        for tag in foreign_tags:
            assert tag not in seen, (p, tag)
        assert not result.is_error, seen
        data = result.structured_content or {}
        fact_ids = {f["id"] for f in _facts(data)}
        assert not fact_ids & foreign_facts, (p, fact_ids & foreign_facts)
        assert fact_ids <= mine, (p, fact_ids - mine)
        assert not ids_in(data, "id") & (foreign_entries | foreign_entities), p
    for name in known:
        # mypy cannot infer the type of a lambda with a default argument
        text = remote.run(cast(
            Callable[[Client], Coroutine[Any, Any, ReadResourceResult]],
            lambda c, n=name: c.read_resource(f"mappe://{n}"),
        )).contents[0].text
        assert not any(tag in text for tag in foreign_tags), (p, name)
    # Foreign ids are refused or answer nothing.
    for entry in sorted(foreign_entries)[:3]:
        chain = remote.call("timeline_list", eintrag_id=entry)
        assert chain.is_error or chain.structured_content == {"result": []}, (p, entry)
        assert remote.call("timeline_move", eintrag_id=entry, beginn="2027-01-01").is_error
    for entity in sorted(foreign_entities)[:3]:
        assert remote.call("mappe", entitaet=entity).is_error
    status = remote.ok("status")
    assert (status["user_id"], status["character_id"]) == (p.user_id, p.character_id)
    return len(answers)


def _facts(data: Any) -> list[dict[str, Any]]:
    """Every fact row (Mappe, history) anywhere in a JSON answer."""
    if isinstance(data, list):
        return [row for v in data for row in _facts(v)]
    if not isinstance(data, dict):
        return []
    rows = [data] if {"id", "beziehung", "herkunft"} <= set(data) else []
    return rows + [row for v in data.values() for row in _facts(v)]


@settings(
    max_examples=WORKLOADS,
    deadline=None,
    derandomize=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking a workload takes ages
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(step, min_size=3, max_size=8))
def test_mcp_reads_hold_only_the_bound_pair(world: World, steps: list[Any]) -> None:
    watch = Stopwatch("mcp isolation")
    for n, s in enumerate(steps):
        run_step(world, n, s)
    inspected = sum(check_pair(world, p, world.remotes[p]) for p in world.pairs)
    inspected += check_pair(world, world.pairs[0], world.stdio)
    watch.figures |= {"steps": len(steps), "answers": inspected}
    print(watch.report())
