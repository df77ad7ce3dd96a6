"""The Fakten-Agent: the only code that writes facts.

An order (Auftrag) is one transaction of two queries: `order_state` takes the user's
lock and the store's clock, finds a replayed order and reads what the triples depend on;
`order_apply` closes the fact versions the plan changes, writes their successors and
everything new, and the audit. The decisions in between are pure Python (`kg.plan`).
Nothing reads `order_apply`'s answer, so it goes out with the COMMIT (`Tx.with_commit`):
an order is two round trips, BEGIN with `order_state`, then `order_apply` with COMMIT.
The result is stored with the order, so a replay of the same `auftrag_id` (in the same
pair) returns it and writes nothing. A cancelled event's consequences are an order of
this writer too (`cancel_event`), and so are the values a move re-ends (`move_event`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from functools import partial
from typing import Any

from neo4j.time import Date

from kg.canon import Canon
from kg.db import Database, Record, Tx, held, lost_at_commit
from kg.errors import (
    InvalidInput,
    ServerUnavailable,
    StoredDataError,
    TimelineError,
    WriteNotConfirmed,
)
from kg.models import (
    FACT_PROPERTIES,
    Auftrag,
    AuftragErgebnis,
    Tripel,
    TripelErgebnis,
    stored_result,
)
from kg.plan import (
    ChainState,
    EntityState,
    FactState,
    Operations,
    Planner,
    Refs,
    State,
    Unread,
    day_start,
    order_status,
    plan_order,
    precision_end,
    refs_of,
)
from kg.timeline import END_ENTRY, START_ENTRY, ReEnd
from kg.values import instant, stored_day


def merkmal_text(canon: Canon, merkmal: Record) -> str:
    """A fact that tells an entity apart, as text ('wohnt in Kassel')."""
    rel = canon.by_type.get(merkmal["rel"])
    if rel is None:
        return f"{merkmal['rel'].lower()} {merkmal['other']}"
    return f"{rel.vorwaerts if merkmal['out'] else rel.rueckwaerts} {merkmal['other']}"


def content_hash(auftrag: Auftrag) -> str:
    """What makes two orders the same order: their triples and corrections, and the
    valid time the caller gave (`zeitpunkt`). Not the store's clock, which dates an order
    without a zeitpunkt and differs on a replay: such an order hashes without one, as
    every order did before 2026-12-05 (`refuse_another_order`)."""
    return _hash(auftrag, auftrag.zeitpunkt)


def _hash(auftrag: Auftrag, zeitpunkt: datetime | None) -> str:
    """The order's content hash, with this zeitpunkt (None: none)."""
    body = auftrag.model_dump(mode="json", include={"character_id", "tripel", "berichtigungen"})
    for given, dumped in zip(auftrag.tripel, body["tripel"], strict=True):
        # Orders from before the optional `typ` field hash as they did then.
        if isinstance(given, Tripel) and given.typ is None:
            dumped.pop("typ", None)
    if zeitpunkt is not None:  # (one instant, one text, however it was written)
        body["zeitpunkt"] = zeitpunkt.astimezone(UTC).isoformat()
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def refuse_another_order(
    stored: str, auftrag: Auftrag, first: AuftragErgebnis, erfasst: object
) -> None:
    """Refuse `auftrag` unless it is the order first sent under its auftrag_id (recorded
    at `erfasst` with the content hash `stored` and the result `first`), sent again.

    The zeitpunkt the first order gave is its result's valid time, unless that is its
    system time (`erfasst`): then the store's clock dated it, and it gave none. The hash
    confirms it: an order with a zeitpunkt hashes with it. One recorded before
    2026-12-05 hashed without it, whatever it gave: it is still replayed when the rest
    agrees and the zeitpunkt read from its result does. (A result without `erfasst`,
    from before 2026-11-29, cannot tell: only a zeitpunkt given now is compared.)"""
    if first.erfasst is None:
        given = first.zeitpunkt if auftrag.zeitpunkt is not None else None
    else:
        given = None if first.zeitpunkt == first.erfasst else first.zeitpunkt
    name = auftrag.auftrag_id
    if stored not in (_hash(auftrag, given), _hash(auftrag, None)):
        # Only this pair's own order is ever found here (the key is the pair's).
        raise InvalidInput(
            f"auftrag_id {name!r} was used on {erfasst} for an order with other content "
            "(other triples or corrections); a replay must be the same order — give a new "
            "order a new auftrag_id"
        )
    if given != auftrag.zeitpunkt:
        # A retry rebuilt with a new zeitpunkt (a clock read again): a new auftrag_id
        # would write the order a second time.
        then = f"with zeitpunkt {given.isoformat()}" if given is not None else "without a zeitpunkt"
        now = (f"with {auftrag.zeitpunkt.isoformat()}" if auftrag.zeitpunkt is not None
               else "without")
        raise InvalidInput(
            f"auftrag_id {name!r} was written on {erfasst} with the same triples, {then}; "
            f"this one {now}: if this is that order sent again, it is written already — "
            f"send it as first sent ({then}) to get its first result; only another order "
            "takes a new auftrag_id"
        )


#: A fact's instants and days (from the one list of its properties). `order_state`
#: returns instants as epoch microseconds and days as yyyymmdd; `order_apply` takes a
#: new version's apart from its other properties, as ISO text (the query sets
#: `t_recorded` itself). Packing and unpacking the driver's temporal types cost the
#: writer more CPU than the rest of an order.
INSTANTS = tuple(p.name for p in FACT_PROPERTIES if p.type.startswith("DATETIME"))
DAYS = tuple(p.name for p in FACT_PROPERTIES if p.type.startswith("DATE_"))
TO_WIRE = tuple(key for key in INSTANTS + DAYS if key != "t_recorded")


def _day(yyyymmdd: int) -> date:
    return date(yyyymmdd // 10000, yyyymmdd // 100 % 100, yyyymmdd % 100)


_FROM_WIRE: dict[str, Callable[[int], Any]] = {
    **dict.fromkeys(INSTANTS, instant),
    **dict.fromkeys(DAYS, _day),
}


def _wire_props(fact: dict[str, Any]) -> dict[str, Any]:
    """A new fact version for `order_apply`: its instants and days apart (`zeit`), as ISO
    text; a value of another type (an edit by hand) stays in `props` as it is. No
    `t_recorded`: the query records every new version at the store's clock, so a value
    carried forward from the version before would only cost the driver its packing."""
    props = dict(fact["props"])
    props.pop("t_recorded", None)
    zeit = {}
    for key in TO_WIRE:
        value = props.get(key)
        if type(value) is (date if key in DAYS else datetime):
            zeit[key] = props.pop(key).isoformat()
    return {**fact, "props": props, "zeit": zeit}


def _python(key: str, value: Any) -> Any:
    """A stored property as a plain Python value. `order_state` sends instants and days
    as integers (see `INSTANTS`); they become UTC datetimes with a fixed offset, as
    written, and dates. Any other temporal value is converted the same way: the driver
    reads instants back with a named zone, and Cypher orders a named-zone instant after
    the equal fixed-offset one, so a value written back unchanged would no longer compare
    equal to the same instant given as a parameter. Anything else stays as it is."""
    convert = _FROM_WIRE.get(key)
    if convert is not None and type(value) is int:
        return convert(value)
    if hasattr(value, "to_native"):
        native = value.to_native()
        return native.astimezone(UTC) if isinstance(native, datetime) else native
    return value


def _fact(f: Record, props: dict[str, Any], **validity: Any) -> FactState:
    """A fact of the order's state query: its relation, ends and value from the row, its
    properties and validity as given."""
    return FactState(
        id=props["id"],
        rel=f["rel"],
        start_id=f["start_id"],
        end_id=None if f["wert"] is not None else f["end_id"],
        wert=f["wert"],
        props=props,
        auftrag_id=props.get("auftrag_id"),
        herkunft=props.get("herkunft"),
        **validity,
    )


def to_fact(f: Record) -> FactState:
    """A fact's current version as the order's state query read it."""
    # A property is never null in the store: a null here is one the query names but
    # this version does not have.
    props = {key: _python(key, value) for key, value in f["props"].items() if value is not None}
    tl, tlb = f["ab_tag"], f["bis_tag"]
    start: datetime = (day_start(stored_day(tl, START_ENTRY, props.get("id"), "beginn"))
                       if tl is not None else props["t_valid"])
    end: datetime | None = (day_start(stored_day(tlb, END_ENTRY, props.get("id"), "beginn"))
                            if tlb is not None else props.get("t_invalid"))
    if end is not None:
        end = max(end, start)  # a value never ends before it starts
    return _fact(
        f,
        props,
        start=start,
        end=end,
        aktiv=props["aktiv"],
        grund=props.get("grund"),
        version=props.get("version", 1),
        # Re-asserted since this version was written, or stated by a `typ` triple (a
        # type: stated, not only implied).
        touched=props.get("gesagt") is True
        or props.get("last_touched", start) > props.get("t_recorded", start),
    )


#: Facts read only for the cycle checks hold "always" as far as they care, and so does
#: a fact that binds a type where its start reads as no day or instant (a hand edit;
#: `kg check` names it): the type checks take it to hold throughout.
_SINCE_EVER = datetime(1, 1, 1, tzinfo=UTC)


def read_only_fact(f: Record) -> FactState:
    """A fact the order only looks at (what binds a type, what a cycle would close, a
    type its triple carried); never changed by it. Where it binds a type, its span and
    state as read (`typed_span`: active, or a value that holds on until a day ahead),
    for the type checks that compare a type with the facts within its span; else it
    holds always, active."""
    props = {"id": f["id"], "auftrag_id": f["auftrag_id"], "herkunft": f["herkunft"]}
    if f.get("subjekt_typ") is not None:
        props["subjekt_typ"] = f["subjekt_typ"]
    start = _read_only_day(f.get("ab_tag"), f.get("t_valid"), _SINCE_EVER) or _SINCE_EVER
    end = _read_only_day(f.get("bis_tag"), f.get("t_invalid"), None)
    return _fact(f, props, start=start, end=None if end is None else max(end, start),
                 aktiv=f.get("aktiv") is not False,
                 grund=f.get("grund") if isinstance(f.get("grund"), str) else None)


def _read_only_day(day: Any, instant_us: Any, otherwise: datetime | None) -> datetime | None:
    """Where a read-only fact begins or ends: its event's day, else its valid time
    (epoch microseconds); else `otherwise` (a value stored as something else too)."""
    if day is not None:
        native = day.to_native() if isinstance(day, Date) else day
        return day_start(native) if type(native) is date else otherwise
    return instant(instant_us) if type(instant_us) is int else otherwise


def to_state(row: Record, canon: Canon) -> State:
    state = State()
    for e in row["entities"]:
        typ = None if e["typ"] in (None, "sonstiges") else e["typ"]
        merkmale = [merkmal_text(canon, m) for m in e["merkmale"] if m["rel"] is not None]
        state.entities[e["id"]] = EntityState(e["id"], e["name"], typ, merkmale)
        state.by_name.setdefault(e["name_norm"], []).append(e["id"])
        for f in e["facts"]:
            fact = to_fact(f)
            state.facts[fact.id] = fact
    # What the type and cycle checks need beyond the order's relations: facts that
    # bind a type, and the transitive facts the order's ends reach (read only).
    for e in row["entities"]:
        for f in e["typed"]:
            if f["id"] is not None and f["id"] not in state.facts:
                state.facts[f["id"]] = read_only_fact(f)
            if f["other"] is not None:
                other = f["end_id"] if f["start_id"] == e["id"] else f["start_id"]
                state.names.setdefault(other, f["other"])
    for f in row["transitive"]:
        if f["id"] is not None and f["id"] not in state.facts:
            state.facts[f["id"]] = read_only_fact({**f, "wert": None})
        state.names.setdefault(f["start_id"], f["start_name"])
        state.names.setdefault(f["end_id"], f["end_name"])
    for ids in state.by_name.values():
        ids.sort()  # candidates in a stable order
    for c in row["chains"]:
        beginn = stored_day(c["beginn"], "active end of the timeline chain", c["first_id"],
                            "beginn")
        state.chains[c["given"]] = ChainState(
            c["first_id"], c["abgesagt"], day_start(beginn),
            precision_end(beginn, c["genauigkeit"]),
        )
    return state


#: The audit ids of the orders a cancel and a move give the writer (`_event_order`): a
#: caller's order may not take one, or the event's cancel or move would find it taken.
EVENT_ORDER_PREFIXES = ("absage-", "verschiebung-")


class _Rehearsed(Exception):
    """Ends a rehearsed order's transaction, which the driver then rolls back."""


class FaktenAgent:
    """Takes write orders and reports outcomes; the one writer of facts."""

    def __init__(self, db: Database, canon: Canon) -> None:
        self.db = db
        self.canon = canon
        rels = canon.relations.values()
        self.symmetric_types = {r.rel_type for r in rels if r.symmetrisch}
        self.partner_types = {r.rel_type for r in rels if r.symmetrisch and r.einwertig}
        # Relations that say something about their subject's / object's type.
        self.typed_out = sorted(
            r.rel_type for r in rels if r.subjekt_typen or r.name == "ist_ein"
        )
        self.typed_in = sorted(r.rel_type for r in rels if r.objekt_typ)

    async def _state(
        self, tx: Tx, auftrag: Auftrag, refs: Refs, jetzt: datetime | None = None
    ) -> Record:
        """The order's state; with `jetzt`, in a transaction that holds the user's lock
        and took that clock already (an order of the timeline's), without taking it
        again (`event_state`)."""
        params = dict(
            user_id=auftrag.user_id,
            auftrag_id=auftrag.auftrag_id,
            character_id=auftrag.character_id,
            # One map, so that every order shares one plan (see order_state).
            refs={
                "names": sorted(refs.names),
                "ids": sorted(refs.ids),
                "werte": sorted(refs.werte),
                "whole_types": sorted(refs.whole_types),
                "rel_types": sorted(refs.rel_types),
                "incoming_types": sorted(refs.incoming_types(self.symmetric_types)),
                "far_types": sorted(refs.far_types(self.partner_types)),
                "follow_types": sorted(refs.follow_types(self.partner_types)),
                "history_types": sorted(refs.history_types),
                "since": refs.since,
                "all_history": refs.all_history,
                "timeline_ids": sorted(refs.timeline_ids),
                "claims": {key: sorted(types) for key, types in refs.claims.items() if types},
                "trans_names": sorted(refs.trans_names),
                "trans_ids": sorted(refs.trans_ids),
            },
            typed_out=self.typed_out,
            typed_in=self.typed_in,
            trans_types=self.canon.transitive_types,
            schwelle=self.db.settings.ruhe_schwelle,
        )
        if jetzt is not None:
            row = await tx.plain_one("event_state", jetzt=jetzt, **params)
            assert row is not None
            return row
        row = await tx.plain_one("order_state", **params)
        assert row is not None
        held(auftrag.user_id, row["jetzt"] is not None)  # the lock it took is the node's
        return row

    async def _apply(
        self, tx: Tx, auftrag: Auftrag, row: Record, jetzt: datetime, ops: Operations,
        ergebnis: AuftragErgebnis, inhalt: str,
    ) -> None:
        # Where each current version the state read is stored: closing or touching it is
        # a lookup, not a walk over its entity's edges (which hold all its old versions).
        eids = {f["props"]["id"]: f["eid"] for e in row["entities"] for f in e["facts"]}
        audit: dict[str, Any] = {
            "id": auftrag.auftrag_id,
            "character_id": auftrag.character_id,
            "empfangen": ergebnis.zeitpunkt.isoformat(),  # ISO text: see order_apply
            "status": ergebnis.status,
            "ergebnis": ergebnis.model_dump_json(),
            "anzahl_tripel": len(ergebnis.ergebnisse),
            "inhalt": inhalt,
        }
        await tx.with_commit(
            "order_apply",
            user_id=auftrag.user_id,
            jetzt=jetzt.isoformat(),
            entities=ops.entities,
            entries=ops.entries,
            close=[{**f, "eid": eids[f["id"]]} for f in ops.close],
            touch=[{**f, "eid": eids[f["id"]]} for f in ops.touch],
            ref_facts=[_wire_props(f) for f in ops.ref_facts()],
            value_facts=[_wire_props(f) for f in ops.value_facts()],
            auftrag=audit,
        )

    def _result(
        self, auftrag: Auftrag, results: list[TripelErgebnis], valid: datetime, jetzt: datetime
    ) -> AuftragErgebnis:
        return AuftragErgebnis(
            auftrag_id=auftrag.auftrag_id,
            user_id=auftrag.user_id,
            character_id=auftrag.character_id,
            status=order_status(results),
            zeitpunkt=valid,
            erfasst=jetzt,
            ergebnisse=results,
        )

    async def _write(self, tx: Tx, auftrag: Auftrag) -> AuftragErgebnis:
        refs = refs_of(auftrag, self.canon)
        row = await self._state(tx, auftrag, refs)
        inhalt = content_hash(auftrag)
        if row["recorded"] and not (isinstance(row["ergebnis"], str) and row["ergebnis"]):
            # Changed by hand (the writer always stores it): no replay can be answered,
            # and a new order of the key would break the audit's constraint.
            raise StoredDataError(
                f"auftrag_id {auftrag.auftrag_id!r} is in the audit without its result "
                "(changed outside the library), so a replay cannot be answered — run `kg "
                "check`, which names such orders, and give a new order a new auftrag_id"
            )
        if row["ergebnis"]:
            if row["inhalt"] is None:
                # An order recorded without its content hash (before 2026-11-29, or
                # imported so): a replay cannot be told from another order, and answering
                # it as a replay would drop another order unwritten.
                raise InvalidInput(
                    f"auftrag_id {auftrag.auftrag_id!r} was used on {row['erfasst']} for an "
                    "order recorded without its content, so this one cannot be told a "
                    "replay — give a new order a new auftrag_id"
                )
            first = stored_result(row["ergebnis"], auftrag.auftrag_id, auftrag.user_id,
                                  auftrag.character_id)
            refuse_another_order(row["inhalt"], auftrag, first, row["erfasst"])
            return first.model_copy(update={"wiederholt": True})
        jetzt = instant(row["jetzt"])
        # A correction and its replacement are written together or not at all: what a
        # refused part holds back, the order is planned again without (`plan_order`).
        # After the replay lookup (a replay is answered from the audit, whatever the canon
        # says now), before anything is written.
        while True:
            try:
                planner, results = plan_order(
                    partial(self._planner, auftrag, row, jetzt, refs),
                    len(auftrag.berichtigungen))
                break
            except Unread as unread:
                row = await self._read_more(tx, auftrag, refs, unread, row, jetzt)
        ergebnis = self._result(auftrag, results, planner.now, jetzt)
        await self._apply(tx, auftrag, row, jetzt, planner.ops, ergebnis, inhalt)
        return ergebnis

    async def cancel_event(
        self,
        tx: Tx,
        user_id: str,
        character_id: str,
        first_id: str,
        eintrag_id: str,
        subjects: list[tuple[str, str]],
        jetzt: datetime,
    ) -> AuftragErgebnis:
        """Take back the consequences of a cancelled event, inside the cancel's
        transaction: an audited order of its own (`absage-<entry>`), planned by the same
        rule as a correction. `subjects` are the (entity id, relationship type) of the
        facts valid from the event, and (object id, TYP) where such a fact implies its
        object's type; `jetzt` the cancel's system time."""
        return await self._event_order(
            tx, f"absage-{eintrag_id}", user_id, character_id, {"absage": eintrag_id},
            subjects, lambda planner: planner.cancel(first_id), jetzt,
        )

    async def move_event(
        self, tx: Tx, user_id: str, character_id: str, eintrag_id: str, re_ends: list[ReEnd],
        jetzt: datetime, typed: list[str] | None = None,
    ) -> AuftragErgebnis:
        """Re-end the values a move re-ends, inside the move's transaction: an audited
        order of its own (`verschiebung-<new entry>`), at the move's system time `jetzt`.
        `typed`: the entities whose type facts begin or end with the moved event; each
        type they have from now on must still fit their facts (else TimelineError). A
        move with nothing to re-end writes nothing."""
        subjects = {(r.subjekt_id, r.rel) for r in re_ends} | {(e, "TYP") for e in typed or ()}
        return await self._event_order(
            tx, f"verschiebung-{eintrag_id}", user_id, character_id,
            {"verschiebung": eintrag_id}, sorted(subjects),
            lambda planner: planner.move(eintrag_id, re_ends), jetzt,
            moved=typed or [], apply=bool(re_ends),
        )

    async def _event_order(
        self,
        tx: Tx,
        auftrag_id: str,
        user_id: str,
        character_id: str,
        what: dict[str, str],
        subjects: list[tuple[str, str]],
        plan: Callable[[Planner], TripelErgebnis],
        jetzt: datetime,
        moved: list[str] | None = None,
        apply: bool = True,
    ) -> AuftragErgebnis:
        """An order the timeline gives the writer: its state is every version of the
        subjects' relations (what an event touched may lie far back), planned by `plan`,
        applied and audited like any other order. It is recorded at the system time of
        the timeline's change (`jetzt`), in the same transaction: the entry and the
        versions it re-ends become the record at one instant, so no instant between
        them shows the moved entry with the versions of before (two values of a
        partner overlapping for a microsecond, as `kg check` saw)."""
        auftrag = Auftrag(
            auftrag_id=auftrag_id,
            user_id=user_id,
            character_id=character_id,
            berichtigungen=[],
            tripel=[what],
        )
        refs = Refs(
            ids={s for s, _ in subjects},
            rel_types={"TYP"} | {t for _, t in subjects},
            history_types={"TYP"} | {t for _, t in subjects},
            all_history=True,
        )
        row = await self._state(tx, auftrag, refs, jetzt)
        while True:
            planner = self._planner(auftrag, row, jetzt, refs)
            before = planner.spans()
            ergebnis = self._result(auftrag, [plan(planner)], jetzt, jetzt)
            try:
                clash = planner.type_clash(before, moved)
                break
            except Unread as unread:
                row = await self._read_more(tx, auftrag, refs, unread, row, jetzt)
        if clash is not None:
            name, typ, fact = clash
            doing = "cancelling" if "absage" in what else "moving"
            raise TimelineError(
                f"{doing} this event would make {name} a {typ} while the fact "
                f"'{planner.fact_text(fact)}' ({fact.id}) stands, which it contradicts: "
                "correct that fact first (nothing was changed)"
            )
        if apply:
            await self._apply(tx, auftrag, row, jetzt, planner.ops, ergebnis,
                              content_hash(auftrag))
        return ergebnis

    def _planner(self, auftrag: Auftrag, row: Record, jetzt: datetime, refs: Refs) -> Planner:
        """A planner on the state `row` read for `refs`."""
        planner = Planner(self.canon, auftrag, to_state(row, self.canon), jetzt)
        planner.asked = set(refs.ids)
        return planner

    async def _read_more(self, tx: Tx, auftrag: Auftrag, refs: Refs, unread: Unread,
                         row: Record, jetzt: datetime) -> Record:
        """The order's state read again, in its transaction and at its clock, with the
        entities whose types the plan needs (`Unread`): the far ends of the facts a
        take-back or a move brings back or holds on longer. An entity asked for and
        not found has no type to check (`Planner.asked`: it raises no second
        `Unread`)."""
        refs.ids |= unread.ids
        fresh = await self._state(tx, auftrag, refs, jetzt)
        return {**row, **{key: fresh[key] for key in ("entities", "transitive", "chains")}}

    async def rehearse(self, auftrag: Auftrag) -> None:
        """Run an order's queries in a transaction that is rolled back: the server plans
        them (`Memory.warm`), and nothing is written."""

        async def work(tx: Tx) -> None:
            await self._write(tx, auftrag)
            raise _Rehearsed

        with contextlib.suppress(_Rehearsed):
            await self.db.write(work)

    async def write(self, auftrag: Auftrag) -> AuftragErgebnis:
        if auftrag.auftrag_id.startswith(EVENT_ORDER_PREFIXES):
            raise InvalidInput(
                f"auftrag_id {auftrag.auftrag_id!r} starts with "
                f"{next(p for p in EVENT_ORDER_PREFIXES if auftrag.auftrag_id.startswith(p))!r}, "
                "which names the orders of a cancel or a move in the audit — choose another id"
            )
        try:
            return await self.db.write(lambda tx: self._write(tx, auftrag))
        except ServerUnavailable as exc:
            why = str(exc)
            if lost_at_commit(exc):
                why = (f"the connection to Neo4j at {self.db.settings.neo4j_uri} was lost "
                       "while it committed: whether it was written is unknown.")
            raise WriteNotConfirmed(
                f"order {auftrag.auftrag_id!r} was not confirmed: {why} Nothing of it is "
                "half-applied; replay it with the same auftrag_id once the server answers."
            ) from exc
