"""The naive baseline: the same dossier assembled the way a straightforward
implementation does it — one query for the entity's facts, then one per neighbour (and
one per further step of `liegt_in`, one per referenced timeline chain), filtered, sorted
and capped in Python.

It reads the current record the way the Mappe does: active versions for the facts, and
for the history the current versions of superseded facts (their closed first versions
are no history), symmetric relations from both ends. A value superseded from a day
ahead still holds until then (docs/time.md): it shows from its object (degree 1) and at
degree 2, the Mappe reaches on through it and derives from the entity's own, as the
Mappe does (`holds_now` in cypher/queries/mappe.cypher, written again here in Python).

It runs inside one managed read transaction through the library's `Database` (the
same driver as the Mappe; N + 1 queries and one COMMIT, fewer round trips than an
auto-commit read per query). It returns the same parts as the Mappe query so
the benchmark can check both read the same facts.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from bench.queries import attach
from kg.canon import Canon
from kg.db import Database, Tx
from kg.values import native


def _order(f: dict[str, Any]) -> tuple[Any, ...]:
    r = f["r"]
    return (-r["staerke_decay"], _neg_time(r["last_touched"]), r["id"])


def _neg_time(value: Any) -> float:
    moment: datetime = native(value)
    return -moment.timestamp()


class Naive:
    """N+1 queries for one Mappe."""

    def __init__(self, db: Database, canon: Canon) -> None:
        self.db = attach(db)
        self.canon = canon
        self.cap = db.settings.mappe_cap
        self.schwelle = db.settings.ruhe_schwelle
        self.symmetric = {r.rel_type for r in canon.relations.values() if r.symmetrisch}
        trans = [r for r in canon.relations.values() if r.transitiv]
        self.trans = trans[0].rel_type if trans else "LIEGT_IN"
        self.via = {
            r.rel_type
            for r in canon.relations.values()
            if r.objekt == "entitaet" and trans and r.objekt_typ == trans[0].objekt_typ
        }

    def _awake(self, f: dict[str, Any]) -> bool:
        return bool(f["r"]["staerke_decay"] >= self.schwelle) and f["rel"] != "TYP"

    def _usable(self, f: dict[str, Any]) -> bool:
        return bool(f["r"]["aktiv"]) and self._awake(f)

    def _history(self, f: dict[str, Any]) -> bool:
        """A superseded value as recorded now: the current version (no t_expired) of a
        fact that ended (abgeloest), leaving the entity or, for a symmetric relation,
        arriving at it."""
        r = f["r"]
        return (
            r.get("grund") == "abgeloest"
            and r.get("t_expired") is None
            and f["rel"] != "TYP"
            and (f["out"] or f["rel"] in self.symmetric)
        )

    async def mappe(self, user_id: str, character_id: str, entity_id: str) -> dict[str, Any]:
        async def work(tx: Tx) -> dict[str, Any]:
            return await _Read(self, tx, user_id, character_id).assemble(entity_id)

        return await self.db.read(work)


class _Read:
    """One Mappe's reads: the facts of each entity and each timeline chain's end are
    asked for once."""

    def __init__(self, naive: Naive, tx: Tx, user_id: str, character_id: str) -> None:
        self.naive = naive
        self.tx = tx
        self.user_id = user_id
        self.character_id = character_id
        self.now = datetime.now(UTC)
        #: By entity: its current facts (the Mappe's own entity: every version of its
        #: facts, of which the readers here take the active ones only).
        self.facts: dict[str, list[dict[str, Any]]] = {}
        self.entries: dict[str, dict[str, Any] | None] = {}

    async def current(self, entity_id: str) -> list[dict[str, Any]]:
        """The current facts of an entity: active, and superseded values' current versions."""
        if entity_id not in self.facts:
            self.facts[entity_id] = await self.tx.run(
                "bench_naive_current",
                user_id=self.user_id,
                character_id=self.character_id,
                entity_id=entity_id,
            )
        return self.facts[entity_id]

    async def entry(self, eintrag_id: str) -> dict[str, Any] | None:
        """The active end of a timeline chain."""
        if eintrag_id not in self.entries:
            self.entries[eintrag_id] = await self.tx.one(
                "bench_naive_entry", user_id=self.user_id, eintrag_id=eintrag_id
            )
        return self.entries[eintrag_id]

    async def _when(self, r: dict[str, Any], event: str, valid: str) -> datetime | None:
        """Where a fact begins (`timeline_id`, `t_valid`) or ends (`timeline_bis`,
        `t_invalid`): its event's day (the start of the day, UTC), else its valid time.
        A day or an instant stored as something else reads as none, as in the Mappe."""
        found = await self.entry(r[event]) if r.get(event) else None
        if found is not None:
            day = native(found["beginn"])
            return datetime.combine(day, time(), UTC) if type(day) is date else None
        instant = native(r.get(valid))
        return instant if isinstance(instant, datetime) and instant.tzinfo else None

    async def holds_now(self, f: dict[str, Any], at: str, own: bool) -> bool:
        """A value superseded from a day ahead that still holds: not squeezed to
        nothing, while its subject has an active awake value of the relation; one to
        come that ends only where it is not the Mappe's entity's own (`own`). `f` is a
        row of `at`'s facts. The cheap tests first: most superseded values ended long
        ago, and the subject's facts cost a query."""
        naive, r = self.naive, f["r"]
        if r.get("grund") != "abgeloest" or r.get("t_expired") is not None:
            return False
        bis = await self._when(r, "timeline_bis", "t_invalid")
        if bis is None or bis <= self.now:
            return False
        ab = await self._when(r, "timeline_id", "t_valid")
        if ab is None or ab >= bis or (ab > self.now and own):
            return False
        if f["rel"] in naive.symmetric:
            return True
        subject = at if f["out"] else f["n_id"]
        return any(
            c["out"] and c["rel"] == f["rel"] and naive._usable(c)
            for c in await self.current(subject)
        )

    async def assemble(self, entity_id: str) -> dict[str, Any]:
        naive, cap = self.naive, self.naive.cap
        own = await self.tx.run(
            "bench_naive_facts",
            user_id=self.user_id,
            character_id=self.character_id,
            entity_id=entity_id,
        )
        self.facts[entity_id] = own
        typ = next(
            (f["wert"] for f in own if f["rel"] == "TYP" and f["out"] and f["r"]["aktiv"]),
            "sonstiges",
        )
        near = sorted((f for f in own if naive._usable(f)), key=_order)[:cap]
        # The values that still hold: the entity's own where the Mappe shows the
        # relation's current value, a bond's from either end, and those told of it.
        shown = {f["rel"] for f in near if f["out"]}
        ahead = [
            f
            for f in own
            if naive._awake(f)
            and f["n_id"] is not None
            and (not f["out"] or f["rel"] in naive.symmetric or f["rel"] in shown)
            and await self.holds_now(f, entity_id, own=f["out"] or f["rel"] in naive.symmetric)
        ]
        told_of = [f for f in ahead if not f["out"] and f["rel"] not in naive.symmetric]
        first = sorted(near + told_of, key=_order)[:cap]
        historie = sorted(
            (f for f in own if naive._history(f)),
            key=lambda f: (_neg_time(f["r"]["t_invalid"]), f["r"]["id"]),
        )[:cap]
        seen = {f["r"]["id"] for f in first}
        far: list[dict[str, Any]] = []
        if len(first) < cap:
            for n_id in dict.fromkeys(f["n_id"] for f in near + ahead if f["n_id"] is not None):
                candidates = [
                    f
                    for f in await self.current(n_id)
                    if naive._awake(f)
                    and f["r"]["id"] not in seen
                    and f["n_id"] != entity_id
                    and (f["r"]["aktiv"] or await self.holds_now(f, n_id, own=False))
                ]
                far += sorted(candidates, key=_order)[:cap]
        second: dict[str, dict[str, Any]] = {}
        for f in far:
            second.setdefault(f["r"]["id"], f)
        fakten = (first + sorted(second.values(), key=_order))[:cap]

        # Timeline: the active end of each referenced chain.
        for f in [*fakten, *historie]:
            for key in ("timeline_id", "timeline_bis"):
                if f["r"].get(key):
                    f[key] = await self.entry(f["r"][key])

        # Derived: follow liegt_in from the places, one query per step.
        abgeleitet: dict[tuple[str, str], None] = {}
        for f in near + [f for f in ahead if f["out"]]:
            if not (f["out"] and f["rel"] in naive.via and f["n_id"] is not None):
                continue
            place = f["n_id"]
            visited = {entity_id, place}
            while True:
                up = [
                    r
                    for r in await self.current(place)
                    if r["out"] and r["rel"] == naive.trans and naive._usable(r)
                ]
                if not up or up[0]["n_id"] in visited:
                    break
                place = up[0]["n_id"]
                visited.add(place)
                abgeleitet[(f["rel"], place)] = None
        # Told: every own fact, shown or cut by the cap (the Mappe derives nothing a cut
        # one says either).
        told = {(f["rel"], f["n_id"]) for f in own if f["out"] and naive._usable(f)}
        return {
            "id": entity_id,
            "typ": typ,
            "fakten": [f["r"]["id"] for f in fakten],
            "historie": [f["r"]["id"] for f in historie],
            # What the entity's own facts say is not derived again (as in the Mappe,
            # which keeps one that holds from earlier than a shown one: the generated
            # data has none).
            # One target once, however many of its values lead there.
            "abgeleitet": [x_id for rel, x_id in abgeleitet if (rel, x_id) not in told],
        }
