"""The worked example of SPEC §6, loaded into a demo pair; idempotent.

Every order has a fixed `auftrag_id` and clock, so running the demo again replays the
orders (`wiederholt`) and writes nothing; the event is moved only while its chain has
a single entry.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import Field

from kg.api import Memory
from kg.mappe import Mappe
from kg.models import AuftragErgebnis, Frozen

USER = "demo-user"
NOVA = "nova"
LUNA = "luna"


def _t(
    s: Any, rel: str, o: Any = None, wert: str | None = None, herkunft: str = "mensch", **extra: Any
) -> dict[str, Any]:
    triple: dict[str, Any] = {"subjekt": s, "beziehung": rel, "herkunft": herkunft, **extra}
    if o is not None:
        triple["objekt"] = o
    if wert is not None:
        triple["wert"] = wert
    return triple


def orders() -> list[dict[str, Any]]:
    """The worked example as write orders, in turn order."""

    def order(
        auftrag_id: str, zeitpunkt: str, *tripel: dict[str, Any], character: str = NOVA
    ) -> dict[str, Any]:
        return {
            "auftrag_id": auftrag_id,
            "user_id": USER,
            "character_id": character,
            "zeitpunkt": zeitpunkt,
            "tripel": list(tripel),
        }

    return [
        order(
            "demo-1",
            "2026-09-01T10:00:00Z",
            _t("Mensch", "typ", wert="person"),
            _t("Lena", "wohnt_in", "Berlin"),
            _t("Lena", "beruf", wert="Ärztin"),
        ),
        order(
            "demo-2",
            "2026-10-15T10:00:00Z",
            _t(
                "Lena",
                "wohnt_in",
                "Kassel",
                ereignis={
                    "typ": "ereignis",
                    "titel": "Lena zieht nach Kassel",
                    "beginn": "2026-11-01",
                    "genauigkeit": "monat",
                },
            ),
        ),
        order(
            "demo-3",
            "2026-10-15T10:05:00Z",
            _t("Kassel", "liegt_in", "Hessen", herkunft="modell"),
            _t("Hessen", "liegt_in", "Deutschland", herkunft="modell"),
        ),
        order(
            "demo-4",
            "2026-10-20T18:00:00Z",
            _t("Lena", "hat_haustier", "Bello"),
            _t("Bello", "ist_ein", wert="Hund"),
            _t("Bello", "begleitet", "Lena", herkunft="nova"),
        ),
        order("demo-5", "2026-10-22T09:00:00Z", _t("Mensch", "hat", wert="Winterreifen")),
        order(
            "demo-6",
            "2026-10-23T09:00:00Z",
            _t("Kassel", "hat", wert="Herkules-Denkmal", herkunft="recherche"),
            _t("Kassel", "liegt_in", "Nordhessen", herkunft="modell"),
            character=LUNA,
        ),
    ]


class DemoResult(Frozen):
    """What the demo wrote and read."""

    results: list[AuftragErgebnis] = Field(description="One per order (wiederholt on reruns).")
    moved: bool = Field(description="True when this run moved the event.")
    event_id: str = Field(description="First entry of the move event's chain.")
    lena: Mappe
    kassel_nova: Mappe
    kassel_luna: Mappe


async def run_demo(memory: Memory) -> DemoResult:
    results = [await memory.write(order) for order in orders()]
    event_id = results[1].ergebnisse[0].timeline_id
    assert event_id is not None
    chain = await memory.timeline_chain(USER, NOVA, event_id)
    moved = False
    if len(chain) == 1:
        await memory.timeline_move(USER, NOVA, event_id, date(2026, 12, 1), genauigkeit="monat")
        moved = True
    lena = await memory.entity_id(USER, NOVA, "Lena")
    kassel = await memory.entity_id(USER, NOVA, "Kassel")
    lena_mappe, kassel_nova = await memory.mappen(USER, NOVA, [lena, kassel])
    kassel_luna = await memory.mappe(USER, LUNA, kassel)
    return DemoResult(
        results=results,
        moved=moved,
        event_id=event_id,
        lena=lena_mappe,
        kassel_nova=kassel_nova,
        kassel_luna=kassel_luna,
    )
