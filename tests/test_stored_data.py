"""A stored value of the wrong type, or a missing one, on every read path.

`kg check` reports such a value (a hand edit, an older version); every other command
that meets it says what it is — the thing, its id, the property — and to run `kg
check`, as a `StoredDataError` (exit 1). Found by a black-box attack: a timeline entry's
`beginn` stored as text ended `kg mappe` in "unexpected AttributeError ... a bug in kg",
an entry without its `id` ended `kg timeline list` in a KeyError and `kg export` in
"invalid input" (exit 2), and an entity's name stored as a number ended `kg mappe` in
"invalid input" (exit 2), blaming the caller's arguments. Each test plants the value
with raw Cypher, as `tests/test_check.py` does.
"""

from __future__ import annotations

from datetime import date

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from kg.errors import StoredDataError
from kg.mappe import Mappe
from kg.models import stored_invalid
from kg.values import stored_day, stored_instant

runner = CliRunner()


# -- pure --------------------------------------------------------------------------------


def test_the_message_names_the_thing_its_property_and_the_cure() -> None:
    error = StoredDataError.of("timeline entry", "e1", "beginn", "2027-02-01", "not a date")
    assert str(error).startswith(
        "timeline entry 'e1': its stored beginn is '2027-02-01' (str), not a date — ")
    assert "run `kg check`" in str(error) and error.exit_code == 1
    missing = StoredDataError.of("timeline entry", None, "id", None)
    assert str(missing).startswith("a timeline entry: its stored id is missing — ")


def test_a_conversion_refuses_what_the_library_never_stores() -> None:
    assert stored_day(date(2026, 4, 1), "timeline entry", "e1", "beginn") == date(2026, 4, 1)
    with pytest.raises(StoredDataError, match="timeline entry 'e1': its stored beginn is '2"):
        stored_day("2026-04-01", "timeline entry", "e1", "beginn")
    with pytest.raises(StoredDataError, match="its stored ende is missing"):
        stored_day(None, "timeline entry", "e1", "ende")
    assert stored_instant(None, "order", "a1", "erfasst") is None
    with pytest.raises(StoredDataError, match="order 'a1': its stored erfasst is 'gestern'"):
        stored_instant("gestern", "order", "a1", "erfasst")


def test_a_model_error_names_the_innermost_thing_with_an_id() -> None:
    """pydantic's loc (`fakten.0.subjekt.name`) becomes the entity it belongs to."""
    fact = {"id": "f1", "beziehung": "wohnt_in", "text": "wohnt in", "grad": 1,
            "subjekt": {"id": "e2", "name": 42}, "herkunft": "mensch", "staerke": 1.0,
            "aktiv": True}
    data = {"entitaet": {"id": "e1", "name": "Lena"}, "typ": "person", "fakten": [fact],
            "historie": [], "abgeleitet": [], "gekappt": False}
    with pytest.raises(ValidationError) as raised:
        Mappe.model_validate(data)
    error = str(stored_invalid(raised.value, data, "entity", "e1"))
    assert error.startswith("entity 'e2': its stored name is 42 (int), input should be a "
                            "valid string — "), error
    fact["subjekt"] = {"id": "e2", "name": "Kassel"}
    fact["staerke"] = None
    with pytest.raises(ValidationError) as raised:
        Mappe.model_validate(data)
    error = str(stored_invalid(raised.value, data, "entity", "e1"))
    assert error.startswith("fact 'f1': its stored staerke_decay is missing — "), error
