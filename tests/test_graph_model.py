"""The graph model has one list of a fact's properties, and the docs and the writer agree.

`kg.models.FACT_PROPERTIES` is that list. The fact table of docs/graph-model.md must
equal it row by row, and the keys the writer really puts on fact relationships (read
back from the server after orders that exercise every property) must be exactly its
names — so neither the docs nor the code can drift from the model unnoticed.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from cli.worked_example import build
from kg.models import FACT_PROPERTIES
from tests.conftest import Pair

DOCS = Path(__file__).resolve().parent.parent / "docs" / "graph-model.md"


def documented_fact_properties() -> list[tuple[str, str]]:
    """The rows of the table under "## Fact relationships"."""
    section = DOCS.read_text(encoding="utf-8").split("## Fact relationships", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"^\| `(\w+)` \| (.+?) \|$", section, re.MULTILINE)


def test_the_docs_table_is_the_model() -> None:
    assert documented_fact_properties() == [(p.name, p.meaning) for p in FACT_PROPERTIES]


def test_the_writer_writes_exactly_the_models_properties(pair: Pair) -> None:
    memory = pair.store.memory
    # The worked example: written facts, a fact valid from an event (timeline_id) that
    # supersedes another (timeline_bis, grund, t_invalid, t_expired) ...
    pair.store.run(build(memory, pair.user_id, move=False))
    # ... a correction, and a sweep (decay_am).
    order = pair.order(zeitpunkt="2026-11-20T10:00:00Z")
    order["berichtigungen"] = [{"subjekt": "Lena", "beziehung": "beruf", "wert": "Ärztin"}]
    pair.store.run(memory.write(order))
    pair.store.run(memory.decay_run(date(2026, 12, 1), user_id=pair.user_id))
    rows = pair.cypher(
        "MATCH (:Entitaet {user_id: $u})-[r]->() "
        "UNWIND keys(r) AS k RETURN collect(DISTINCT k) AS keys",
        u=pair.user_id,
    )
    assert sorted(rows[0]["keys"]) == sorted(p.name for p in FACT_PROPERTIES)
