"""Review item 2: an import checks content with the writer's rules, not only structure.

Each reproduction of the review exited 0 before; each is refused now with `file:line`, and
nothing of the file is written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from kg.errors import InvalidInput, StoredDataError
from tests.conftest import Pair, new_user_id, raw_cypher, t
from tests.test_transfer import export_text, user_snapshot, worked_example


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def reseal(lines: list[str]) -> list[str]:
    """The header recomputed for changed lines (a tamperer who knows the format)."""
    head = json.loads(lines[0])
    body = lines[1:]
    counts = {k: 0 for k in head["anzahl"]}
    plural = {"entitaet": "entitaeten", "eintrag": "eintraege", "nachfolger": "nachfolger",
              "betrifft": "betrifft", "fakt": "fakten", "auftrag": "auftraege"}
    for line in body:
        rec = json.loads(line)
        counts[plural[rec["kind"]]] += 1
        if rec["kind"] == "fakt" and rec["wert"] is not None:
            counts["werte"] += 1
    digest = hashlib.sha256()
    for line in body:
        digest.update(line.encode("utf-8") + b"\n")
    head.update(anzahl=counts, sha256=digest.hexdigest())
    return [json.dumps(head, ensure_ascii=False, separators=(",", ":")), *body]


def change(
    lines: list[str], kind: str, where: Callable[[str], bool] = lambda line: True, **update: Any
) -> tuple[list[str], int]:
    """Change the first record of a kind (that `where` accepts); returns the lines and its
    1-based line number."""
    out = list(lines)
    at = next(i for i, line in enumerate(out) if f'"kind":"{kind}"' in line and where(line))
    out[at] = json.dumps(json.loads(out[at]) | update, ensure_ascii=False,
                         separators=(",", ":"))
    return out, at + 1


@pytest.fixture
def exported(pair: Pair, tmp_path: Path) -> list[str]:
    """The worked example of the pair, exported and then purged: ready to import."""
    worked_example(pair)
    export_text(pair.store, tmp_path / "good.jsonl", pair.user_id, "nova")
    pair.store.run(pair.store.memory.purge(pair.user_id, "nova"))
    return lines_of(tmp_path / "good.jsonl")


def refused(pair: Pair, path: Path, pattern: str) -> None:
    before = user_snapshot(pair, pair.user_id)
    with pytest.raises(InvalidInput, match=pattern):
        pair.store.run(pair.store.memory.import_file(path))
    assert user_snapshot(pair, pair.user_id) == before  # nothing written


def test_the_header_carries_counts_and_a_checksum(exported: list[str]) -> None:
    head = json.loads(exported[0])
    assert head["format"] == 2
    assert sum(v for k, v in head["anzahl"].items() if k != "werte") == len(exported) - 1
    assert reseal(exported) == exported


def test_a_file_cut_at_a_line_boundary_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """Review case 2a: no count, no checksum — 4 orders and a fact silently lost."""
    cut = write(tmp_path / "cut.jsonl", exported[:-5])
    refused(pair, cut, rf"cut.jsonl:{len(exported) - 4}: the header \(line 1\) announces "
                       r".*auftraege \d+ \(found \d+\).*cut short")


def test_a_file_saved_with_a_byte_order_mark_is_refused_in_words(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """A stranger's attack (2026-12-07): an export saved again by an editor that puts a
    BOM first was refused as "not valid JSON (Unexpected UTF-8 BOM (decode using
    utf-8-sig), column 1)": Python's words, and no advice."""
    refused(pair, write(tmp_path / "bom.jsonl", ["\ufeff" + exported[0], *exported[1:]]),
            r"bom.jsonl:1: the line begins with a byte order mark \(BOM\).* Save it as "
            "UTF-8 without a BOM")


def test_a_changed_line_is_refused_by_the_checksum(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    lines, _ = change(exported, "fakt", herkunft="recherche")
    refused(pair, write(tmp_path / "changed.jsonl", lines),
            r"changed.jsonl:1: the checksum of lines 2-\d+ does not match")


def test_a_corrupted_audit_result_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """Review case 2b: afterwards `kg audit list` and a replay crashed."""
    for ergebnis in ('{"kaputt": true}', "not json", json.dumps({
        "auftrag_id": "other", "user_id": pair.user_id, "character_id": "nova",
        "status": "ok", "zeitpunkt": "2026-10-01T00:00:00Z", "ergebnisse": []})):
        lines, at = change(exported, "auftrag", ergebnis=ergebnis)
        refused(pair, write(tmp_path / "audit.jsonl", reseal(lines)),
                rf"audit.jsonl:{at}: auftrag: .*ergebnis")


def test_a_wrong_name_norm_is_recomputed(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """Review case 2c: the entity could no longer be found by name, the next write
    created a second Lena, and `kg check` stayed green."""
    at = next(i for i, line in enumerate(exported) if '"name":"Lena"' in line)
    lines = list(exported)
    lines[at] = lines[at].replace('"name_norm":"lena"', '"name_norm":"anel"')
    result = pair.store.run(pair.store.memory.import_file(
        write(tmp_path / "norm.jsonl", reseal(lines))))
    assert any("name_norm" in w for w in result.warnungen)
    lena = pair.id_of("Lena")
    written = pair.write(t("Lena", "beruf", wert="Ärztin"))
    assert written.ergebnisse[0].subjekt_id == lena  # no second Lena
    names = pair.cypher("MATCH (e:Entitaet {user_id: $u, name_norm: 'lena'}) RETURN e.id AS id",
                        u=pair.user_id)
    assert names == [{"id": lena}]


@pytest.mark.parametrize(("kind", "update", "words"), [
    ("eintrag", {"beginn": "2026-12-17"}, "precision monat begins on the 1st"),
    ("eintrag", {"ende": "2027-01-17"}, "ends on its month's last day"),
    ("fakt", {"decay_am": "2099-01-01"}, "a day no decay sweep has reached"),
    # Out of the calendar once converted to UTC: the entity could no longer be read.
    ("fakt", {"t_valid": "9999-12-31T23:00:00-05:00"}, "outside the years 1-9999"),
    ("fakt", {"t_recorded": "0001-01-01T00:30:00+01:00"}, "outside the years 1-9999"),
    # (a stranger's attack, 2026-12-06) beyond the graph's 64-bit integers: "a bug in kg"
    ("fakt", {"version": 2**63}, "version: .*less than or equal to 9223372036854775807"),
    ("auftrag", {"anzahl_tripel": 10**30}, "anzahl_tripel: .*less than or equal to"),
    # (the same attack) a follower list that names none: `kg check` and the import passed
    # it, and a later correction left the value ended with nothing after it
    ("fakt", {"abgeloest_durch": []}, "abgeloest_durch: .*at least 1 item"),
    ("fakt", {"gesagt": True}, "gesagt marks a type fact a typ triple stated, not a fact of"),
    ("entitaet", {"namensvettern": []}, "namensvettern: .*at least 1 item"),
    # (a stranger's attack, 2026-12-07) an offset with seconds passed, and Neo4j's
    # datetime() refused it at the import's write: exit 1 with the server's words
    ("fakt", {"t_valid": "2026-06-01T10:00:00+01:00:30"}, r"offset \+01:00:30 has seconds"),
    ("entitaet", {"erstellt": "2026-12-07T13:51:27.258867+00:00:01"}, "has seconds"),
    # the type a triple carried, one of the five specific ones
    ("fakt", {"subjekt_typ": "sonstiges"}, "subjekt_typ: "),
])
def test_a_record_the_writer_could_not_have_written_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str], kind: str, update: dict[str, str],
    words: str,
) -> None:
    """A month entry from the 17th read as "Dezember" in the timeline, while the Mappe
    took the 17th; a decay_am in 2099 made every edge rest and `kg check` fail after an
    import that passed."""
    # (a type fact may carry `gesagt`: the fact changed is another one)
    lines, at = change(exported, kind, lambda line: ("monat" in line or kind != "eintrag")
                       and '"beziehung":"typ"' not in line, **update)
    refused(pair, write(tmp_path / "rec.jsonl", reseal(lines)),
            rf"rec.jsonl:{at}: {kind}: .*{words}")


def test_an_entity_named_its_own_namesake_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """`namensvettern` names the user's other entities of its name (the review)."""
    at = next(i for i, line in enumerate(exported) if '"kind":"entitaet"' in line)
    own = json.loads(exported[at])["id"]
    lines, line = change(exported, "entitaet", namensvettern=[own])
    assert line == at + 1
    refused(pair, write(tmp_path / "self.jsonl", reseal(lines)),
            rf"self.jsonl:{line}: entitaet: .*namensvettern names the entity itself")


@pytest.mark.parametrize(("name", "words"), [
    ("L" * 300_000, "at most 200 characters"),
    ("Le\x00na", "control characters"),
])
def test_a_name_the_writer_would_refuse_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str], name: str, words: str
) -> None:
    """Review case 2d: a 300k-character name with NUL and an RTL override."""
    lines, at = change(exported, "entitaet", name=name)
    refused(pair, write(tmp_path / "name.jsonl", reseal(lines)),
            rf"name.jsonl:{at}: entitaet: name: .*{words}")


def test_an_rtl_override_is_normalised_away(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """A name is cleaned as a write cleans it: bidi controls, line separators and
    invisible format characters (a zero-width space) go from the stored name too."""
    at = next(i for i, line in enumerate(exported) if '"name":"Lena"' in line)
    lines = list(exported)
    lines[at] = lines[at].replace('"name":"Lena"', '"name":"Le\u202en\u200ba\u2028"')
    pair.store.run(pair.store.memory.import_file(write(tmp_path / "rtl.jsonl", reseal(lines))))
    names = pair.cypher("MATCH (e:Entitaet {user_id: $u}) WHERE e.name STARTS WITH 'Le' "
                        "RETURN e.name AS name", u=pair.user_id)
    assert names == [{"name": "Lena"}]


def test_a_fact_id_of_another_user_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """Review case 2e: a fact id already owned by another user."""
    other = Pair(pair.store, new_user_id())
    try:
        other.write(t("Tom", "beruf", wert="Koch"))
        (theirs,) = other.cypher("MATCH (:Entitaet {user_id: $u})-[r:BERUF]->() "
                                 "RETURN r.id AS id", u=other.user_id)
        # A fact no other record names (another version's `abgeloest_durch` would name
        # the changed id, and the import would refuse that first: which fact comes first
        # in the file follows the random ids).
        def unnamed(line: str) -> bool:
            fid = json.loads(line)["id"]
            return sum(fid in other for other in exported if '"kind":"fakt"' in other) == 1

        lines, _ = change(exported, "fakt", unnamed, id=theirs["id"])
        refused(pair, write(tmp_path / "steal.jsonl", reseal(lines)),
                rf"steal.jsonl:\d+: fakt '{theirs['id']}' belongs to another user")
    finally:
        pair.store.run(pair.store.memory.purge(other.user_id))


def test_an_entry_id_of_another_user_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    other = Pair(pair.store, new_user_id())
    try:
        written = other.write(t("Tom", "wohnt_in", "Rom", ereignis={
            "titel": "Tom zieht", "beginn": "2026-11-01"}))
        theirs = written.ergebnisse[0].timeline_id
        first = json.loads(next(x for x in exported if '"kind":"eintrag"' in x))["id"]
        lines = [x.replace(first, theirs) for x in exported]
        refused(pair, write(tmp_path / "entry.jsonl", reseal(lines)),
                rf"entry.jsonl:\d+: eintrag '{theirs}' belongs to another user")
    finally:
        pair.store.run(pair.store.memory.purge(other.user_id))


def test_a_timeline_the_writer_could_not_have_made_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """An entry naming two people (`kg timeline` listed it once per person), a moved
    entry about another person than the one it follows, and a chain that forks: each
    line alone is valid, and the import took the first two."""
    entries = [json.loads(x) for x in exported if '"kind":"eintrag"' in x]
    link = json.loads(next(x for x in exported if '"kind":"nachfolger"' in x))
    about = [json.loads(x) for x in exported if '"kind":"betrifft"' in x]
    bello = json.loads(next(x for x in exported if '"name":"Bello"' in x))["id"]
    assert len(entries) == 2 and len(about) == 2

    def line(rec: dict[str, Any]) -> str:
        return json.dumps(rec, ensure_ascii=False, separators=(",", ":"))

    two = [*exported, line(about[0] | {"entitaet": bello})]
    refused(pair, write(tmp_path / "two.jsonl", reseal(two)),
            rf"two.jsonl:\d+: betrifft: entry '{about[0]['eintrag']}' already names")
    moved = next(line(b) for b in about if b["eintrag"] == link["nach"])
    other = [line(json.loads(x) | {"entitaet": bello}) if x == moved else x for x in exported]
    refused(pair, write(tmp_path / "other.jsonl", reseal(other)),
            r"other.jsonl:\d+: nachfolger: .* names another person")
    third = entries[0] | {"id": entries[0]["id"] + "-b"}
    fork = [*exported, line(third),
            line(link | {"nach": third["id"]}),
            line({"kind": "betrifft", "eintrag": third["id"], "entitaet": about[0]["entitaet"]})]
    refused(pair, write(tmp_path / "fork.jsonl", reseal(fork)),
            r"fork.jsonl:\d+: nachfolger: .*a chain does not fork")


def test_a_file_that_breaks_an_invariant_writes_nothing(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """Every line is valid alone, but together they break `kg check --user`: two active
    places of residence (wohnt_in is einwertig)."""
    lines = list(exported)
    at = next(i for i, x in enumerate(lines) if '"kind":"fakt"' in x and '"aktiv":false' in x
              and '"beziehung":"wohnt_in"' in x)
    rec = json.loads(lines[at]) | {"aktiv": True, "t_invalid": None, "t_expired": None,
                                   "grund": None, "timeline_bis": None}
    lines[at] = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
    refused(pair, write(tmp_path / "two.jsonl", reseal(lines)),
            r"two.jsonl: with this file the store would break .*einwertig_unique")


def test_a_fact_without_its_order_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """Every fact comes from an audited order: a file whose fact names none is refused
    at its line, as `kg check` reports such a fact; and an export refuses to write one
    (it wrote a file its own import refused)."""
    lines, at = change(exported, "fakt", auftrag_id=None)
    refused(pair, write(tmp_path / "orderless.jsonl", reseal(lines)),
            rf"orderless.jsonl:{at}: fakt: auftrag_id")
    pair.store.run(pair.store.memory.import_file(tmp_path / "good.jsonl"))
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r]->() REMOVE r.auftrag_id", u=pair.user_id)
    with pytest.raises(StoredDataError, match=r"auftrag_id.* run `kg check`"):
        pair.store.run(pair.store.memory.export(tmp_path / "again.jsonl", pair.user_id))


def test_an_old_file_without_counts_imports_with_a_warning(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    head = json.loads(exported[0])
    old = json.dumps({"kind": "export", "format": 1, "user_id": head["user_id"],
                      "character_id": head["character_id"]}, separators=(",", ":"))
    result = pair.store.run(pair.store.memory.import_file(
        write(tmp_path / "old.jsonl", [old, *exported[1:]])))
    assert any("format 1 without record counts and checksum" in w for w in result.warnungen)
    assert result.anzahl.fakten == head["anzahl"]["fakten"]
    # and it exports again as format 2, byte-identical to the first export
    again = export_text(pair.store, tmp_path / "again.jsonl", pair.user_id, "nova")
    assert again.splitlines() == exported


def test_the_cli_says_file_line_and_exits_2(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    cut = write(tmp_path / "cut.jsonl", exported[:-1])
    got = CliRunner().invoke(app, ["import", str(cut)])
    assert got.exit_code == 2, got.output
    assert "cut.jsonl:" in got.output and "nothing was imported" in got.output
    assert "Traceback" not in got.output


def test_every_single_character_tampering_is_refused() -> None:
    """Pure (no database): each character of a format 2 file replaced, each line dropped
    or doubled — every variant is refused. Prints the figure for the attack table."""
    from kg.canon import load_canon
    from kg.transfer import parse_lines
    from tests.test_transfer import ENTITY, HEADER, fact

    canon = load_canon()
    good = parse_lines([HEADER, ENTITY, fact()], canon, "x").lines()
    assert parse_lines(good, canon, "x").anzahl().fakten == 1
    variants: list[list[str]] = []
    for i, line in enumerate(good):
        for j, char in enumerate(line):
            for other in {"0", "x", " ", "\u2028"} - {char}:
                variants.append([*good[:i], line[:j] + other + line[j + 1:], *good[i + 1:]])
        variants.append(good[:i] + good[i + 1:])  # a line dropped
        variants.append([*good[: i + 1], line, *good[i + 1:]])  # a line doubled
    refused = 0
    for lines in variants:
        try:
            parse_lines(lines, canon, "x")
        except InvalidInput:
            refused += 1
    print(f"[import tampering] {len(variants)} variants of a 3-line file, {refused} refused")
    assert refused == len(variants)


def test_an_order_without_its_content_hash_is_never_taken_for_a_replay(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """An order recorded without its content hash (older stores; here imported so) had
    answered every later order of its id as its replay: `wiederholt`, nothing written.
    The import takes it (what export writes, import takes); a later order of that id is
    refused, with nothing written."""
    lines, _ = change(exported, "auftrag", inhalt=None)
    pair.store.run(pair.store.memory.import_file(write(tmp_path / "old.jsonl", reseal(lines))))
    auftrag_id = json.loads(next(line for line in lines if '"kind":"auftrag"' in line))["id"]
    before = user_snapshot(pair, pair.user_id)
    with pytest.raises(InvalidInput, match="recorded without its content"):
        pair.write(t("Lena", "beruf", wert="Pilotin"), auftrag_id=auftrag_id)
    assert user_snapshot(pair, pair.user_id) == before


def test_an_export_writes_a_stored_value_as_it_is_or_fails(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """A text 'yes' set by hand where a boolean belongs (`gesagt`, `aktiv`) was exported
    as true: the export changed the value instead of failing, as docs/export.md says it
    does (`kg check`'s fact_fields reports it)."""
    pair.store.run(pair.store.memory.import_file(tmp_path / "good.jsonl"))
    pair.cypher("MATCH (:Entitaet {user_id: $u})-[r:TYP]->() SET r.gesagt = 'yes'",
                u=pair.user_id)
    with pytest.raises(StoredDataError, match=r"gesagt.* run `kg check`"):
        pair.store.run(pair.store.memory.export(tmp_path / "again.jsonl", pair.user_id))


def test_a_file_recorded_after_the_stores_clock_is_refused_at_its_line(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """A review found that the import's clock (the user's, which a Mappe read after it
    stands at) could come before the file's own system times: a store whose clock ran
    ahead, or a file edited by hand, within the check's second of grace or during a long
    import. Any system time after the import's clock is refused, at its line (a fact's:
    `test_import_refuses_a_system_time_after_now`), an entity's too, which no check
    compares with the clock."""
    lines, at = change(exported, "entitaet", erstellt="2030-01-01T00:00:00Z")
    refused(pair, write(tmp_path / "born.jsonl", reseal(lines)),
            rf"born.jsonl:{at}: entitaet '.*' has erstellt")


def test_a_file_with_nothing_an_export_holds_is_refused(
    pair: Pair, tmp_path: Path, exported: list[str]
) -> None:
    """Found by a stranger's attack: a header alone, or a header with entities alone,
    imported with exit 0; the entities were then seen by check and purge while `kg
    export` of the user refused it ("has nothing"). No export is without a fact, an
    entry or an order, so an import is not either. And `kg import -` said "cannot read
    -: No such file or directory" where `kg export -` says what to do."""
    entities = [line for line in exported[1:] if '"kind":"entitaet"' in line]
    for name, body in (("header.jsonl", []), ("entities.jsonl", entities)):
        path = write(tmp_path / name, reseal([exported[0], *body]))
        refused(pair, path, rf"{name} holds no fact, timeline entry or order .*; nothing "
                            "was imported")
    assert pair.store.run(raw_cypher(pair.store, "MATCH (e:Entitaet {user_id: $u}) "
                                     "RETURN count(e) AS n", u=pair.user_id)) == [{"n": 0}]
    done = CliRunner().invoke(app, ["import", "-"])
    assert done.exit_code == 2, done.output
    assert "import reads a file, not standard input" in done.output, done.output
