"""The graph model has one list of each stored thing's properties, and the docs, the
export records, `kg check` and the writer agree with it.

`kg.models.FACT_PROPERTIES` is the list of a fact's properties; `ENTITY_PROPERTIES`,
`TIMELINE_PROPERTIES` and `ORDER_PROPERTIES` those of the nodes. Each table of
docs/graph-model.md must equal its list row by row, each export record must carry exactly
its names (dates and datetimes where the model says so), and the keys the writer really
puts on the store (read back after orders that exercise every property) must be exactly
its names — so neither the docs nor the code can drift from the model unnoticed.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from pydantic import BaseModel

from cli.worked_example import build
from kg.models import (
    ENTITY_PROPERTIES,
    FACT_PROPERTIES,
    ORDER_PROPERTIES,
    TIMELINE_PROPERTIES,
    NeuerEintrag,
    Property,
)
from kg.transfer.codec import TAG, ZEIT, temporal_fields
from kg.transfer.records import AuftragRec, EintragRec, EntitaetRec, FaktRec
from tests.conftest import Pair, t

DOCS = Path(__file__).resolve().parent.parent / "docs" / "graph-model.md"


#: Each stored thing: its docs section, its model, its export record and the record's
#: fields that are not properties (a fact's type and ends are the edge itself).
MODELS: dict[str, tuple[tuple[Property, ...], type[BaseModel], set[str]]] = {
    "Fact relationships": (FACT_PROPERTIES, FaktRec, {"beziehung", "subjekt", "objekt", "wert"}),
    # (`namensvettern`: the user's other entities of its name at the export, not stored)
    "Entities": (ENTITY_PROPERTIES, EntitaetRec, {"namensvettern"}),
    "Timeline entries": (TIMELINE_PROPERTIES, EintragRec, set()),
    "Orders": (ORDER_PROPERTIES, AuftragRec, set()),
}


def documented_properties(title: str) -> list[tuple[str, str]]:
    """The rows of the table under "## <title>"."""
    section = DOCS.read_text(encoding="utf-8").split(f"\n## {title}\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"^\| `(\w+)` \| (.+?) \|$", section, re.MULTILINE)


def documented_fact_properties() -> list[tuple[str, str]]:
    return documented_properties("Fact relationships")


def test_the_docs_table_is_the_model() -> None:
    assert documented_fact_properties() == [(p.name, p.meaning) for p in FACT_PROPERTIES]


@pytest.mark.parametrize("title", sorted(MODELS))
def test_each_docs_table_is_its_model(title: str) -> None:
    model = MODELS[title][0]
    assert documented_properties(title) == [(p.name, p.meaning) for p in model]


@pytest.mark.parametrize("title", sorted(MODELS))
def test_each_export_record_is_its_model(title: str) -> None:
    model, record, not_properties = MODELS[title]
    fields = temporal_fields(record)
    assert set(fields) - {"kind"} - not_properties == {p.name for p in model}
    for p in model:
        wanted = ZEIT if p.type.startswith("DATETIME") else TAG if p.type.startswith("DATE") \
            else None
        assert fields[p.name] is wanted or not p.type, p.name


def test_the_writer_writes_exactly_the_nodes_properties(pair: Pair) -> None:
    memory = pair.store.memory
    # The worked example (entities, orders, an event moved: ersetzt_am), and a span with
    # an end that is cancelled (ende, abgesagt, abgesagt_am).
    pair.store.run(build(memory, pair.user_id, pair.character_id))
    span = NeuerEintrag(typ="termin", titel="Urlaub", beginn=date(2026, 7, 1),
                        ende=date(2026, 7, 14))
    entry = pair.store.run(memory.timeline_add(pair.user_id, pair.character_id, span))
    pair.store.run(memory.timeline_cancel(pair.user_id, pair.character_id, entry.id))
    for label, model in (("Entitaet", ENTITY_PROPERTIES), ("Auftrag", ORDER_PROPERTIES),
                         ("TimelineEintrag", TIMELINE_PROPERTIES)):
        rows = pair.cypher(
            f"MATCH (n:{label} {{user_id: $u}}) UNWIND keys(n) AS k "
            "RETURN collect(DISTINCT k) AS keys",
            u=pair.user_id,
        )
        names = {p.name for p in model}
        written = set(rows[0]["keys"])
        assert written == names, label


def test_the_writer_writes_exactly_the_models_properties(pair: Pair) -> None:
    memory = pair.store.memory
    # The worked example: written facts, a fact valid from an event (timeline_id) that
    # supersedes another (timeline_bis, grund, t_invalid, t_expired) ...
    pair.store.run(build(memory, pair.user_id, move=False))
    # ... a correction, a triple that carries its subject's type (subjekt_typ), and a
    # sweep (decay_am).
    order = pair.order(t("Minka", "wohnt_in", "Kassel", typ="tier"),
                       zeitpunkt="2026-11-20T10:00:00Z")
    order["berichtigungen"] = [{"herkunft": "mensch",
                                "subjekt": "Lena", "beziehung": "beruf", "wert": "Ärztin"}]
    pair.store.run(memory.write(order))
    pair.store.run(memory.decay_run(pair.user_id, day=date(2026, 12, 1)))
    rows = pair.cypher(
        "MATCH (:Entitaet {user_id: $u})-[r]->() "
        "UNWIND keys(r) AS k RETURN collect(DISTINCT k) AS keys",
        u=pair.user_id,
    )
    assert sorted(rows[0]["keys"]) == sorted(p.name for p in FACT_PROPERTIES)
