"""The Fakten-Agent: the only code that writes facts.

An order (Auftrag) is one transaction of two queries: `order_state` takes the user's
lock, finds a replayed order and reads what the triples depend on; `order_apply`
writes everything the plan decided, and the audit. The
decisions in between are pure Python (`kg.plan`). The result is stored with the
order, so a replay of the same `auftrag_id` returns it and writes nothing.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kg.canon import Canon
from kg.db import Database, Record, Tx
from kg.errors import InvalidInput, ServerUnavailable, WriteNotConfirmed
from kg.models import Auftrag, AuftragErgebnis, Tripel
from kg.plan import ChainState, EntityState, FactState, Planner, State, order_status, refs_of


def merkmal_text(canon: Canon, merkmal: Record) -> str:
    """A fact that tells an entity apart, as text ('wohnt in Kassel')."""
    rel = canon.by_type.get(merkmal["rel"])
    if rel is None:
        return f"{merkmal['rel'].lower()} {merkmal['other']}"
    return f"{rel.vorwaerts if merkmal['out'] else rel.rueckwaerts} {merkmal['other']}"


def content_hash(auftrag: Auftrag) -> str:
    """What makes two orders the same order (the clock may differ on a replay)."""
    body = auftrag.model_dump(mode="json", include={"character_id", "tripel", "berichtigungen"})
    for given, dumped in zip(auftrag.tripel, body["tripel"], strict=True):
        # Orders from before the optional `typ` field hash as they did then.
        if isinstance(given, Tripel) and given.typ is None:
            dumped.pop("typ", None)
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def fact_state(f: Record, aktiv: bool = True) -> FactState:
    return FactState(
        id=f["id"],
        rel=f["rel"],
        start_id=f["start_id"],
        end_id=None if f["wert"] is not None else f["end_id"],
        wert=f["wert"],
        aktiv=aktiv,
        grund=None if aktiv else "abgeloest",
        auftrag_id=f["auftrag_id"],
        herkunft=f["herkunft"],
        touched=bool(f.get("touched")),
    )


def to_state(row: Record, canon: Canon) -> State:
    state = State()
    for e in row["entities"]:
        typ = None if e["typ"] in (None, "sonstiges") else e["typ"]
        merkmale = [merkmal_text(canon, m) for m in e["merkmale"] if m["rel"] is not None]
        state.entities[e["id"]] = EntityState(e["id"], e["name"], typ, merkmale)
        state.by_name.setdefault(e["name_norm"], []).append(e["id"])
        for f in e["facts"]:
            if f["id"] is not None:
                state.facts[f["id"]] = fact_state(f, f["aktiv"])
    # What the type and cycle checks need beyond the order's relations: facts that
    # bind a type, and the transitive facts the order's ends reach.
    for e in row["entities"]:
        for f in e["typed"]:
            if f["id"] is not None and f["id"] not in state.facts:
                state.facts[f["id"]] = fact_state(f)
            if f["other"] is not None:
                other = f["end_id"] if f["start_id"] == e["id"] else f["start_id"]
                state.names.setdefault(other, f["other"])
    for f in row["transitive"]:
        if f["id"] is not None and f["id"] not in state.facts:
            state.facts[f["id"]] = fact_state({**f, "wert": None})
        state.names.setdefault(f["start_id"], f["start_name"])
        state.names.setdefault(f["end_id"], f["end_name"])
    for ids in state.by_name.values():
        ids.sort()  # candidates in a stable order
    for c in row["chains"]:
        state.chains[c["given"]] = ChainState(c["first_id"], c["abgesagt"])
    return state


class FaktenAgent:
    """Takes write orders and reports outcomes; the one writer of facts."""

    def __init__(self, db: Database, canon: Canon) -> None:
        self.db = db
        self.canon = canon
        rels = canon.relations.values()
        self.symmetric_types = {r.rel_type for r in rels if r.symmetrisch}
        # Relations that say something about their subject's / object's type.
        self.typed_out = sorted(
            r.rel_type for r in rels if r.subjekt_typen or r.name == "ist_ein"
        )
        self.typed_in = sorted(r.rel_type for r in rels if r.objekt_typ)

    async def _write(self, tx: Tx, auftrag: Auftrag) -> AuftragErgebnis:
        refs = refs_of(auftrag, self.canon)
        row = await tx.one(
            "order_state",
            user_id=auftrag.user_id,
            auftrag_id=auftrag.auftrag_id,
            character_id=auftrag.character_id,
            names=sorted(refs.names),
            ids=sorted(refs.ids),
            rel_types=sorted(refs.rel_types),
            symmetric_types=sorted(refs.rel_types & self.symmetric_types),
            history_types=sorted(refs.history_types),
            timeline_ids=sorted(refs.timeline_ids),
            typed_out=self.typed_out,
            typed_in=self.typed_in,
            trans_types=self.canon.transitive_types,
            trans_names=sorted(refs.trans_names),
            trans_ids=sorted(refs.trans_ids),
        )
        assert row is not None
        inhalt = content_hash(auftrag)
        if row["ergebnis"]:
            if row["inhalt"] not in (None, inhalt):
                # Only this pair's own order is ever found here (the key is the pair's).
                raise InvalidInput(
                    f"auftrag_id {auftrag.auftrag_id!r} was used on {row['erfasst']} for an "
                    "order with other content; a replay must be the same order — give a new "
                    "order a new auftrag_id"
                )
            first = AuftragErgebnis.model_validate_json(row["ergebnis"])
            return first.model_copy(update={"wiederholt": True})
        planner = Planner(self.canon, auftrag, to_state(row, self.canon))
        results = planner.plan()
        ergebnis = AuftragErgebnis(
            auftrag_id=auftrag.auftrag_id,
            user_id=auftrag.user_id,
            character_id=auftrag.character_id,
            status=order_status(results),
            zeitpunkt=auftrag.zeitpunkt,
            ergebnisse=results,
        )
        ops = planner.ops
        audit: dict[str, Any] = {
            "id": auftrag.auftrag_id,
            "character_id": auftrag.character_id,
            "empfangen": auftrag.zeitpunkt,
            "status": ergebnis.status,
            "ergebnis": ergebnis.model_dump_json(),
            "anzahl_tripel": len(results),
            "inhalt": inhalt,
        }
        await tx.run(
            "order_apply",
            user_id=auftrag.user_id,
            entities=ops.entities,
            entries=ops.entries,
            retire=ops.retire,
            touch=ops.touch,
            ref_facts=ops.ref_facts(),
            value_facts=ops.value_facts(),
            auftrag=audit,
        )
        return ergebnis

    async def write(self, auftrag: Auftrag) -> AuftragErgebnis:
        try:
            return await self.db.write(lambda tx: self._write(tx, auftrag))
        except ServerUnavailable as exc:
            raise WriteNotConfirmed(
                f"order {auftrag.auftrag_id!r} was not confirmed: {exc} Nothing of it is "
                "half-applied; replay it with the same auftrag_id once the server answers."
            ) from exc
