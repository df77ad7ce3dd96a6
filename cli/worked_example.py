"""The worked example, built once: for `kg demo`, the tests and the Browser test.

One pair's story (docs/contract.md, "The worked example"): Lena lives in Berlin; she
moves to Kassel in November, a timeline event of month precision that the new fact
references; Kassel lies in Deutschland, and in Hessen, which lies in Deutschland
(herkunft modell); her dog
Bello comes along when she visits (herkunft nova); the human has winter tyres; and
another character of the same human knows other things about the same Kassel. Then the
event is moved to December, which changes the fact's *ab* without touching the fact.

Every order has a fixed `auftrag_id` and clock, so building the example again replays
the orders (`wiederholt`) and writes nothing; the event is moved only while its chain
has a single entry.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import Field

from kg.api import Memory
from kg.models import AuftragErgebnis, Frozen

DEMO_USER = "demo-user"
NOVA = "nova"
LUNA = "luna"
MOVED_TO = date(2026, 12, 1)


def tripel(
    subjekt: Any,
    beziehung: str,
    objekt: Any = None,
    *,
    wert: str | None = None,
    herkunft: str = "mensch",
    **extra: Any,
) -> dict[str, Any]:
    """A triple of a write order, as the chat backend sends it."""
    triple: dict[str, Any] = {"subjekt": subjekt, "beziehung": beziehung, "herkunft": herkunft}
    if objekt is not None:
        triple["objekt"] = objekt
    if wert is not None:
        triple["wert"] = wert
    triple.update(extra)
    return triple


def orders(
    user_id: str,
    character_id: str = NOVA,
    other_character_id: str | None = LUNA,
    prefix: str = "demo",
) -> list[dict[str, Any]]:
    """The worked example as write orders, in turn order; `other_character_id` None
    leaves out the other character's order. `prefix` starts every `auftrag_id` (two
    characters of one user building the example each need their own)."""

    def order(
        n: int | str, zeitpunkt: str, *triples: dict[str, Any], character: str
    ) -> dict[str, Any]:
        return {
            "auftrag_id": f"{prefix}-{n}",
            "user_id": user_id,
            "character_id": character,
            "zeitpunkt": zeitpunkt,
            "tripel": list(triples),
        }

    t = tripel
    ours = [
        order(
            1,
            "2026-09-01T10:00:00Z",
            t("Mensch", "typ", wert="person"),
            t("Lena", "wohnt_in", "Berlin"),
            t("Lena", "beruf", wert="Ärztin"),
            character=character_id,
        ),
        order(
            2,
            "2026-10-15T10:00:00Z",
            t(
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
            character=character_id,
        ),
        # (Until 2026-12-05 order 3 held only Kassel in Hessen and Hessen in Deutschland;
        # with the contract's own step 3, Kassel in Deutschland, it has a new id, so a
        # store built before takes the new fact instead of refusing a changed order.)
        order(
            "3b",
            "2026-10-15T10:05:00Z",
            t("Kassel", "liegt_in", "Deutschland", herkunft="modell"),
            t("Kassel", "liegt_in", "Hessen", herkunft="modell"),
            t("Hessen", "liegt_in", "Deutschland", herkunft="modell"),
            character=character_id,
        ),
        order(
            4,
            "2026-10-20T18:00:00Z",
            t("Lena", "hat_haustier", "Bello"),
            t("Bello", "ist_ein", wert="Hund"),
            t("Bello", "begleitet", "Lena", herkunft="nova"),
            character=character_id,
        ),
        order(
            5,
            "2026-10-22T09:00:00Z",
            t("Mensch", "hat", wert="Winterreifen"),
            character=character_id,
        ),
    ]
    if other_character_id is None:
        return ours
    theirs = order(
        6,
        "2026-10-23T09:00:00Z",
        t("Kassel", "hat", wert="Herkules-Denkmal", herkunft="recherche"),
        t("Kassel", "liegt_in", "Nordhessen", herkunft="modell"),
        character=other_character_id,
    )
    return [*ours, theirs]


class WorkedExample(Frozen):
    """What building the worked example wrote."""

    results: list[AuftragErgebnis] = Field(description="One per order (wiederholt on reruns).")
    moved: bool = Field(description="True when this build moved the event.")
    event_id: str = Field(description="First entry of the move event's chain.")


async def build(
    memory: Memory,
    user_id: str,
    character_id: str = NOVA,
    other_character_id: str | None = LUNA,
    *,
    prefix: str = "demo",
    move: bool = True,
) -> WorkedExample:
    """Write the worked example for the pair (idempotent); with `move`, move the event to
    December unless it has been moved already."""
    results = [
        await memory.write(o) for o in orders(user_id, character_id, other_character_id, prefix)
    ]
    event_id = results[1].ergebnisse[0].timeline_id
    assert event_id is not None  # the order carries an ereignis
    moved = False
    if move and len(await memory.timeline_chain(user_id, character_id, event_id)) == 1:
        await memory.timeline_move(user_id, character_id, event_id, MOVED_TO, genauigkeit="monat")
        moved = True
    return WorkedExample(results=results, moved=moved, event_id=event_id)
