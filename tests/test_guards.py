"""The Fakten-Agent guards the graph.

One test per case the review reproduced (each failed before the guards), then the
rules behind them, and `kg check` seeing each guarded invariant in a planted violation.
"""

from __future__ import annotations

import unicodedata
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli.main import app
from kg import schema
from kg.api import Memory, correction_order, parse_order
from kg.canon import load_canon
from kg.errors import ConfigError, EntityNotFound, InvalidInput, TimelineError
from kg.models import Auftrag, clean_name, normalize_name
from kg.plan import Planner, State
from kg.settings import MAPPE_CAP_MAX, MAPPEN_MAX, load_settings
from tests.conftest import Pair, t
from tests.test_bitemporal import check_clean

#: The store's clock in the pure plans (system time is passed in).
JETZT = datetime(2026, 11, 30, 12, tzinfo=UTC)

CANON = load_canon()
FORMAT = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u202c",
          "\u2066", "\u2069", "\u200e", "\u200f"]


def outcomes(result: Any) -> list[tuple[str, str | None]]:
    return [(r.ausgang, r.grund) for r in result.ergebnisse]


def entities_named(pair: Pair, name: str) -> list[dict[str, Any]]:
    return pair.cypher(
        "MATCH (e:Entitaet {user_id: $u}) WHERE e.name_norm = $n RETURN e.id AS id, e.name AS name",
        u=pair.user_id, n=normalize_name(name),
    )


def typ_of(pair: Pair, name: str) -> str:
    return str(pair.mappe(name).typ)


def check(pair: Pair, name: str) -> Any:
    report = pair.store.run(pair.store.memory.check(pair.user_id))
    (found,) = [c for c in report.checks if c.name == name]
    return found


# -- case 1: a self-reference never splits an entity --------------------------------


def test_case_1_a_self_reference_with_a_new_name_is_rejected_and_creates_nothing(
    pair: Pair,
) -> None:
    result = pair.write(t("Lena", "wohnt_in", "Lena"))
    assert outcomes(result) == [("abgelehnt", "selbstbezug")]
    assert entities_named(pair, "Lena") == []
    # The same triple once Lena exists: the same answer.
    pair.write(t("Lena", "hobby", wert="Lesen"))
    assert outcomes(pair.write(t("Lena", "wohnt_in", "lena "))) == [("abgelehnt", "selbstbezug")]
    assert len(entities_named(pair, "Lena")) == 1
    assert pair.write(t("Lena", "hobby", wert="Schach")).ergebnisse[0].ausgang == "geschrieben"


@pytest.mark.parametrize(
    ("subjekt", "objekt"),
    [("Max", "MAX"), ({"neu": "Max"}, "Max"), ("Max", {"neu": "Max"}), ("Ma\u200bx", "Max")],
)
def test_every_form_of_a_self_reference_is_rejected(pair: Pair, subjekt: Any, objekt: Any) -> None:
    result = pair.write(t(subjekt, "partner", objekt))
    assert outcomes(result) == [("abgelehnt", "selbstbezug")]
    assert entities_named(pair, "Max") == []
    pair.write(t("Max", "hobby", wert="Rudern"))
    by_id = {"id": pair.id_of("Max")}
    assert outcomes(pair.write(t(by_id, "partner", "Max"))) == [("abgelehnt", "selbstbezug")]


def test_within_an_order_a_name_is_one_entity_in_every_role(pair: Pair) -> None:
    result = pair.write(
        t("Tom", "partner", "Anna"),
        t("Anna", "wohnt_in", "Kassel"),
        t("Ben", "befreundet_mit", "anna"),
    )
    assert {r.ausgang for r in result.ergebnisse} == {"geschrieben"}
    assert len(entities_named(pair, "Anna")) == 1
    assert len({r.subjekt_id for r in result.ergebnisse[1:2]} | {
        result.ergebnisse[0].objekt_id, result.ergebnisse[2].objekt_id}) == 1


def test_a_second_entity_of_a_name_comes_only_from_neu(pair: Pair) -> None:
    pair.write(t("Anna", "wohnt_in", "Berlin"))
    result = pair.write(t({"neu": "Anna"}, "wohnt_in", "Kassel"), t("Tom", "partner", "Anna"))
    assert outcomes(result) == [("geschrieben", None), ("mehrdeutig", "mehrdeutig")]
    assert len(entities_named(pair, "Anna")) == 2


# -- case 2: types both ways ----------------------------------------------------------


def test_case_2a_a_class_is_checked_against_the_facts(pair: Pair) -> None:
    first = pair.write(t("Rex", "beruf", wert="Polizeihund"))
    assert typ_of(pair, "Rex") == "person"  # only a person has a beruf
    result = pair.write(t("Rex", "ist_ein", wert="Hund"))
    (r,) = result.ergebnisse
    assert (r.ausgang, r.grund) == ("abgelehnt", "typkonflikt")
    assert r.konflikt == first.ergebnisse[0].fakt_id
    assert "Rex ist von Beruf Polizeihund" in (r.meldung or "")
    assert typ_of(pair, "Rex") == "person"


def test_case_2b_typ_and_ist_ein_name_the_same_conflict(pair: Pair) -> None:
    wohnt = pair.write(t("Tom", "wohnt_in", "Kassel")).ergebnisse[0].fakt_id
    by_typ = pair.write(t("Kassel", "typ", wert="person")).ergebnisse[0]
    by_class = pair.write(t("Kassel", "ist_ein", wert="Hund")).ergebnisse[0]
    for r in (by_typ, by_class):
        assert (r.ausgang, r.grund, r.konflikt) == ("abgelehnt", "typkonflikt", wohnt)
        assert "Tom wohnt in Kassel" in (r.meldung or "")
    assert typ_of(pair, "Kassel") == "ort"


def test_case_2c_sonstiges_never_conflicts_in_one_order_or_two(pair: Pair) -> None:
    one = pair.write(t("Minka", "typ", wert="sonstiges"), t("Minka", "ist_ein", wert="Katze"))
    assert [r.ausgang for r in one.ergebnisse] == ["geschrieben", "geschrieben"]
    assert typ_of(pair, "Minka") == "tier"
    pair.write(t("Mohrle", "typ", wert="sonstiges"))
    two = pair.write(t("Mohrle", "ist_ein", wert="Katze"))
    assert two.ergebnisse[0].ausgang == "geschrieben" and typ_of(pair, "Mohrle") == "tier"
    # "No specific type yet" does not replace a specific type either.
    kept = pair.write(t("Mohrle", "typ", wert="sonstiges")).ergebnisse[0]
    assert (kept.ausgang, kept.fakt_id) == ("unveraendert", None)
    assert typ_of(pair, "Mohrle") == "tier"


def test_a_new_type_without_contradicting_facts_supersedes_the_old(pair: Pair) -> None:
    pair.write(t("Saturn", "typ", wert="ort"))
    assert pair.write(t("Saturn", "typ", wert="objekt")).ergebnisse[0].ausgang == "abgeloest"
    assert typ_of(pair, "Saturn") == "objekt"


def test_a_type_told_for_a_time_before_a_later_type_is_history(pair: Pair) -> None:
    """Y3 is a tier from 2020; told that it was an objekt in 2018, that value is filed
    as history until 2020 (it was refused: the rule that a later type blocks a new one
    is for facts that hold on into the later type's time). Its type stays tier; as of
    2019 it is objekt. In the same order, a fact of 2018 that holds on into 2020 must
    fit tier too: "ist ein Auto" is refused, naming the tier."""
    tier = pair.write(t("Y3", "typ", wert="tier"), zeitpunkt="2020-01-01T00:00:00Z")
    late = pair.write(t("Y3", "typ", wert="objekt"), zeitpunkt="2018-01-01T00:00:00Z")
    assert outcomes(late) == [("nachgetragen", None)]
    assert typ_of(pair, "Y3") == "tier"
    assert pair.mappe("Y3", gueltig_am=date(2019, 1, 1)).typ == "objekt"
    assert pair.mappe("Y3", gueltig_am=date(2021, 1, 1)).typ == "tier"
    car = pair.write(t("Y3", "typ", wert="objekt"), t("Y3", "ist_ein", wert="Auto"),
                       zeitpunkt="2018-06-01T00:00:00Z")
    assert outcomes(car)[1] == ("abgelehnt", "typkonflikt")
    assert car.ergebnisse[1].konflikt == tier.ergebnisse[0].fakt_id
    assert typ_of(pair, "Y3") == "tier"
    check_clean(pair)


def test_a_fact_told_now_fits_the_type_now_and_the_type_to_come(pair: Pair) -> None:
    """Bello is a tier until a day ahead, an objekt from then. A fact told now holds on
    through both: "wohnt in Kassel" (person, tier or organisation) is refused, naming
    the type to come and its day; "ist ein Auto" makes Bello an objekt from now (it
    wrote no type: the writer took the type to come for the type now, and left a tier
    that was a car)."""
    pair.write(t("Bello", "typ", wert="tier"), zeitpunkt="2026-01-01T00:00:00Z")
    ahead = pair.write(t("Bello", "typ", wert="objekt", ereignis={
        "titel": "Umbau", "typ": "ereignis", "beginn": "2099-01-01", "genauigkeit": "tag"}))
    home = pair.write(t("Bello", "wohnt_in", "Kassel"))
    assert outcomes(home) == [("abgelehnt", "typkonflikt")]
    assert home.ergebnisse[0].konflikt == ahead.ergebnisse[0].fakt_id
    assert "is a objekt from 2099-01-01" in (home.ergebnisse[0].meldung or "")
    # A class of the type now, against the type to come: the message names it as such
    # (it said "Bello cannot be a tier: it contradicts the fact 'Bello ist vom Typ
    # objekt'", of a tier).
    dog = pair.write(t("Bello", "ist_ein", wert="Hund")).ergebnisse[0]
    assert (dog.ausgang, dog.konflikt) == ("abgelehnt", ahead.ergebnisse[0].fakt_id)
    assert (dog.meldung or "").startswith(
        "Bello is a objekt from 2099-01-01"), dog.meldung
    assert "would make it a tier on into that time" in (dog.meldung or "")
    car = pair.write(t("Bello", "ist_ein", wert="Auto"))
    assert outcomes(car) == [("geschrieben", None)] and car.ergebnisse[0].typ_fakten
    assert typ_of(pair, "Bello") == "objekt"
    check_clean(pair)


def ahead(titel: str, beginn: str) -> dict[str, Any]:
    """An event on a day (the day's precision)."""
    return {"titel": titel, "typ": "ereignis", "beginn": beginn, "genauigkeit": "tag"}


def test_after_a_typ_correction_the_order_goes_on_with_the_type_that_holds_now(
    pair: Pair,
) -> None:
    """A review of the change above: Kassel is an organisation until 2040 and an ort
    from then, with an objekt told late for 2030-2040. A correction of the objekt
    brings the organisation back until 2040; the order went on with the active type
    (the ort to come), so "Lena wohnt in Kassel" in the same order was written, where
    alone it is refused. And a refusal named the type to come as the fact to correct."""
    org = pair.write(t("Kassel", "typ", wert="organisation")).ergebnisse[0].fakt_id
    pair.write(t("Kassel", "typ", wert="ort", ereignis=ahead("Stadtrecht", "2040-01-01")))
    late = pair.write(t("Kassel", "typ", wert="objekt", ereignis=ahead("Modell", "2030-01-01")))
    assert outcomes(late) == [("nachgetragen", None)]
    order = pair.order(t("Lena", "wohnt_in", "Kassel"))
    order["berichtigungen"] = [{"subjekt": "Kassel", "beziehung": "typ", "wert": "objekt",
                                "herkunft": "mensch"}]
    result = pair.store.run(pair.store.memory.write(order))
    assert outcomes(result) == [("berichtigt", None), ("abgelehnt", "typkonflikt")]
    assert result.ergebnisse[1].konflikt == org
    assert "Kassel is a organisation" in (result.ergebnisse[1].meldung or "")
    assert typ_of(pair, "Kassel") == "organisation"
    check_clean(pair)


def test_a_type_only_a_corrected_fact_implied_goes_though_a_type_to_come_follows_it(
    pair: Pair,
) -> None:
    """A review of the change above: Max is a person only by what "Max wohnt in Kassel"
    carried, and a tier from 2030. The correction of that fact retired only the
    active type (the tier to come), so the person stayed, and the Mappe, which reads
    the type that holds now, said so: a type only a fact that never held had said."""
    told = pair.write({**t("Max", "wohnt_in", "Kassel"), "typ": "person"})
    person = told.ergebnisse[0].typ_fakten[-1]
    pair.write(t("Max", "typ", wert="tier", ereignis=ahead("Verwandlung", "2030-01-01")))
    assert typ_of(pair, "Max") == "person"
    result = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Max", beziehung="wohnt_in", objekt="Kassel",
        herkunft="mensch"))
    assert person in result.ergebnisse[0].abgeloest
    # Nothing holds now: before the first value, the first.
    assert typ_of(pair, "Max") == "tier"
    check_clean(pair)


def test_a_new_type_is_checked_against_a_value_that_holds_until_a_day_ahead(
    pair: Pair,
) -> None:
    """Lena lives in Kassel until she moves to Paris in 2099 ("noch bis"): Kassel is an
    ort until then. "Kassel is an organisation" was written (the check read only
    active facts, and that one is superseded from a day ahead)."""
    home = pair.write(t("Lena", "wohnt_in", "Kassel"), zeitpunkt="2026-01-01T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Paris", ereignis=ahead("Umzug", "2099-01-01")))
    result = pair.write(t("Kassel", "typ", wert="organisation"))
    assert outcomes(result) == [("abgelehnt", "typkonflikt")]
    assert result.ergebnisse[0].konflikt == home.ergebnisse[0].fakt_id
    assert typ_of(pair, "Kassel") == "ort"


@pytest.mark.parametrize("how", ["cancel", "move"])
def test_a_cancel_or_move_that_brings_back_a_contradicted_type_is_refused(
    pair: Pair, how: str
) -> None:
    """A stranger's attack: Bello is a tier from 2020 and an objekt from an event in
    2025, and "Lena besitzt Bello" (an objekt) was written since. Cancelling the event
    brought the tier back (and moving it to 2099 made the tier hold now) while that
    fact stood: `kg check` saw the contradiction, and an export of the store was
    refused by `kg import`. Refused now, as a correction of that type is."""
    pair.write(t("Bello", "typ", wert="tier"), zeitpunkt="2020-01-01T00:00:00Z")
    event = pair.write(t("Bello", "typ", wert="objekt", ereignis=ahead("Umbau", "2025-01-01")))
    entry = event.ergebnisse[0].timeline_id
    assert entry is not None
    owns = pair.write(t("Lena", "besitzt", "Bello")).ergebnisse[0].fakt_id
    memory = pair.store.memory
    with pytest.raises(TimelineError, match="would make Bello a tier while the fact") as no:
        if how == "cancel":
            pair.store.run(memory.timeline_cancel(pair.user_id, "nova", entry))
        else:
            pair.store.run(memory.timeline_move(pair.user_id, "nova", entry, date(2099, 1, 1)))
    assert owns in str(no.value)
    assert typ_of(pair, "Bello") == "objekt"
    check_clean(pair)


@pytest.mark.parametrize("corrected", ["typ", "ist_ein"])
def test_a_correction_that_brings_back_a_contradicted_type_is_refused(
    pair: Pair, corrected: str
) -> None:
    """A second stranger's attack: Bello an objekt from 2020 and a tier from 2025 (by a
    `typ`, or by "ist ein Hund"), then "Bello wohnt in Kassel", which a tier may and an
    objekt may not. Correcting the tier brought the objekt back beside that fact: `kg
    check` failed, and the store's export could not be imported. Refused now, as a
    cancel of it is; nothing of the correction is written."""
    pair.write(t("Bello", "typ", wert="objekt"), zeitpunkt="2020-01-01T00:00:00Z")
    told = (t("Bello", "typ", wert="tier") if corrected == "typ"
            else t("Bello", "ist_ein", wert="Hund"))
    pair.write(told, zeitpunkt="2025-01-01T00:00:00Z")
    home = pair.write(t("Bello", "wohnt_in", "Kassel")).ergebnisse[0].fakt_id
    wert = "tier" if corrected == "typ" else "Hund"
    result = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Bello", beziehung=corrected, wert=wert,
        herkunft="mensch"))
    assert outcomes(result) == [("abgelehnt", "typkonflikt")]
    assert result.ergebnisse[0].konflikt == home
    assert "would make Bello a objekt while the fact" in (result.ergebnisse[0].meldung or "")
    assert typ_of(pair, "Bello") == "tier"
    check_clean(pair)


def test_a_type_another_fact_carried_stays_when_the_fact_that_implied_it_goes(
    pair: Pair,
) -> None:
    """A stranger's attack: Kassel is an ort by "Lena wohnt in Kassel", and by what
    "Kassel hat Dom" carried in its `typ` field. Correcting Lena's home retired the ort
    (the order's state read the facts that imply a type, not the ones that carried
    one), and Kassel read sonstiges."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    pair.write({**t("Kassel", "hat", wert="Dom"), "typ": "ort"})
    result = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Lena", beziehung="wohnt_in", objekt="Kassel",
        herkunft="mensch"))
    assert len(result.ergebnisse[0].abgeloest) == 1  # the fact, and no type
    assert typ_of(pair, "Kassel") == "ort"
    check_clean(pair)


@pytest.mark.parametrize("told", ["ahead", "now"])
def test_no_specific_type_told_for_a_later_time_never_replaces_one(
    pair: Pair, told: str
) -> None:
    """A stranger's attack: "Rex is sonstiges" (no specific type yet) from an event in
    2099, then "Rex is a tier" now: the tier was filed as history until 2099, and from
    then Rex read sonstiges. Told sonstiges now and a tier since 2020, the type now was
    sonstiges. Rule 4: sonstiges never replaces a specific type. It ends where it
    begins now (superseded by the type), and the type holds on."""
    if told == "ahead":
        unknown = pair.write(t("Rex", "typ", wert="sonstiges", ereignis=ahead("X", "2099-01-01")))
        tier = pair.write(t("Rex", "typ", wert="tier"))
        later = date(2099, 6, 1)
    else:
        unknown = pair.write(t("Rex", "typ", wert="sonstiges"))
        tier = pair.write(t("Rex", "typ", wert="tier"), zeitpunkt="2020-01-01T00:00:00Z")
        later = date(2021, 6, 1)
    assert outcomes(tier) == [("abgeloest", None)]
    assert tier.ergebnisse[0].abgeloest == [unknown.ergebnisse[0].fakt_id]
    assert typ_of(pair, "Rex") == "tier"
    assert pair.mappe("Rex", gueltig_am=later).typ == "tier"
    check_clean(pair)


def test_no_specific_type_comes_back_after_a_specific_one_by_a_take_back(pair: Pair) -> None:
    """A second stranger's attack: X sonstiges from 2022, a tier from 2020 (which
    supersedes it where it begins), a person from 2010 (told late, up to the tier); then
    the tier corrected away. The take-back brought back both values the tier had ended,
    and the sonstiges held from 2022 again, after the person: X read sonstiges now, and
    `kg check` was clean. Rule 4 holds here too: the person holds on, and the sonstiges
    stays superseded where it begins, by the person."""
    unknown = pair.write(t("X", "typ", wert="sonstiges"), zeitpunkt="2022-01-01T00:00:00Z")
    pair.write(t("X", "typ", wert="tier"), zeitpunkt="2020-01-01T00:00:00Z")
    person = pair.write(t("X", "typ", wert="person"), zeitpunkt="2010-01-01T00:00:00Z")
    assert outcomes(person) == [("nachgetragen", None)]
    result = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="X", beziehung="typ", wert="tier", herkunft="mensch"))
    assert outcomes(result) == [("berichtigt", None)]
    assert result.ergebnisse[0].wieder_gueltig == [person.ergebnisse[0].fakt_id]
    assert typ_of(pair, "X") == "person"
    assert pair.mappe("X", gueltig_am=date(2023, 6, 1)).typ == "person"
    assert pair.mappe("X", gueltig_am=date(2015, 6, 1)).typ == "person"
    [stored] = pair.cypher(
        "MATCH ()-[r:TYP {id: $id}]->() WHERE r.t_expired IS NULL"
        " RETURN r.aktiv AS aktiv, r.grund AS grund,"
        " r.t_invalid = r.t_valid AS squeezed, r.abgeloest_durch AS durch",
        id=unknown.ergebnisse[0].fakt_id)
    assert stored == {"aktiv": False, "grund": "abgeloest", "squeezed": True,
                      "durch": [person.ergebnisse[0].fakt_id]}
    check_clean(pair)


@pytest.mark.parametrize("when", ["past", "ahead"])
def test_before_the_first_type_the_first_that_holds_somewhere(pair: Pair, when: str) -> None:
    """The types' oracle: a sonstiges of March (the month), an objekt from June, then a
    tier of March told late: it squeezes the sonstiges (both begin on the 1st) and ends
    where the objekt begins. Before March the type is the first that holds somewhere:
    the tier. It was one of the two by the order of two equal starts, so a type that
    never held was read (the sonstiges). Several entities, so that either order of the
    store's is met; as of a day before (past), and now, in the Mappe, the entity list
    and the writer, for types to come (ahead)."""
    year = 2020 if when == "past" else 2099
    month = {"titel": "Umzug", "beginn": f"{year}-03-01", "genauigkeit": "monat"}
    names = [f"Rex{i}" for i in range(6)]
    for name in names:
        pair.write(t(name, "typ", wert="sonstiges", ereignis=month))
        pair.write(t(name, "typ", wert="objekt", ereignis=ahead("Verkauf", f"{year}-06-01")))
        told = pair.write(t(name, "typ", wert="tier", ereignis=month))
        assert outcomes(told) == [("nachgetragen", None)]
    before = {"gueltig_am": date(year, 1, 1)} if when == "past" else {}
    assert {n: pair.mappe(n, **before).typ for n in names} == {n: "tier" for n in names}
    if when == "ahead":
        listed = {e.name: e.typ for e in pair.store.run(pair.store.memory.entities(
            pair.user_id, "nova"))}
        assert {n: listed[n] for n in names} == {n: "tier" for n in names}
        # The writer's: no sonstiges replaces the tier he is now.
        told = pair.write(*(t(n, "typ", wert="sonstiges") for n in names))
        assert [(r.ausgang, r.meldung) for r in told.ergebnisse] == [
            ("unveraendert", f"{n} is a tier; sonstiges does not replace a type")
            for n in names]
    check_clean(pair)


def test_a_type_squeezed_to_nothing_is_not_the_type_before_the_first(pair: Pair) -> None:
    """Two types told for one day ahead: the first ends where it begins (squeezed), the
    second holds from that day. Before the day nothing holds, and the first value is the
    one that will (both begin at once: the read took either)."""
    pair.write(t("Max", "typ", wert="tier", ereignis=ahead("A", "2030-01-01")))
    pair.write(t("Max", "typ", wert="person", ereignis=ahead("B", "2030-01-01")))
    assert typ_of(pair, "Max") == "person"
    assert pair.write(t("Max", "beruf", wert="Arzt")).ergebnisse[0].ausgang == "geschrieben"


@pytest.mark.parametrize("role", ["subjekt", "objekt"])
def test_a_type_given_to_an_entity_named_by_id_is_checked_against_its_facts(
    pair: Pair, role: str
) -> None:
    """The state reads the facts a type is checked against for an entity the order
    names by id as for one it names by name."""
    pair.write(t("Bello", "wohnt_in", "Kassel"))  # a person, a tier or an organisation
    bello = {"id": pair.id_of("Bello")}
    given = t(bello, "typ", wert="objekt") if role == "subjekt" else t("Lena", "besitzt", bello)
    result = pair.write(given)  # an objekt wohnt nirgends
    assert outcomes(result) == [("abgelehnt", "typkonflikt")]
    assert "Bello wohnt in Kassel" in (result.ergebnisse[0].meldung or "")


def test_a_stored_sonstiges_type_is_no_type_when_a_new_one_is_checked(pair: Pair) -> None:
    """"No specific type" is stored as a type fact; the state query must still read the
    facts a new type is checked against (it compares the claim with the stored value)."""
    pair.write(t("Mohrle", "typ", wert="sonstiges"))
    pair.write(t("Mohrle", "wohnt_in", "Kassel"))  # a person, a tier or an organisation
    result = pair.write(t("Mohrle", "typ", wert="objekt"))
    assert outcomes(result) == [("abgelehnt", "typkonflikt")]
    assert "Mohrle wohnt in Kassel" in (result.ergebnisse[0].meldung or "")


def test_an_object_type_is_checked_against_the_objects_facts(pair: Pair) -> None:
    pair.write(t("Bello", "wohnt_in", "Kassel"))  # a person, a tier or an organisation
    result = pair.write(t("Lena", "besitzt", "Bello"))  # would make Bello an objekt
    assert outcomes(result) == [("abgelehnt", "typkonflikt")]
    assert "Bello wohnt in Kassel" in (result.ergebnisse[0].meldung or "")


def test_a_relation_with_one_subject_type_implies_it(pair: Pair) -> None:
    result = pair.write(t("Lena", "beruf", wert="Ärztin"))
    assert len(result.ergebnisse[0].typ_fakten) == 1
    assert pair.mappe("Lena").typ == "person"
    from kg.mappe import render

    assert render(pair.mappe("Lena")).startswith("Lena (person)")


# -- case 3: a triple carries its subject's type ------------------------------------


def test_case_3_a_triple_carries_its_subjects_type(pair: Pair) -> None:
    result = pair.write(t("Lena", "wohnt_in", "Kassel", typ="person", herkunft="modell"))
    (r,) = result.ergebnisse
    assert r.ausgang == "geschrieben" and len(r.typ_fakten) == 2  # Kassel ort, Lena person
    assert typ_of(pair, "Lena") == "person"
    rows = pair.cypher(
        "MATCH (e:Entitaet {user_id: $u, name: 'Lena'})-[r:TYP]->(w) RETURN r.herkunft AS h",
        u=pair.user_id)
    assert rows == [{"h": "modell"}]
    # Agreeing: nothing more is written.
    again = pair.write(t("Lena", "hobby", wert="Lesen", typ="person"))
    assert again.ergebnisse[0].typ_fakten == []


@pytest.mark.parametrize(
    ("triple", "grund"),
    [
        (t("Rex", "beruf", wert="Wachhund", typ="tier"), "typkonflikt"),
        (t("Tom", "wohnt_in", "Berlin", typ="ort"), "typkonflikt"),
        (t("Kassel", "hobby", wert="Lesen", typ="drache"), "ungueltiger_typ"),
    ],
)
def test_a_triples_typ_is_checked_like_any_type(pair: Pair, triple: dict[str, Any],
                                                 grund: str) -> None:
    result = pair.write(triple)
    assert outcomes(result) == [("abgelehnt", grund)]
    assert "function-after" not in (result.ergebnisse[0].meldung or "")


def test_a_triples_typ_must_agree_with_the_known_type(pair: Pair) -> None:
    pair.write(t("Bello", "ist_ein", wert="Hund"))
    result = pair.write(t("Bello", "begleitet", "Lena", typ="person"))
    assert outcomes(result) == [("abgelehnt", "typkonflikt")]


# -- case 4: liegt_in is mehrwertig --------------------------------------------------


def test_case_4_a_town_lies_in_its_region_and_its_country(pair: Pair) -> None:
    pair.write(t("Kassel", "liegt_in", "Hessen"))
    result = pair.write(t("Kassel", "liegt_in", "Deutschland"))
    assert result.ergebnisse[0].ausgang == "geschrieben" and result.ergebnisse[0].abgeloest == []
    kassel = pair.mappe("Kassel")
    assert kassel.historie == []
    assert {f.objekt.name for f in kassel.fakten if f.objekt and f.subjekt.name == "Kassel"} == {
        "Hessen", "Deutschland"}
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    assert {d.objekt.name for d in pair.mappe("Lena").abgeleitet} == {"Hessen", "Deutschland"}


def test_every_relation_of_the_canon_gives_the_reason_for_its_cardinality() -> None:
    from importlib import resources

    text = resources.files("kg").joinpath("kanon.toml").read_text("utf-8")
    for block in text.split("[[relation]]")[1:]:
        kind = "einwertig" if "einwertig = true" in block else "mehrwertig"
        assert f"# {kind}" in block, block


# -- case 5: no cycles in transitive relations --------------------------------------


def test_case_5_a_cycle_is_rejected_and_the_message_names_the_path(pair: Pair) -> None:
    pair.write(t("Kassel", "liegt_in", "Hessen"), t("Hessen", "liegt_in", "Erde"))
    result = pair.write(t("Erde", "liegt_in", "Kassel"))
    (r,) = result.ergebnisse
    assert (r.ausgang, r.grund) == ("abgelehnt", "zyklus")
    assert "Kassel liegt in Hessen, Hessen liegt in Erde" in (r.meldung or "")
    assert "Kassel" not in {d.objekt.name for d in pair.mappe("Kassel").abgeleitet}
    assert not any(f.subjekt.name == "Erde" for f in pair.mappe("Kassel").fakten)


def test_a_cycle_within_one_order_is_rejected(pair: Pair) -> None:
    result = pair.write(
        t("A-Stadt", "liegt_in", "B-Land"),
        t("B-Land", "liegt_in", "C-Welt"),
        t("C-Welt", "liegt_in", "A-Stadt"),
    )
    assert outcomes(result)[2] == ("abgelehnt", "zyklus")
    assert [o for o, _ in outcomes(result)[:2]] == ["geschrieben", "geschrieben"]


def test_cycles_are_per_pair(pair: Pair) -> None:
    pair.write(t("Kassel", "liegt_in", "Hessen"))
    other = pair.other("luna")
    assert other.write(t("Hessen", "liegt_in", "Kassel")).ergebnisse[0].ausgang == "geschrieben"


def test_the_type_and_cycle_checks_cost_no_round_trip(pair: Pair) -> None:
    db = pair.store.memory.db
    before = db.round_trips
    pair.write(t("Kassel", "liegt_in", "Hessen"), t("Lena", "wohnt_in", "Kassel"))
    pair.write(t("Lena", "beruf", wert="Ärztin"))
    assert db.round_trips - before == 4  # order_state and order_apply, twice


# -- case 6: the idempotency key belongs to the pair ------------------------------------


def test_case_6_two_pairs_may_use_the_same_auftrag_id(pair: Pair) -> None:
    luna = pair.other("luna")
    first = luna.write(t("Lena", "hobby", wert="Geheimnis"), auftrag_id="turn-1")
    assert first.status == "ok"
    own = pair.write(t("Lena", "hobby", wert="Lesen"), auftrag_id="turn-1")
    assert own.status == "ok" and not own.wiederholt
    assert [f.wert for f in pair.mappe("Lena").fakten] == ["Lesen"]
    # A replay in the pair is its own order again; other content is refused without a
    # word about luna's order.
    assert pair.write(t("Lena", "hobby", wert="Lesen"), auftrag_id="turn-1").wiederholt
    with pytest.raises(InvalidInput) as refused:
        pair.write(t("Lena", "hobby", wert="Schach"), auftrag_id="turn-1")
    message = str(refused.value)
    assert "Geheimnis" not in message and "luna" not in message
    stored = pair.cypher(
        "MATCH (a:Auftrag {user_id: $u, id: 'turn-1'}) RETURN a.character_id AS c, "
        "a.erfasst AS at ORDER BY c", u=pair.user_id)
    assert [s["c"] for s in stored] == ["luna", "nova"]
    luna_at, nova_at = (s["at"].to_native() for s in stored)
    # The refusal names the pair's own order, never luna's (to the microsecond).
    assert nova_at.strftime("%H:%M:%S.%f") in message.replace("000+", "+")
    assert luna_at.strftime("%H:%M:%S.%f") not in message.replace("000+", "+")


# -- case 7: invisible characters make no new entity ---------------------------------


def test_case_7_format_characters_are_stripped_from_names(pair: Pair) -> None:
    pair.write(t("Lena", "hobby", wert="Lesen"))
    result = pair.write(t("Le\u200bna", "hobby", wert="Schach"),
                        t("\u202eLena\u202c", "beruf", wert="Ärztin"))
    assert {r.subjekt_id for r in result.ergebnisse} == {pair.id_of("Lena")}
    assert result.ergebnisse[0].neue_entitaeten == []
    created = pair.write(t("Kas\u00adsel\u200d", "liegt_in", "Hes\u2066sen"))
    assert {e["name"] for e in pair.cypher(
        "MATCH (e:Entitaet {user_id: $u}) RETURN e.name AS name", u=pair.user_id)} == {
        "Lena", "Kassel", "Hessen"}
    assert created.ergebnisse[0].ausgang == "geschrieben"
    invisible = pair.write(t("\u200b\u202e", "hobby", wert="x"))
    assert outcomes(invisible) == [("abgelehnt", "name_leer")]


VISIBLE = st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=12)


def sprinkle(text: str, marks: list[tuple[int, str]]) -> str:
    out = list(text)
    for pos, mark in sorted(marks, reverse=True):
        out.insert(pos % (len(out) + 1), mark)
    return "".join(out)


@given(VISIBLE, st.lists(st.tuples(st.integers(0, 20), st.sampled_from(FORMAT)), max_size=5))
def test_names_differing_only_in_format_characters_have_one_key(
    name: str, marks: list[tuple[int, str]]
) -> None:
    dirty = sprinkle(name, marks)
    assert normalize_name(dirty) == normalize_name(name)
    assert not any(unicodedata.category(c) == "Cf" for c in clean_name(dirty))


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=VISIBLE, marks=st.lists(st.tuples(st.integers(0, 20), st.sampled_from(FORMAT)),
                                    min_size=1, max_size=4))
def test_names_differing_only_in_format_characters_resolve_to_one_entity(
    pair: Pair, name: str, marks: list[tuple[int, str]]
) -> None:
    user = Pair(pair.store, f"{pair.user_id}-h{uuid.uuid4().hex[:6]}")
    try:
        first = user.write(t(name, "hobby", wert="Lesen")).ergebnisse[0]
        second = user.write(t(sprinkle(name, marks), "hobby", wert="Schach")).ergebnisse[0]
        assume_ok = first.ausgang == "geschrieben"
        if assume_ok:
            assert second.subjekt_id == first.subjekt_id and second.neue_entitaeten == []
            found = user.store.run(user.store.memory.resolve(user.user_id, "nova",
                                                             sprinkle(name, marks[::-1])))
            assert found.entitaet is not None and found.entitaet.id == first.subjekt_id
    finally:
        user.store.run(user.store.memory.purge(user.user_id))


# -- case 8: kg correct requires --herkunft, the library builds the order -------------


def test_case_8_kg_correct_requires_herkunft(pair: Pair) -> None:
    pair.write(t("Mittelmeer", "ist_ein", wert="Ozean"))
    runner = CliRunner()
    help_text = runner.invoke(app, ["correct", "--help"], terminal_width=200).output
    assert "--herkunft" in help_text and "mensch]" not in help_text
    base = ["correct", "-u", pair.user_id, "-c", "nova", "--subjekt", "Mittelmeer",
            "--beziehung", "ist_ein", "--wert", "Ozean", "--neu-wert", "Nebenmeer"]
    missing = runner.invoke(app, base)
    assert missing.exit_code == 2 and "herkunft" in missing.output
    assert [f.wert for f in pair.mappe("Mittelmeer").fakten] == ["Ozean"]
    wrong = runner.invoke(app, [*base, "--herkunft", "gerücht"])
    assert wrong.exit_code == 2 and "herkunft" in wrong.output
    done = runner.invoke(app, [*base, "--herkunft", "recherche"])
    assert done.exit_code == 0, done.output
    facts = pair.mappe("Mittelmeer").fakten
    assert [(f.wert, f.herkunft) for f in facts] == [("Nebenmeer", "recherche")]


def test_a_corrections_notiz_and_herkunft_are_kept_in_the_audit_and_the_export(
    pair: Pair, tmp_path: Path
) -> None:
    """Found by a stranger's attack: `--notiz` ("kept in the audit") and, without a
    replacement, `--herkunft` ("the herkunft of the correction") were thrown away: the
    command said ok, and neither was in the audit or an export. The correction's result
    keeps both (the audit's `ergebnis`, which a replay returns and an export carries)."""
    import json

    pair.write(t("A", "beruf", wert="Koch"))
    runner = CliRunner()
    done = runner.invoke(app, [
        "correct", "-u", pair.user_id, "-c", "nova", "--subjekt", "A", "--beziehung", "beruf",
        "--wert", "Koch", "--herkunft", "recherche", "--notiz", "NOTE-XYZ: Lena said so",
        "--auftrag-id", "n2"])
    assert done.exit_code == 0, done.output
    assert "NOTE-XYZ: Lena said so" in done.output and "recherche" in done.output
    audit = runner.invoke(app, ["audit", "-u", pair.user_id, "-c", "nova", "--json"])
    (first, *_) = json.loads(audit.stdout)
    (r,) = first["ergebnis"]["ergebnisse"]
    assert (r["ausgang"], r["notiz"], r["herkunft"]) == (
        "berichtigt", "NOTE-XYZ: Lena said so", "recherche")
    out = tmp_path / "a.jsonl"
    pair.store.run(pair.store.memory.export(out, pair.user_id, "nova"))
    assert "NOTE-XYZ" in out.read_text() and "recherche" in out.read_text()
    again = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="A", beziehung="beruf", wert="Koch",
        herkunft="recherche", notiz="NOTE-XYZ: Lena said so", auftrag_id="n2"))
    assert again.wiederholt and again.ergebnisse[0].notiz == "NOTE-XYZ: Lena said so"
    # An order of its own names who says the fact is wrong in the correction itself.
    order = pair.order(tripel=[])
    order["berichtigungen"] = [{"subjekt": "A", "beziehung": "beruf", "wert": "Koch",
                                "herkunft": "nova"}]
    refused = pair.store.run(pair.store.memory.write(order))
    assert refused.ergebnisse[0].ausgang == "abgelehnt"  # nothing left to correct
    assert refused.ergebnisse[0].herkunft == "nova"


def test_a_correction_whose_replacement_has_the_wrong_form_writes_nothing(pair: Pair) -> None:
    """Retiring the wrong fact and refusing its replacement would leave nothing where the
    caller meant to put the right value: the whole correction is refused (CLI and
    library), and says why. A triple of the same order that replaces nothing is judged
    on its own."""
    pair.write(t("Lea", "wohnt_in", "Berlin"))
    done = CliRunner().invoke(app, [
        "correct", "-u", pair.user_id, "-c", "nova", "--subjekt", "Lea", "--beziehung",
        "wohnt_in", "--objekt", "Berlin", "--herkunft", "mensch", "--neu-wert", "Hamburg"])
    assert done.exit_code == 1 and "wohnt_in needs an entity as 'objekt'" in done.output
    assert "not written: the correction's tripel[0] is refused" in done.output, done.output
    refused = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Lea", beziehung="wohnt_in", objekt="Berlin",
        neu_wert="Hamburg", herkunft="mensch"))
    assert [(r.ausgang, r.grund) for r in refused.ergebnisse] == [
        ("abgelehnt", "zusammen_abgelehnt"), ("abgelehnt", "form")], refused
    assert [f.objekt.name for f in pair.mappe("Lea").fakten if f.objekt] == ["Berlin"]
    assert [a.status for a in pair.store.run(pair.store.memory.audit(pair.user_id, "nova"))
            ] == ["abgelehnt", "abgelehnt", "ok"]
    order = correction_order(pair.user_id, "nova", subjekt="Lea", beziehung="wohnt_in",
                             objekt="Berlin", neu_objekt="Hamburg", herkunft="mensch")
    data = order.model_dump(exclude_none=True)
    data["tripel"] = [*data["tripel"], t("Lea", "wohnt_nicht_in", "Köln")]
    result = pair.store.run(pair.store.memory.write(data))
    assert [e.ausgang for e in result.ergebnisse] == ["berichtigt", "geschrieben", "abgelehnt"]
    assert [f.objekt.name for f in pair.mappe("Lea").fakten if f.objekt] == ["Hamburg"]


def test_a_correction_with_an_unknown_keyword_writes_nothing(pair: Pair) -> None:
    """Found by a black-box attack: `correct(..., neu_objeckt="Köln")` (a typo of
    `neu_objekt`) answered `berichtigt`, retired München and never wrote Köln. A keyword a
    correction does not know is refused before anything is written, by name, with the one
    meant and the keywords it takes."""
    pair.write(t("Lena", "wohnt_in", "München"))
    memory, run = pair.store.memory, pair.store.run
    with pytest.raises(InvalidInput) as refused:
        run(memory.correct(  # type: ignore[call-arg]
            pair.user_id, "nova", subjekt="Lena", beziehung="wohnt_in", objekt="München",
            herkunft="mensch", neu_objeckt="Köln"))
    words = str(refused.value)
    assert "'neu_objeckt' (did you mean 'neu_objekt'?) is not a keyword" in words
    assert "nothing was written" in words and "neu_objekt, neu_wert, zeitpunkt" in words
    assert [f.objekt.name for f in pair.mappe("Lena").fakten if f.objekt] == ["München"]
    assert len(run(memory.audit(pair.user_id, "nova"))) == 1  # the first order only
    with pytest.raises(InvalidInput, match="'extra', 'when' are not keywords"):
        correction_order(pair.user_id, "nova", subjekt="Lena",  # type: ignore[call-arg]
                         beziehung="wohnt_in", herkunft="mensch", extra="x", when="y")


def test_a_correction_and_its_replacement_of_an_unknown_relation_write_nothing(
    pair: Pair,
) -> None:
    """Both refused by the canon, so neither reaches the plan's resolution: they are
    still one correction, linked by the subject and the relation as written (by id too),
    and both are refused with their reason. A triple beside them that
    replaces nothing is written (rule 11: nothing for the refused, the rest as told)."""
    written = pair.write(t("Lea", "wohnt_in", "Berlin"))
    lea = written.ergebnisse[0].subjekt_id
    for subjekt in ("Lea", {"id": lea}):
        order = correction_order(pair.user_id, "nova", subjekt=subjekt, beziehung="wohnt_inn",
                                 objekt="Berlin", neu_objekt="Hamburg", herkunft="mensch")
        data = order.model_dump(exclude_none=True)
        data["tripel"] = [*data["tripel"], t("Lea", "hobby", wert="Schach")]
        result = pair.store.run(pair.store.memory.write(data))
        told = "geschrieben" if subjekt == "Lea" else "unveraendert"  # (told the first time)
        assert [r.ausgang for r in result.ergebnisse] == ["abgelehnt", "abgelehnt", told], result
        # (each refused for itself: both name the relation no canon has)
        assert [r.grund for r in result.ergebnisse[:2]] == ["unbekannte_beziehung"] * 2
    assert sorted(f.beziehung for f in pair.mappe("Lea").fakten) == ["hobby", "wohnt_in"]


def test_a_replacement_refused_by_its_form_is_linked_however_it_spells_its_place(
    pair: Pair,
) -> None:
    """Found by the review: a replacement refused by its form (a value too long) with
    its relation written " beruf " or "Beruf", or its subject's id with spaces around
    it, was not linked to its correction, which retired Ärztin and left nothing."""
    written = pair.write(t("Lea", "beruf", wert="Ärztin"))
    lea = written.ergebnisse[0].subjekt_id
    for subjekt, beziehung in (("Lea", " beruf "), ("Lea", "Beruf"), ({"id": f" {lea} "},
                                                                       "beruf")):
        order = pair.order()
        order["berichtigungen"] = [{"herkunft": "mensch",
                                    "subjekt": {"id": lea}, "beziehung": "beruf",
                                    "wert": "Ärztin"}]
        order["tripel"] = [{"subjekt": subjekt, "beziehung": beziehung, "wert": "x" * 2001,
                            "herkunft": "mensch"}]
        result = pair.store.run(pair.store.memory.write(order))
        assert next((r.ausgang, r.grund) for r in result.ergebnisse) == (
            "abgelehnt", "zusammen_abgelehnt"), (beziehung, result)
        assert result.status == "abgelehnt"
    assert [(f.beziehung, f.wert) for f in pair.mappe("Lea").fakten] == [("beruf", "Ärztin")]


def test_a_correction_whose_replacement_contradicts_the_entity_writes_nothing(
    pair: Pair,
) -> None:
    """Tom's type person corrected to ort: the replacement contradicts his fact "wohnt
    in Kassel" (typkonflikt: an ort lives nowhere). Retiring the type and refusing its
    replacement left Tom without one; the whole correction is refused, and says why.
    (wohnt_in takes a person, an animal or an organisation: it implies no type, so the
    correction alone would hold.)"""
    pair.write(t("Tom", "typ", wert="person"), t("Tom", "wohnt_in", "Kassel"))
    refused = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Tom", beziehung="typ", wert="person",
        neu_wert="ort", herkunft="mensch"))
    assert [(r.ausgang, r.grund) for r in refused.ergebnisse] == [
        ("abgelehnt", "zusammen_abgelehnt"), ("abgelehnt", "typkonflikt")], refused
    assert typ_of(pair, "Tom") == "person"
    done = CliRunner().invoke(app, [
        "correct", "-u", pair.user_id, "-c", "nova", "--subjekt", "Tom", "--beziehung",
        "typ", "--wert", "person", "--herkunft", "mensch", "--neu-wert", "ort"])
    assert done.exit_code == 1, done.output
    assert "not written: the correction's tripel[0] is refused" in done.output, done.output
    assert typ_of(pair, "Tom") == "person"


def test_a_replayed_correction_returns_its_first_result_after_the_canon_changed(
    pair: Pair, tmp_path: Path
) -> None:
    """A replay is answered from the audit, whatever the canon says now: a correction
    written under an extension canon whose relation was removed since comes back as its
    first result, not as an error about a relation it no longer needs to check."""
    extra = tmp_path / "kanon.toml"
    extra.write_text('[[relation]]\nname = "lieblingsfarbe_x"\nvorwaerts = "mag die Farbe"\n'
                     'rueckwaerts = "Farbe von"\neinwertig = true\nobjekt = "wert"\n',
                     encoding="utf-8")
    then = Memory(pair.store.memory.db, load_canon(extra))
    pair.store.run(then.write(pair.order(
        t("Lea", "lieblingsfarbe_x", wert="Rot", herkunft="mensch"))))
    order = correction_order(pair.user_id, "nova", subjekt="Lea",
                             beziehung="lieblingsfarbe_x", wert="Rot", neu_wert="Blau",
                             herkunft="mensch", auftrag_id="korrektur-1")
    first = pair.store.run(then.write(order))
    assert [e.ausgang for e in first.ergebnisse] == ["berichtigt", "geschrieben"]
    now = Memory(pair.store.memory.db, load_canon())
    replay = pair.store.run(now.write(order))
    assert replay.wiederholt and replay.ergebnisse == first.ergebnisse


def test_the_correction_order_is_built_in_the_library() -> None:
    order = correction_order("u", "nova", subjekt="Lena", beziehung="wohnt_in",
                             objekt="Berlin", neu_objekt="Kassel", herkunft="mensch")
    assert isinstance(order, Auftrag)
    assert order.berichtigungen[0].objekt == "Berlin"
    assert order.tripel[0].herkunft == "mensch"  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="herkunft"):
        correction_order("u", "nova", subjekt="Lena", beziehung="wohnt_in", objekt="Berlin",
                         herkunft="")
    # A zeitpunkt says when the replacement began: without one it was dropped in silence
    # (the CLI and MCP refused it, the library did not: the review).
    with pytest.raises(InvalidInput, match="zeitpunkt says when the replacement began: "
                                           "give neu_objekt or neu_wert"):
        correction_order("u", "nova", subjekt="Lena", beziehung="wohnt_in", objekt="Berlin",
                         herkunft="mensch", zeitpunkt="2026-01-01")


# -- case 9: a type implied only by a fact goes with the fact ----------------------------


def test_case_9_a_type_implied_only_by_a_corrected_fact_is_retired(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Berlin"))
    assert typ_of(pair, "Berlin") == "ort"
    result = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Lena", beziehung="wohnt_in", objekt="Berlin",
        herkunft="mensch"))
    (r,) = result.ergebnisse
    assert r.ausgang == "berichtigt" and len(r.abgeloest) == 2  # the fact, then its type
    assert typ_of(pair, "Berlin") == "sonstiges"
    assert check(pair, "fact_aktiv").ok


def test_a_type_another_fact_or_the_human_gave_stays(pair: Pair) -> None:
    pair.write(t("Lena", "wohnt_in", "Berlin"))
    pair.write(t("Tom", "wohnt_in", "Berlin"))
    pair.write(t("Anna", "wohnt_in", "Paris"))
    pair.write(t("Paris", "typ", wert="ort"))  # said on its own: not implied
    for who, where in (("Lena", "Berlin"), ("Anna", "Paris")):
        pair.store.run(pair.store.memory.correct(
            pair.user_id, "nova", subjekt=who, beziehung="wohnt_in", objekt=where,
            herkunft="mensch"))
    assert typ_of(pair, "Berlin") == "ort"  # Tom still lives there
    assert typ_of(pair, "Paris") == "ort"


def cancel(pair: Pair, eintrag_id: str | None) -> Any:
    assert eintrag_id is not None
    return pair.store.run(pair.store.memory.timeline_cancel(pair.user_id, "nova", eintrag_id))


@pytest.mark.parametrize(("beziehung", "objekt", "typ"),
                         [("hat_haustier", "Bello", "tier"), ("wohnt_in", "Berlin", "ort")])
def test_a_type_implied_only_by_a_cancelled_events_fact_is_retired(
    pair: Pair, beziehung: str, objekt: str, typ: str
) -> None:
    """A cancel and a correction take a value back by one rule (docs/time.md): a type
    that only a cancelled event's fact implied goes with it, as after a correction. It
    stayed: Bello was still a tier once "Lena gets a dog" was cancelled, and "Bello is a
    cook" was refused as a typkonflikt with a fact that never held."""
    told = pair.write(t("Lena", beziehung, objekt,
                        ereignis={"titel": "Neu", "beginn": "2026-11-20"}))
    (r,) = told.ergebnisse
    assert typ_of(pair, objekt) == typ and r.typ_fakten
    cancelled = cancel(pair, r.timeline_id)
    # The fact, then the types only it implied (the object's, and Lena's person of
    # hat_haustier), as a correction lists them.
    assert cancelled.retired[0] == r.fakt_id
    assert sorted(cancelled.retired[1:]) == sorted(r.typ_fakten)
    assert typ_of(pair, objekt) == "sonstiges"
    assert pair.write(t(objekt, "beruf", wert="Koch")).ergebnisse[0].ausgang == "geschrieben"
    assert check(pair, "fact_aktiv").ok


def test_a_cancel_keeps_a_type_stated_on_its_own_or_implied_by_a_fact_that_holds(
    pair: Pair,
) -> None:
    """Only a type the cancelled facts alone implied goes: not one stated by a `typ`
    triple (before the event, or since), nor one that a fact of the same order, not of
    the event, still implies (Max still has Bello; Tom still lives in Rom)."""
    umzug = {"titel": "Umzug", "beginn": "2026-11-20"}
    pair.write(t("Paris", "typ", wert="ort"))
    told = pair.write(
        t("Lena", "wohnt_in", "Paris", ereignis=umzug),
        t("Lena", "hat_haustier", "Bello", ereignis=umzug),
        t("Lena", "hat_haustier", "Rex", ereignis=umzug),
        t("Max", "hat_haustier", "Bello"),
        t("Anna", "wohnt_in", "Rom", ereignis={"titel": "Umzug", "beginn": "2026-12-01"}),
        t("Tom", "wohnt_in", "Rom"),
    )
    pair.write(t("Rex", "typ", wert="tier"))  # stated since
    lena, anna = told.ergebnisse[0], told.ergebnisse[4]
    cancelled = [cancel(pair, lena.timeline_id), cancel(pair, anna.timeline_id)]
    facts = [r.fakt_id for r in told.ergebnisse[:3]]
    lena_person = told.ergebnisse[1].typ_fakten[-1]  # (the object's type comes first)
    # Lena's person, implied by her pets alone, goes; no other type does.
    assert cancelled[0].retired == [*sorted(facts), lena_person]
    assert cancelled[1].retired == [anna.fakt_id]
    assert [typ_of(pair, name) for name in ("Paris", "Bello", "Rex", "Rom", "Lena")] == [
        "ort", "tier", "tier", "ort", "sonstiges"]
    assert check(pair, "fact_aktiv").ok


@pytest.mark.parametrize("how", ["correct", "cancel"])
def test_a_type_a_triple_carried_in_its_typ_field_goes_with_the_triple(
    pair: Pair, how: str, tmp_path: Path
) -> None:
    """Contract rule 5: a type a triple carried in its own `typ` field goes with that
    triple's correction or cancel (it was said of that triple). A stranger's audit
    (2026-12-07): where the relation itself implies no subject type (`wohnt_in`: a
    person, a tier or an organisation), Max stayed a tier after "Max wohnt in Kassel
    (typ tier)" was corrected or its event cancelled, and "Max beruf Koch" was refused
    as a typkonflikt with a type nothing said any more. The fact now records the type
    its triple carried (`subjekt_typ`). Kassel's type, implied, went already."""
    extra: dict[str, Any] = (
        {"ereignis": {"titel": "Umzug", "beginn": "2026-11-20"}} if how == "cancel" else {})
    told = pair.write(t("Max", "wohnt_in", "Kassel", typ="tier", **extra),
                      t("Rex", "wohnt_in", "Kassel", typ="tier"))
    (r, rex) = told.ergebnisse
    assert typ_of(pair, "Max") == "tier" and len(r.typ_fakten) == 2
    # (An export carries what the fact says of its subject: restored, it still goes.)
    memory = pair.store.memory
    pair.store.run(memory.export(tmp_path / "u.jsonl", pair.user_id))
    assert '"subjekt_typ":"tier"' in (tmp_path / "u.jsonl").read_text()
    pair.store.run(memory.purge(pair.user_id))
    pair.store.run(memory.import_file(tmp_path / "u.jsonl"))
    if how == "correct":
        taken = pair.store.run(pair.store.memory.correct(
            pair.user_id, "nova", subjekt="Max", beziehung="wohnt_in", objekt="Kassel",
            herkunft="mensch")).ergebnisse[0].abgeloest
    else:
        taken = cancel(pair, r.timeline_id).retired
    # The fact, then the type its triple carried; Kassel stays an ort (Rex lives there).
    assert taken == [r.fakt_id, r.typ_fakten[-1]], (taken, r.typ_fakten)
    assert [typ_of(pair, name) for name in ("Max", "Rex", "Kassel")] == [
        "sonstiges", "tier", "ort"]
    assert pair.write(t("Max", "beruf", wert="Koch")).ergebnisse[0].ausgang == "geschrieben"
    # Rex's typed triple corrected too: the type goes, and so does Kassel's.
    pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Rex", beziehung="wohnt_in", objekt="Kassel",
        herkunft="mensch"))
    assert [typ_of(pair, name) for name in ("Rex", "Kassel")] == ["sonstiges", "sonstiges"]
    assert rex.ausgang == "geschrieben" and check(pair, "fact_aktiv").ok
    pair.store.run(pair.store.memory.decay_run(pair.user_id))  # (no check passes without)
    report = pair.store.run(pair.store.memory.check(pair.user_id))
    assert report.ok, report.violations


@pytest.mark.parametrize("stated_first", [True, False])
def test_a_type_stated_in_the_order_of_a_fact_that_implies_it_stays_when_that_goes(
    pair: Pair, stated_first: bool
) -> None:
    """"Bello is a tier" and "Lena has the pet Bello" in one order, then the pet fact
    corrected or its event cancelled: Bello is still a tier, as the human said. The type
    looked implied (written with the fact, same order, same herkunft, never stated
    since) and went with the fact; a `typ` triple now marks its type fact stated
    (`gesagt`), in either order of the two triples."""
    typ = t("Bello", "typ", wert="tier")
    fact = t("Lena", "hat_haustier", "Bello")
    pair.write(*((typ, fact) if stated_first else (fact, typ)))
    result = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Lena", beziehung="hat_haustier", objekt="Bello",
        herkunft="mensch"))
    (r,) = result.ergebnisse
    assert r.ausgang == "berichtigt"
    assert typ_of(pair, "Bello") == "tier"
    assert typ_of(pair, "Lena") == "sonstiges"  # only implied by the pet fact: it goes
    (stated,) = pair.cypher(
        "MATCH (:Entitaet {user_id: $u, name: 'Bello'})-[r:TYP]->() RETURN r.gesagt AS g",
        u=pair.user_id)
    assert stated["g"] is True
    umzug = {"titel": "Neu", "beginn": "2026-11-20"}
    told = pair.write(t("Max", "hat_haustier", "Rex", ereignis=umzug),
                      t("Rex", "typ", wert="tier"))
    cancel(pair, told.ergebnisse[0].timeline_id)
    assert typ_of(pair, "Rex") == "tier"
    assert check(pair, "fact_fields").ok


# -- errors in plain words ------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        {"auftrag_id": "a", "user_id": "u", "character_id": "c", "tripel": [],
         "berichtigungen": [{"herkunft": "mensch",
                             "subjekt": "Le\x00na", "beziehung": "hobby", "wert": "x"}]},
        {"auftrag_id": "a", "user_id": 5, "character_id": "c", "tripel": [{}]},
        {"auftrag_id": "a\x01", "user_id": "u", "character_id": "c",
         "berichtigungen": [{"herkunft": "mensch",
                             "subjekt": {"x": 1}, "beziehung": "b", "wert": "w"}]},
        {"user_id": "u", "tripel": [{}], "extra": 1},
    ],
)
def test_order_errors_carry_no_pydantic_internals(data: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput) as error:
        parse_order(data)
    text = str(error.value)
    for internal in ("function-after", "errors.pydantic.dev", "constrained-str", "ById",
                     "Value error", "For further information", "dict[str"):
        assert internal not in text, text
    assert text.startswith("the order is invalid — ")


def test_triple_errors_carry_no_pydantic_internals() -> None:
    planner = Planner(CANON, Auftrag.model_validate({
        "auftrag_id": "a", "user_id": "u", "character_id": "c",
        "tripel": [{"subjekt": "Le\x00na", "beziehung": "hobby", "wert": "x",
                    "herkunft": "mensch"},
                   {"subjekt": 7, "beziehung": "hobby", "wert": "x", "herkunft": "mensch"}]}),
        State(), JETZT)
    for r in planner.plan():
        assert r.ausgang == "abgelehnt" and r.meldung
        assert "function-after" not in r.meldung and "ById" not in r.meldung, r.meldung
        assert r.meldung.startswith("subjekt: "), r.meldung


def test_cap_zero_is_rejected_and_gekappt_means_something_was_cut(pair: Pair) -> None:
    pair.write(*[t("Lena", "hobby", wert=h) for h in ("Lesen", "Schach", "Rudern")])
    lena = pair.id_of("Lena")
    with pytest.raises(InvalidInput, match="cap"):
        pair.store.run(pair.store.memory.mappe(pair.user_id, "nova", lena, cap=0))
    assert pair.mappe("Lena", cap=3).gekappt is False
    assert len(pair.mappe("Lena", cap=3).fakten) == 3
    assert pair.mappe("Lena", cap=2).gekappt is True
    assert pair.mappe("Lena", cap=4).gekappt is False
    cli = CliRunner().invoke(app, ["mappe", "Lena", "-u", pair.user_id, "-c", "nova",
                                   "--cap", "0"])
    assert cli.exit_code == 2 and "cap" in cli.output


def test_a_cap_beyond_the_mappes_bound_is_refused_on_every_surface(
    pair: Pair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by a black-box attack: `mappe(cap=1500)` of an entity with 2,000 hobbies ran
    Neo4j out of transaction memory and said "retry later" (`kg mappe --cap 1500`: exit 3;
    the CLI took caps up to 10,000, the library up to 10^9). Every row of the Mappe's query
    carries the near facts it collected, so its memory grows with the square of the cap:
    the library, the CLI, the MCP tool and KG_MAPPE_CAP share one bound, and a cap beyond
    it is refused before any query runs."""
    from pydantic import TypeAdapter, ValidationError

    from kg_mcp.server import CapArg

    memory, run = pair.store.memory, pair.store.run
    pair.write(t("Lena", "hobby", wert="Lesen"))
    lena = pair.id_of("Lena")
    beyond = MAPPE_CAP_MAX + 1
    for call in (memory.mappe(pair.user_id, "nova", lena, cap=beyond),
                 memory.mappen(pair.user_id, "nova", [lena], cap=beyond),
                 memory.pair(pair.user_id, "nova").mappe(lena, cap=beyond)):
        with pytest.raises(InvalidInput, match=f"at most {MAPPE_CAP_MAX:,} facts"):
            run(call)
    assert len(run(memory.mappe(pair.user_id, "nova", lena, cap=MAPPE_CAP_MAX)).fakten) == 1
    cli = CliRunner().invoke(app, ["mappe", "Lena", "-u", pair.user_id, "-c", "nova",
                                   "--cap", str(beyond)])
    assert cli.exit_code == 2, cli.output
    assert "'--cap'" in cli.output and f"equal to {MAPPE_CAP_MAX}" in cli.output, cli.output
    mcp_cap = TypeAdapter(CapArg)
    assert mcp_cap.validate_python(MAPPE_CAP_MAX) == MAPPE_CAP_MAX
    with pytest.raises(ValidationError, match=f"less than or equal to {MAPPE_CAP_MAX}"):
        mcp_cap.validate_python(beyond)
    monkeypatch.setenv("KG_MAPPE_CAP", str(beyond))
    with pytest.raises(ConfigError, match=f"KG_MAPPE_CAP: .*{MAPPE_CAP_MAX}"):
        load_settings()


def test_candidates_never_read_none(pair: Pair) -> None:
    pair.write(t("Anna", "hobby", wert="Lesen"), t({"neu": "Anna"}, "typ", wert="person"))
    found = pair.store.run(pair.store.memory.resolve(pair.user_id, "nova", "Anna"))
    assert len(found.kandidaten) == 2
    for k in found.kandidaten:
        assert all("None" not in m for m in k.merkmale), k
    result = pair.write(t("Anna", "beruf", wert="x"))
    assert all("None" not in m for k in result.ergebnisse[0].kandidaten for m in k.merkmale)
    cli = CliRunner().invoke(app, ["mappe", "Anna", "-u", pair.user_id, "-c", "nova"])
    assert cli.exit_code != 0 and "None None" not in cli.output


def test_history_of_a_foreign_id_is_entity_not_found(pair: Pair) -> None:
    other = Pair(pair.store, pair.user_id + "-other")
    try:
        other.write(t("Geheim", "hobby", wert="x"))
        foreign = other.id_of("Geheim")
        memory = pair.store.memory
        for read in (memory.mappe, memory.history):
            with pytest.raises(EntityNotFound):
                pair.store.run(read(pair.user_id, "nova", foreign))
    finally:
        pair.store.run(pair.store.memory.purge(other.user_id))


# -- kg check sees every guarded invariant ------------------------------------------------


@pytest.fixture
def planted(pair: Pair) -> Pair:
    pair.write(t("Lena", "wohnt_in", "Kassel"), t("Kassel", "liegt_in", "Hessen"),
               t("Lena", "beruf", wert="Ärztin"))
    report = pair.store.run(pair.store.memory.check(pair.user_id))
    assert all(c.ok for c in report.checks if c.item == 8), report.violations
    return pair


def plant_fact(pair: Pair, rel: str, s: str, o: str) -> None:
    pair.cypher(
        f"MATCH (s:Entitaet {{user_id: $u, name: $s}}), (o:Entitaet {{user_id: $u, name: $o}}) "
        f"CREATE (s)-[r:{rel}]->(o) SET r = {{id: randomUUID(), user_id: $u, "
        "character_id: 'nova', herkunft: 'mensch', aktiv: true, staerke_decay: 1.0, "
        "t_valid: datetime(), t_recorded: datetime(), last_touched: datetime()}",
        u=pair.user_id, s=s, o=o)


def test_check_sees_a_self_loop(planted: Pair) -> None:
    plant_fact(planted, "PARTNER", "Lena", "Lena")
    assert not check(planted, "self_loops").ok


def test_check_sees_format_namesakes(planted: Pair) -> None:
    planted.cypher("CREATE (:Entitaet {id: randomUUID(), user_id: $u, name: $n, name_norm: $k})",
                   u=planted.user_id, n="Le\u200bna", k="le\u200bna")
    found = check(planted, "format_namesakes")
    assert found.count == 1 and "lena" in found.samples[0]


def test_check_sees_a_type_that_contradicts_a_fact(planted: Pair) -> None:
    planted.cypher("MATCH (:Entitaet {user_id: $u, name: 'Kassel'})-[:TYP]->(w) "
                   "SET w.wert = 'person'", u=planted.user_id)
    found = check(planted, "type_contradicts_fact")
    assert found.count >= 1 and "WOHNT_IN" in " ".join(found.samples)


def test_check_sees_a_fact_that_contradicts_the_type_that_holds_now(planted: Pair) -> None:
    """Rex is a tier until a day ahead, an objekt from then: the tier is the type now
    (the Mappe reads it), so a fact that fits only the objekt contradicts it. The check
    compared the active type (the one to come) only."""
    planted.write(t("Rex", "typ", wert="tier"), zeitpunkt="2026-01-01T00:00:00Z")
    planted.write(t("Rex", "typ", wert="objekt", ereignis=ahead("Umbau", "2099-01-01")))
    assert check(planted, "type_contradicts_fact").ok
    plant_fact(planted, "LIEGT_IN", "Rex", "Kassel")  # an ort, organisation or objekt
    found = check(planted, "type_contradicts_fact")
    assert found.count == 1 and "(tier) vs LIEGT_IN" in found.samples[0], found


def test_check_sees_a_class_that_contradicts_the_type(planted: Pair) -> None:
    planted.write(t("Bello", "ist_ein", wert="Hund"))
    planted.cypher("MATCH (:Entitaet {user_id: $u, name: 'Bello'})-[:TYP]->(w) "
                   "SET w.wert = 'objekt'", u=planted.user_id)
    assert "IST_EIN" in " ".join(check(planted, "type_contradicts_fact").samples)


@pytest.mark.parametrize("who", ["Kassel", "Lena"])
def test_check_sees_an_entity_without_the_type_a_fact_gives_it(planted: Pair, who: str) -> None:
    """A cancel took back the type "Kassel ist eine Stadt" of its event gave beside
    "Lena wohnt in Kassel" (a second attack on types in time), and Kassel read
    sonstiges while `kg check` was clean. Planted: the type of the object of `wohnt_in`
    (an ort), or of the subject of `beruf` (a person), deleted; then only sonstiges."""
    planted.cypher("MATCH (:Entitaet {user_id: $u, name: $n})-[t:TYP]->() DELETE t",
                   u=planted.user_id, n=who)
    found = check(planted, "type_missing")
    assert found.count == 1 and found.samples[0].startswith(f"{who} (no type) vs "), found
    planted.write(t(who, "typ", wert="sonstiges"))
    assert not check(planted, "type_missing").ok


def test_sonstiges_told_for_the_day_a_type_to_come_begins_holds_nowhere(pair: Pair) -> None:
    """Rule 4 over time (the types' stress run): Rex sonstiges now, an objekt from 2099;
    "Rex sonstiges" from the objekt's day comes after it and never replaces it. It ended
    the objekt, and Rex read sonstiges from 2099."""
    pair.write(t("Rex", "typ", wert="sonstiges"))
    pair.write(t("Rex", "typ", wert="objekt", ereignis=ahead("Umbau", "2099-01-01")))
    result = pair.write(t("Rex", "typ", wert="sonstiges", ereignis=ahead("Tag", "2099-01-01")))
    said = result.ergebnisse[0]
    assert said.ausgang == "nachgetragen", result
    assert said.meldung == ("Rex ist vom Typ sonstiges holds nowhere: Rex ist vom Typ objekt "
                            "holds or begins by then, and sonstiges never replaces a type "
                            "(correct that type first, if it is wrong)"), said
    assert pair.mappe("Rex", gueltig_am=date(2099, 6, 1)).typ == "objekt"
    assert pair.mappe("Rex").typ == "sonstiges"
    assert check(pair, "sonstiges_after_type").ok


def test_check_sees_a_sonstiges_after_a_specific_type(planted: Pair) -> None:
    """Rule 4 over time: "no specific type yet" never follows a specific type. The
    types' stress run found "Rex sonstiges" for the day an objekt to come began ending
    that objekt, with `kg check` clean. Planted: Rex sonstiges now and an objekt from
    2099 (clean), then their values swapped by hand: a tier now, sonstiges from 2099."""
    planted.write(t("Rex", "typ", wert="sonstiges"))
    planted.write(t("Rex", "typ", wert="objekt", ereignis=ahead("Umbau", "2099-01-01")))
    assert check(planted, "sonstiges_after_type").ok
    planted.cypher("MATCH (:Entitaet {user_id: $u, name: 'Rex'})-[r:TYP]->(w) "
                   "WHERE r.t_expired IS NULL "
                   "SET w.wert = CASE w.wert WHEN 'sonstiges' THEN 'tier' ELSE 'sonstiges' END",
                   u=planted.user_id)
    found = check(planted, "sonstiges_after_type")
    assert found.count == 1 and "(sonstiges) after tier " in found.samples[0], found


def test_check_sees_a_type_ended_by_a_sonstiges_that_began_before_it(planted: Pair) -> None:
    """The same defect within an event's precision (a review): "Rex objekt" from 10
    March and then "Rex sonstiges" in March ended the objekt where it began, and the
    sonstiges held from the 1st: it begins before the type, which names it as its
    follower. Planted: Rex sonstiges now and an objekt from 2099 (clean), then by hand
    the objekt squeezed and followed by the sonstiges, which holds on."""
    planted.write(t("Rex", "typ", wert="sonstiges"))
    planted.write(t("Rex", "typ", wert="objekt", ereignis=ahead("Umbau", "2099-01-10")))
    assert check(planted, "sonstiges_after_type").ok
    planted.cypher(
        "MATCH (:Entitaet {user_id: $u, name: 'Rex'})-[o:TYP]->(:Wert {wert: 'objekt'}), "
        "(:Entitaet {user_id: $u, name: 'Rex'})-[s:TYP]->(:Wert {wert: 'sonstiges'}) "
        "WHERE o.t_expired IS NULL AND s.t_expired IS NULL "
        "SET o.aktiv = false, o.grund = 'abgeloest', o.t_invalid = o.t_valid, "
        "o.abgeloest_durch = [s.id], s.aktiv = true, s.grund = null, s.t_invalid = null, "
        "s.timeline_bis = null, s.abgeloest_durch = null", u=planted.user_id)
    assert planted.mappe("Rex", gueltig_am=date(2099, 6, 1)).typ == "sonstiges"
    found = check(planted, "sonstiges_after_type")
    assert found.count == 1 and "(sonstiges) after objekt " in found.samples[0], found
    # The mend the docs give: correct the sonstiges; the objekt it ended holds again.
    planted.write(berichtigungen=[{"subjekt": "Rex", "beziehung": "typ", "wert": "sonstiges",
                                   "herkunft": "mensch"}])
    assert planted.mappe("Rex", gueltig_am=date(2099, 6, 1)).typ == "objekt"
    assert check(planted, "sonstiges_after_type").ok


def test_a_backup_with_a_type_an_older_version_broke_restores(
    planted: Pair, tmp_path: Path
) -> None:
    """Two states the writer left before this version, which reads take as they are:
    an entity without the type a fact gives it (a cancel took it), and a sonstiges that
    ended a type to come. `kg check` names them since; a backup made before must still
    restore (the import runs the checks of item 8). Planted: Kassel's type deleted, and
    Rex a tier now and sonstiges from 2099."""
    planted.cypher("MATCH (:Entitaet {user_id: $u, name: 'Kassel'})-[t:TYP]->(w) DELETE t, w",
                   u=planted.user_id)
    planted.write(t("Rex", "typ", wert="sonstiges"))
    planted.write(t("Rex", "typ", wert="objekt", ereignis=ahead("Umbau", "2099-01-01")))
    planted.cypher("MATCH (:Entitaet {user_id: $u, name: 'Rex'})-[r:TYP]->(w) "
                   "SET w.wert = CASE w.wert WHEN 'sonstiges' THEN 'tier' ELSE 'sonstiges' END",
                   u=planted.user_id)
    memory = planted.store.memory
    planted.store.run(memory.export(tmp_path / "backup.jsonl", planted.user_id))
    planted.store.run(memory.purge(planted.user_id))
    planted.store.run(memory.import_file(tmp_path / "backup.jsonl"))
    assert not check(planted, "type_missing").ok
    assert not check(planted, "sonstiges_after_type").ok


def test_check_sees_a_cycle(planted: Pair) -> None:
    plant_fact(planted, "LIEGT_IN", "Hessen", "Kassel")
    found = check(planted, "transitive_cycles")
    assert found.count == 2  # both facts of the cycle


def test_check_sees_a_type_outside_the_six(planted: Pair) -> None:
    planted.cypher("MATCH (:Entitaet {user_id: $u, name: 'Lena'})-[:TYP]->(w) "
                   "SET w.wert = 'drache'", u=planted.user_id)
    assert "drache" in check(planted, "typ_values").samples[0]


def test_check_sees_an_auftrag_id_used_twice_in_a_pair(planted: Pair) -> None:
    # The schema refuses the duplicate (migration 0002): take the constraint away
    # the way an old or hand-edited store would lack it, plant, and put it back.
    planted.cypher("DROP CONSTRAINT auftrag_pair_key IF EXISTS")
    try:
        planted.cypher(
            "MATCH (a:Auftrag {user_id: $u}) WITH a LIMIT 1 "
            "CREATE (b:Auftrag) SET b = properties(a)", u=planted.user_id)
        found = check(planted, "auftrag_key")
        assert found.count == 1 and "/nova " in found.samples[0]
        planted.cypher(
            "MATCH (a:Auftrag {user_id: $u}) WITH a.id AS id, collect(a) AS same "
            "WHERE size(same) > 1 UNWIND same[1..] AS extra DETACH DELETE extra",
            u=planted.user_id)
    finally:
        planted.cypher(
            "CREATE CONSTRAINT auftrag_pair_key IF NOT EXISTS FOR (a:Auftrag) "
            "REQUIRE (a.user_id, a.character_id, a.id) IS UNIQUE")
    assert check(planted, "auftrag_key").ok


# -- the planner alone (pure) -----------------------------------------------------------


def plan(*tripel: dict[str, Any]) -> tuple[Planner, list[Any]]:
    order = Auftrag.model_validate({"auftrag_id": "a", "user_id": "u", "character_id": "c",
                                    "tripel": list(tripel)})
    planner = Planner(CANON, order, State(), JETZT)
    return planner, planner.plan()


def test_pure_a_self_reference_plans_nothing() -> None:
    planner, results = plan(t("Lena", "wohnt_in", "LENA"), t({"neu": "Tom"}, "partner", "Tom"))
    assert [r.grund for r in results] == ["selbstbezug", "selbstbezug"]
    assert planner.ops.entities == [] and planner.ops.facts == []


def test_pure_types_and_cycles_within_one_order() -> None:
    _, results = plan(
        t("Rex", "beruf", wert="Polizeihund"),
        t("Rex", "ist_ein", wert="Hund"),
        t("A", "liegt_in", "B"),
        t("B", "liegt_in", "A"),
        t("X", "typ", wert="sonstiges"),
        t("X", "ist_ein", wert="Katze"),
    )
    assert [(r.ausgang, r.grund) for r in results] == [
        ("geschrieben", None), ("abgelehnt", "typkonflikt"), ("geschrieben", None),
        ("abgelehnt", "zyklus"), ("geschrieben", None), ("geschrieben", None)]
    assert results[1].konflikt == results[0].fakt_id
    assert results[3].konflikt == results[2].fakt_id


def test_a_class_that_contradicts_one_among_many_classes_is_refused(pair: Pair) -> None:
    """Whether a class contradicts a type depends on the class (`ist_ein` "Ärztin" makes a
    person), so an order with `ist_ein` reads every active class of its subject, not only
    the ones it names and the few type facts per relation the state brings."""
    pair.write(t("Xaver", "ist_ein", wert="Ärztin"))
    pair.write(*(t("Xaver", "ist_ein", wert=f"Klasse {i}") for i in range(15)))
    (result,) = pair.write(t("Xaver", "ist_ein", wert="Hund")).ergebnisse
    assert (result.ausgang, result.grund) == ("abgelehnt", "typkonflikt")
    assert "Ärztin" in (result.meldung or "")


@pytest.mark.parametrize("name", ["\u200b", " ", "\u202e"])
def test_resolving_an_empty_name_is_refused(pair: Pair, name: str) -> None:
    """A write refuses a name made of nothing visible (name_leer); resolving one answered
    "no entity", as if such a name could exist."""
    with pytest.raises(InvalidInput, match="empty once invisible characters are removed"):
        pair.store.run(pair.store.memory.resolve(pair.user_id, "nova", name))


def test_the_library_says_what_is_wrong_with_a_call(pair: Pair) -> None:
    """Found by a stranger's attack: a negative limit was blamed on stored data, a
    correction without herkunft raised a bare KeyError, an entry as a dict (as an order
    takes one) an AttributeError, a day as text a TypeError, and one id given to
    `mappen` was read as a list of its characters."""
    memory, run = pair.store.memory, pair.store.run
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    lena = pair.id_of("Lena")
    for call, words in (
        (memory.entities(pair.user_id, "nova", limit=-1), "limit must be a whole number"),
        (memory.audit(pair.user_id, "nova", limit=0), "limit must be a whole number"),
        (memory.correct(pair.user_id, "nova", subjekt="Lena",  # type: ignore[call-arg]
                        beziehung="wohnt_in", objekt="Kassel"), "a correction needs herkunft"),
        (memory.mappen(pair.user_id, "nova", lena),  # type: ignore[arg-type]
         "give a list of entity ids"),
        (memory.timeline_add(pair.user_id, "nova", {"titel": "Umzug"}),
         "the entry is invalid — "),
        # (the attack) an ereignis is an event of a person: without one it was nobody's
        (memory.timeline_add(pair.user_id, "nova", {"titel": "Umzug", "beginn": "2026-11-01"}),
         "an ereignis is an event of a person"),
        (memory.check(pair.user_id, day=20261205), "day must be a date"),  # type: ignore[arg-type]
        (memory.check(pair.user_id, day="2026-W49-1"), "day must be a date"),
        (memory.entities(pair.user_id, "nova", limit=2**70), "from 1 to 1,000,000,000"),
        (memory.mappen(pair.user_id, "nova", {lena}),  # type: ignore[arg-type]
         "entity_ids is a set; give a list"),
        # (the attack) no bound on the entities of one call: each may hold the cap's
        # facts, in one query (the MCP tool took 50 at most, the library any number)
        (memory.mappen(pair.user_id, "nova", [lena] * (MAPPEN_MAX + 1), cap=MAPPE_CAP_MAX),
         "entity_ids holds 51 ids: one call reads at most 50 Mappen"),
    ):
        with pytest.raises(InvalidInput, match=words):
            run(call)
    entry = run(memory.timeline_add(pair.user_id, "nova", {
        "typ": "termin", "titel": "Zahnarzt", "beginn": "2026-12-20"}))
    assert (entry.titel, entry.beginn) == ("Zahnarzt", date(2026, 12, 20))
    assert run(memory.check(pair.user_id, day="2026-12-05")).day == date(2026, 12, 5)


def test_the_librarys_other_wrong_arguments_are_refused_in_words(pair: Pair) -> None:
    """A stranger's attack (2026-12-07): `entity_id(None)` and `resolve(5)` raised a bare
    TypeError, an id given to `mappen` as a list "unhashable type", `audit_prune(batch=0)`
    never returned (it deleted nothing, and nothing was fewer than a batch of none), a
    negative batch was blamed on stored data, and a correction with an empty auftrag_id
    was given a new one, where an order with one is refused."""
    memory, run = pair.store.memory, pair.store.run
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    lena = pair.id_of("Lena")
    for call, words in (
        (memory.entity_id(pair.user_id, "nova", None),  # type: ignore[arg-type]
         "name_or_id is a NoneType; give an entity's name or id"),
        (memory.resolve(pair.user_id, "nova", 5),  # type: ignore[arg-type]
         "name is a int; give an entity's name"),
        (memory.mappen(pair.user_id, "nova", [lena, ["x"]]),  # type: ignore[list-item]
         r"entity_ids\[1\] is a list; give an entity's id"),
        (memory.mappe(pair.user_id, "nova", ["x"]),  # type: ignore[arg-type]
         r"entity_ids\[0\] is a list; give an entity's id"),
        (memory.audit_prune(batch=0), "batch must be a whole number from 1 to 1,000,000"),
        (memory.audit_prune(batch=-1), "batch must be a whole number from 1 to 1,000,000"),
        (memory.audit_prune(batch=True), "batch must be a whole number"),
        (memory.correct(pair.user_id, "nova", subjekt="Lena", beziehung="wohnt_in",
                        objekt="Kassel", herkunft="mensch", auftrag_id=""),
         "auftrag_id"),
    ):
        with pytest.raises(InvalidInput, match=words):
            run(call)
    assert run(memory.entity_id(pair.user_id, "nova", "Lena")) == lena


def test_a_type_a_standing_fact_implies_is_not_corrected_away(pair: Pair) -> None:
    """Found by a stranger's attack: "Kassel is no ort" while "Lena wohnt in Kassel"
    stands was `berichtigt`; the Mappe then read Kassel as sonstiges, and "Kassel typ
    person" was still refused by the fact that makes it an ort. A type a standing fact
    implies is refused as a correction too, naming the fact to correct first; that fact
    corrected in the same order before it, both are (tests/test_plan.py)."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    refused = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Kassel", beziehung="typ", wert="ort", herkunft="mensch"))
    (only,) = refused.ergebnisse
    assert (only.ausgang, only.grund) == ("abgelehnt", "typkonflikt"), only
    assert only.meldung is not None and only.meldung.startswith(
        "Kassel has the type ort by the fact 'Lena wohnt in Kassel'"), only.meldung
    assert typ_of(pair, "Kassel") == "ort"
    report = pair.store.run(pair.store.memory.check(pair.user_id))
    assert not [c.name for c in report.violations if not c.name.startswith("decay")], report


@pytest.mark.parametrize("when", ["ahead", "past"])
def test_a_type_a_class_implies_begins_with_the_event_of_its_fact(
    pair: Pair, when: str,
) -> None:
    """The second attack's medium finding: "Bello ist ein Auto" told with an event
    ahead made Bello an objekt from the order, where a `typ` triple with the same
    event makes him one from the event: told a tier now, Bello read objekt at once.
    Told with an event of the past, the tier he had been told before ended only with
    the order, so the type as of a day between read the tier where he was an Auto.
    A class's type is a fact the event causes, as the class is (rule 7); it begins
    with the event. (The type a relation implies is what the fact needs, not what the
    event causes: Kassel is an ort before Lena moves there.)"""
    pair.write(t("Bello", "typ", wert="tier"), zeitpunkt="2010-01-01T00:00:00Z")
    day = "2099-01-01" if when == "ahead" else "2020-01-01"
    car = pair.write(t("Bello", "ist_ein", wert="Auto", ereignis=ahead("Umbau", day)))
    assert outcomes(car) == [("geschrieben", None)]
    [typ_fakt] = car.ergebnisse[0].typ_fakten
    [stored] = pair.cypher(
        "MATCH ()-[r:TYP {id: $id}]->() RETURN r.timeline_id AS event",
        id=typ_fakt)
    assert stored == {"event": car.ergebnisse[0].timeline_id}
    between = date(2050, 1, 1) if when == "ahead" else date(2023, 1, 1)
    assert typ_of(pair, "Bello") == ("tier" if when == "ahead" else "objekt")
    assert pair.mappe("Bello", gueltig_am=between).typ == (
        "tier" if when == "ahead" else "objekt")
    assert pair.mappe("Bello", gueltig_am=date(2015, 1, 1)).typ == "tier"
    assert pair.mappe("Bello", gueltig_am=date(2100, 1, 1)).typ == "objekt"
    check_clean(pair)


@pytest.mark.parametrize("how", ["correct", "cancel", "move"])
def test_a_type_of_a_class_to_come_goes_and_moves_with_its_fact(
    pair: Pair, how: str,
) -> None:
    """The type "Bello ist ein Auto" brings from its event ahead rests on that event,
    as the class does: the class corrected or the event cancelled, Bello is a tier on
    (no type to come is left; `kg check` finds none that contradicts); the event moved,
    the type moves with it. And a fact that began before the tier ended contradicts it
    in `kg check`, where one that begins with the car does not."""
    pair.write(t("Bello", "typ", wert="tier"), zeitpunkt="2010-01-01T00:00:00Z")
    car = pair.write(t("Bello", "ist_ein", wert="Auto", ereignis=ahead("Umbau", "2099-01-01")))
    [typ_fakt] = car.ergebnisse[0].typ_fakten
    if how == "correct":
        result = pair.store.run(pair.store.memory.correct(
            pair.user_id, "nova", subjekt="Bello", beziehung="ist_ein", wert="Auto",
            herkunft="mensch"))
        assert typ_fakt in result.ergebnisse[0].abgeloest
    elif how == "cancel":
        cancel(pair, car.ergebnisse[0].timeline_id)
    else:
        entry = car.ergebnisse[0].timeline_id
        assert entry is not None
        pair.store.run(pair.store.memory.timeline_move(
            pair.user_id, "nova", entry, date(2098, 1, 1)))
    after = "objekt" if how == "move" else "tier"
    assert pair.mappe("Bello", gueltig_am=date(2098, 6, 1)).typ == after
    assert pair.mappe("Bello", gueltig_am=date(2097, 6, 1)).typ == "tier"
    assert pair.mappe("Bello", gueltig_am=date(2100, 1, 1)).typ == after
    assert typ_of(pair, "Bello") == "tier"
    check_clean(pair)
    if how == "move":
        # Planted: Bello liegt in Kassel (an ort, organisation or objekt, no tier) from
        # the car's day, then from a day before it.
        for day, clean in (("2098-01-01", True), ("2097-12-31", False)):
            pair.cypher(
                "MATCH (s:Entitaet {user_id: $u, name: 'Bello'}) "
                "MERGE (o:Entitaet {user_id: $u, name: 'Kassel', id: 'kassel-' + $u}) "
                "CREATE (s)-[r:LIEGT_IN]->(o) SET r = {id: randomUUID(), user_id: $u, "
                "character_id: 'nova', herkunft: 'mensch', aktiv: true, staerke_decay: 1.0,"
                " t_valid: datetime($day + 'T00:00:00Z'), t_recorded: datetime(),"
                " last_touched: datetime()}", u=pair.user_id, day=day)
            found = check(pair, "type_contradicts_fact")
            assert found.ok == clean, found


@pytest.mark.parametrize("how", ["correct", "cancel", "partner"])
def test_a_take_back_that_brings_back_a_fact_the_type_contradicts_is_refused(
    pair: Pair, how: str,
) -> None:
    """A third stranger's attack: Lena lived in Kassel until 2026 (then Berlin); Kassel
    is an organisation since. Taking Berlin back (a correction, or a cancel of its
    event) brought "Lena wohnt in Kassel" back, and Kassel read organisation beside it;
    `kg check` failed. The same at the subject: Rex, a tier since his bond with Lena
    ended, a partner of hers again once her bond with Tom was taken back. The take-back
    is refused as one that brings back a contradicted type is (docs/graph-model.md),
    naming the fact, and nothing is changed."""
    if how == "partner":
        bond = pair.write(t("Rex", "partner", "Lena"), zeitpunkt="2020-01-01T00:00:00Z")
        pair.write(t("Lena", "partner", "Tom"), zeitpunkt="2021-01-01T00:00:00Z")
        told = pair.write(t("Rex", "typ", wert="tier"))
        entity, typ = "Rex", "tier"
    else:
        bond = pair.write(t("Lena", "wohnt_in", "Kassel"), zeitpunkt="2025-01-01T00:00:00Z")
        moved = (
            pair.write({**t("Lena", "wohnt_in", "Berlin"),
                        "ereignis": ahead("Umzug", "2025-06-01")}) if how == "cancel"
            else pair.write(t("Lena", "wohnt_in", "Berlin"), zeitpunkt="2025-06-01T00:00:00Z"))
        told = pair.write(t("Kassel", "typ", wert="organisation"))
        entity, typ = "Kassel", "organisation"
    assert outcomes(told) == [("abgeloest", None)]  # (the type the bond implied)
    if how == "cancel":
        with pytest.raises(TimelineError, match=(
                f"cancelling this event would make Kassel a organisation while the fact "
                f"'Lena wohnt in Kassel' \\({bond.ergebnisse[0].fakt_id}\\) stands")):
            cancel(pair, moved.ergebnisse[0].timeline_id)
    else:
        wrong = ({"subjekt": "Lena", "beziehung": "partner", "objekt": "Tom"}
                 if how == "partner" else
                 {"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "Berlin"})
        result = pair.store.run(pair.store.memory.correct(
            pair.user_id, "nova", herkunft="mensch", **wrong)).ergebnisse[0]
        assert (result.ausgang, result.grund) == ("abgelehnt", "typkonflikt")
        assert result.konflikt == bond.ergebnisse[0].fakt_id
        assert f"this correction would make {entity} a {typ} while the fact" in (
            result.meldung or "")
    assert typ_of(pair, entity) == typ
    check_clean(pair)


def test_a_move_that_keeps_a_value_holding_the_type_contradicts_is_refused(
    pair: Pair,
) -> None:
    """The same attack: Lena in Kassel from 2025, in Berlin from an event of June 2026;
    Kassel an organisation since. Moving the event to 2027 made "Lena wohnt in Kassel"
    hold until then beside Kassel the organisation ("noch bis 10. Juni 2027"), and `kg
    check` was clean (it read active facts only): the writer itself refused the same
    type told again. The move is refused; and `kg check` sees the value that holds until
    a day ahead where a hand edit makes the same."""
    today = datetime.now(UTC).date()
    back, ahead_day = today - timedelta(days=180), today + timedelta(days=365)
    home = pair.write(t("Lena", "wohnt_in", "Kassel"), zeitpunkt="2025-01-01T00:00:00Z")
    moved = pair.write(t("Lena", "wohnt_in", "Berlin",
                         ereignis=ahead("Umzug", back.isoformat())))
    pair.write(t("Kassel", "typ", wert="organisation"))
    entry = moved.ergebnisse[0].timeline_id
    assert entry is not None
    with pytest.raises(TimelineError, match="moving this event would make Kassel a "
                                            "organisation while the fact 'Lena wohnt in Kassel'"):
        pair.store.run(pair.store.memory.timeline_move(pair.user_id, "nova", entry, ahead_day))
    check_clean(pair)
    # By hand: the event's day a year ahead (Kassel the organisation stays).
    pair.cypher("MATCH (e:TimelineEintrag {id: $id}) SET e.beginn = $day",
                id=entry, day=ahead_day)
    found = check(pair, "type_contradicts_fact")
    assert found.count == 1 and home.ergebnisse[0].fakt_id in found.samples[0], found


@pytest.mark.parametrize("first", ["Tom", "Lena"])
def test_a_type_goes_with_the_last_fact_that_implied_it_whatever_wrote_it(
    pair: Pair, first: str,
) -> None:
    """The third attack's third finding: Tom lives in Kassel (the order writes Kassel's
    type, ort), then Lena does. Both facts corrected, Tom's first: Kassel stayed an ort
    that no fact implied (only the order that wrote the type took it back, and that
    fact had gone while Lena's still implied it), and it refused later facts; Lena's
    first, Kassel read sonstiges. A type only taken-back facts implied goes with the
    last of them, whichever order wrote it; a type a `typ` triple stated stays."""
    tom = pair.write(t("Tom", "wohnt_in", "Kassel")).ergebnisse[0]
    [ort] = tom.typ_fakten
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    second = "Lena" if first == "Tom" else "Tom"
    for who in (first, second):
        result = pair.store.run(pair.store.memory.correct(
            pair.user_id, "nova", subjekt=who, beziehung="wohnt_in", objekt="Kassel",
            herkunft="mensch")).ergebnisse[0]
        assert result.ausgang == "berichtigt"
        assert (ort in result.abgeloest) == (who == second)
    assert typ_of(pair, "Kassel") == "sonstiges"
    assert outcomes(pair.write(t("Kassel", "typ", wert="organisation"))) == [
        ("geschrieben", None)]
    check_clean(pair)
    # Stated: it stays.
    pair.write(t("Paris", "typ", wert="ort"))
    pair.write(t("Tom", "wohnt_in", "Paris"))
    pair.write(t("Lena", "wohnt_in", "Paris"))
    for who in ("Tom", "Lena"):
        pair.store.run(pair.store.memory.correct(
            pair.user_id, "nova", subjekt=who, beziehung="wohnt_in", objekt="Paris",
            herkunft="mensch"))
    assert typ_of(pair, "Paris") == "ort"


def test_a_type_a_triple_carries_onto_a_fact_told_before_goes_with_that_fact(
    pair: Pair,
) -> None:
    """Stop 70's carried item: "Max wohnt in Kassel" told without a type, then again with
    `typ: person`. The second order wrote Max's type, but only a new fact kept the type
    its triple carried (`subjekt_typ`), so the fact told again did not: corrected, it
    left Max a person that nothing said. The fact told again keeps the type its triple
    carried, and the correction takes it back."""
    first = pair.write(t("Max", "wohnt_in", "Kassel")).ergebnisse[0]
    again = pair.write({**t("Max", "wohnt_in", "Kassel"), "typ": "person"}).ergebnisse[0]
    assert (again.ausgang, again.fakt_id) == ("unveraendert", first.fakt_id)
    [person] = again.typ_fakten
    assert typ_of(pair, "Max") == "person"
    [stored] = pair.cypher("MATCH ()-[r:WOHNT_IN {id: $id}]->() WHERE r.t_expired IS NULL "
                           "RETURN r.subjekt_typ AS typ", id=first.fakt_id)
    assert stored == {"typ": "person"}
    result = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Max", beziehung="wohnt_in", objekt="Kassel",
        herkunft="mensch")).ergebnisse[0]
    assert person in result.abgeloest
    assert typ_of(pair, "Max") == "sonstiges"
    check_clean(pair)


@pytest.mark.parametrize("how", ["ereignis", "timeline_id"])
def test_a_class_of_the_past_is_refused_where_another_type_began_since(
    pair: Pair, how: str,
) -> None:
    """The review of the class's type from its event: Bello, a tier since 2022, "ist ein
    Auto" from an event of 2020. The objekt went in from 2020 up to the tier (told
    late), the class stood on beside the tier, and `kg check` failed: refused as a
    class told now beside a type to come is, naming the tier."""
    tier = pair.write(t("Bello", "typ", wert="tier"), zeitpunkt="2022-01-01T00:00:00Z")
    if how == "ereignis":
        car = pair.write(t("Bello", "ist_ein", wert="Auto", ereignis=ahead("Kauf", "2020-01-01")))
    else:
        entry = pair.store.run(pair.store.memory.timeline_add(
            pair.user_id, "nova", {"typ": "termin", "titel": "Kauf", "beginn": "2020-01-01",
                                   "genauigkeit": "tag"}))
        car = pair.write({**t("Bello", "ist_ein", wert="Auto"), "timeline_id": entry.id})
    result = car.ergebnisse[0]
    assert (result.ausgang, result.grund) == ("abgelehnt", "typkonflikt")
    assert result.konflikt == tier.ergebnisse[0].fakt_id
    assert "Bello is a tier from 2022-01-01" in (result.meldung or "")
    assert typ_of(pair, "Bello") == "tier"
    check_clean(pair)


@pytest.mark.parametrize("how", ["zeitpunkt", "ereignis"])
def test_the_type_now_told_for_a_time_a_class_makes_another_is_refused(
    pair: Pair, how: str,
) -> None:
    """A stranger's attack on types in time: Bello an organisation now, "ist ein Auto"
    from 10 March 2027 (an objekt from then), then "Bello typ organisation" from 1 April.
    The type told was the type now, so the facts were not asked, and it superseded the
    objekt beside the class that stood on: `kg check` failed (type_contradicts_fact).
    Checked against the type that holds where it begins, it is refused."""
    pair.write(t("Bello", "typ", wert="organisation"))
    pair.write(t("Bello", "ist_ein", wert="Auto"), zeitpunkt="2027-03-10T00:00:00Z")
    told = t("Bello", "typ", wert="organisation")
    if how == "zeitpunkt":
        result = pair.write(told, zeitpunkt="2027-04-01T00:00:00Z").ergebnisse[0]
    else:
        result = pair.write({**told, "ereignis": ahead("Umzug", "2027-04-01")}).ergebnisse[0]
    assert (result.ausgang, result.grund) == ("abgelehnt", "typkonflikt"), result
    assert "ist ein Auto" in (result.meldung or ""), result
    assert pair.mappe("Bello", gueltig_am=date(2027, 5, 1)).typ == "objekt"
    check_clean(pair)


@pytest.mark.parametrize("zeitpunkt", [None, "2025-06-01T00:00:00Z"])
def test_a_triple_carrying_the_type_its_subject_has_is_written_beside_a_type_to_come(
    pair: Pair, zeitpunkt: str | None,
) -> None:
    """A stranger's second attack on types in time: Bello a tier, "ist ein Auto" from an
    event in 2027; "Bello hat Halsband" with the triple's own `typ: tier` was refused
    ("this would make it a tier on into that time"), though Bello is a tier then and the
    fact needs no type. The same triple without the field was written."""
    pair.write(t("Bello", "typ", wert="tier"), zeitpunkt="2025-01-01T00:00:00Z")
    pair.write(t("Bello", "ist_ein", wert="Auto", ereignis=ahead("Umbau", "2099-03-01")))
    extra = {"zeitpunkt": zeitpunkt} if zeitpunkt else {}
    result = pair.write({**t("Bello", "hat", wert="Halsband"), "typ": "tier"}, **extra)
    assert outcomes(result) == [("geschrieben", None)], result
    assert result.ergebnisse[0].typ_fakten == []
    # A type the subject does not have then is still refused beside the type to come.
    other = pair.write({**t("Bello", "hat", wert="Napf"), "typ": "objekt"}, **extra)
    assert outcomes(other)[0][1] == "typkonflikt", other
    check_clean(pair)


def test_a_class_to_come_of_the_type_that_holds_then_leaves_it_implied(pair: Pair) -> None:
    """The same review: Bello an objekt by "Lena besitzt Bello"; "Bello ist ein Auto"
    from an event ahead found the objekt holding then and touched it, and a touched type
    reads as stated: with both facts taken back, the objekt stayed, implied by nothing."""
    pair.write(t("Lena", "besitzt", "Bello"))
    car = pair.write(t("Bello", "ist_ein", wert="Auto", ereignis=ahead("Umbau", "2099-01-01")))
    assert outcomes(car) == [("geschrieben", None)] and car.ergebnisse[0].typ_fakten == []
    for wrong in ({"subjekt": "Lena", "beziehung": "besitzt", "objekt": "Bello"},
                  {"subjekt": "Bello", "beziehung": "ist_ein", "wert": "Auto"}):
        pair.store.run(pair.store.memory.correct(
            pair.user_id, "nova", herkunft="mensch", **wrong))
    assert typ_of(pair, "Bello") == "sonstiges"
    check_clean(pair)


def test_a_type_to_come_and_a_correction_of_a_type_see_a_value_that_holds_on(
    pair: Pair,
) -> None:
    """The same review: Lena lives in Kassel until she moves to Paris in 2098. "Kassel is
    an organisation" from an event of 2099 was refused for that home, which has ended
    by then (the check read every standing fact, whatever its span); and "Kassel is no
    ort" was taken back though the home implies it until 2098 (only active facts were
    asked what implies a type)."""
    home = pair.write(t("Lena", "wohnt_in", "Kassel")).ergebnisse[0]
    pair.write(t("Lena", "wohnt_in", "Paris", ereignis=ahead("Umzug", "2098-01-01")))
    wrong = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Kassel", beziehung="typ", wert="ort",
        herkunft="mensch")).ergebnisse[0]
    assert (wrong.ausgang, wrong.grund, wrong.konflikt) == (
        "abgelehnt", "typkonflikt", home.fakt_id)
    later = pair.write(t("Kassel", "typ", wert="organisation",
                         ereignis=ahead("Gründung", "2099-01-01")))
    assert outcomes(later) == [("abgeloest", None)], later.ergebnisse[0].meldung
    assert typ_of(pair, "Kassel") == "ort"
    assert pair.mappe("Kassel", gueltig_am=date(2099, 6, 1)).typ == "organisation"
    check_clean(pair)


def test_a_take_back_is_not_refused_for_a_clash_the_store_had_before(pair: Pair) -> None:
    """The same review: `type_clash` checks both ends of every fact a take-back changes,
    so a contradiction the store had already (by hand here: Kassel made an organisation
    while Tom lives there) refused an unrelated correction at Kassel ("this correction
    would make Kassel a organisation while the fact 'Tom wohnt in Kassel' stands"). Only
    a clash the take-back makes refuses it; `kg check` still names the old one."""
    tom = pair.write(t("Tom", "wohnt_in", "Kassel")).ergebnisse[0]
    pair.write(t("Anna", "wohnt_in", "Kassel"))
    pair.cypher("MATCH (:Entitaet {user_id: $u, name: 'Kassel'})-[:TYP]->(w) "
                "SET w.wert = 'organisation'", u=pair.user_id)
    result = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Anna", beziehung="wohnt_in", objekt="Kassel",
        herkunft="mensch")).ergebnisse[0]
    assert result.ausgang == "berichtigt", result.meldung
    found = check(pair, "type_contradicts_fact")
    assert found.count == 1 and tom.fakt_id in found.samples[0], found


@pytest.mark.parametrize("case", ["klasse", "klasse_ahead", "typ", "partner_monat"])
def test_a_cancel_keeps_a_type_a_standing_fact_still_implies(pair: Pair, case: str) -> None:
    """A second attack on types in time: a type fact that rests on an event (a known
    class's, or a `typ` triple's told with it), then a fact that needs that type, told
    while it held (so it wrote none). Cancelling the event took the type back with
    nothing in its place: "Kassel (sonstiges) – Lena wohnt in Kassel", and `kg check`
    was clean. The type a standing fact implies holds on (written again from the
    cancel, as one the fact implies)."""
    today = datetime.now(UTC).date()
    back = (today - timedelta(days=30)).isoformat()
    if case == "partner_monat":
        month = (today.replace(day=1) - timedelta(days=1)).replace(day=1).isoformat()
        event = {"titel": "Kennenlernen", "typ": "ereignis", "beginn": month,
                 "genauigkeit": "monat"}
        told = pair.write(t("Tom", "ist_ein", wert="Mann", ereignis=event))
        pair.write(t("Tom", "partner", "Lena"))
        entity, typ = "Tom", "person"
    else:
        entity, klasse, typ, other = {
            "klasse": ("Kassel", "Stadt", "ort", t("Lena", "wohnt_in", "Kassel")),
            "klasse_ahead": ("Bello", "Hund", "tier", t("Lena", "hat_haustier", "Bello")),
            "typ": ("Rex", None, "tier", t("Lena", "hat_haustier", "Rex")),
        }[case]
        day = (today + timedelta(days=100)).isoformat() if case == "klasse_ahead" else back
        told = pair.write(
            t(entity, "ist_ein", wert=klasse, ereignis=ahead("Ereignis", day)) if klasse
            else t(entity, "typ", wert=typ, ereignis=ahead("Ereignis", day)))
        pair.write(other)
    assert typ_of(pair, entity) == typ
    cancel(pair, told.ergebnisse[0].timeline_id)
    assert typ_of(pair, entity) == typ
    check_clean(pair)


def test_a_type_a_past_fact_implies_stays_when_a_later_one_is_taken_back(pair: Pair) -> None:
    """The review of "a type goes with the last fact that implied it": Tom lived in
    Kassel from 2010 to 2015 (his order wrote Kassel's ort), Lena lives there now. The
    correction of Lena's home asked only the facts that stand what implies the ort, and
    retired it, though Tom's home held and implies it (a value superseded still held)."""
    pair.write(t("Tom", "wohnt_in", "Kassel"), zeitpunkt="2010-01-01T00:00:00Z")
    pair.write(t("Tom", "wohnt_in", "Berlin"), zeitpunkt="2015-01-01T00:00:00Z")
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    result = pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Lena", beziehung="wohnt_in", objekt="Kassel",
        herkunft="mensch")).ergebnisse[0]
    assert result.ausgang == "berichtigt" and len(result.abgeloest) == 1, result
    assert typ_of(pair, "Kassel") == "ort"
    assert pair.mappe("Kassel", gueltig_am=date(2012, 1, 1)).typ == "ort"
    check_clean(pair)


def test_a_type_stated_before_gesagt_is_marked_stated_by_the_migration(pair: Pair) -> None:
    """The review of "a type goes with the last fact that implied it": a type a `typ`
    triple stated before 2026-12-05 carries no `gesagt`, so it read as implied and went
    with the last fact that implies it. Migration 0005 marks it from its order's audit
    (the triple's result names it as its fact); an implied type (in `typ_fakten`) stays
    unmarked. Planted: `gesagt` removed by hand."""
    stated = pair.write(t("Kassel", "typ", wert="ort")).ergebnisse[0].fakt_id
    implied = pair.write(t("Lena", "beruf", wert="Ärztin")).ergebnisse[0].typ_fakten[0]
    pair.cypher("MATCH (e:Entitaet {user_id: $u})-[r:TYP]->() REMOVE r.gesagt",
                u=pair.user_id)
    [migration] = [m for m in schema.migrations() if m.name == "stated_types"]
    db = pair.store.memory.db

    async def auto_commit(statement: str) -> None:  # (IN TRANSACTIONS needs one)
        async with db.driver.session(database=db.name) as session:
            await (await session.run(statement)).consume()

    for statement in migration.statements:
        pair.store.run(auto_commit(statement))
    marked = {row["id"]: row["gesagt"] for row in pair.cypher(
        "MATCH (e:Entitaet {user_id: $u})-[r:TYP]->() RETURN r.id AS id, r.gesagt AS gesagt",
        u=pair.user_id)}
    assert marked == {stated: True, implied: None}
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    pair.store.run(pair.store.memory.correct(
        pair.user_id, "nova", subjekt="Lena", beziehung="wohnt_in", objekt="Kassel",
        herkunft="mensch"))
    assert typ_of(pair, "Kassel") == "ort"
    check_clean(pair)


@pytest.mark.parametrize("replacement", [False, True])
def test_a_correction_of_a_type_a_triple_carried_is_not_written_back(
    pair: Pair, replacement: bool,
) -> None:
    """The review of "a take-back gives back the type a standing fact implies": Max a
    tier only by what "Max wohnt in Kassel" carried in its `typ` field. "Max is no tier"
    was answered `berichtigt` and the tier written again from now (the restore asked
    the type the triple carried), and a replacement "Max typ person" read `abgeloest`
    beside a tier squeezed to nothing. A carried type is what was said with the fact,
    not what it needs: corrected, it stays corrected."""
    pair.write({**t("Max", "wohnt_in", "Kassel"), "typ": "tier"})
    assert typ_of(pair, "Max") == "tier"
    order = pair.order(*([t("Max", "typ", wert="person")] if replacement else []))
    order["berichtigungen"] = [{"subjekt": "Max", "beziehung": "typ", "wert": "tier",
                                "herkunft": "mensch"}]
    result = pair.store.run(pair.store.memory.write(order)).ergebnisse
    assert (result[0].ausgang, result[0].typ_fakten) == ("berichtigt", [])
    if replacement:
        assert result[1].ausgang == "geschrieben"
    assert typ_of(pair, "Max") == ("person" if replacement else "sonstiges")
    check_clean(pair)
