"""The naive baseline: the same dossier assembled the way a straightforward
implementation does it — one query for the entity's facts, then one per neighbour (and
one per further step of `liegt_in`, one per referenced timeline chain), filtered, sorted
and capped in Python.

It reads the current record the way the Mappe does: active versions for the facts, and
for the history the current versions of superseded facts (their closed first versions
are no history), symmetric relations from both ends.

It runs inside one managed read transaction through the library's `Database` (the
same driver as the Mappe; N + 1 queries and one COMMIT, fewer round trips than an
auto-commit read per query). It returns the same parts as the Mappe query so
the benchmark can check both read the same facts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bench.queries import attach
from kg.canon import Canon
from kg.db import Database, Tx


def _order(f: dict[str, Any]) -> tuple[Any, ...]:
    r = f["r"]
    return (-r["staerke_decay"], _neg_time(r["last_touched"]), r["id"])


def _neg_time(value: Any) -> float:
    native: datetime = value.to_native() if hasattr(value, "to_native") else value
    return -native.timestamp()


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

    def _usable(self, f: dict[str, Any]) -> bool:
        r = f["r"]
        return bool(r["aktiv"]) and r["staerke_decay"] >= self.schwelle and f["rel"] != "TYP"

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
            return await self._assemble(tx, user_id, character_id, entity_id)

        return await self.db.read(work)

    async def _assemble(
        self, tx: Tx, user_id: str, character_id: str, entity_id: str
    ) -> dict[str, Any]:
        own = await tx.run(
            "bench_naive_facts", user_id=user_id, character_id=character_id, entity_id=entity_id
        )
        typ = next(
            (f["wert"] for f in own if f["rel"] == "TYP" and f["out"] and f["r"]["aktiv"]),
            "sonstiges",
        )
        near = sorted((f for f in own if self._usable(f)), key=_order)[: self.cap]
        historie = sorted(
            (f for f in own if self._history(f)),
            key=lambda f: (_neg_time(f["r"]["t_invalid"]), f["r"]["id"]),
        )[: self.cap]
        seen = {f["r"]["id"] for f in near}
        neighbours = list(dict.fromkeys(f["n_id"] for f in near if f["n_id"] is not None))
        fetched: dict[str, list[dict[str, Any]]] = {}
        far: list[dict[str, Any]] = []
        if len(near) < self.cap:
            for n_id in neighbours:
                rows = await tx.run(
                    "bench_naive_active",
                    user_id=user_id,
                    character_id=character_id,
                    entity_id=n_id,
                )
                fetched[n_id] = rows
                candidates = [
                    f
                    for f in rows
                    if self._usable(f) and f["r"]["id"] not in seen and f["n_id"] != entity_id
                ]
                far += sorted(candidates, key=_order)[: self.cap]
        second: dict[str, dict[str, Any]] = {}
        for f in far:
            second.setdefault(f["r"]["id"], f)
        fakten = (near + sorted(second.values(), key=_order))[: self.cap]

        # Timeline: the active end of each referenced chain, one query per reference.
        for f in [*fakten, *historie]:
            for key in ("timeline_id", "timeline_bis"):
                if f["r"].get(key):
                    f[key] = await tx.one(
                        "bench_naive_entry", user_id=user_id, eintrag_id=f["r"][key]
                    )

        # Derived: follow liegt_in from the places, one query per step.
        abgeleitet = []
        for f in near:
            if not (f["out"] and f["rel"] in self.via and f["n_id"] is not None):
                continue
            path, place = [f["n_name"]], f["n_id"]
            visited = {entity_id, place}
            while True:
                at_place = fetched.get(place)
                if at_place is None:
                    at_place = await tx.run(
                        "bench_naive_active",
                        user_id=user_id,
                        character_id=character_id,
                        entity_id=place,
                    )
                    fetched[place] = at_place
                up = [
                    r
                    for r in at_place
                    if r["out"]
                    and r["rel"] == self.trans
                    and r["r"]["staerke_decay"] >= self.schwelle
                ]
                if not up or up[0]["n_id"] in visited:
                    break
                place = up[0]["n_id"]
                visited.add(place)
                abgeleitet.append({"rel": f["rel"], "x_id": place, "pfad": list(path)})
                path.append(up[0]["n_name"])
        told = {(f["rel"], f["n_id"]) for f in fakten if f["out"] and f in near}
        return {
            "id": entity_id,
            "typ": typ,
            "fakten": [f["r"]["id"] for f in fakten],
            "historie": [f["r"]["id"] for f in historie],
            # What the entity's own shown facts say is not derived again (as in the Mappe,
            # which keeps one that holds from earlier: the generated data has none).
            "abgeleitet": [d["x_id"] for d in abgeleitet if (d["rel"], d["x_id"]) not in told],
        }
