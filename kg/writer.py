"""The Fakten-Agent: the only code that writes facts.

An order (Auftrag) is written in one transaction under the user's lock: names are
resolved, every triple is checked against the canon and the pair's existing facts,
then written as a new fact, a supersession (einwertig), a touch (same value), or
rejected with a reason. The result is stored with the order, so a replay of the same
`auftrag_id` returns it again and writes nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import ValidationError

from kg.canon import TYPEN, Canon, Relation
from kg.db import Database, Record, Tx
from kg.errors import ServerUnavailable, WriteNotConfirmed
from kg.models import (
    Auftrag,
    AuftragErgebnis,
    Berichtigung,
    ById,
    EntityRef,
    Kandidat,
    New,
    Tripel,
    TripelErgebnis,
    normalize_name,
)
from kg import timeline as tl


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass
class Resolved:
    """An entity a reference names (id None: not created yet)."""

    id: str | None
    name: str
    typ: str | None  # None when the pair knows no type (counts as sonstiges)


class Rejected(Exception):
    """A triple cannot be written; carries its result."""

    def __init__(self, ausgang: str, grund: str, meldung: str, **extra: Any) -> None:
        super().__init__(meldung)
        self.ausgang = ausgang
        self.grund = grund
        self.meldung = meldung
        self.extra = extra


def reject_reason(error: ValidationError) -> tuple[str, str]:
    """A reason code and message for a triple that fails validation."""
    first = error.errors()[0]
    where = str(first["loc"][0]) if first["loc"] else ""
    kind = first["type"]
    message = f"{'.'.join(str(p) for p in first['loc']) or 'tripel'}: {first['msg']}"
    if where == "herkunft":
        return "herkunft", (
            "herkunft is required and must be one of mensch, nova, modell, recherche"
        )
    if where in ("subjekt", "objekt") and kind == "string_too_long":
        return "name_zu_lang", message
    if where in ("subjekt", "objekt") and kind == "string_too_short":
        return "name_leer", message
    if "control characters" in str(first["msg"]):
        return "steuerzeichen", message
    if where == "wert" and kind == "string_too_long":
        return "wert_zu_lang", message
    return "ungueltig", message


def precheck(raw: Tripel | dict[str, Any], canon: Canon) -> Tripel:
    """Validate one triple without the database; raises Rejected."""
    if isinstance(raw, Tripel):
        tripel = raw
    else:
        try:
            tripel = Tripel.model_validate(raw)
        except ValidationError as exc:
            grund, meldung = reject_reason(exc)
            raise Rejected("abgelehnt", grund, meldung) from None
    if tripel.beziehung not in canon:
        raise Rejected(
            "abgelehnt",
            "unbekannte_beziehung",
            f"unknown relation {tripel.beziehung!r}; known: {', '.join(sorted(canon.relations))}",
        )
    rel = canon[tripel.beziehung]
    if rel.objekt == "entitaet" and tripel.objekt is None:
        raise Rejected(
            "abgelehnt", "form", f"{rel.name} needs an entity as 'objekt', not a 'wert'"
        )
    if rel.objekt == "wert" and tripel.wert is None:
        raise Rejected(
            "abgelehnt", "form", f"{rel.name} needs a 'wert', not an entity as 'objekt'"
        )
    if rel.name == "typ" and tripel.wert not in TYPEN:
        raise Rejected(
            "abgelehnt",
            "ungueltiger_typ",
            f"typ must be one of {', '.join(TYPEN)}, not {tripel.wert!r}",
        )
    return tripel


def order_status(results: list[TripelErgebnis]) -> Literal["ok", "teilweise", "abgelehnt"]:
    done = {"geschrieben", "abgeloest", "unveraendert", "berichtigt"}
    written = sum(r.ausgang in done for r in results)
    if written == len(results):
        return "ok"
    return "teilweise" if written else "abgelehnt"


@dataclass
class _Order:
    """The state of one order while its transaction runs."""

    tx: Tx
    canon: Canon
    auftrag: Auftrag
    neue: list[str] = field(default_factory=list)
    typ_fakten: list[str] = field(default_factory=list)

    @property
    def user(self) -> str:
        return self.auftrag.user_id

    @property
    def character(self) -> str:
        return self.auftrag.character_id

    @property
    def now(self) -> datetime:
        return self.auftrag.zeitpunkt

    # -- entities ---------------------------------------------------------------

    async def resolve(self, ref: EntityRef, role: str) -> Resolved:
        if isinstance(ref, ById):
            row = await self.tx.one(
                "entity_by_id", user_id=self.user, character_id=self.character, entity_id=ref.id
            )
            if row is None:
                # A foreign id reads exactly like an unknown one.
                raise Rejected("abgelehnt", "unbekannte_id", f"{role}: no entity with id {ref.id!r}")
            return Resolved(row["id"], row["name"], _typ(row["typ"]))
        if isinstance(ref, New):
            return Resolved(None, ref.neu, None)
        rows = await self.tx.run(
            "entity_candidates",
            user_id=self.user,
            character_id=self.character,
            name_norm=normalize_name(ref),
        )
        if len(rows) > 1:
            raise Rejected(
                "mehrdeutig",
                "mehrdeutig",
                f"{role}: {len(rows)} entities are named {ref!r}; retry with {{'id': ...}}",
                kandidaten=[self._kandidat(r) for r in rows],
            )
        if rows:
            return Resolved(rows[0]["id"], rows[0]["name"], _typ(rows[0]["typ"]))
        return Resolved(None, ref, None)

    def _kandidat(self, row: Record) -> Kandidat:
        merkmale = []
        for m in row["merkmale"]:
            rel = self.canon.by_type.get(m["rel"])
            text = (rel.vorwaerts if m["out"] else rel.rueckwaerts) if rel else m["rel"].lower()
            merkmale.append(f"{text} {m['other']}")
        return Kandidat(id=row["id"], name=row["name"], typ=row["typ"], merkmale=merkmale)

    async def create(self, entity: Resolved) -> str:
        if entity.id is None:
            entity.id = new_id()
            await self.tx.run(
                "entity_create",
                user_id=self.user,
                entity_id=entity.id,
                name=entity.name,
                name_norm=normalize_name(entity.name),
                erstellt=self.now,
            )
            self.neue.append(entity.id)
        return entity.id

    # -- facts ------------------------------------------------------------------

    def _props(self, herkunft: str, timeline_id: str | None) -> dict[str, Any]:
        return {
            "id": new_id(),
            "user_id": self.user,
            "character_id": self.character,
            "herkunft": herkunft,
            "auftrag_id": self.auftrag.auftrag_id,
            "t_valid": self.now,
            "t_recorded": self.now,
            "aktiv": True,
            "staerke_decay": 1.0,
            "last_touched": self.now,
            "timeline_id": timeline_id,
        }

    async def assert_fact(
        self,
        subjekt_id: str,
        rel: Relation,
        herkunft: str,
        objekt_id: str | None = None,
        wert: str | None = None,
        timeline_id: str | None = None,
    ) -> tuple[str, str, list[str]]:
        """Write, supersede or touch one fact; (ausgang, fact id, superseded ids)."""
        existing = await self.tx.run(
            "facts_active",
            user_id=self.user,
            character_id=self.character,
            entity_id=subjekt_id,
            rel_type=rel.rel_type,
            both_directions=rel.symmetrisch,
        )
        for fact in existing:
            same = (fact["wert"] == wert) if wert is not None else fact["objekt_id"] == objekt_id
            if same:
                await self.tx.run(
                    "fact_touch",
                    user_id=self.user,
                    start_id=fact["start_id"],
                    fakt_id=fact["id"],
                    zeitpunkt=self.now,
                )
                return "unveraendert", fact["id"], []
        retire: list[Record] = []
        if rel.einwertig:
            retire = list(existing)
            if rel.symmetrisch and objekt_id is not None:
                # A partner is einwertig from both ends: the object's old partner goes too.
                retire += await self.tx.run(
                    "facts_active",
                    user_id=self.user,
                    character_id=self.character,
                    entity_id=objekt_id,
                    rel_type=rel.rel_type,
                    both_directions=True,
                )
        if retire:
            await self.tx.run(
                "facts_retire",
                user_id=self.user,
                facts=[{"id": f["id"], "start_id": f["start_id"]} for f in retire],
                grund="abgeloest",
                t_invalid=self.now,
                t_expired=self.now,
                timeline_bis=timeline_id,
            )
        props = self._props(herkunft, timeline_id)
        if objekt_id is not None:
            await self.tx.run(
                "fact_create_ref",
                user_id=self.user,
                subjekt_id=subjekt_id,
                objekt_id=objekt_id,
                rel_type=rel.rel_type,
                props=props,
            )
        else:
            await self.tx.run(
                "fact_create_value",
                user_id=self.user,
                subjekt_id=subjekt_id,
                wert=wert,
                rel_type=rel.rel_type,
                props=props,
            )
        ids = sorted({f["id"] for f in retire})
        return ("abgeloest" if ids else "geschrieben"), props["id"], ids

    async def set_type(self, entity: Resolved, typ: str, herkunft: str) -> None:
        """Write the type fact an entity gets from a relation or a known class."""
        if entity.typ == typ or entity.id is None:
            return
        _, fakt_id, _ = await self.assert_fact(
            entity.id, self.canon["typ"], herkunft, wert=typ
        )
        entity.typ = typ
        self.typ_fakten.append(fakt_id)

    # -- one triple -------------------------------------------------------------

    async def triple(self, index: int, tripel: Tripel) -> TripelErgebnis:
        rel = self.canon[tripel.beziehung]
        subj = await self.resolve(tripel.subjekt, "subjekt")
        obj = await self.resolve(tripel.objekt, "objekt") if tripel.objekt is not None else None
        if obj is not None and obj.id is not None and obj.id == subj.id:
            raise Rejected("abgelehnt", "selbstbezug", f"{rel.name}: subject and object are the same entity")
        if rel.subjekt_typen and subj.typ and subj.typ not in rel.subjekt_typen:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{subj.name} is a {subj.typ}; {rel.name} allows {', '.join(rel.subjekt_typen)}",
            )
        if obj is not None and rel.objekt_typ and obj.typ and obj.typ != rel.objekt_typ:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{obj.name} is a {obj.typ}; the object of {rel.name} is a {rel.objekt_typ}",
            )
        klassen_typ = self.canon.typ_of_class(tripel.wert or "") if rel.name == "ist_ein" else None
        if klassen_typ and subj.typ and subj.typ != klassen_typ:
            raise Rejected(
                "abgelehnt",
                "typkonflikt",
                f"{subj.name} is a {subj.typ}; a {tripel.wert} is a {klassen_typ}",
            )
        timeline_id = None
        if tripel.timeline_id is not None:
            chain = await tl.chain_ends(self.tx, self.user, self.character, tripel.timeline_id)
            if chain is None:
                raise Rejected(
                    "abgelehnt", "unbekannter_eintrag", f"no timeline entry {tripel.timeline_id!r}"
                )
            if chain["abgesagt"]:
                raise Rejected(
                    "abgelehnt", "eintrag_abgesagt", f"timeline entry {tripel.timeline_id!r} is cancelled"
                )
            timeline_id = chain["first_id"]

        subjekt_id = await self.create(subj)
        objekt_id = await self.create(obj) if obj is not None else None
        if tripel.ereignis is not None:
            timeline_id = await tl.create_entry(
                self.tx, self.user, self.character, tripel.ereignis, self.now, subjekt_id
            )
        ausgang, fakt_id, abgeloest = await self.assert_fact(
            subjekt_id, rel, tripel.herkunft, objekt_id, tripel.wert, timeline_id
        )
        # Types become known from the relation (rule 4); none is written in advance.
        if obj is not None and rel.objekt_typ:
            await self.set_type(obj, rel.objekt_typ, tripel.herkunft)
            if rel.symmetrisch:
                await self.set_type(subj, rel.objekt_typ, tripel.herkunft)
        if klassen_typ:
            await self.set_type(subj, klassen_typ, tripel.herkunft)
        if rel.name == "typ":
            subj.typ = tripel.wert
        result = TripelErgebnis(
            index=index,
            ausgang=ausgang,  # type: ignore[arg-type]
            fakt_id=fakt_id,
            abgeloest=abgeloest,
            subjekt_id=subjekt_id,
            objekt_id=objekt_id,
            timeline_id=timeline_id,
            neue_entitaeten=list(self.neue),
            typ_fakten=list(self.typ_fakten),
        )
        self.neue.clear()
        self.typ_fakten.clear()
        return result

    async def correction(self, index: int, item: Berichtigung) -> TripelErgebnis:
        rel = self.canon[item.beziehung]
        subj = await self.resolve(item.subjekt, "subjekt")
        obj = await self.resolve(item.objekt, "objekt") if item.objekt is not None else None
        if subj.id is None or (obj is not None and obj.id is None):
            raise Rejected("abgelehnt", "nicht_gefunden", "no such fact to correct")
        facts = await self.tx.run(
            "facts_matching",
            user_id=self.user,
            character_id=self.character,
            entity_id=subj.id,
            rel_type=rel.rel_type,
            objekt_id=obj.id if obj else None,
            wert=item.wert,
        )
        if not facts:
            raise Rejected(
                "abgelehnt",
                "nicht_gefunden",
                f"no fact {subj.name} {rel.name} {obj.name if obj else item.wert!r} in this pair",
            )
        await self.tx.run(
            "facts_retire",
            user_id=self.user,
            facts=[{"id": f["id"], "start_id": f["start_id"]} for f in facts],
            grund="berichtigt",
            t_invalid=None,
            t_expired=self.now,
            timeline_bis=None,
        )
        return TripelErgebnis(
            index=index,
            ausgang="berichtigt",
            abgeloest=sorted(f["id"] for f in facts),
            subjekt_id=subj.id,
            objekt_id=obj.id if obj else None,
        )


def _typ(value: str | None) -> str | None:
    return None if value in (None, "sonstiges") else value


class FaktenAgent:
    """Takes write orders and reports outcomes; the one writer of facts."""

    def __init__(self, db: Database, canon: Canon) -> None:
        self.db = db
        self.canon = canon

    async def write(self, auftrag: Auftrag) -> AuftragErgebnis:
        async def work(tx: Tx) -> AuftragErgebnis:
            row = await tx.one("user_lock", user_id=auftrag.user_id, auftrag_id=auftrag.auftrag_id)
            if row and row["ergebnis"]:
                first = AuftragErgebnis.model_validate_json(row["ergebnis"])
                return first.model_copy(update={"wiederholt": True})
            order = _Order(tx, self.canon, auftrag)
            results: list[TripelErgebnis] = []
            items: list[Any] = [*auftrag.berichtigungen, *auftrag.tripel]
            for index, raw in enumerate(items):
                try:
                    if isinstance(raw, Berichtigung):
                        results.append(await order.correction(index, raw))
                    else:
                        results.append(await order.triple(index, precheck(raw, self.canon)))
                except Rejected as rejected:
                    results.append(
                        TripelErgebnis(
                            index=index,
                            ausgang=rejected.ausgang,  # type: ignore[arg-type]
                            grund=rejected.grund,
                            meldung=rejected.meldung,
                            **rejected.extra,
                        )
                    )
                    order.neue.clear()
                    order.typ_fakten.clear()
            ergebnis = AuftragErgebnis(
                auftrag_id=auftrag.auftrag_id,
                user_id=auftrag.user_id,
                character_id=auftrag.character_id,
                status=order_status(results),
                zeitpunkt=auftrag.zeitpunkt,
                ergebnisse=results,
            )
            await tx.run(
                "auftrag_record",
                user_id=auftrag.user_id,
                auftrag_id=auftrag.auftrag_id,
                character_id=auftrag.character_id,
                zeitpunkt=auftrag.zeitpunkt,
                status=ergebnis.status,
                ergebnis=ergebnis.model_dump_json(),
                anzahl=len(results),
            )
            return ergebnis

        try:
            return await self.db.write(work)
        except ServerUnavailable as exc:
            raise WriteNotConfirmed(
                f"order {auftrag.auftrag_id!r} was not confirmed: {exc} Nothing of it is "
                "half-applied; replay it with the same auftrag_id once the server answers."
            ) from exc
