"""The reader's pure parts, without a server: rows as the `mappe` query returns them, and
the instants of a read passed in (one `gueltig_am` per read, never the machine's clock).

`holds` decides an as-of read's derivation paths, `derived` keeps the derivations whose whole
path held, `build` maps a row to the Mappe (cap included), `render` writes the German block.
"""

from __future__ import annotations

import itertools
import unicodedata
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from neo4j.time import Date as DriverDate

from kg.canon import load_canon
from kg.errors import StoredDataError
from kg.mappe import (
    DERIVED_FIELDS,
    FACT_FIELDS,
    TIME_FIELDS,
    as_of,
    build,
    current_fields,
    derived,
    effective,
    fact_fields,
    holds,
    render,
)

CANON = load_canon()


def micros(day: date) -> int:
    """A day's start as the queries return valid times: epoch microseconds."""
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()) * 1_000_000


def at(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, 12, tzinfo=UTC)


def fact(
    fid: str,
    rel: str = "WOHNT_IN",
    objekt: str | None = "Berlin",
    *,
    wert: str | None = None,
    since: date = date(2026, 1, 1),
    until: date | None = None,
    grund: str | None = None,
    event: date | None = None,
    next_event: date | None = None,
    grad: int = 1,
    herkunft: str = "mensch",
    subject: tuple[str, str] = ("lena", "Lena"),
) -> dict[str, Any]:
    """One fact row as the `mappe` query returns it (times as epoch microseconds)."""
    return {
        "id": fid, "rel": rel, "subjekt_id": subject[0], "subjekt_name": subject[1],
        "objekt_id": None if objekt is None else objekt.lower(), "objekt_name": objekt,
        "wert": wert,
        "grad": grad, "via": None, "herkunft": herkunft, "staerke": 1.0,
        "aktiv": grund is None, "grund": grund,
        "t_valid": micros(since), "t_invalid": None if until is None else micros(until),
        "ab_tag": event, "ab_genauigkeit": "monat" if event else None,
        "bis_tag": next_event, "bis_genauigkeit": "monat" if next_event else None,
    }


def compact(fields: tuple[str, ...], item: dict[str, Any]) -> list[Any]:
    """A row's item as the query sends it: a list in the reader's field order."""
    return [item[name] for name in fields]


#: A derivation's path as the query sends it, and the facts on it.
Path = tuple[list[Any], list[dict[str, Any]]]


def path(target: str, pfad: list[str], *zeiten: dict[str, Any], rel: str = "WOHNT_IN") -> Path:
    """A derivation to `target` through the facts `zeiten` (the first is the entity's)."""
    return compact(DERIVED_FIELDS, {
        "rel": rel, "ziel_id": target.lower(), "ziel_name": target, "pfad": pfad,
        "glieder": [z["id"] for z in zeiten], "von_id": zeiten[0]["id"],
    }), list(zeiten)


def row(fakten: list[dict[str, Any]], historie: list[dict[str, Any]] | None = None,
        abgeleitet: list[Path] | None = None,
        entity: tuple[str, str] = ("lena", "Lena")) -> dict[str, Any]:
    """The query's row of `entity` (id, name): the paths, and the times of the facts on
    them, each fact once."""
    on_paths = {z["id"]: z for _, zeiten in abgeleitet or [] for z in zeiten}
    return {"id": entity[0], "name": entity[1], "typ": "person",
            "fakten": [compact(FACT_FIELDS, f) for f in fakten],
            "historie": [compact(FACT_FIELDS, h) for h in historie or []],
            "historie_voll": False,  # (the query read no more lines than the cap)
            "abgeleitet": [p for p, _ in abgeleitet or []],
            "wegzeiten": [compact(TIME_FIELDS, z) for z in on_paths.values()],
            # (the entity's own facts with an object, shown or cut, as the query sends
            # them)
            "eigene": [[f["rel"], f["objekt_id"], f["id"]] for f in fakten
                       if f["grad"] == 1 and f["subjekt_id"] == entity[0] and f["objekt_id"]]}


BERLIN = fact("f1", until=date(2026, 12, 1), grund="abgeloest", next_event=date(2026, 12, 1))
KASSEL = fact("f2", objekt="Kassel", event=date(2026, 12, 1))


# -- holds / effective ---------------------------------------------------------------


def test_a_superseded_value_holds_until_its_successors_event() -> None:
    assert holds(BERLIN, at(2026, 11, 30))
    assert not holds(BERLIN, at(2026, 12, 1))


def test_a_value_from_an_event_holds_from_the_events_day() -> None:
    assert not holds(KASSEL, at(2026, 11, 30))
    assert holds(KASSEL, datetime(2026, 12, 1, tzinfo=UTC))
    assert holds(KASSEL, at(2030, 1, 1))  # never superseded: it holds on


@pytest.mark.parametrize("grund", ["berichtigt", "abgesagt"])
def test_a_taken_back_value_never_held(grund: str) -> None:
    taken_back = fact("f3", until=date(2026, 1, 1), grund=grund)
    assert not holds(taken_back, at(2026, 1, 1))
    assert not holds(taken_back, at(2030, 1, 1))


def test_a_value_never_ends_before_it_begins() -> None:
    # Superseded by an event of the month it began in: it ends where it began.
    early = fact("f4", since=date(2026, 11, 15), grund="abgeloest",
                 next_event=date(2026, 11, 1))
    ab, bis, _, bis_text, _ = effective(early)
    assert bis == ab and bis_text == "15. November 2026"


def test_given_only_bekannt_am_a_read_is_of_that_moment() -> None:
    known = at(2026, 5, 1)
    assert as_of(None, known) == (known, known)
    assert as_of(known, None) == (known, None)
    assert as_of(None, None) == (None, None)


# -- derived ---------------------------------------------------------------------------


def derivation(*zeiten: dict[str, Any]) -> Path:
    return path("Hessen", ["Kassel", "Hessen"], *zeiten)


def test_a_derivation_holds_only_when_its_whole_path_held() -> None:
    hessen = fact("f5", "LIEGT_IN", "Hessen", since=date(2020, 1, 1),
                  subject=("kassel", "Kassel"))
    paths = row([], abgeleitet=[derivation(KASSEL, hessen)])
    assert derived(paths, CANON, at(2026, 11, 30)) == []  # Lena lived in Berlin then
    [found] = derived(paths, CANON, at(2026, 12, 2))
    assert (found.objekt.name, found.ab, found.aus_ereignis) == ("Hessen", "Dezember 2026", True)
    assert len(derived(paths, CANON, None)) == 1  # a current read takes the path as it is


def test_a_path_through_a_fact_whose_times_did_not_come_derives_nothing() -> None:
    """The paths name their facts by id, and the times of each come once: as of a day,
    the query brings only the facts that held then, and a fact without an id (which
    `kg check` names) none. A path through either derives nothing; the others do."""
    hessen = fact("f5", "LIEGT_IN", "Hessen", subject=("kassel", "Kassel"))
    paths = row([], abgeleitet=[derivation(KASSEL, hessen),
                                path("Deutschland", ["Kassel"], KASSEL)])
    assert [d.objekt.name for d in derived(paths, CANON, None)] == ["Deutschland", "Hessen"]
    left_out = {**paths, "wegzeiten": paths["wegzeiten"][:1]}  # (Hessen's did not come)
    assert [d.objekt.name for d in derived(left_out, CANON, None)] == ["Deutschland"]
    no_id = {**paths, "abgeleitet": [[*p[:4], [KASSEL["id"], None], p[5]]
                                     if p[2] == "Hessen" else p for p in paths["abgeleitet"]]}
    assert [d.objekt.name for d in derived(no_id, CANON, None)] == ["Deutschland"]


def test_two_records_of_one_fact_on_the_paths_name_the_fact() -> None:
    """Versions of a fact share its id, and one is the record at a time (`kg check`'s
    version chains): two with other times under one id were changed by hand, and the
    read names the fact rather than date a path by either."""
    paths = row([], abgeleitet=[derivation(KASSEL)])
    twice = {**paths, "wegzeiten": paths["wegzeiten"] + [
        compact(TIME_FIELDS, {**KASSEL, "ab_tag": date(2025, 1, 1)})]}
    with pytest.raises(StoredDataError, match=r"f2.*two versions are the record at once"):
        derived(twice, CANON, None)
    same = {**paths, "wegzeiten": paths["wegzeiten"] * 2}  # (the same record twice: fine)
    assert [d.objekt.name for d in derived(same, CANON, None)] == ["Hessen"]


def test_derivations_come_nearest_first_then_by_target_whatever_the_server_order() -> None:
    """Paths of one length came in the order the server walked them, which an import
    (other internal ids) changed: the worked example's "wohnt in Deutschland" and "wohnt
    in Hessen", both through Kassel, swapped places after a round trip through an
    export (found by the pair round trip's byte comparison)."""
    def to(target: str, *pfad: str) -> Path:
        return path(target, list(pfad), KASSEL)

    paths = [to("Hessen", "Kassel"), to("Deutschland", "Kassel"),
             to("Europa", "Kassel", "Deutschland")]
    for walked in itertools.permutations(paths):
        found = derived(row([], abgeleitet=list(walked)), CANON, None)
        assert [d.objekt.name for d in found] == ["Deutschland", "Hessen", "Europa"], walked


def test_what_the_entity_states_itself_is_not_derived_again() -> None:
    """Kassel liegt in Deutschland, told, and in Hessen, which lies in Deutschland: the
    Mappe of Kassel said "liegt in Deutschland" and "abgeleitet: liegt in Deutschland
    (über Hessen)" (the worked example once it had the contract's own step 3). A
    derivation to where a fact of the entity already goes, from as late or later, is
    left out; where the cap cut that fact, whatever its start (a cap only cuts: the
    uncapped read leaves it out). Without the fact, the derivation stays."""
    kassel = ("kassel", "Kassel")
    told = fact("f7", "LIEGT_IN", "Deutschland", subject=kassel)
    hessen = fact("f8", "LIEGT_IN", "Hessen", subject=kassel)
    via = path("Deutschland", ["Hessen"], hessen, rel="LIEGT_IN")
    data = row([told, hessen], abgeleitet=[via], entity=kassel)
    assert build(data, CANON, cap=10).abgeleitet == []
    alone = row([hessen], abgeleitet=[via], entity=kassel)
    assert [d.objekt.name for d in build(alone, CANON, cap=10).abgeleitet] == ["Deutschland"]
    cut = {**data, "fakten": data["fakten"][::-1]}  # the cap keeps Hessen, cuts the other
    assert build(cut, CANON, cap=1).abgeleitet == []
    earlier_cut = {**row([fact("f7", "LIEGT_IN", "Deutschland", subject=kassel,
                               since=date(2030, 1, 1)), hessen], abgeleitet=[via],
                         entity=kassel)}
    earlier_cut["fakten"] = earlier_cut["fakten"][::-1]
    assert build(earlier_cut, CANON, cap=1).abgeleitet == []
    # A derivation that holds from earlier than the told fact says more: it stays (the
    # review: "liegt in Deutschland (ab 2030)" hid that it had held since 2026).
    later = fact("f7", "LIEGT_IN", "Deutschland", subject=kassel, since=date(2030, 1, 1))
    data = row([later, hessen], abgeleitet=[via], entity=kassel)
    [kept] = build(data, CANON, cap=10).abgeleitet
    assert (kept.objekt.name, kept.ab_datum) == ("Deutschland", date(2026, 1, 1))


def test_the_path_that_holds_from_the_earliest_start_wins() -> None:
    """Paths come shortest first. A longer path that has held for longer wins (the
    derivation holds since then); of paths that begin at once, the shorter."""
    hessen = fact("f5", "LIEGT_IN", "Hessen", since=date(2020, 1, 1),
                  subject=("kassel", "Kassel"))
    kassel_2020 = fact("f6", objekt="Kassel", since=date(2020, 1, 1))
    direct = path("Hessen", ["Kassel"], KASSEL)
    longer = derivation(kassel_2020, hessen)
    [found] = derived(row([], abgeleitet=[direct, longer]), CANON, None)
    assert (found.pfad, found.ab_datum) == (["Kassel", "Hessen"], date(2020, 1, 1))
    [tie] = derived(row([], abgeleitet=[longer, derivation(kassel_2020, hessen)]), CANON, None)
    assert tie.pfad == ["Kassel", "Hessen"]
    [held] = derived(row([], abgeleitet=[direct, longer]), CANON, at(2027, 1, 1))
    assert held.ab_datum == date(2020, 1, 1)


# -- build -----------------------------------------------------------------------------


def test_a_current_read_takes_the_rows_as_they_are() -> None:
    mappe = build(row([KASSEL], historie=[BERLIN]), CANON, cap=10)
    assert [f.id for f in mappe.fakten] == ["f2"]
    assert [h.bis for h in mappe.historie] == ["Dezember 2026"]
    assert (mappe.gueltig_am, mappe.bekannt_am, mappe.gekappt) == (None, None, False)


def test_an_as_of_read_takes_the_state_known_then() -> None:
    """The query has kept what held and what had ended at `gueltig_am`; the build marks
    each version active as the record stood then, not as today's `aktiv` says."""
    superseded_later = {**KASSEL, "aktiv": False}  # today's flag: superseded since
    after = build(row([superseded_later], historie=[BERLIN]), CANON, cap=10,
                  gueltig_am=at(2026, 12, 2), bekannt_am=at(2026, 12, 2))
    assert [(f.id, f.aktiv) for f in after.fakten] == [("f2", True)]
    assert [(h.id, h.bis) for h in after.historie] == [("f1", "Dezember 2026")]
    assert after.bekannt_am == at(2026, 12, 2)


def test_a_value_told_again_earlier_is_one_stay() -> None:
    """Berlin told now (2025) and again for 2020 is one stay since 2020: the late
    version ends where the current one begins. The Mappe must not read as a move from
    Berlin to Berlin ("wohnt in Berlin (ab 2025)", "früher: wohnt in Berlin")."""
    now = fact("f1", since=date(2025, 1, 1))
    late = fact("f2", since=date(2020, 1, 1), until=date(2025, 1, 1), grund="abgeloest")
    earlier = fact("f3", since=date(2018, 1, 1), until=date(2020, 1, 1), grund="abgeloest")
    hamburg = fact("f4", objekt="Hamburg", since=date(2015, 1, 1), until=date(2018, 1, 1),
                   grund="abgeloest")
    mappe = build(row([now], historie=[late, earlier, hamburg]), CANON, cap=10)
    assert [(f.id, f.ab_datum, f.ab) for f in mappe.fakten] == [
        ("f1", date(2018, 1, 1), "1. Januar 2018")]
    assert [(h.id, h.ab_datum, h.bis_datum) for h in mappe.historie] == [
        ("f4", date(2015, 1, 1), date(2018, 1, 1))]
    text = render(mappe, heute=date(2026, 12, 2))
    assert "früher: wohnt in Berlin" not in text and "früher: wohnt in Hamburg" in text
    assert "wohnt in Berlin (ab 1. Januar 2018)" in text

    # As of 2026: the same. As of 2019: the version that held then, since 2018.
    known = at(2026, 12, 2)
    then = build(row([now], historie=[late, earlier, hamburg]), CANON, cap=10,
                 gueltig_am=at(2026, 6, 1), bekannt_am=known)
    assert [(f.id, f.ab_datum) for f in then.fakten] == [("f1", date(2018, 1, 1))]
    older = build(row([earlier], historie=[hamburg]), CANON, cap=10,
                  gueltig_am=at(2019, 6, 1), bekannt_am=known)
    assert [(f.id, f.ab_datum) for f in older.fakten] == [("f3", date(2018, 1, 1))]

    # Two ended stays of one value that meet are one, too; a value that does not meet
    # (a gap between) stays apart, and so does another relation's value.
    kassel = fact("f5", objekt="Kassel", since=date(2024, 1, 1))
    gap = fact("f6", since=date(2010, 1, 1), until=date(2012, 1, 1), grund="abgeloest")
    job = fact("f7", "BERUF", None, wert="Berlin", since=date(2012, 1, 1),
               until=date(2015, 1, 1), grund="abgeloest")
    ended = fact("f8", since=date(2020, 1, 1), until=date(2024, 1, 1), grund="abgeloest")
    teacher = fact("f9", "BERUF", None, wert="Lehrerin", since=date(2015, 1, 1))
    mappe = build(row([kassel, teacher], historie=[ended, earlier, job, gap]), CANON, cap=10)
    assert sorted((h.id, h.ab_datum, h.bis_datum) for h in mappe.historie) == [
        ("f6", date(2010, 1, 1), date(2012, 1, 1)),
        ("f7", date(2012, 1, 1), date(2015, 1, 1)),
        ("f8", date(2018, 1, 1), date(2024, 1, 1)),
    ]


def test_a_value_squeezed_to_nothing_is_no_former_value() -> None:
    """Berlin, then Hamburg and Berlin again on one day: Hamburg holds nowhere (it ends
    where it begins), Berlin's two versions are one stay. Hamburg is not a stay of its
    own version (found by the reference model: it took itself in, and vanished), and
    not a former value either: "früher: wohnt in Hamburg (bis 28. November)" told the
    chat of a stay that never happened (a stranger's attack). `kg history` lists it."""
    day = date(2026, 11, 28)
    first = fact("f1", since=date(2026, 1, 20), until=day, grund="abgeloest")
    nowhere = fact("f2", objekt="Hamburg", since=day, until=day, grund="abgeloest")
    again = fact("f3", since=day)
    mappe = build(row([again], historie=[first, nowhere]), CANON, cap=10)
    assert [(f.id, f.ab_datum) for f in mappe.fakten] == [("f3", date(2026, 1, 20))]
    assert mappe.historie == []
    # Held for a day, it is one.
    nowhere = fact("f2", objekt="Hamburg", since=day - timedelta(days=1), until=day,
                   grund="abgeloest")
    mappe = build(row([again], historie=[first, nowhere]), CANON, cap=10)
    assert [(h.id, h.bis_datum) for h in mappe.historie] == [("f2", day)]


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_a_version_squeezed_to_nothing_where_its_stay_passes_is_part_of_it(
    order: tuple[int, int],
) -> None:
    """Ärztin from 20 January to 1 November, an Ärztin event of November squeezed to
    nothing there by Lehrerin's, and Ärztin again from November: one stay since 20
    January, whatever the rows' order. The walk back from the current version took the
    first version that ended where it began, so the squeezed one was taken in or shown
    as a history of its own by the order of the rows (by random fact ids; found by the
    reference model's stress run)."""
    day = date(2026, 11, 1)
    before = fact("f1", "BERUF", None, wert="Ärztin", since=date(2026, 1, 20), until=day,
                  grund="abgeloest")
    nowhere = fact("f2", "BERUF", None, wert="Ärztin", since=day, until=day,
                   grund="abgeloest")
    lehrerin = fact("f3", "BERUF", None, wert="Lehrerin", since=day, until=day,
                    grund="abgeloest")
    again = fact("f4", "BERUF", None, wert="Ärztin", since=day)
    ended = [(before, nowhere)[i] for i in order] + [lehrerin]
    for gueltig_am in (None, at(2026, 12, 1)):
        mappe = build(row([again], historie=ended), CANON, cap=10, gueltig_am=gueltig_am,
                      bekannt_am=at(2026, 12, 2) if gueltig_am else None)
        assert [(f.id, f.ab_datum) for f in mappe.fakten] == [("f4", date(2026, 1, 20))]
        assert mappe.historie == []  # (Lehrerin held nowhere)
    # Known before the November Ärztin (Lehrerin current): the squeezed version ends the
    # stay it meets.
    current = fact("f3", "BERUF", None, wert="Lehrerin", since=day)
    mappe = build(row([current], historie=ended[:2]), CANON, cap=10)
    assert [(h.wert, h.ab_datum, h.bis_datum) for h in mappe.historie] == [
        ("Ärztin", date(2026, 1, 20), day)]


@pytest.mark.parametrize("gueltig_am", [None, at(2027, 6, 1)])
def test_a_version_squeezed_beyond_the_historys_cap_takes_no_line_shown(
    gueltig_am: datetime | None,
) -> None:
    """Lena's lines latest end first: Lehrerin to March 2027, then three that end on 24
    December: Ärztin from the 1st, Berlin (she moved to Kassel that day), and an Ärztin
    squeezed to nothing there by another event of that day (so the query did not count
    it as going on from the Ärztin line). A cap of 2 reads three lines that held
    (one more than the cap) and stops at Berlin: the squeezed one, last of the three by
    id, comes as a version beyond the cap. Joined to the line it meets, it took
    "Ärztin (1. to 24. December)" into a stay nothing shows, and Berlin stood in its
    place."""
    def beruf(fid: str, wert: str, since: date, until: date | None = None,
              grad: int = 1) -> dict[str, Any]:
        return fact(fid, "BERUF", None, wert=wert, since=since, until=until,
                    grund=None if until is None else "abgeloest", grad=grad)

    day = date(2026, 12, 24)
    lines = [beruf("f1", "Lehrerin", day, date(2027, 3, 3)),
             beruf("f2", "Ärztin", date(2026, 12, 1), day),
             fact("f3", since=date(2020, 1, 1), until=day, grund="abgeloest")]
    current = [beruf("f4", "Ärztin", date(2027, 3, 3)), fact("f5", objekt="Kassel", since=day)]
    squeezed = beruf("f9", "Ärztin", day, day, grad=0)
    mappe = build(row([*current, squeezed], historie=lines), CANON, cap=2,
                  gueltig_am=gueltig_am, bekannt_am=at(2026, 12, 7) if gueltig_am else None)
    assert [(h.id, h.ab_datum, h.bis_datum) for h in mappe.historie] == [
        ("f1", day, date(2027, 3, 3)), ("f2", date(2026, 12, 1), day)]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_a_stay_of_three_versions_and_a_squeezed_one_reads_the_same_in_any_order(
    order: tuple[int, ...],
) -> None:
    """Ärztin from 2025 and again from 20 January (told for an earlier time, so two
    versions), an Ärztin event of November squeezed to nothing where that stay ends, and
    Lehrerin since November. The history rows that end on the same day come in the order
    of their (random) ids: when the January version took in the 2025 one first, the
    squeezed one took in the January version and stopped at its own start, so the stay
    read "ab 20. Januar 2026" (found by a review)."""
    day = date(2026, 11, 1)
    ended = [
        fact("a", "BERUF", None, wert="Ärztin", since=date(2025, 1, 1),
             until=date(2026, 1, 20), grund="abgeloest"),
        fact("b", "BERUF", None, wert="Ärztin", since=date(2026, 1, 20), until=day,
             grund="abgeloest"),
        fact("e", "BERUF", None, wert="Ärztin", since=day, until=day, grund="abgeloest"),
    ]
    lehrerin = fact("l", "BERUF", None, wert="Lehrerin", since=day)
    mappe = build(row([lehrerin], historie=[ended[i] for i in order]), CANON, cap=10)
    assert [(h.wert, h.ab_datum, h.bis_datum) for h in mappe.historie] == [
        ("Ärztin", date(2025, 1, 1), day)]


def test_a_value_stored_decomposed_is_one_stay_with_its_composed_version() -> None:
    """Ärztin stored decomposed (NFD, before values were stored composed) and told again
    composed for an earlier time: one stay, not "früher: Ärztin" beside "Ärztin"."""
    old = fact("f1", "BERUF", None, wert=unicodedata.normalize("NFD", "Ärztin"),
               since=date(2025, 1, 1))
    late = fact("f2", "BERUF", None, wert="Ärztin", since=date(2020, 1, 1),
                until=date(2025, 1, 1), grund="abgeloest")
    mappe = build(row([old], historie=[late]), CANON, cap=10)
    assert [(f.id, f.ab_datum) for f in mappe.fakten] == [("f1", date(2020, 1, 1))]
    assert mappe.historie == []


def test_a_derivation_holds_since_the_stay_began() -> None:
    """Lena in Berlin since 2020 (told twice) derives Deutschland since 2020."""
    now = fact("f1", since=date(2025, 1, 1))
    late = fact("f2", since=date(2020, 1, 1), until=date(2025, 1, 1), grund="abgeloest")
    land = fact("f5", "LIEGT_IN", "Deutschland", since=date(1990, 1, 1),
                subject=("berlin", "Berlin"))
    via = path("Deutschland", ["Berlin"], now, land)
    mappe = build(row([now], historie=[late], abgeleitet=[via]), CANON, cap=10)
    assert [(d.objekt.name, d.ab_datum) for d in mappe.abgeleitet] == [
        ("Deutschland", date(2020, 1, 1))]


def test_the_cap_cuts_and_says_so() -> None:
    facts = [fact(f"h{i}", "HOBBY", None, wert=f"Hobby {i}") for i in range(4)]
    capped = build(row(facts), CANON, cap=3)
    assert len(capped.fakten) == 3 and capped.gekappt
    assert not build(row(facts[:3]), CANON, cap=3).gekappt


def test_the_history_of_a_value_the_mappe_leaves_out_goes_with_it() -> None:
    """Berlin until 2024, Hamburg since, and sixty hobbies told later: the cap kept the
    hobbies, cut Hamburg, and still showed "früher: wohnt in Berlin (bis 2024)", a move
    to nowhere (found by a stranger's attack). A single-valued relation's history shows
    beside its current value or not at all; a partner's still shows without one (his
    partner may have ended it at her end)."""
    berlin = fact("f1", since=date(2020, 1, 1), until=date(2024, 1, 1), grund="abgeloest")
    hamburg = fact("f2", objekt="Hamburg", since=date(2024, 1, 1))
    hobbies = [fact(f"h{i}", "HOBBY", None, wert=f"Hobby {i}") for i in range(3)]
    anna = fact("f3", "PARTNER", "Anna", since=date(2019, 1, 1), until=date(2023, 1, 1),
                grund="abgeloest")
    for cap, shown in ((3, []), (4, [("f1", date(2020, 1, 1), date(2024, 1, 1))])):
        mappe = build(row([*hobbies, hamburg], historie=[berlin, anna]), CANON, cap=cap)
        assert [(h.id, h.ab_datum, h.bis_datum) for h in mappe.historie] == [
            *shown, ("f3", date(2019, 1, 1), date(2023, 1, 1))], cap
        if not shown:
            assert "wohnt in Berlin" not in render(mappe)
    # An as-of read alike: Hamburg held then but rests now (the query left it out).
    then = build(row(hobbies, historie=[berlin]), CANON, cap=10, gueltig_am=at(2025, 1, 1),
                 bekannt_am=at(2026, 1, 1))
    assert then.historie == []


def test_empty_optional_matches_are_no_facts() -> None:
    empty = dict(fact("x"), id=None)
    mappe = build(row([empty], historie=[empty]), CANON, cap=5)
    assert (mappe.fakten, mappe.historie) == ([], [])


def _event_day(driver_type: bool) -> Any:
    """An event's day as the query returns it (the driver's `Date`) or as Python's."""
    days = st.dates(date(1900, 1, 1), date(2100, 12, 31))
    return days.map(lambda d: DriverDate(d.year, d.month, d.day)) if driver_type else days


@settings(max_examples=300, deadline=None)
@given(
    rel=st.sampled_from(["WOHNT_IN", "HOBBY", "PARTNER", "IST_EIN", "UNBEKANNT"]),
    since=st.dates(date(1900, 1, 1), date(2100, 12, 31)),
    # the first and last microsecond of the day, and any in between
    offset=st.sampled_from([0, 86_399_999_999]) | st.integers(0, 86_399_999_999),
    event=st.none() | _event_day(True) | _event_day(False),
    end_event=st.none() | _event_day(True),
    precision=st.sampled_from(["tag", "monat"]),
    staerke=st.floats(0, 1) | st.integers(0, 1),
    objekt=st.none() | st.just("Kassel"),
)
def test_a_current_reads_facts_are_built_as_every_other_fact(
    rel: str, since: date, offset: int, event: Any, end_event: Any, precision: str,
    staerke: float, objekt: str | None,
) -> None:
    """A current read builds its facts straight from the query's lists (`current_fields`,
    the hot path); they must be the fields `fact_fields` gives the same row (an active
    fact may have an end event ahead: neither shows it)."""
    item = fact("f", rel, objekt, wert=None if objekt else "Gitarre", since=since,
                event=event, next_event=end_event, grund=None)
    item.update(t_valid=micros(since) + offset, staerke=staerke,
                ab_genauigkeit=precision if event else None)
    fast, every = current_fields(compact(FACT_FIELDS, item), CANON), fact_fields(item, CANON)
    # The same values of the same types (the driver's `Date` equals Python's, yet the
    # model takes only Python's).
    assert {k: (type(v), v) for k, v in fast.items()} == {
        k: (type(v), v) for k, v in every.items()
    }


# -- render ----------------------------------------------------------------------------


def test_render_writes_the_facts_history_and_derivations() -> None:
    hessen = fact("f5", "LIEGT_IN", "Hessen", subject=("kassel", "Kassel"), grad=2)
    hessen["objekt_id"] = "hessen"
    mappe = build(
        row([KASSEL, fact("f6", "BERUF", None, wert="Lehrerin", herkunft="modell"), hessen],
            historie=[BERLIN],
            abgeleitet=[derivation(KASSEL, hessen)]),
        CANON, cap=10,
    )
    assert render(mappe, heute=date(2026, 12, 2)).splitlines() == [
        "Lena (person)",
        "- wohnt in Kassel (ab Dezember 2026)",
        "- ist von Beruf „Lehrerin“ [laut Modell]",
        "- früher: wohnt in Berlin (bis Dezember 2026)",
        "- abgeleitet: wohnt in Hessen (über Kassel, Hessen, ab Dezember 2026)",
        "  · Kassel liegt in Hessen",
    ]


def test_render_says_when_a_value_begins_later() -> None:
    """A value that begins after the day read never reads as holding now: its *ab* is
    shown (degree 1 and 2, derived), and no longer once that day has come."""
    kassel = fact("f1", "WOHNT_IN", "Kassel", since=date(2030, 1, 1))
    hessen = fact("f5", "LIEGT_IN", "Hessen", subject=("kassel", "Kassel"), grad=2,
                  since=date(2030, 2, 1))
    hessen["objekt_id"] = "hessen"
    beruf = fact("f6", "BERUF", None, wert="Ärztin", since=date(2030, 1, 1))
    mappe = build(row([kassel, beruf, hessen], abgeleitet=[derivation(kassel, hessen)]),
                  CANON, cap=10)
    assert render(mappe, heute=date(2026, 11, 30)).splitlines() == [
        "Lena (person)",
        "- wohnt in Kassel (ab 1. Januar 2030)",
        "- ist von Beruf „Ärztin“ (ab 1. Januar 2030)",
        "- abgeleitet: wohnt in Hessen (über Kassel, Hessen, ab 1. Februar 2030)",
        "  · Kassel liegt in Hessen (ab 1. Februar 2030)",
    ]
    assert render(mappe, heute=date(2030, 3, 1)).splitlines() == [
        "Lena (person)",
        "- wohnt in Kassel",
        "- ist von Beruf „Ärztin“",
        "- abgeleitet: wohnt in Hessen (über Kassel, Hessen)",
        "  · Kassel liegt in Hessen",
    ]


def test_render_never_calls_a_value_that_still_holds_former() -> None:
    """A value told with a later start supersedes the current one from then on: the
    superseded one is history, but until its end it is the value that holds. Read on a
    day before that end, it is no "früher" line (the chat would take Lena for moved
    already); from its end on it is."""
    berlin = fact("f1", until=date(2027, 1, 1), grund="abgeloest", since=date(2020, 5, 1))
    kassel = fact("f2", objekt="Kassel", since=date(2027, 1, 1))
    mappe = build(row([kassel], historie=[berlin]), CANON, cap=10)
    assert render(mappe, heute=date(2026, 12, 5)).splitlines() == [
        "Lena (person)",
        "- wohnt in Berlin (noch bis 1. Januar 2027)",  # (first: the value that holds)
        "- wohnt in Kassel (ab 1. Januar 2027)",
    ]
    assert render(mappe, heute=date(2027, 1, 1)).splitlines() == [
        "Lena (person)",
        "- wohnt in Kassel (ab 1. Januar 2027)",
        "- früher: wohnt in Berlin (bis 1. Januar 2027)",
    ]


def test_render_never_says_noch_bis_of_a_value_that_begins_ahead() -> None:
    """Found by a stranger's hunt: Lena in Kassel, told Paris from 1 March and then
    Hamburg from 1 January: Hamburg (superseded by Paris) read "noch bis 1. März 2027"
    beside Kassel's "noch bis 1. Januar 2027", two homes at once, on a day before
    Hamburg began. A value that begins and ends ahead is read with both its days."""
    kassel = fact("f1", objekt="Kassel", until=date(2027, 1, 1), grund="abgeloest",
                  since=date(2026, 12, 6))
    hamburg = fact("f3", objekt="Hamburg", until=date(2027, 3, 1), grund="abgeloest",
                   since=date(2027, 1, 1))
    paris = fact("f2", objekt="Paris", since=date(2027, 3, 1))
    mappe = build(row([paris], historie=[hamburg, kassel]), CANON, cap=10)
    read = {day: render(mappe, heute=day).splitlines()[1:]
            for day in (date(2026, 12, 6), date(2027, 2, 1), date(2027, 3, 1))}
    # (In the order they hold: what has not ended reads before the value to come.)
    assert read[date(2026, 12, 6)] == [
        "- wohnt in Kassel (noch bis 1. Januar 2027)",
        "- wohnt in Hamburg (ab 1. Januar 2027 bis 1. März 2027)",
        "- wohnt in Paris (ab 1. März 2027)",
    ]
    assert read[date(2027, 2, 1)] == [
        "- wohnt in Hamburg (noch bis 1. März 2027)",
        "- wohnt in Paris (ab 1. März 2027)",
        "- früher: wohnt in Kassel (bis 1. Januar 2027)",
    ]
    assert read[date(2027, 3, 1)] == [
        "- wohnt in Paris (ab 1. März 2027)",
        "- früher: wohnt in Hamburg (bis 1. März 2027)",
        "- früher: wohnt in Kassel (bis 1. Januar 2027)",
    ]


def test_render_stays_within_its_budget() -> None:
    facts = [fact(f"h{i}", "HOBBY", None, wert=f"Hobby Nummer {i}") for i in range(40)]
    text = render(build(row(facts), CANON, cap=60), budget=200)
    assert len(text) <= 200 + 1 and text.endswith("…")


# -- a value that still holds, told of another entity --------------------------------

KASSEL_SINCE = date(2025, 5, 1)
PARIS_DAY = date(2099, 3, 1)


def kassels(fakten: list[dict[str, Any]]) -> dict[str, Any]:
    """A current read of Kassel's Mappe (Lena's home: the object side)."""
    return {**row(fakten), "id": "kassel", "name": "Kassel", "typ": "ort"}


def lena_in_kassel(fid: str, since: date, until: date | None, grad: int) -> dict[str, Any]:
    return fact(fid, objekt="Kassel", since=since, until=until, grad=grad,
                grund="abgeloest" if until else None)


def friends(who: str, with_whom: str = "Lena") -> dict[str, Any]:
    """The fact of `who`'s Mappe that its facts at degree 2 are reached through (a fact
    at degree 2 shows only beside one it is reached through)."""
    return fact(f"{who}-{with_whom}", "BEFREUNDET_MIT", with_whom,
                subject=(who.lower(), who), since=date(2019, 1, 1))


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_a_value_that_still_holds_is_shown_as_its_stay(order: tuple[int, ...]) -> None:
    """Kassel since 2025 until 2099, again from 2099 until 2100 (told before, for the
    later time), and one squeezed to nothing in 2099: shown (degree 1, from Kassel) is
    the version that holds now; its versions (degree 0) come in any order. One line,
    from 2025 until 2100."""
    shown = lena_in_kassel("a", KASSEL_SINCE, PARIS_DAY, 1)
    versions = [lena_in_kassel("b", PARIS_DAY, date(2100, 1, 1), 0),
                lena_in_kassel("c", PARIS_DAY, PARIS_DAY, 0),
                lena_in_kassel("a", KASSEL_SINCE, PARIS_DAY, 0)]
    m = build(kassels([shown, *(versions[i] for i in order)]), CANON, cap=10)
    assert [(f.id, f.ab_datum, f.bis_datum, f.aktiv) for f in m.fakten] == [
        ("a", KASSEL_SINCE, date(2100, 1, 1), False)]
    assert render(m, heute=date(2026, 12, 6)).splitlines()[1:] == [
        "- Lena wohnt in Kassel (noch bis 1. Januar 2100)"]


def test_a_stay_that_goes_on_in_its_active_version_is_shown_by_it() -> None:
    """Kassel since 2025 until 2099 and, active, from 2099 on: both shown (the active one
    weaker), one line, the active version's, from 2025 and without an end. The active
    version cut by the cap (it comes as a version only) still stands for the stay where
    it is awake, as the uncapped read shows it; resting, the one that holds now does,
    with no end."""
    holding = lena_in_kassel("a", KASSEL_SINCE, PARIS_DAY, 1)
    active = lena_in_kassel("b", PARIS_DAY, None, 1)
    both = build(kassels([holding, active]), CANON, cap=10)
    assert [(f.id, f.ab_datum, f.bis_datum, f.aktiv) for f in both.fakten] == [
        ("b", KASSEL_SINCE, None, True)]
    cut = build(kassels([holding, {**active, "grad": 0}]), CANON, cap=10)
    assert [f.model_dump() for f in cut.fakten] == [f.model_dump() for f in both.fakten]
    resting = {**active, "grad": 0, "staerke": 0.05}
    alone = build(kassels([holding, resting]), CANON, cap=10, schwelle=0.1)
    assert [(f.id, f.ab_datum, f.bis_datum, f.aktiv) for f in alone.fakten] == [
        ("a", KASSEL_SINCE, None, False)]
    assert render(alone).splitlines()[1:] == ["- Lena wohnt in Kassel"]
    awake = build(kassels([holding, resting]), CANON, cap=10, schwelle=0.01)
    assert [f.id for f in awake.fakten] == ["b"]


def test_a_value_that_still_holds_without_versions_ends_with_its_own_end() -> None:
    """No other version: its own end; at degree 2 "noch bis" too."""
    at_two = {**lena_in_kassel("a", KASSEL_SINCE, PARIS_DAY, 2), "via": "Lena"}
    m = build({**row([friends("Tom"), at_two]), "id": "tom", "name": "Tom"}, CANON, cap=10)
    assert [(f.grad, f.bis_datum) for f in m.fakten] == [(1, None), (2, PARIS_DAY)]
    assert "  · Lena wohnt in Kassel (noch bis 1. März 2099)" in render(m).splitlines()


def test_a_move_later_on_the_day_read_is_told_with_its_day_on_both_sides() -> None:
    """A stranger's hunt: Paris "from tomorrow" in Berlin is 23:00 UTC today. Tom's
    Mappe read "· Lena wohnt in Paris" (no day: two homes) under "· Lena wohnt in
    Kassel (noch bis 6. Dezember 2026)", and Lena's own "früher: wohnt in Kassel (bis 6.
    Dezember 2026)" while Kassel still held: the end is read to the instant (before
    23:00 "noch bis", after it "früher"), and the new value shows its *ab*."""
    day = date(2026, 12, 6)
    late = micros(day) + 23 * 3_600_000_000
    kassel = {**lena_in_kassel("k", KASSEL_SINCE, day, 2), "t_invalid": late, "via": "Lena"}
    paris = {**fact("p", objekt="Paris", since=day, grad=2), "t_valid": late, "via": "Lena"}
    tom = build({**row([friends("Tom"), kassel, paris]), "id": "tom", "name": "Tom"}, CANON,
                cap=10)
    assert render(tom, heute=day).splitlines()[2:] == [
        "  · Lena wohnt in Kassel (noch bis 6. Dezember 2026)",
        "  · Lena wohnt in Paris (ab 6. Dezember 2026)",
    ]
    own = build(row([{**fact("p", objekt="Paris", since=day), "t_valid": late}],
                    historie=[{**fact("k", objekt="Kassel", since=KASSEL_SINCE, until=day,
                                      grund="abgeloest"), "t_invalid": late}]), CANON, cap=10)
    assert render(own, heute=day).splitlines()[1:] == [
        "- wohnt in Kassel (noch bis 6. Dezember 2026)",
        "- wohnt in Paris (ab 6. Dezember 2026)",
    ]
    later = datetime(2026, 12, 6, 23, 30, tzinfo=UTC)
    assert render(own, jetzt=later).splitlines()[2] == (
        "- früher: wohnt in Kassel (bis 6. Dezember 2026)")
    assert render(tom, jetzt=later).splitlines()[2] == (
        "  · Lena wohnt in Kassel (bis 6. Dezember 2026)")


def test_a_value_that_begins_and_ends_later_on_the_day_read_has_not_begun() -> None:
    """Berlin "from tomorrow" in Berlin (23:00 UTC today), then Hamburg from 23:30:
    Berlin begins and ends later on the day read. Judged by the day, its start was
    not ahead, and the line read "wohnt in Berlin (noch bis …)" at ten in the
    morning, before she had moved: the start is read to the instant, as the end is."""
    day = date(2026, 12, 6)
    eleven, half_past = micros(day) + 23 * 3_600_000_000, micros(day) + 23 * 3_600_000_000 + (
        30 * 60_000_000)
    berlin = {**fact("b", since=day, until=day, grund="abgeloest"),
              "t_valid": eleven, "t_invalid": half_past}
    hamburg = {**fact("h", objekt="Hamburg", since=day), "t_valid": half_past}
    m = build(row([hamburg], historie=[berlin]), CANON, cap=10)
    assert [h.ab_zeitpunkt for h in m.historie] == [datetime(2026, 12, 6, 23, tzinfo=UTC)]
    assert [f.ab_zeitpunkt for f in m.fakten] == [datetime(2026, 12, 6, 23, 30, tzinfo=UTC)]

    def berlin_at(hour: int, minute: int = 0) -> str:
        jetzt = datetime(2026, 12, 6, hour, minute, tzinfo=UTC)
        return next(line for line in render(m, jetzt=jetzt).splitlines() if "Berlin" in line)

    assert berlin_at(10) == "- wohnt in Berlin (ab 6. Dezember 2026 bis 6. Dezember 2026)"
    assert berlin_at(23, 10) == "- wohnt in Berlin (noch bis 6. Dezember 2026)"
    assert berlin_at(23, 40) == "- früher: wohnt in Berlin (bis 6. Dezember 2026)"
    # Read the day before, as before: by its day, ahead.
    assert next(line for line in render(m, heute=date(2026, 12, 5)).splitlines()
                if "Berlin" in line) == berlin_at(10)


def test_a_value_from_later_on_the_day_read_shows_its_day_everywhere() -> None:
    """A stranger's hunt: "Anna wohnt ab morgen in Paris", told in Berlin, begins at
    23:00 UTC today. With no history beside it, "- wohnt in Paris" read as holding now
    all day, at degree 2 and in what it derives too: the start was judged by the day.
    Read to the instant, it shows its day until 23:00."""
    day = date(2026, 12, 6)
    eleven = micros(day) + 23 * 3_600_000_000
    paris = {**fact("p", objekt="Paris", since=day), "t_valid": eleven}
    at_two = {**fact("q", objekt="Paris", since=day, grad=2, subject=("tom", "Tom")),
              "t_valid": eleven, "via": "Tom"}
    m = build(row([paris, at_two], abgeleitet=[path("Frankreich", ["Paris"], paris)]), CANON,
              cap=10)
    assert [f.ab_zeitpunkt for f in m.fakten] == [datetime(2026, 12, 6, 23, tzinfo=UTC)] * 2

    def text(hour: int) -> list[str]:
        return render(m, jetzt=datetime(2026, 12, 6, hour, tzinfo=UTC)).splitlines()[1:]

    assert text(10) == [
        "- wohnt in Paris (ab 6. Dezember 2026)",
        "- abgeleitet: wohnt in Frankreich (über Paris, ab 6. Dezember 2026)",
        "  · Tom wohnt in Paris (ab 6. Dezember 2026)",
    ]
    assert text(23) == [
        "- wohnt in Paris",
        "- abgeleitet: wohnt in Frankreich (über Paris)",
        "  · Tom wohnt in Paris",
    ]


@pytest.mark.parametrize("reversed_first", [False, True])
def test_a_bonds_versions_told_either_way_round_are_one_stay(reversed_first: bool) -> None:
    """Eva's Mappe at degree 2: Lena–Tom from now until March 2099 (shown), and its
    earlier version told as Tom–Lena since 2020 (degree 0). One bond, one line from
    2020; a bond of Lena with another person never joins it."""
    now = date(2026, 12, 6)
    shown = {**fact("a", rel="PARTNER", objekt="Tom", since=now, until=PARIS_DAY,
                    grund="abgeloest", grad=2), "via": "Tom"}
    earlier = fact("b", rel="PARTNER", objekt="Lena", since=date(2020, 1, 1), until=now,
                   grund="abgeloest", grad=0, subject=("tom", "Tom"))
    other = fact("c", rel="PARTNER", objekt="Ben", since=date(2019, 1, 1),
                 until=date(2020, 1, 1), grund="abgeloest", grad=0)
    if reversed_first:
        shown, earlier = ({**shown, "subjekt_id": "tom", "subjekt_name": "Tom",
                           "objekt_id": "lena", "objekt_name": "Lena"},
                          {**earlier, "subjekt_id": "lena", "subjekt_name": "Lena",
                           "objekt_id": "tom", "objekt_name": "Tom"})
    eva = build({**row([friends("Eva", "Tom"), shown, earlier, other]), "id": "eva",
                 "name": "Eva"}, CANON, cap=10)
    assert [(f.id, f.ab_datum, f.bis_datum) for f in eva.fakten if f.grad == 2] == [
        ("a", date(2020, 1, 1), PARIS_DAY)]


def test_the_history_joins_a_stay_before_the_cap_cuts_it() -> None:
    """A stranger's hunt, at cap 1: Lena in Kassel since 2025 (told for an earlier time),
    again from March 2099 and to Paris in 2100. The query's history holds one row more
    than the cap, the earlier Kassel, and the cut came first: "wohnt in Kassel (ab 1.
    März 2099 bis 1. Januar 2100)", as if she did not live there now. Joined first, one
    line from 2025."""
    paris = fact("p", objekt="Paris", since=date(2100, 1, 1))
    later = fact("k2", objekt="Kassel", since=PARIS_DAY, until=date(2100, 1, 1),
                 grund="abgeloest")
    earlier = fact("k1", objekt="Kassel", since=KASSEL_SINCE, until=PARIS_DAY,
                   grund="abgeloest")
    m = build(row([paris], historie=[later, earlier]), CANON, cap=1)
    assert [(h.id, h.ab_datum, h.bis_datum) for h in m.historie] == [
        ("k2", KASSEL_SINCE, date(2100, 1, 1))]
    assert render(m, heute=date(2026, 12, 6)).splitlines()[1] == (
        "- wohnt in Kassel (noch bis 1. Januar 2100)")


def test_the_cap_counts_a_stay_once_where_the_extra_fact_allows() -> None:
    """Found by a review: Kassel's Mappe at cap 2, Lena's stay in two versions (the one
    that holds now and the active one from 2099) and Max's home (the query's one fact
    more than the cap). The two versions are one line, yet they took both places: Max
    was cut, with room for him. The stay shows where its strongest version stood."""
    holding = lena_in_kassel("a", KASSEL_SINCE, PARIS_DAY, 1)
    active = lena_in_kassel("b", PARIS_DAY, None, 1)
    max_ = {**fact("c", objekt="Kassel", subject=("max", "Max")), "staerke": 0.5}
    m = build(kassels([holding, active, max_]), CANON, cap=2)
    assert [f.id for f in m.fakten] == ["b", "c"] and m.gekappt
    # The active version cut (last of the query's rows): the one that holds stands in.
    cut = build(kassels([holding, max_, active]), CANON, cap=2)
    assert [(f.id, f.bis_datum) for f in cut.fakten] == [("b", None), ("c", None)]
