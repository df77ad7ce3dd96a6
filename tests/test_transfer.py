"""Export, import and purge: byte-identical round trips, all-or-nothing import, isolation."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from cli.worked_example import build
from kg.api import SyncMemory
from kg.canon import load_canon
from kg.errors import InvalidInput, NothingStored
from kg.models import AuftragErgebnis, Kandidat, TripelErgebnis
from kg.transfer import canonical_date, canonical_datetime, parse_lines
from kg.transfer.codec import instant
from kg.transfer.records import AuftragRec
from tests.conftest import Pair, new_user_id, raw_cypher, t


def worked_example(pair: Pair, other: str | None = None) -> None:
    """The worked example (cli/worked_example.py) for the pair, with the move event moved
    once (a NACHFOLGER chain); `other` also writes that character's order."""
    prefix = f"demo-{pair.character_id}"  # two characters of one user: distinct order ids
    pair.store.run(build(pair.store.memory, pair.user_id, pair.character_id, other, prefix=prefix))


def exported_and_purged(pair: Pair, tmp_path: Path) -> tuple[list[str], dict[str, Any]]:
    """The worked example's nova export as lines, the pair purged, and what is left of
    the user (for a refused import to leave as it was)."""
    worked_example(pair)
    store = pair.store
    lines = export_text(store, tmp_path / "a.jsonl", pair.user_id, "nova").splitlines()
    store.run(store.memory.purge(pair.user_id, "nova"))
    return lines, user_snapshot(pair, pair.user_id)


def plant_decay(pair: Pair) -> None:
    """A swept edge (date and odd float) and a nanosecond datetime: exactness of types.
    (Recorded before it was touched, as the writer records a first version.)"""
    pair.cypher(
        "MATCH (s:Entitaet {user_id: $u})-[r:HAT_HAUSTIER]->() "
        "SET r.decay_am = date('2026-11-30'), r.staerke_decay = 0.8123456789012345, "
        "    r.last_touched = datetime('2026-10-16T10:00:00.123456789+02:00'), "
        "    r.t_recorded = datetime('2026-10-16T08:00:00Z')",
        u=pair.user_id,
    )


def export_text(store: SyncMemory, path: Path, user: str, character: str | None) -> str:
    store.run(store.memory.export(path, user, character))
    return path.read_text(encoding="utf-8")


def user_snapshot(pair: Pair, user: str) -> dict[str, Any]:
    """Everything of a user, straight from the graph (not through export)."""
    rows = pair.cypher(
        """
        CALL () { MATCH (e:Entitaet {user_id: $u}) RETURN count(e) AS entities }
        CALL () { MATCH (:Entitaet {user_id: $u})-[r]->()
                  RETURN collect(r.id + ':' + toString(r.aktiv) + ':'
                                 + toString(r.staerke_decay)) AS facts }
        CALL () { MATCH (w:Wert {user_id: $u}) RETURN count(w) AS values }
        CALL () { MATCH (t:TimelineEintrag) WHERE t.user_id = $u RETURN count(t) AS entries }
        CALL () { MATCH (t:TimelineEintrag)-[n:NACHFOLGER]->() WHERE t.user_id = $u
                  RETURN count(n) AS chains }
        CALL () { MATCH (a:Auftrag {user_id: $u}) RETURN count(a) AS orders }
        CALL () { MATCH (n:Nutzer {id: $u}) RETURN count(n) AS locks }
        RETURN entities, facts, values, entries, chains, orders, locks
        """,
        u=user,
    )
    snap = rows[0]
    snap["facts"] = sorted(snap["facts"])
    return snap


# -- pure ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "2026-10-01T10:00:00Z",
    "2026-10-01T10:00:00.483Z",
    "2026-10-01T10:00:00.000000005+01:00",
    "2026-10-01T10:00:00-05:30",
    "2026-03-29T03:30:00.5+02:00[Europe/Berlin]",
    "2026-10-01T10:00:00.000000005+02:00[Europe/Berlin]",
    "2026-10-01T10:00:00Z[UTC]",
    "2026-10-25T02:30:00+02:00[Europe/Berlin]",  # the DST fold: both sides exist
    "2026-10-25T02:30:00+01:00[Europe/Berlin]",
])
def test_datetime_text_is_canonical_and_exact(text: str, store: SyncMemory) -> None:
    assert canonical_datetime(text) == text
    # Import has the server read the text; export has it write the text back.
    rows = store.run(raw_cypher(store, "RETURN toString(datetime($t)) AS v", t=text))
    assert canonical_datetime(rows[0]["v"]) == text


@pytest.mark.parametrize(("text", "canonical"), [
    ("2026-10-01T10:00:00+00:00", "2026-10-01T10:00:00Z"),
    ("2026-10-01T10:00:00.480000+01:00", "2026-10-01T10:00:00.48+01:00"),
    ("2026-10-01T10:00Z", "2026-10-01T10:00:00Z"),
])
def test_datetime_text_is_normalised(text: str, canonical: str) -> None:
    assert canonical_datetime(text) == canonical


@pytest.mark.parametrize(("text", "utc"), [
    ("2026-10-25T02:30:00+02:00[Europe/Berlin]", datetime(2026, 10, 25, 0, 30, tzinfo=UTC)),
    ("2026-10-25T02:30:00+01:00[Europe/Berlin]", datetime(2026, 10, 25, 1, 30, tzinfo=UTC)),
    ("2026-10-01T10:00:00.123456789Z", datetime(2026, 10, 1, 10, 0, 0, 123456, tzinfo=UTC)),
    ("2026-10-01T10:00:00.5-03:30", datetime(2026, 10, 1, 13, 30, 0, 500000, tzinfo=UTC)),
    ("2026-10-01T10:00:00Z[UTC]", datetime(2026, 10, 1, 10, 0, tzinfo=UTC)),
])
def test_a_datetime_texts_instant_is_read_with_its_zone(text: str, utc: datetime) -> None:
    """What the import compares with the store's clock: the instant of the text, also
    where it names its zone (the fold's two sides are an hour apart)."""
    assert canonical_datetime(text) == text  # (the form the records hold)
    assert instant(text) == utc


@pytest.mark.parametrize("text", [
    "2026-10-01", "2026-10-01T10:00:00", "yesterday", "10:00Z", "2026-02-30T10:00:00Z",
    "2026-03-29T02:30:00+01:00[Europe/Berlin]", "2026-10-01T10:00:00Z[Mars/Olympus]",
    # An offset with seconds: Neo4j's datetime() parses none (the test below).
    "2026-10-01T10:00:00.5-03:30:15",
])
def test_datetime_needs_a_real_instant_with_offset(text: str) -> None:
    with pytest.raises(ValueError):
        canonical_datetime(text)


def test_an_offset_with_seconds_is_refused_as_neo4j_refuses_it(store: SyncMemory) -> None:
    """What the import sends becomes a DateTime through Neo4j's `datetime()`, which
    parses no offset with seconds: the file passed the check and the import failed on
    the server's words (a stranger's attack). The check refuses it in its own."""
    text = "2026-12-07T13:51:27+00:00:01"
    with pytest.raises(ValueError, match="has seconds; Neo4j takes an offset in hours and"):
        canonical_datetime(text)
    with pytest.raises(Exception, match="cannot be parsed to a DateTime"):
        store.run(raw_cypher(store, "RETURN datetime($t) AS v", t=text))
    assert canonical_datetime("2026-12-07T13:51:27+01:00:00") == "2026-12-07T13:51:27+01:00"


def test_date_is_not_a_datetime() -> None:
    assert canonical_date("2026-11-01") == "2026-11-01"
    with pytest.raises(ValueError):
        canonical_date("2026-11-01T00:00:00Z")


def test_an_orders_result_takes_the_entities_the_import_mapped() -> None:
    """Every entity id of a stored result (subject, object, created, candidates) goes
    through the import's mapping; fact ids, other entities and the order stay."""
    result = AuftragErgebnis(
        auftrag_id="t1", user_id="u9", character_id="nova", status="teilweise",
        zeitpunkt=datetime(2026, 10, 1, tzinfo=UTC), ergebnisse=[
            TripelErgebnis(index=0, ausgang="geschrieben", fakt_id="f1", subjekt_id="e1",
                           objekt_id="e2", neue_entitaeten=["e1", "e2"]),
            TripelErgebnis(index=1, ausgang="mehrdeutig", kandidaten=[
                Kandidat(id="e1", name="Paula", typ="person", merkmale=[]),
                Kandidat(id="e3", name="Paula", typ="person", merkmale=[])]),
        ])
    rec = AuftragRec(kind="auftrag", id="t1", user_id="u9", character_id="nova",
                     status="teilweise", ergebnis=result.model_dump_json())
    assert rec.renamed({}) is rec
    moved = AuftragErgebnis.model_validate_json(rec.renamed({"e1": "s1"}).ergebnis or "")
    first, second = moved.ergebnisse
    assert (first.subjekt_id, first.objekt_id, first.neue_entitaeten, first.fakt_id) == (
        "s1", "e2", ["s1", "e2"], "f1")
    assert [k.id for k in second.kandidaten] == ["s1", "e3"]
    assert moved.model_copy(update={"ergebnisse": result.ergebnisse}) == result


HEADER = '{"kind":"export","format":1,"user_id":"u9","character_id":null}'
ENTITY = ('{"kind":"entitaet","id":"e1","user_id":"u9","name":"Lena","name_norm":"lena",'
          '"erstellt":"2026-10-01T10:00:00Z"}')


def fact(**change: Any) -> str:
    record = {"kind": "fakt", "id": "f1", "user_id": "u9", "character_id": "nova",
              "beziehung": "beruf", "subjekt": "e1", "objekt": None, "wert": "Ärztin",
              "herkunft": "mensch", "auftrag_id": "turn-1", "t_valid": "2026-10-01T10:00:00Z",
              "aktiv": True, "staerke_decay": 1.0}
    record.update(change)
    return json.dumps(record)


@pytest.mark.parametrize(("lines", "message"), [
    ([ENTITY], r'x.jsonl:1: the first line must be the header \{"kind":"export","format":2,'),
    ([HEADER, "{not json"], r"x.jsonl:2: not valid JSON"),
    ([HEADER, ENTITY, '{"kind":"wurst"}'], r"x.jsonl:3: a line is a JSON object with a kind"),
    ([HEADER, ENTITY, fact(t_valid="2026-10-01")], r"x.jsonl:3: fakt: t_valid: '2026-10-01'"),
    ([HEADER, ENTITY, fact(herkunft=None)], r"x.jsonl:3: fakt: herkunft"),
    # Every fact comes from an audited order (an export refuses one without it too).
    ([HEADER, ENTITY, fact(auftrag_id=None)], r"x.jsonl:3: fakt: auftrag_id"),
    ([HEADER, ENTITY, fact(beziehung="mag")], r"x.jsonl:3: fakt: relation 'mag' is not in"),
    ([HEADER, ENTITY, fact(beziehung="wohnt_in")], r"x.jsonl:3: fakt: wohnt_in needs an entity"),
    ([HEADER, ENTITY, fact(subjekt="e2")], r"x.jsonl:3: fakt: subjekt entity 'e2' is not in"),
    ([HEADER, ENTITY, fact(user_id="u8")], r"x.jsonl:3: fakt: user_id 'u8' is not the header"),
    ([HEADER, ENTITY, fact(aktiv=False, grund="abgeloest", t_invalid="2026-10-02T10:00:00Z",
                           abgeloest_durch=["f9"])],
     r"x.jsonl:3: fakt: abgeloest_durch fact 'f9' is not in the file"),
    ([HEADER, ENTITY, fact(aktiv=False, grund="abgeloest", t_invalid="2026-10-02T10:00:00Z",
                           abgeloest_durch=["f1", "f1"])],
     r"x.jsonl:3: fakt: abgeloest_durch names fact 'f1' twice"),
    ([HEADER, ENTITY, fact(objekt="e1")], r"x.jsonl:3: fakt: .*exactly one of 'objekt'"),
    ([HEADER, ENTITY, fact(), ENTITY], r"x.jsonl:4: entitaet 'e1' is already on line 2"),
    ([HEADER, ENTITY, fact(extra=1)], r"x.jsonl:3: fakt: extra: Extra inputs"),
    ([HEADER, HEADER], r"x.jsonl:2: a second header"),
    ([], r"x.jsonl: the file is empty"),
])
def test_every_bad_line_is_named(lines: list[str], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_lines(lines, load_canon(), "x.jsonl")


@pytest.mark.parametrize("path", [None, 5, b"/tmp/x.jsonl", "", "  ", "/tmp/x\0.jsonl"])
def test_a_path_that_is_no_path_is_the_callers_input(store: SyncMemory, path: object) -> None:
    """A stranger's attack (2026-12-06): `import_file(None)` and `export(b"/path", …)`
    raised a plain TypeError, which reads as a bug in kg."""
    with pytest.raises(InvalidInput, match="the import's path must be a file's path"):
        store.run(store.memory.import_file(path))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="the export's path must be a file's path"):
        store.run(store.memory.export(path, "u1"))  # type: ignore[arg-type]


def test_a_good_file_parses_and_serialises_back() -> None:
    lines = [HEADER, ENTITY, fact()]
    datei = parse_lines(lines, load_canon(), "x.jsonl")
    again = [r.line() for r in datei.records()]
    assert again[:2] == lines[:2]
    assert json.loads(again[2]) == {**json.loads(fact()), "t_invalid": None,
                                    "timeline_id": None, "timeline_bis": None,
                                    "abgeloest_durch": None, "t_recorded": None,
                                    "t_expired": None, "grund": None,
                                    "last_touched": None, "decay_am": None, "version": 1}


# -- against the server ------------------------------------------------------------------


def test_a_stated_type_stays_stated_through_a_round_trip(pair: Pair, tmp_path: Path) -> None:
    """`gesagt` marks a type a `typ` triple stated: the export carries it (and leaves it
    out where a fact has none, as files from before it did), the import restores it, and
    a correction of the fact that also implies the type keeps it after the import."""
    pair.write(t("Bello", "typ", wert="tier"), t("Lena", "hat_haustier", "Bello"))
    store = pair.store
    text = export_text(store, tmp_path / "a.jsonl", pair.user_id, "nova")
    assert text.count('"gesagt":true') == 1 and '"gesagt":null' not in text
    store.run(store.memory.purge(pair.user_id, "nova"))
    store.run(store.memory.import_file(tmp_path / "a.jsonl"))
    assert export_text(store, tmp_path / "b.jsonl", pair.user_id, "nova") == text
    store.run(store.memory.correct(pair.user_id, "nova", subjekt="Lena",
                                   beziehung="hat_haustier", objekt="Bello", herkunft="mensch"))
    bello = store.run(store.memory.mappe(pair.user_id, "nova", pair.id_of("Bello")))
    assert bello.typ == "tier"


def test_pair_round_trip_is_byte_identical(pair: Pair, tmp_path: Path) -> None:
    worked_example(pair, other="luna")  # luna's facts on the same Kassel
    store = pair.store
    store.run(store.memory.decay_run(pair.user_id, day=date(2026, 12, 1)))
    plant_decay(pair)
    checked = store.run(store.memory.check(user_id=pair.user_id, day=date(2026, 12, 3)))
    first = export_text(store, tmp_path / "a.jsonl", pair.user_id, "nova")
    assert '"decay_am":"2026-11-30"' in first
    assert '"last_touched":"2026-10-16T10:00:00.123456789+02:00"' in first
    assert '"kind":"nachfolger"' in first and '"kind":"betrifft"' in first
    luna_before = export_text(store, tmp_path / "luna.jsonl", pair.user_id, "luna")
    # (`stand`, the instant a read stands at, is the import's: a write of the user.)
    mappe_before = pair.mappe("Lena").model_dump(exclude={"stand"})

    purged = store.run(store.memory.purge(pair.user_id, "nova"))
    assert purged.fakten > 0 and purged.entitaeten_behalten == 1  # Kassel: luna has facts
    imported = store.run(store.memory.import_file(tmp_path / "a.jsonl"))
    assert imported.entitaeten_vorhanden == purged.entitaeten_behalten

    second = export_text(store, tmp_path / "b.jsonl", pair.user_id, "nova")
    assert second == first
    assert export_text(store, tmp_path / "luna2.jsonl", pair.user_id, "luna") == luna_before
    assert pair.mappe("Lena").model_dump(exclude={"stand"}) == mappe_before
    again = store.run(store.memory.check(user_id=pair.user_id, day=date(2026, 12, 3)))
    assert [(c.name, c.count) for c in again.checks] == [(c.name, c.count) for c in checked.checks]
    types = pair.cypher(
        "MATCH (:Entitaet {user_id: $u})-[r:HAT_HAUSTIER]->() "
        "RETURN valueType(r.decay_am) AS d, valueType(r.last_touched) AS t, "
        "       r.last_touched.nanosecond AS ns",
        u=pair.user_id,
    )
    assert types == [{"d": "DATE NOT NULL", "t": "ZONED DATETIME NOT NULL", "ns": 123456789}]
    kinds = pair.cypher(
        "MATCH (:Entitaet {user_id: $u})-[r]->() WHERE r.character_id = 'nova' "
        "UNWIND [r.t_valid, r.t_recorded, r.t_invalid, r.t_expired] AS v "
        "WITH v WHERE v IS NOT NULL RETURN collect(DISTINCT valueType(v)) AS k",
        u=pair.user_id,
    )
    assert kinds == [{"k": ["ZONED DATETIME NOT NULL"]}]
    entries = pair.cypher(
        "MATCH (t:TimelineEintrag {user_id: $u}) RETURN collect(DISTINCT valueType(t.beginn)) "
        "+ collect(DISTINCT valueType(t.ersetzt_am)) AS k", u=pair.user_id)
    assert sorted(entries[0]["k"]) == ["DATE NOT NULL", "NULL", "ZONED DATETIME NOT NULL"]


def test_a_restored_pair_meets_the_entity_another_pair_made_since(
    pair: Pair, tmp_path: Path
) -> None:
    """nova's Paula is purged with nova (only nova knew her); luna then makes a Paula; the
    restore of nova's export made a second Paula of the user, and from then on every
    write naming Paula was `mehrdeutig` in both pairs. An entity of the file that is not
    in the store (by id) is now the user's entity of the same name where there is one."""
    store = pair.store
    order = pair.order(t("Paula", "beruf", wert="Ärztin"), t("Lena", "befreundet_mit", "Paula"))
    store.run(store.memory.write(order))
    export_text(store, tmp_path / "nova.jsonl", pair.user_id, "nova")
    store.run(store.memory.purge(pair.user_id, "nova"))
    luna = pair.other("luna")
    luna.write(t("Paula", "hobby", wert="Schach"))
    imported = store.run(store.memory.import_file(tmp_path / "nova.jsonl"))
    assert imported.entitaeten_vorhanden == 1  # Paula, by her name
    assert [w for w in imported.warnungen if "Paula" in w], imported.warnungen
    paulas = pair.cypher("MATCH (e:Entitaet {user_id: $u, name_norm: 'paula'}) RETURN e.id AS id",
                         u=pair.user_id)
    assert len(paulas) == 1
    # The order's stored result is the restored pair's answer to a replay: it names the
    # store's Paula, not the file's, which never came into the store.
    replay = store.run(store.memory.write(order))
    ids = {r.subjekt_id for r in replay.ergebnisse} | {r.objekt_id for r in replay.ergebnisse}
    ids |= {e for r in replay.ergebnisse for e in r.neue_entitaeten}
    there = pair.cypher("MATCH (e:Entitaet {user_id: $u}) WHERE e.id IN $ids RETURN e.id AS id",
                        u=pair.user_id, ids=sorted(ids - {None}))
    assert {r["id"] for r in there} == ids - {None}
    assert replay.ergebnisse[0].subjekt_id == paulas[0]["id"]
    for who in (pair, luna):
        done = who.write(t("Paula", "hobby", wert="Lesen"))
        assert done.ergebnisse[0].ausgang == "geschrieben", done
    assert {f.wert for f in pair.mappe("Paula").fakten} >= {"Ärztin", "Lesen"}
    report = store.run(store.memory.check(user_id=pair.user_id))
    assert [c.name for c in report.violations if c.item not in (6, 7)] == []  # (no sweep)


def test_a_restored_pair_keeps_two_people_of_one_name_apart(pair: Pair, tmp_path: Path) -> None:
    """nova knows two Paulas (the second made with `neu`), one of them shared with luna.
    Purging nova keeps the shared one; the restore must not take nova's other Paula for
    her (the first version of the name rule merged them, and the import's checks then
    refused the file)."""
    store = pair.store
    luna = pair.other("luna")
    luna.write(t("Paula", "hobby", wert="Schach"))
    pair.write(t("Paula", "beruf", wert="Ärztin"))
    pair.write({"subjekt": {"neu": "Paula"}, "beziehung": "beruf", "wert": "Pilotin",
                "herkunft": "mensch"})
    first = export_text(store, tmp_path / "nova.jsonl", pair.user_id, "nova")
    store.run(store.memory.purge(pair.user_id, "nova"))
    imported = store.run(store.memory.import_file(tmp_path / "nova.jsonl"))
    assert imported.entitaeten_vorhanden == 1 and imported.warnungen == []
    assert export_text(store, tmp_path / "again.jsonl", pair.user_id, "nova") == first


def test_user_round_trip_is_byte_identical(pair: Pair, tmp_path: Path) -> None:
    worked_example(pair, other="luna")
    store = pair.store
    first = export_text(store, tmp_path / "a.jsonl", pair.user_id, None)
    before = user_snapshot(pair, pair.user_id)
    store.run(store.memory.purge(pair.user_id))
    assert user_snapshot(pair, pair.user_id)["entities"] == 0
    store.run(store.memory.import_file(tmp_path / "a.jsonl"))
    assert export_text(store, tmp_path / "b.jsonl", pair.user_id, None) == first
    after = user_snapshot(pair, pair.user_id)
    assert after == before


def test_a_user_file_imported_twice_names_the_purge_of_the_user(
    pair: Pair, tmp_path: Path
) -> None:
    """Found by a stranger's hunt: a whole user's file already in the store was refused
    with "purge the pair first", for a file of no one pair and without a command."""
    worked_example(pair, other="luna")
    store = pair.store
    export_text(store, tmp_path / "a.jsonl", pair.user_id, None)
    with pytest.raises(InvalidInput, match=rf"is in the store already .*`kg purge --user "
                       rf"{pair.user_id} --yes`"):
        store.run(store.memory.import_file(tmp_path / "a.jsonl"))


def test_a_restore_refused_for_another_pairs_fault_says_the_store_breaks_it_already(
    pair: Pair, tmp_path: Path
) -> None:
    """Found by a stranger's hunt: another pair's entity keeps a name key an older
    version stored; a pair's export, purged, was refused on import as "the file itself
    is inconsistent: export it again", which the purge made impossible. The refusal says
    that the store broke the invariant before the file came, and how to mend it; mended,
    the same file restores."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    pair.other("luna").write(t("Ben", "wohnt_in", "Dresden"))
    pair.cypher("MATCH (e:Entitaet {user_id: $u, name: 'Dresden'}) SET e.name_norm = $key",
                u=pair.user_id, key="dresden\u200b")
    store = pair.store
    export_text(store, tmp_path / "nova.jsonl", pair.user_id, "nova")
    before = user_snapshot(pair, pair.user_id)
    store.run(store.memory.purge(pair.user_id, "nova"))
    purged = user_snapshot(pair, pair.user_id)
    with pytest.raises(InvalidInput) as refused:
        store.run(store.memory.import_file(tmp_path / "nova.jsonl"))
    said = str(refused.value)
    assert "breaks 1 invariant(s) of `kg check` already, without this file: name_norm" in said
    assert f"kg schema renormalize --user {pair.user_id}" in said
    assert "export it again" not in said
    assert user_snapshot(pair, pair.user_id) == purged
    store.run(store.memory.renormalize_names(pair.user_id))
    store.run(store.memory.import_file(tmp_path / "nova.jsonl"))
    assert user_snapshot(pair, pair.user_id)["entities"] == before["entities"]
    store.run(store.memory.decay_run(pair.user_id))  # as a daily sweep would
    assert store.run(store.memory.check(pair.user_id)).ok


def test_a_refusal_names_what_the_store_broke_before_and_what_the_file_adds() -> None:
    """The review: with the store broken already, the refusal named only that and "import
    the file again", though the file broke another invariant too; the counts of what was
    broken before are the store's own."""
    from kg.check import CheckResult
    from kg.transfer.store import _refusal

    names = CheckResult(name="name_norm", item=8, title="keys", count=2, samples=["e1", "e2"])
    before = [names.model_copy(update={"count": 1, "samples": ["e1"]})]
    two = CheckResult(name="einwertig_unique", item=2, title="one value", count=1,
                      samples=["f1"])
    datei: Any = SimpleNamespace(kopf=SimpleNamespace(user_id="u1", character_id="nova"))
    said = _refusal("x.jsonl", datei, [names, two], before)
    assert "already, without this file: name_norm (keys; 1 found, e.g. e1)" in said
    assert "with the file it would break einwertig_unique (one value; 1 found" in said
    assert "kg schema renormalize --user u1" in said
    assert "kg purge --user u1 --character nova --yes" in said  # (for what the file adds)
    assert _refusal("x.jsonl", datei, [two], before).startswith(
        "x.jsonl: with this file the store would break 1 invariant(s)")


def test_two_pairs_of_a_user_may_share_an_auftrag_id_through_a_round_trip(
    pair: Pair, tmp_path: Path
) -> None:
    """The idempotency key is the pair's: nova's and luna's `turn-1` are two orders. A
    pair's export comes back after a purge although the other pair has its `turn-1`
    still, and the whole user's export holds both and comes back byte-identical."""
    store = pair.store
    pair.write(t("Lena", "wohnt_in", "Berlin"), auftrag_id="turn-1")
    pair.write(t("Lena", "beruf", wert="Ärztin"), auftrag_id="turn-1", character_id="luna")
    luna = export_text(store, tmp_path / "luna.jsonl", pair.user_id, "luna")
    store.run(store.memory.purge(pair.user_id, "luna"))
    store.run(store.memory.import_file(tmp_path / "luna.jsonl"))
    assert export_text(store, tmp_path / "luna2.jsonl", pair.user_id, "luna") == luna

    whole = export_text(store, tmp_path / "user.jsonl", pair.user_id, None)
    assert whole.count('"kind":"auftrag"') == 2
    store.run(store.memory.purge(pair.user_id))
    store.run(store.memory.import_file(tmp_path / "user.jsonl"))
    assert export_text(store, tmp_path / "user2.jsonl", pair.user_id, None) == whole
    with pytest.raises(InvalidInput, match="is in the store already"):
        store.run(store.memory.import_file(tmp_path / "luna.jsonl"))


def test_a_pair_restored_keeps_a_person_apart_from_a_namesake_of_the_export(
    pair: Pair, tmp_path: Path
) -> None:
    """A stranger's attack (2026-12-06): nova knows "anna"; luna makes another Anna with
    `neu`. luna's export, purge and import took luna's Anna for nova's anna (the store's
    only one of that name): her id was gone (`kg mappe <id>`: no such entity), her name
    read "anna", and the re-export differed. The file names the namesakes an entity had
    at the export; the import merges only with one made since (Paula, below)."""
    store = pair.store
    pair.write(t("anna", "hobby", wert="Lesen"))
    nova_anna = pair.id_of("anna")
    luna = pair.other("luna")
    made = luna.write({**t("x", "hobby", wert="Schach"), "subjekt": {"neu": "Anna"}})
    anna = made.ergebnisse[0].subjekt_id
    assert anna is not None and anna != nova_anna
    text = export_text(store, tmp_path / "luna.jsonl", pair.user_id, "luna")
    assert f'"namensvettern":["{nova_anna}"]' in text
    store.run(store.memory.purge(pair.user_id, "luna"))
    imported = store.run(store.memory.import_file(tmp_path / "luna.jsonl"))
    assert not [w for w in imported.warnungen if "store's entity of that name" in w]
    m = store.run(store.memory.mappe(pair.user_id, "luna", anna))
    assert m.entitaet.name == "Anna" and {f.wert for f in m.fakten} == {"Schach"}
    assert export_text(store, tmp_path / "luna2.jsonl", pair.user_id, "luna") == text
    nova = store.run(store.memory.mappe(pair.user_id, "nova", nova_anna))
    assert nova.entitaet.name == "anna" and {f.wert for f in nova.fakten} == {"Lesen"}


def test_a_line_with_a_key_twice_is_refused_at_its_line(pair: Pair, tmp_path: Path) -> None:
    """No export writes a key twice; a line that has one was edited by hand, and which
    of the two counts differs between JSON parsers: refused, nothing imported."""
    lines, before = exported_and_purged(pair, tmp_path)
    store = pair.store
    at = next(i for i, line in enumerate(lines) if '"kind":"fakt"' in line)
    lines[at] = lines[at][:-1] + ',"herkunft":"modell"}'
    (tmp_path / "twice.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=rf"twice.jsonl:{at + 1}: the key 'herkunft' is "
                       "given twice in one object"):
        store.run(store.memory.import_file(tmp_path / "twice.jsonl"))
    assert user_snapshot(pair, pair.user_id) == before


def test_a_bad_line_imports_nothing(pair: Pair, tmp_path: Path) -> None:
    good, before = exported_and_purged(pair, tmp_path)
    store = pair.store
    bad_at = max(i for i, line in enumerate(good) if '"kind":"fakt"' in line)
    broken = json.loads(good[bad_at]) | {"staerke_decay": 1.5}
    good[bad_at] = json.dumps(broken)
    (tmp_path / "bad.jsonl").write_text("\n".join(good) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=rf"bad.jsonl:{bad_at + 1}: fakt: staerke_decay"):
        store.run(store.memory.import_file(tmp_path / "bad.jsonl"))
    assert user_snapshot(pair, pair.user_id) == before


@pytest.mark.parametrize("field", ["t_recorded", "last_touched"])
def test_import_refuses_a_system_time_after_now(
    pair: Pair, tmp_path: Path, field: str
) -> None:
    """System time is the store's clock: a file cannot bring versions recorded (or
    touched) in 2099. Refused at its line, against the import's own clock (the user's,
    taken with the lock); the guard before commit (`fact_system_time`) would find it
    too, with a second's grace."""
    lines, before = exported_and_purged(pair, tmp_path)
    store = pair.store
    header = json.loads(lines[0])
    lines[0] = json.dumps({k: v for k, v in header.items() if k not in ("anzahl", "sha256")}
                          | {"format": 1})  # a hand-edited file: no checksum to keep
    at = max(i for i, line in enumerate(lines) if '"kind":"fakt"' in line)
    lines[at] = json.dumps(json.loads(lines[at]) | {field: "2099-01-01T00:00:00Z"})
    (tmp_path / "future.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=rf"future.jsonl:{at + 1}: fakt '.*' has {field} "
                       r"2099-01-01T00:00:00Z, after this store's clock"):
        store.run(store.memory.import_file(tmp_path / "future.jsonl"))
    assert user_snapshot(pair, pair.user_id) == before


def test_a_system_time_with_a_named_zone_restores(pair: Pair, tmp_path: Path) -> None:
    """Found by a stranger's hunt: the file format takes a datetime with its zone, as
    Neo4j holds one (`…+01:00[Europe/Berlin]`, docs/export.md), yet the import's check of
    system times read it with `datetime.fromisoformat`, which reads no zone: "unexpected
    ValueError … a bug in kg", and the purged pair could not be restored from its own
    export. The writer records UTC; a store edited by hand, or an older one, holds such
    times. Restored, the file is exported again byte for byte."""
    worked_example(pair)
    store = pair.store
    pair.cypher("MATCH (e:Entitaet {user_id: $u}) "
                "SET e.erstellt = datetime({datetime: e.erstellt, timezone: 'Europe/Berlin'})",
                u=pair.user_id)
    text = export_text(store, tmp_path / "a.jsonl", pair.user_id, "nova")
    assert "[Europe/Berlin]" in text
    before = user_snapshot(pair, pair.user_id)
    store.run(store.memory.purge(pair.user_id, "nova"))
    store.run(store.memory.import_file(tmp_path / "a.jsonl"))
    assert user_snapshot(pair, pair.user_id) == before
    assert export_text(store, tmp_path / "b.jsonl", pair.user_id, "nova") == text


def test_a_failure_while_writing_rolls_back_the_whole_file(
    pair: Pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worked_example(pair)
    store = pair.store
    export_text(store, tmp_path / "a.jsonl", pair.user_id, "nova")
    store.run(store.memory.purge(pair.user_id, "nova"))
    before = user_snapshot(pair, pair.user_id)
    monkeypatch.setattr("kg.transfer.store.BATCH", 3)  # many small batches, some already written

    def fail_late(phase: str, done: int, total: int) -> None:
        if done > total // 2:
            raise InvalidInput("interrupted on purpose")

    with pytest.raises(InvalidInput, match="on purpose"):
        store.run(store.memory.import_file(tmp_path / "a.jsonl", fail_late))
    assert user_snapshot(pair, pair.user_id) == before
    # The same file imports afterwards: nothing of the failed attempt was left behind.
    store.run(store.memory.import_file(tmp_path / "a.jsonl"))
    with pytest.raises(InvalidInput, match=r"a.jsonl:\d+: .* is in the store already"):
        store.run(store.memory.import_file(tmp_path / "a.jsonl"))


def test_import_refuses_another_users_entity(pair: Pair, tmp_path: Path) -> None:
    pair.write(t("Lena", "beruf", wert="Ärztin"))
    lena = pair.id_of("Lena")
    path = tmp_path / "steal.jsonl"
    other = f"{pair.user_id}-other"
    path.write_text("\n".join([
        json.dumps({"kind": "export", "format": 1, "user_id": other, "character_id": None}),
        json.dumps({"kind": "entitaet", "id": lena, "user_id": other, "name": "Lena",
                    "name_norm": "lena", "erstellt": None}),
    ]) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"steal.jsonl:2: entitaet .* belongs to another user"):
        pair.store.run(pair.store.memory.import_file(path))
    assert pair.cypher("MATCH (n:Nutzer {id: $u}) RETURN n", u=other) == []


def test_purge_leaves_every_other_pair_untouched(store: SyncMemory, tmp_path: Path) -> None:

    u1, u2 = new_user_id(), new_user_id()
    pairs = {(u, c): Pair(store, u, c) for u in (u1, u2) for c in ("nova", "luna")}
    for p in pairs.values():
        worked_example(p)
    pairs[(u1, "luna")].write(t("Kassel", "hat", wert="Herkules"))  # luna shares Kassel, Lena
    pairs[(u1, "nova")].write(t("Rex", "ist_ein", wert="Hund"))  # only nova knows Rex
    exports = {k: export_text(store, tmp_path / f"{k[0]}-{k[1]}.jsonl", *k) for k in pairs}
    u2_before = user_snapshot(pairs[(u2, "nova")], u2)

    result = store.run(store.memory.purge(u1, "nova"))
    # nova's facts: those of the worked example's orders (types included) + Rex's 2.
    nova = parse_lines(exports[(u1, "nova")].splitlines(), load_canon(), "nova")
    assert result.fakten == len(nova.fakten) and result.werte == sum(
        f.wert is not None for f in nova.fakten)
    assert (result.eintraege, result.nachfolger) == (2, 1)
    assert result.auftraege == len(nova.auftraege)
    assert result.entitaeten == 1  # Rex; the others are luna's too
    assert result.entitaeten_behalten == len(nova.entitaeten) - 1
    assert result.nutzer == 0
    for key in [(u1, "luna"), (u2, "nova"), (u2, "luna")]:
        assert export_text(store, tmp_path / "again.jsonl", *key) == exports[key], key
    # Nothing of the pair is left: its export is refused, and writes no file.
    with pytest.raises(InvalidInput, match="has nothing in this store"):
        store.run(store.memory.export(tmp_path / "gone.jsonl", u1, "nova"))
    assert not (tmp_path / "gone.jsonl").exists()

    result = store.run(store.memory.purge(u1))
    assert result.entitaeten == len(parse_lines(
        exports[(u1, "luna")].splitlines(), load_canon(), "x").entitaeten)
    assert result.nutzer == 1
    assert user_snapshot(pairs[(u1, "nova")], u1) == {
        "entities": 0, "facts": [], "values": 0, "entries": 0, "chains": 0, "orders": 0,
        "locks": 0}
    assert user_snapshot(pairs[(u2, "nova")], u2) == u2_before
    for key in [(u2, "nova"), (u2, "luna")]:
        assert export_text(store, tmp_path / "again.jsonl", *key) == exports[key], key
    store.run(store.memory.purge(u2))


# -- the CLI -----------------------------------------------------------------------------


def test_a_purge_of_nothing_is_refused_and_says_it_may_have_run(pair: Pair) -> None:
    """Found by a black-box attack: `kg purge --user <typo> --yes` answered "purged user
    ... (all characters)" with zero counts and exit 0, where `kg export` refuses a user
    with nothing in the store. A purge of a user, or of a pair, with nothing in the store
    is refused as export refuses it; the message says the purge may have run already, so
    a retry whose first answer was lost is understood."""
    store = pair.store
    nobody = new_user_id("nobody")
    with pytest.raises(NothingStored, match=f"user {nobody!r} has nothing in this store"):
        store.run(store.memory.purge(nobody))
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    before = user_snapshot(pair, pair.user_id)
    with pytest.raises(NothingStored, match=rf"pair \({pair.user_id!r}, 'ghost'\) has nothing"):
        store.run(store.memory.purge(pair.user_id, "ghost"))
    assert user_snapshot(pair, pair.user_id) == before
    store.run(store.memory.purge(pair.user_id, "nova"))
    with pytest.raises(NothingStored, match="purged already") as again:
        store.run(store.memory.purge(pair.user_id, "nova"))
    assert isinstance(again.value, InvalidInput) and again.value.exit_code == 2
    # The user's only pair gone, its entities and lock node went with it.
    with pytest.raises(NothingStored, match="purged already"):
        store.run(store.memory.purge(pair.user_id))


def test_a_purge_deletes_the_users_data_where_kg_check_finds_it_broken_by_hand(
    pair: Pair, cli_env: dict[str, str]
) -> None:
    """A stranger's attack (2026-12-07), two stores broken by hand. Another user's fact
    into the user's Anna: the whole user's purge answered exit 0 and kept Anna and the
    lock node, and a second purge said "nothing in this store". A value node with an
    edge out of it: the purge failed on the server's raw "still has relationships" and
    deleted nothing. Both purges go through now; the first says what else it cut."""
    store = pair.store
    other = Pair(store, new_user_id("other"))
    pair.write(t("Anna", "hobby", wert="Schach"))
    other.write(t("Lena", "hobby", wert="Go"))
    pair.cypher("MATCH (l:Entitaet {id: $l}), (a:Entitaet {id: $a}) "
                "CREATE (l)-[:BEFREUNDET_MIT {id: 'x1', user_id: $o, character_id: 'nova'}]->(a)",
                l=other.id_of("Lena"), a=pair.id_of("Anna"), o=other.user_id)
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[:HOBBY]->(w:Wert), (l:Entitaet {id: $l}) "
                "CREATE (w)-[:HOBBY {id: 'x2'}]->(l)", u=pair.user_id, l=other.id_of("Lena"))
    purged = CliRunner().invoke(app, ["purge", "-u", pair.user_id, "--yes"], env=cli_env)
    assert purged.exit_code == 0, purged.output
    assert "warning: deleted 1 edges of other users' data" in purged.output, purged.output
    left = pair.cypher("MATCH (n) WHERE n.user_id = $u OR (n:Nutzer AND n.id = $u) "
                       "RETURN count(n) AS n", u=pair.user_id)
    assert left == [{"n": 0}]
    with pytest.raises(NothingStored, match="purged already"):
        store.run(store.memory.purge(pair.user_id))
    # The other user's own data stays as it was.
    assert [f.wert for f in other.mappe("Lena").fakten] == ["Go"]


def test_a_pairs_purge_takes_the_users_clock(pair: Pair) -> None:
    """A review found that a pair's purge left the user's clock as it was: a Mappe of
    another pair of the user read while it ran could not tell (its clock did not move),
    and one after it stood at an instant before the purge. A pair's purge takes the
    clock as a write does (a whole user's deletes it)."""
    store = pair.store
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    luna = Pair(store, pair.user_id, "luna")
    luna.write(t("Lena", "beruf", wert="Ärztin"))
    lena = pair.id_of("Lena")
    before = store.run(store.memory.mappe(pair.user_id, "nova", lena)).stand
    store.run(store.memory.purge(pair.user_id, "luna"))
    after = store.run(store.memory.mappe(pair.user_id, "nova", lena)).stand
    assert before is not None and after is not None and after > before


def test_cli_export_purge_import_json(pair: Pair, tmp_path: Path, cli_env: dict[str, str]) -> None:
    worked_example(pair)
    runner = CliRunner()
    path = str(tmp_path / "pair.jsonl")
    scope = ["--user", pair.user_id, "--character", "nova"]

    done = runner.invoke(app, ["export", *scope, path, "--json"], env=cli_env)
    assert done.exit_code == 0, done.output
    exported = json.loads(done.stdout)
    assert exported["anzahl"]["eintraege"] == 2 and exported["anzahl"]["nachfolger"] == 1
    assert exported["zeilen"] == len(Path(path).read_text().splitlines())

    refused = runner.invoke(app, ["purge", *scope], env=cli_env)
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    assert user_snapshot(pair, pair.user_id)["entities"] > 0

    done = runner.invoke(app, ["purge", *scope, "--yes", "--json"], env=cli_env)
    assert done.exit_code == 0, done.output
    purged = json.loads(done.stdout)
    assert purged["fakten"] == exported["anzahl"]["fakten"]
    assert purged["entitaeten"] == exported["anzahl"]["entitaeten"] and purged["nutzer"] == 1

    done = runner.invoke(app, ["import", path, "--json"], env=cli_env)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["anzahl"] == exported["anzahl"]

    human = runner.invoke(app, ["export", *scope, str(tmp_path / "again.jsonl")], env=cli_env)
    assert human.exit_code == 0 and "entities" in human.stdout
    assert (tmp_path / "again.jsonl").read_bytes() == Path(path).read_bytes()


def test_cli_import_errors_are_one_line(tmp_path: Path, cli_env: dict[str, str]) -> None:
    runner = CliRunner()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(HEADER + "\n" + ENTITY + "\n" + fact(t_valid="gestern") + "\n")
    done = runner.invoke(app, ["import", str(bad)], env=cli_env)
    assert done.exit_code == 2
    assert "bad.jsonl:3: fakt: t_valid" in done.stderr and "nothing was imported" in done.stderr
    assert "Traceback" not in done.output and len(done.stderr.strip().splitlines()) == 1
    missing = runner.invoke(app, ["import", str(tmp_path / "nope.jsonl")], env=cli_env)
    assert missing.exit_code == 2 and "cannot read" in missing.stderr


def test_an_import_that_meets_a_newer_value_says_how_to_restore(
    pair: Pair, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """Found by a black-box attack: a pair's file imported after the pair had a newer
    value said "would break … einwertig_unique …; nothing was imported" and no more. It
    says what to do now (docs/export.md: export, purge, import) with the purge command of
    the file's pair, and that command makes the import go through."""
    runner = CliRunner()
    path = tmp_path / "pair.jsonl"
    pair.write(t("Lena", "wohnt_in", "München"))
    export_text(pair.store, path, pair.user_id, "nova")
    pair.store.run(pair.store.memory.purge(pair.user_id, "nova"))
    pair.write(t("Lena", "wohnt_in", "Köln"))

    refused = runner.invoke(app, ["import", str(path)], env=cli_env)
    assert refused.exit_code == 2, refused.output
    words = " ".join(refused.stderr.split())
    assert "einwertig_unique" in words and "nothing was imported" in words
    purge = f"kg purge --user {pair.user_id} --character nova --yes"
    assert f"holds nothing: if the store has data of it (written after the export), purge " \
           f"that first (`{purge}`" in words, words
    assert "or import the file into another store" in words
    assert len(refused.stderr.strip().splitlines()) == 1

    assert runner.invoke(app, purge.split()[1:], env=cli_env).exit_code == 0
    done = runner.invoke(app, ["import", str(path)], env=cli_env)
    assert done.exit_code == 0, done.output
    assert [f.objekt.name for f in pair.mappe("Lena").fakten if f.objekt] == ["München"]


@pytest.mark.parametrize(("target", "message"), [
    ("fifo", "is a device, pipe or socket, not a file"),
    ("dir", "is a directory, not a file"),
    ("link", "is a symbolic link, not a file"),
    ("readonly", "is read-only"),
    ("-", "export writes a file, not standard output"),
])
def test_export_replaces_only_a_regular_file(
    pair: Pair, tmp_path: Path, cli_env: dict[str, str], target: str, message: str
) -> None:
    """An export renames a finished copy over its target: a device or pipe there would
    become a plain file of the user's data (an attack turned /dev/full into one)."""
    import os

    pair.write(t("Lena", "wohnt_in", "Berlin"))
    path = tmp_path / target
    if target == "fifo":
        os.mkfifo(path)
    elif target == "dir":
        path.mkdir()
    elif target == "link":
        (tmp_path / "real.jsonl").write_text("kept\n")
        path.symlink_to(tmp_path / "real.jsonl")
    elif target == "readonly":
        path.write_text("kept\n")
        path.chmod(0o444)
    else:
        path = Path("-")
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(InvalidInput, match=message):
        pair.store.run(pair.store.memory.export(path, pair.user_id, "nova"))
    done = CliRunner().invoke(app, ["export", str(path), "-u", pair.user_id], env=cli_env)
    assert done.exit_code == 2 and message in done.stderr and "Traceback" not in done.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert path.is_fifo() if target == "fifo" else True


@pytest.mark.parametrize(("plant", "message"), [
    ("SET r.notiz = 'x'", r"property 'notiz', which export does not know"),
    ("SET r.t_valid = '2026-10-01T10:00:00Z'", r"property 't_valid' is a STRING"),
    ("SET r.decay_am = datetime('2026-12-03T00:00:00Z')", r"property 'decay_am' is a ZONED"),
    ("SET r.staerke_decay = 'stark'", r"staerke_decay: Input should be a valid number"),
])
def test_export_refuses_what_it_cannot_represent(
    pair: Pair, tmp_path: Path, plant: str, message: str
) -> None:
    from kg.errors import KgError

    pair.write(t("Lena", "hat_haustier", "Bello"))
    pair.cypher(f"MATCH (:Entitaet {{user_id: $u}})-[r:HAT_HAUSTIER]->() {plant}",
                u=pair.user_id)
    with pytest.raises(KgError, match=message):
        pair.store.run(pair.store.memory.export(tmp_path / "x.jsonl", pair.user_id))
    assert not (tmp_path / "x.jsonl").exists()


def test_export_writes_an_order_result_with_a_trailing_newline(
    pair: Pair, tmp_path: Path
) -> None:
    """The review: the refusal of padded texts caught an order's stored result with a
    newline at its end, which the export writes again as its JSON, losing nothing (and
    `kg check` names nothing)."""
    pair.write(t("Lena", "hat_haustier", "Bello"))
    pair.cypher("MATCH (a:Auftrag {user_id: $u}) SET a.ergebnis = a.ergebnis + '\n'",
                u=pair.user_id)
    target = tmp_path / "x.jsonl"
    pair.store.run(pair.store.memory.export(target, pair.user_id))
    assert '"kind":"auftrag"' in target.read_text(encoding="utf-8")


def test_export_of_a_relation_outside_the_canon_names_the_setting(
    pair: Pair, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """Facts written under an extension canon are exported with that canon: without it
    the export stops, writes no file and says which setting is missing (exit 2, a
    configuration error, like a canon file that cannot be read)."""
    from kg.api import Memory
    from kg.errors import ConfigError

    extra = tmp_path / "kanon.toml"
    extra.write_text('[[relation]]\nname = "farbe_x"\nvorwaerts = "mag die Farbe"\n'
                     'rueckwaerts = "Farbe von"\neinwertig = true\nobjekt = "wert"\n',
                     encoding="utf-8")
    extended = Memory(pair.store.memory.db, load_canon(extra))
    pair.store.run(extended.write(pair.order(t("Lena", "farbe_x", wert="Rot"))))
    target = tmp_path / "x.jsonl"
    with pytest.raises(ConfigError, match=r"FARBE_X.*KG_KANON_DATEI"):
        pair.store.run(pair.store.memory.export(target, pair.user_id))
    done = CliRunner().invoke(app, ["export", str(target), "-u", pair.user_id], env=cli_env)
    assert done.exit_code == 2 and "KG_KANON_DATEI" in done.stderr, done.output
    assert "Traceback" not in done.output and not target.exists()
    with_canon = CliRunner().invoke(app, ["export", str(target), "-u", pair.user_id],
                                    env={**cli_env, "KG_KANON_DATEI": str(extra)})
    assert with_canon.exit_code == 0, with_canon.output
    assert '"beziehung":"farbe_x"' in target.read_text().replace(" ", "")
