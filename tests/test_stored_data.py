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

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from cli.main import app
from kg.errors import StoredDataError
from kg.mappe import Mappe
from kg.models import stored_invalid
from kg.transfer.records import AuftragRec
from kg.values import stored_day, stored_instant
from tests.conftest import Pair, t

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


# -- against the store -------------------------------------------------------------------


@dataclass
class Planted:
    """Lena moved from Berlin to Kassel by an event, the event moved once."""

    pair: Pair
    lena: str
    first_entry: str
    active_entry: str

    @property
    def u(self) -> str:
        return self.pair.user_id

    def cypher(self, query: str, **params: object) -> list[dict[str, Any]]:
        return self.pair.cypher(query, u=self.u, **params)

    def kg(self, *args: str, env: dict[str, str]) -> str:
        """Run `kg`; it must end in a StoredDataError: exit 1, `kg check` named, and
        neither "a bug in kg" nor "invalid input" (the caller's fault, exit 2)."""
        result = runner.invoke(app, list(args), env=env)
        assert result.exit_code == 1, (result.exit_code, result.output)
        assert "run `kg check`" in result.output, result.output
        assert "bug in kg" not in result.output and "invalid input" not in result.output
        return result.output


@pytest.fixture
def planted(pair: Pair) -> Iterator[Planted]:
    pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2026-01-01T00:00:00Z")
    moved = pair.write(t("Lena", "wohnt_in", "Kassel", ereignis={
        "titel": "Lena zieht nach Kassel", "beginn": "2026-04-01", "genauigkeit": "monat"}))
    first = moved.ergebnisse[0].timeline_id
    active = pair.store.run(pair.store.memory.timeline_move(
        pair.user_id, "nova", first, date(2026, 5, 1)))
    yield Planted(pair, pair.id_of("Lena"), first, active.id)


# -- timeline entries --------------------------------------------------------------------


def test_an_entry_day_stored_as_text(planted: Planted, cli_env: dict[str, str]) -> None:
    """`timeline show` ended in "unexpected AttributeError: 'str' object has no
    attribute 'to_native'"; a move of the entry would have too."""
    planted.cypher("MATCH (x:TimelineEintrag {id: $id}) SET x.beginn = '2027-02-01'",
                   id=planted.active_entry)
    named = f"timeline entry {planted.active_entry!r}: its stored beginn is '2027-02-01' (str)"
    pair = ["-u", planted.u, "-c", "nova"]
    assert named in planted.kg("timeline", "show", planted.first_entry, *pair, env=cli_env)
    assert named in planted.kg("timeline", "move", planted.active_entry, *pair,
                               "--beginn", "2026-06-01", env=cli_env)


@pytest.mark.parametrize(("change", "words"), [
    ("REMOVE x.genauigkeit", "its stored genauigkeit is missing"),
    ("SET x.genauigkeit = 'woche'", "its stored genauigkeit is 'woche'"),
    ("SET x.titel = 42", "its stored titel is 42 (int)"),
])
def test_an_entry_moved_with_a_property_set_by_hand(
    planted: Planted, cli_env: dict[str, str], change: str, words: str
) -> None:
    """The review: a move read the entry's own properties by key: "unexpected KeyError:
    'genauigkeit' — this is a bug in kg", and a precision or title set by hand was the
    caller's "invalid input" (exit 2)."""
    planted.cypher(f"MATCH (x:TimelineEintrag {{id: $id}}) {change}", id=planted.active_entry)
    output = planted.kg("timeline", "move", planted.active_entry, "-u", planted.u, "-c",
                        "nova", "--beginn", "2026-06-01", env=cli_env)
    assert f"timeline entry {planted.active_entry!r}: {words}" in output, output


def test_an_entry_without_its_id(planted: Planted, cli_env: dict[str, str]) -> None:
    """`timeline list` and `timeline show` ended in "unexpected KeyError: 'id'"."""
    planted.cypher("MATCH (x:TimelineEintrag {id: $id}) REMOVE x.id", id=planted.active_entry)
    pair = ["-u", planted.u, "-c", "nova"]
    for args in (["list", *pair, "--monat", "2026-05"], ["show", planted.first_entry, *pair]):
        out = planted.kg("timeline", *args, env=cli_env)
        assert "a timeline entry: its stored id is missing" in out, out


def test_the_name_of_the_person_an_entry_names(planted: Planted, cli_env: dict[str, str]) -> None:
    """`timeline show` said "invalid input — person_name: ..." (exit 2)."""
    planted.cypher("MATCH (x:Entitaet {id: $id}) SET x.name = 42", id=planted.lena)
    out = planted.kg("timeline", "show", planted.first_entry, "-u", planted.u, "-c", "nova",
                     env=cli_env)
    assert f"entity {planted.lena!r}: its stored name is 42 (int)" in out, out


# -- Mappe, history, entities, audit -----------------------------------------------------


def test_an_event_day_stored_as_text(planted: Planted, cli_env: dict[str, str]) -> None:
    """`kg mappe` ended in "unexpected AttributeError: 'str' object has no attribute
    'month'", `kg history` in "unexpected TypeError: combine() argument 1 must be
    datetime.date, not str"."""
    planted.cypher("MATCH (x:TimelineEintrag {id: $id}) SET x.beginn = '2027-02-01'",
                   id=planted.active_entry)
    (kassel,) = planted.cypher("MATCH (:Entitaet {user_id: $u})-[r:WOHNT_IN]->"
                               "(:Entitaet {name: 'Kassel'}) RETURN r.id AS id")
    pair = ["-u", planted.u, "-c", "nova"]
    out = planted.kg("mappe", "Lena", *pair, env=cli_env)
    assert (f"timeline entry of the event of fact {kassel['id']!r}: its stored beginn is "
            "'2027-02-01' (str), not a date") in out, out
    out = planted.kg("history", "Lena", *pair, env=cli_env)
    assert "its stored beginn is '2027-02-01' (str), not a date" in out, out


def test_an_entity_name_stored_as_a_number(planted: Planted, cli_env: dict[str, str]) -> None:
    """`kg mappe`, `kg history` and `kg entities` said "invalid input — name: Input
    should be a valid string" (exit 2), as if the caller had given a wrong name."""
    planted.cypher("MATCH (x:Entitaet {id: $id}) SET x.name = 42", id=planted.lena)
    pair = ["-u", planted.u, "-c", "nova"]
    named = f"entity {planted.lena!r}: its stored name is 42 (int)"
    for args in (["mappe", "Lena", *pair], ["mappe", planted.lena, *pair],
                 ["mappe", "Kassel", *pair], ["history", planted.lena, *pair],
                 ["history", "Lena", *pair], ["entities", *pair]):
        out = planted.kg(*args, env=cli_env)
        assert named in out, (args, out)


@pytest.mark.parametrize(("anchor", "change", "words"), [
    ("MATCH (:Entitaet {user_id: $u})-[x:WOHNT_IN {aktiv: false}]->()",
     "SET x.staerke_decay = 'x'", "its stored staerke_decay is 'x' (str)"),
    ("MATCH (:Entitaet {user_id: $u})-[x:WOHNT_IN {aktiv: false}]->()",
     "SET x.herkunft = 7", "its stored herkunft is 7 (int)"),
    ("MATCH (:Entitaet {user_id: $u})-[:WOHNT_IN {aktiv: false}]->(x)",
     "SET x.name = ['Berlin']", "its stored name is ['Berlin'] (list)"),
])
def test_a_fact_of_the_history(planted: Planted, anchor: str, change: str, words: str) -> None:
    """A superseded value's fact or entity (the library: `history` and the Mappe)."""
    planted.cypher(f"{anchor} {change}")
    mem, u = planted.pair.store.memory, planted.u
    with pytest.raises(StoredDataError, match=re.escape(words)):
        planted.pair.store.run(mem.history(u, "nova", planted.lena))


def test_a_value_stored_as_a_number(planted: Planted) -> None:
    """A value node's `wert` (both in the Mappe's history and in `history`)."""
    planted.pair.write(t("Lena", "beruf", wert="Ärztin"))
    planted.pair.write(t("Lena", "beruf", wert="Lehrerin"))
    planted.cypher("MATCH (:Entitaet {user_id: $u})-[:BERUF {aktiv: false}]->(x) "
                   "SET x.wert = 5")
    mem, u = planted.pair.store.memory, planted.u
    for read in (mem.mappe(u, "nova", planted.lena), mem.history(u, "nova", planted.lena)):
        with pytest.raises(StoredDataError, match="its stored wert is 5 \\(int\\)"):
            planted.pair.store.run(read)


def test_a_value_stored_as_a_number_is_no_version_of_one_shown_at_degree_two(
    planted: Planted,
) -> None:
    """A former value stored as a number (by hand) beside the one Tom's Mappe shows of
    Lena at degree 2: the query compares the values of a relation's versions as text
    for the stay, and Cypher's toLower of a number would fail the whole read. His
    Mappe reads; Lena's own still names the value."""
    planted.pair.write(t("Lena", "beruf", wert="Ärztin"), t("Lena", "partner", "Tom"))
    planted.pair.write(t("Lena", "beruf", wert="Lehrerin"))
    planted.cypher("MATCH (:Entitaet {user_id: $u})-[:BERUF {aktiv: false}]->(x) "
                   "SET x.wert = 5")
    tom = planted.pair.mappe("Tom")
    assert [f.wert for f in tom.fakten if f.grad == 2 and f.beziehung == "beruf"] == [
        "Lehrerin"]
    with pytest.raises(StoredDataError, match="its stored wert is 5 \\(int\\)"):
        planted.pair.mappe("Lena")


def test_an_order_time_stored_as_text(planted: Planted, cli_env: dict[str, str]) -> None:
    """`kg audit` ended in "unexpected AttributeError: 'str' object has no attribute
    'to_native'"."""
    (order,) = planted.cypher("MATCH (x:Auftrag {user_id: $u}) WITH x ORDER BY x.erfasst "
                              "LIMIT 1 SET x.empfangen = 'gestern' RETURN x.id AS id")
    out = planted.kg("audit", "-u", planted.u, env=cli_env)
    assert f"order {order['id']!r}: its stored empfangen is 'gestern' (str)" in out, out


@pytest.mark.parametrize("change", ["REMOVE x.ergebnis", "SET x.ergebnis = ''"])
def test_a_replay_of_an_order_stored_without_its_result(
    planted: Planted, cli_env: dict[str, str], tmp_path: Path, change: str
) -> None:
    """An order whose `ergebnis` was removed by hand (a stranger's attack): kg check was
    clean, a replay ended in Neo4j's "ConstraintValidationFailed" (the writer took the
    key for new and wrote the audit again), and export and import carried the gap on.
    An empty one alike (the review)."""
    (order,) = planted.cypher("MATCH (x:Auftrag {user_id: $u}) WITH x ORDER BY x.erfasst "
                              f"LIMIT 1 {change} RETURN x.id AS id")
    replay = tmp_path / "order.json"
    replay.write_text(json.dumps(planted.pair.order(
        t("Lena", "wohnt_in", "Berlin"), auftrag_id=order["id"],
        zeitpunkt="2026-01-01T00:00:00Z")), encoding="utf-8")
    out = planted.kg("write", str(replay), env=cli_env)
    assert f"auftrag_id {order['id']!r} is in the audit without its result" in out, out
    assert "Neo4j" not in out and "Constraint" not in out
    found = planted.pair.store.run(planted.pair.store.memory.check(planted.u))
    named = [s for c in found.checks if c.name in ("node_fields", "order_results")
             for s in c.samples if "ergebnis" in s]
    assert named, [(c.name, c.samples) for c in found.checks if not c.ok]
    with pytest.raises(ValidationError, match="ergebnis"):
        AuftragRec.model_validate({"kind": "auftrag", "id": "t1", "user_id": "u9",
                                   "character_id": "nova", "status": "ok"})


# -- export ------------------------------------------------------------------------------


def test_export_of_an_entry_without_its_id(
    planted: Planted, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """`kg export` said "invalid input — nach: ..." (exit 2): the NACHFOLGER of the
    first entry leads to an entry without an id. (Which of the two entries the export
    reads first is the server's choice: the entry itself names its missing id too.)"""
    planted.cypher("MATCH (x:TimelineEintrag {id: $id}) REMOVE x.id", id=planted.active_entry)
    out = planted.kg("export", str(tmp_path / "x.jsonl"), "-u", planted.u, env=cli_env)
    assert (f"a timeline entry following {planted.first_entry!r}: its stored id is "
            "missing" in out or "eintrag without an id cannot be exported" in out), out
    assert not (tmp_path / "x.jsonl").exists()


def test_export_refuses_stored_data_as_such(planted: Planted, tmp_path: Path) -> None:
    """What export refuses in the store is a StoredDataError (it was a bare KgError)."""
    planted.cypher("MATCH (x:TimelineEintrag {id: $id}) SET x.beginn = '2027-02-01'",
                   id=planted.active_entry)
    mem = planted.pair.store.memory
    with pytest.raises(StoredDataError, match=f"eintrag {planted.active_entry!r}: property "
                       "'beginn' is a STRING"):
        planted.pair.store.run(mem.export(tmp_path / "x.jsonl", planted.u))


# -- the writer's state ------------------------------------------------------------------


def test_a_cancel_of_an_event_whose_day_is_text(
    planted: Planted, cli_env: dict[str, str]
) -> None:
    """The writer reads the event's day for its state: `kg timeline cancel` ended in
    "unexpected AttributeError: 'str' object has no attribute 'to_native'"."""
    planted.cypher("MATCH (x:TimelineEintrag {id: $id}) SET x.beginn = '2027-02-01'",
                   id=planted.active_entry)
    out = planted.kg("timeline", "cancel", planted.active_entry, "-u", planted.u, "-c", "nova",
                     env=cli_env)
    assert "its stored beginn is '2027-02-01' (str), not a date" in out, out
