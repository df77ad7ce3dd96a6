"""What the reliability tests share: sizes, a workload, invariants, a ledger.

Sizes are bounded by default so CI finishes quickly; `KG_STRESS=1` runs them at
full size. The invariants are `kg check` (kg.check, scoped to one user) plus
what it does not cover and these tests need: entities unique per name, fact ids
unique, and the *ledger* — every order's effects present exactly once, nothing written
that no recorded order accounts for.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from kg.api import Memory
from kg.models import AuftragErgebnis
from tests.conftest import raw_cypher, t

STRESS = os.environ.get("KG_STRESS") == "1"

#: kg check's items 1-5 and 8 (the writer's guards) are structural; 6-7 judge the daily
#: decay sweep, which tests on the shared server must not run (it sweeps every user's edges).
STRUCTURAL_ITEMS = frozenset({1, 2, 3, 4, 5, 8})
WRITTEN = frozenset({"geschrieben", "abgeloest", "nachgetragen"})
DONE = frozenset({"geschrieben", "abgeloest", "nachgetragen", "unveraendert", "berichtigt"})


@asynccontextmanager
async def holding_lock(memory: Memory, user_id: str) -> AsyncIterator[None]:
    """The user's lock (the writer's `Nutzer` node) held by a transaction of `memory`'s
    driver, as a long purge or import holds it, until the block ends (rolled back)."""
    async with memory.db.driver.session(database=memory.db.name) as session:
        holder = await session.begin_transaction()
        await holder.run("MATCH (n:Nutzer {id: $u}) SET n.writes = n.writes", u=user_id)
        try:
            yield
        finally:
            await holder.rollback()


def size(bounded: int, full: int) -> int:
    """The bounded size by default, the full size with KG_STRESS=1."""
    return full if STRESS else bounded


@dataclass
class Stopwatch:
    """Figures a test prints at the end (visible with `pytest -s` or in -rA output)."""

    name: str
    began: float = field(default_factory=time.monotonic)
    figures: dict[str, Any] = field(default_factory=dict)

    def report(self) -> str:
        took = time.monotonic() - self.began
        parts = ", ".join(f"{k}={v}" for k, v in self.figures.items())
        return f"[{self.name}] {parts}, seconds={took:.1f}"


cypher = raw_cypher  # the shared raw-Cypher helper (tests/conftest.py)


# -- invariants ---------------------------------------------------------------------


async def violations(
    memory: Memory,
    user_id: str,
    *,
    unique_names: bool = True,
    decay: bool = False,
    check: bool = True,
) -> list[str]:
    """Every broken invariant of one user's data, as readable lines (empty: clean).

    `kg check` scoped to the user (items 1-5; all items with `decay=True`; none with
    `check=False`), plus: entities unique per normalised name (when nothing was created
    with {'neu': ...}), fact ids unique, one audit node per order id, every Wert and
    fact owned by the subject's user.
    """
    found = []
    if check:
        report = await memory.check(user_id)
        found = [
            f"check {c.name}: {c.count} {c.samples}"
            for c in report.checks
            if not c.ok and (decay or c.item in STRUCTURAL_ITEMS)
        ]
    rows = await cypher(
        memory,
        """
        CALL () {
          MATCH (e:Entitaet {user_id: $u})
          WITH e.name_norm AS n, count(*) AS c WHERE c > 1
          RETURN collect(n + ' x' + toString(c)) AS dup_names
        }
        CALL () {
          MATCH (:Entitaet {user_id: $u})-[r]->()
          WHERE r.id IS NOT NULL
          // A fact has one edge per version: a duplicate is two of one version.
          WITH r.id AS id, r.version AS v, count(*) AS c WHERE c > 1
          RETURN collect(id) AS dup_facts
        }
        CALL () {
          MATCH (a:Auftrag {user_id: $u})
          // The idempotency key is the pair's.
          WITH a.character_id AS c_id, a.id AS id, count(*) AS c WHERE c > 1
          RETURN collect(id) AS dup_orders
        }
        CALL () {
          MATCH (s:Entitaet {user_id: $u})-[r]->(w:Wert)
          WHERE w.user_id <> $u OR r.user_id <> $u
          RETURN collect(r.id) AS foreign_values
        }
        RETURN dup_names, dup_facts, dup_orders, foreign_values
        """,
        u=user_id,
    )
    extra = rows[0]
    if unique_names and extra["dup_names"]:
        found.append(f"entities duplicated by name: {extra['dup_names'][:5]}")
    for key in ("dup_facts", "dup_orders", "foreign_values"):
        if extra[key]:
            found.append(f"{key}: {extra[key][:5]}")
    return found


# -- the ledger: exactly-once effects -----------------------------------------------


def created_facts(ergebnis: AuftragErgebnis) -> set[str]:
    """The fact ids an order's result says it created (its triples and type facts)."""
    ids: set[str] = set()
    for r in ergebnis.ergebnisse:
        if r.ausgang in WRITTEN and r.fakt_id:
            ids.add(r.fakt_id)
        ids.update(r.typ_fakten)
    return ids


@dataclass
class Ledger:
    """What the graph holds of one user's orders, read back for comparison."""

    stored: dict[str, AuftragErgebnis]  # auftrag_id → the result stored with the order
    facts_by_order: dict[str, list[str]]  # auftrag_id → fact ids carrying it
    entities: list[str]  # every entity id of the user
    inactive: dict[str, str | None]  # inactive fact id → grund
    fact_ids: set[str]


async def read_ledger(memory: Memory, user_id: str) -> Ledger:
    orders = await cypher(
        memory,
        "MATCH (a:Auftrag {user_id: $u}) RETURN a.id AS id, a.ergebnis AS ergebnis",
        u=user_id,
    )
    facts = await cypher(
        memory,
        "MATCH (s:Entitaet {user_id: $u})-[r]->() WHERE r.auftrag_id IS NOT NULL "
        "AND r.t_expired IS NULL "  # the current version of each fact
        "RETURN r.id AS id, r.auftrag_id AS auftrag_id, r.aktiv AS aktiv, r.grund AS grund",
        u=user_id,
    )
    entities = await cypher(
        memory, "MATCH (e:Entitaet {user_id: $u}) RETURN e.id AS id", u=user_id
    )
    by_order: dict[str, list[str]] = {}
    for f in facts:
        by_order.setdefault(f["auftrag_id"], []).append(f["id"])
    return Ledger(
        stored={o["id"]: AuftragErgebnis.model_validate_json(o["ergebnis"]) for o in orders},
        facts_by_order=by_order,
        entities=[e["id"] for e in entities],
        inactive={f["id"]: f["grund"] for f in facts if not f["aktiv"]},
        fact_ids={f["id"] for f in facts},
    )


def ledger_violations(
    ledger: Ledger,
    acknowledged: dict[str, AuftragErgebnis],
    *,
    entities_from_orders_only: bool = True,
) -> list[str]:
    """Exactly-once: every acknowledged order is stored once with the result the caller
    got; every stored order's facts exist exactly once; no fact or entity exists that no
    stored order accounts for (nothing half-applied, nothing lost, nothing doubled)."""
    found: list[str] = []
    for auftrag_id, result in acknowledged.items():
        stored = ledger.stored.get(auftrag_id)
        if stored is None:
            found.append(f"acknowledged order {auftrag_id} is not in the audit (lost)")
        elif stored.model_dump(exclude={"wiederholt"}) != result.model_dump(
            exclude={"wiederholt"}
        ):
            found.append(f"order {auftrag_id}: the stored result differs from the acknowledged")
    for auftrag_id, stored in ledger.stored.items():
        expected = created_facts(stored)
        actual = ledger.facts_by_order.get(auftrag_id, [])
        if len(actual) != len(set(actual)) or set(actual) != expected:
            found.append(
                f"order {auftrag_id}: facts in the graph {sorted(actual)} != its result "
                f"{sorted(expected)}"
            )
        for r in stored.ergebnisse:
            # (An unchanged result without a fact: `typ sonstiges` on a typed entity.)
            if r.ausgang == "unveraendert" and r.fakt_id and r.fakt_id not in ledger.fact_ids:
                found.append(f"order {auftrag_id}: touched fact {r.fakt_id} does not exist")
    orphans = set(ledger.facts_by_order) - set(ledger.stored)
    if orphans:
        found.append(f"facts of orders that are not in the audit (half-applied): {orphans}")
    if entities_from_orders_only:
        created = Counter(e for s in ledger.stored.values() for r in s.ergebnisse
                          for e in r.neue_entitaeten)
        twice = [e for e, n in created.items() if n > 1]
        if twice:
            found.append(f"entities reported created by two orders: {twice[:5]}")
        if set(ledger.entities) != set(created) or len(ledger.entities) != len(created):
            found.append(
                f"entities in the graph ({len(ledger.entities)}) != entities the orders "
                f"created ({len(created)}): extra {sorted(set(ledger.entities) - set(created))[:5]}"
                f", missing {sorted(set(created) - set(ledger.entities))[:5]}"
            )
    # A lost update (two writers both replacing the same value) would leave two values
    # holding at once: `kg check`'s einwertig_unique and einwertig_overlap see it (run by
    # violations_of). Counting supersessions no longer can: valid time is a partition,
    # and a value that arrives late or an event of a month re-ends a value legitimately.
    superseded = {
        f for s in ledger.stored.values() for r in s.ergebnisse
        if r.ausgang in WRITTEN for f in r.abgeloest
    }
    for fact_id in superseded:
        if ledger.inactive.get(fact_id) != "abgeloest":
            found.append(f"fact {fact_id} is reported superseded but is not (grund abgeloest)")
    return found


# -- a workload on overlapping subjects -----------------------------------------------

PERSONEN = ("Lena", "Tom", "Anna", "Ben", "Mia")
ORTE = ("Berlin", "Kassel", "Hamburg", "Leipzig")
REGIONEN = ("Hessen", "Deutschland")
TIERE = ("Bello", "Minka")
BERUFE = ("Ärztin", "Lehrer", "Bäckerin", "Pilotin")
HOBBYS = ("Lesen", "Schach", "Klettern", "Kochen", "Segeln", "Malen")
#: Names several writers create at the same time: each must exist once.
NEUE = tuple(f"Neu {k}" for k in range(6))


tr = t  # the shared triple builder (tests/conftest.py)


@dataclass
class Workload:
    """Random orders over a small, shared set of names (so writers collide)."""

    user_id: str
    characters: tuple[str, ...]
    entries: dict[str, list[str]]  # character → first ids of timeline chains
    rng: random.Random

    def triple(self, character: str) -> tuple[dict[str, Any], bool]:
        """One triple and whether it creates a timeline entry (an ereignis)."""
        rng = self.rng
        a, b = rng.sample(PERSONEN, 2)
        kind = rng.randrange(12)
        if kind == 0:
            return tr(a, "beruf", wert=rng.choice(BERUFE)), False
        if kind == 1:
            return tr(a, "partner", b), False
        if kind == 2:
            return tr(a, "hobby", wert=rng.choice(HOBBYS)), False
        if kind == 3:
            return tr(a, "hat_haustier", rng.choice(TIERE)), False
        if kind == 4:
            return tr(a, "geschwister", b), False
        if kind == 5:
            return tr(rng.choice(ORTE), "liegt_in", "Hessen"), False
        if kind == 6:
            return tr("Hessen", "liegt_in", "Deutschland"), False
        if kind == 7:
            return tr(rng.choice(NEUE), "wohnt_in", rng.choice(ORTE)), False
        if kind == 8:
            return tr(rng.choice(TIERE), "begleitet", a), False
        if kind == 9 and self.entries.get(character):
            entry = rng.choice(self.entries[character])
            return tr(a, "wohnt_in", rng.choice(ORTE), timeline_id=entry), False
        if kind == 10 and rng.random() < 0.3:
            day = date(2026, 1, 1) + timedelta(days=rng.randrange(365))
            ereignis = {"typ": "ereignis", "titel": f"{a} zieht um", "beginn": day.isoformat(),
                        "genauigkeit": rng.choice(["tag", "monat"])}
            return tr(a, "wohnt_in", rng.choice(ORTE), ereignis=ereignis), True
        return tr(a, "wohnt_in", rng.choice(ORTE)), False

    def order(self, auftrag_id: str, character: str | None = None) -> tuple[dict[str, Any], int]:
        """An order of 1-3 triples (sometimes a correction); and how many entries it adds."""
        character = character or self.rng.choice(self.characters)
        tripel, events = [], 0
        for _ in range(self.rng.randint(1, 3)):
            triple, event = self.triple(character)
            tripel.append(triple)
            events += event
        order: dict[str, Any] = {
            "auftrag_id": auftrag_id,
            "user_id": self.user_id,
            "character_id": character,
            "zeitpunkt": datetime.now(UTC).isoformat(),
            "tripel": tripel,
        }
        # A correction of a hobby of someone whose hobby the order does not tell: such a
        # triple would be its replacement, and a correction that finds nothing refuses
        # its replacement and so the whole order (docs/time.md).
        told = {t["subjekt"] for t in tripel
                if isinstance(t, dict) and t.get("beziehung") == "hobby"}
        others = [p for p in PERSONEN if p not in told]
        if self.rng.random() < 0.05 and others:
            order["berichtigungen"] = [
                {"herkunft": "mensch", "subjekt": self.rng.choice(others), "beziehung": "hobby",
                 "wert": self.rng.choice(HOBBYS)}
            ]
        return order, events


def events_created(result: AuftragErgebnis, order: dict[str, Any]) -> set[str]:
    """Timeline entries an order created through `ereignis` triples that were planned."""
    offset = len(order.get("berichtigungen", []))
    created = set()
    for i, triple in enumerate(order["tripel"]):
        r = result.ergebnisse[offset + i]
        # An event comes with a new fact only; an unchanged fact creates no entry.
        if isinstance(triple, dict) and "ereignis" in triple and r.ausgang in WRITTEN:
            assert r.timeline_id
            created.add(r.timeline_id)
    return created


def lose_the_answer_to_the_commit(
    monkeypatch: Any, once: Callable[[], Awaitable[bool]] | None = None
) -> list[str]:
    """From now on, a transaction's COMMIT (with the query `Tx.with_commit` sends along)
    goes out whole, and then the connection is lost before its answer is read: a network
    that fails at that moment, the driver's `IncompleteCommit` for real.

    The client stops reading before it sends. Without `once`, the socket is shut down as
    soon as the COMMIT is sent; whether the server committed is then up to it (Neo4j
    5.26 here: it never did, in 10 of 10 tries). With `once`, it drops the connection only
    once `once()` (a read on another connection) finds the transaction's work: the server
    has committed, and the client never hears it. Returns the names of the queries whose
    commit lost its answer."""
    import socket

    from kg.db import Tx

    real = Tx.with_commit
    lost: list[str] = []

    async def armed(self: Tx, name: str, /, **params: Any) -> None:
        await real(self, name, **params)
        connection = self._tx._connection  # the driver's, private: a test's fault only
        send_all = connection.send_all

        async def send_then_drop() -> None:
            transport = connection.socket._writer.transport
            # The client stops reading before it sends: a server that answers at once
            # (under load, before the shutdown) was otherwise heard, and the commit
            # did not lose its answer (3 in 12 runs of a cancel's test failed so).
            transport.pause_reading()
            if once is None:
                await send_all()
                transport.get_extra_info("socket").shutdown(socket.SHUT_RDWR)
                transport.abort()
            else:
                await send_all()
                give_up = time.monotonic() + 30
                while not await once():
                    assert time.monotonic() < give_up, "the server never committed"
                    await asyncio.sleep(0.01)
                transport.abort()
            lost.append(name)

        connection.send_all = send_then_drop

    monkeypatch.setattr(Tx, "with_commit", armed)
    return lost
