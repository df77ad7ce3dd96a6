"""Review items 5 and 6: no traceback ever reaches a user of the CLI.

Each reproduction of the review is a case here (bad input: exit 2 with what was wrong),
and a hypothesis fuzz test drives the CLI with generated arguments, files and
environment values: no output holds a traceback, every exit code is a documented one.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from cli.main import app
from kg.api import SyncMemory
from tests.conftest import SESSION_PREFIX, Pair, new_user_id, raw_cypher, t, users_under

runner = CliRunner()

#: The exit codes of `kg` (cli/main.py): 0 ok; 1 not fully written / violations; 2 bad
#: input; 3 Neo4j unreachable, auth, database; 4 schema; 5 launcher; 6 unknown entity;
#: 7 ambiguous name; 8 timeline rule.
DOCUMENTED = set(range(9))


def run(args: list[str], env: dict[str, str] | None = None, data: bytes | None = None) -> Result:
    return runner.invoke(app, args, env=env, input=data)


def clean(result: Result) -> None:
    """No traceback, no escaped exception, a documented exit code."""
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        repr(result.exception), result.output)
    assert result.exit_code in DOCUMENTED, (result.exit_code, result.output)


def bad_input(result: Result, *words: str) -> None:
    clean(result)
    assert result.exit_code == 2, result.output
    assert "error:" in result.output
    # (an empty line after it: `kg decay run` left one, its progress bar stopping)
    assert not result.output.endswith("\n\n"), result.output
    for word in words:
        assert word in result.output, result.output


def order(**change: Any) -> dict[str, Any]:
    return {"auftrag_id": f"o-{uuid.uuid4().hex[:8]}", "user_id": new_user_id("fuzz"),
            "character_id": "nova",
            "tripel": [{"subjekt": "Lena", "beziehung": "beruf", "wert": "Ärztin",
                        "herkunft": "mensch"}]} | change


# -- the reproductions ---------------------------------------------------------------------


def test_deeply_nested_json(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    bad_input(run(["write", str(path)]), "nested too deeply")
    bad_input(run(["write", "-"], data=b"{\"a\":" * 100_000), "nested too deeply")


def test_a_latin_1_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(json.dumps(order(), ensure_ascii=False).encode("latin-1"))
    bad_input(run(["write", str(path)]), "not UTF-8", "save the order as UTF-8")


def test_an_order_saved_with_a_byte_order_mark_is_read(pair: Pair, tmp_path: Path) -> None:
    """A stranger's attack (2026-12-07): an order saved with a BOM (as some editors save
    UTF-8) was refused with Python's "Unexpected UTF-8 BOM (decode using utf-8-sig)". RFC
    8259 lets a reader ignore it, and the order is read."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(order(user_id=pair.user_id)).encode())
    done = run(["write", str(path)])
    assert done.exit_code == 0 and "geschrieben" in done.output, done.output
    assert [f.wert for f in pair.mappe("Lena").fakten] == ["Ärztin"]


@pytest.mark.parametrize("zeitpunkt", ["0001-01-01T00:00:00+05:00",
                                       "9999-12-31T23:59:59-05:00"])
def test_a_zeitpunkt_out_of_range(tmp_path: Path, zeitpunkt: str) -> None:
    path = tmp_path / "o.json"
    path.write_text(json.dumps(order(zeitpunkt=zeitpunkt)))
    bad_input(run(["write", str(path)]), "zeitpunkt", "out of range")


def test_timeline_move_with_ende_before_beginn(store: SyncMemory) -> None:
    bad_input(run(["timeline", "move", "x", "-u", "fuzz-u", "-c", "nova",
                   "--beginn", "2026-12-10", "--ende", "2026-12-01"]),
              "ende 2026-12-01 is before beginn 2026-12-10")


def test_decay_run_of_an_unknown_user_is_one_error(store: SyncMemory) -> None:
    bad_input(run(["decay", "run", "--user", "nobody-at-all"]), "has nothing in this store")


def test_timeline_move_with_both_precisions(store: SyncMemory) -> None:
    """`--monat --tag`: a flag pair let the last one win without a word."""
    bad_input(run(["timeline", "move", "x", "-u", "fuzz-u", "-c", "nova",
                   "--beginn", "2026-12-10", "--monat", "--tag"]),
              "give --monat or --tag, not both")


def test_mappe_gueltig_am_at_the_end_of_time(pair: Pair) -> None:
    pair.write({"subjekt": "Lena", "beziehung": "beruf", "wert": "Ärztin", "herkunft": "mensch"})
    base = ["mappe", "Lena", "-u", pair.user_id, "-c", "nova"]
    bad_input(run([*base, "--gueltig-am", "9999-12-31T23:59:59-05:00"]), "outside the years")
    bad_input(run([*base, "--bekannt-am", "0001-01-01T00:00:00+05:00"]), "outside the years")
    for edge in ("9999-12-31", "0001-01-01", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z"):
        clean(run([*base, "--gueltig-am", edge]))
        clean(run([*base, "--bekannt-am", edge]))


@pytest.mark.parametrize("uri", ["http://127.0.0.1:7474", "not a uri", "bolt://[::1"])
def test_a_bad_neo4j_uri(uri: str) -> None:
    bad_input(run(["status"], env={"NEO4J_URI": uri}), "NEO4J_URI")


def test_a_bad_query_timeout(store: SyncMemory) -> None:
    bad_input(run(["status"], env={"KG_QUERY_TIMEOUT": "abc"}), "KG_QUERY_TIMEOUT")


def test_a_remote_uri_needs_a_password() -> None:
    bad_input(run(["status"], env={"NEO4J_URI": "bolt://db.example.org:7687",
                                   "NEO4J_PASSWORD": ""}), "NEO4J_PASSWORD is not set")


def test_the_entity_list_needs_the_pair() -> None:
    """A type and a fact count belong to a pair: without --character there is no list."""
    got = run(["entities", "-u", "u1"])
    clean(got)
    assert got.exit_code == 2 and "--character" in got.output


def test_markup_in_a_name_is_printed_as_it_is(pair: Pair) -> None:
    pair.write({"subjekt": "[bold]Le[/]na[/red]", "beziehung": "beruf", "wert": "[link=x]",
                "herkunft": "mensch"})
    got = run(["entities", "-u", pair.user_id, "-c", "nova"])
    clean(got)
    assert "[bold]Le[/]na[/red]" in got.output
    missing = run(["mappe", "[/]", "-u", pair.user_id, "-c", "nova"])
    clean(missing)
    assert missing.exit_code == 6 and "[/]" in missing.output


def test_an_argument_that_is_not_utf_8_is_bad_input(pair: Pair) -> None:
    """A byte that is not UTF-8 in an argument (a terminal in Latin-1) reaches Python as
    a lone surrogate. The driver cannot send it: "unexpected UnicodeEncodeError — this
    is a bug in kg" for an entity's name (a stranger's attack); the ids were refused
    cleanly already."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    name = "Le\udcffna"
    lena = pair.id_of("Lena")
    for args in (["mappe", name], ["history", name],
                 ["timeline", "add", "--typ", "ereignis", "--titel", "Umzug", "--beginn",
                  "2026-03-01", "--betrifft", name]):
        bad_input(run([*args, "-u", pair.user_id, "-c", "nova"]), "not UTF-8")
    bad_input(run(["timeline", "add", "--typ", "ereignis", "--titel", name, "--beginn",
                   "2026-03-01", "-u", pair.user_id, "-c", "nova"]), "unicode string")
    bad_input(run(["history", lena, "--beziehung", name, "-u", pair.user_id, "-c", "nova"]),
              "unknown relation")


# -- the fuzz test -------------------------------------------------------------------------

HOSTILE = st.sampled_from(["", " ", "[/]", "[bold]", "\x00", "\u2028", "\u202e", "-", "--",
                           "Le\udcffna",
                           "x" * 5000, "9999-12-31", "0001-01-01", "2026-13-45", "nan", "-1",
                           "1e999", "0", "Lena", "{}", "null", "%s", "\\", "../../etc/passwd"])
TEXT = st.one_of(HOSTILE, st.text(max_size=30))
DAY = st.one_of(HOSTILE, st.dates().map(str), st.text(max_size=12))
WHEN = st.one_of(DAY, st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
                 st.sampled_from(["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+14:00"]))
NUMBER = st.one_of(HOSTILE, st.integers(min_value=-(10**20), max_value=10**20).map(str))
DEEP = st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "]" * n)


def under_prefix(value: Any) -> Any:
    """`value` with every text `user_id` in it put under the session's prefix (its text
    after it): an order of a file can be valid, and is then written for its user."""
    if isinstance(value, dict):
        return {k: f"{SESSION_PREFIX}fuzz-{v}" if k == "user_id" and isinstance(v, str)
                else under_prefix(v) for k, v in value.items()}
    if isinstance(value, list):
        return [under_prefix(v) for v in value]
    return value


ORDERISH_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["auftrag_id", "user_id", "character_id", "tripel", "subjekt",
                         "beziehung", "wert", "objekt", "herkunft", "zeitpunkt", "id", "neu",
                         "berichtigungen", "ereignis", "beginn", "ende", "kind", "format"]),
        inner, max_size=6),
    max_leaves=12,
).map(under_prefix)
# (A text may hold a lone surrogate, "Le\udcffna": it becomes the byte it stands for,
# a file that is not UTF-8; encoded strictly, the draw itself failed now and then.)
ORDERISH = ORDERISH_VALUE.map(
    lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogateescape"))
FILE = st.one_of(ORDERISH, DEEP.map(str.encode), st.binary(max_size=200),
                 st.just(json.dumps(order()).encode()),
                 st.just(json.dumps(order(zeitpunkt="0001-01-01T00:00:00+05:00")).encode()),
                 st.just(b'{"kind":"export","format":2,"user_id":"%sfuzz-x"}\n'
                         % SESSION_PREFIX.encode()),
                 st.just('{"kind":"export","format":1,"user_id":"@fuzz-x","character_id":null}'
                         '\n{"kind":"entitaet","id":"e","user_id":"@fuzz-x","name":"\u202e",'
                         '"name_norm":"x"}\n'.replace("@", SESSION_PREFIX).encode()))
USER = st.one_of(TEXT, st.just(f"{SESSION_PREFIX}fuzz-nobody"))
#: The user of a command that writes: a random text may be a valid id, and what it
#: wrote would outlive the session on a named test server. So it is under the session's
#: prefix (still with every hostile character after it), or empty.
WRITER = st.one_of(st.just(""), TEXT.map(lambda text: f"{SESSION_PREFIX}fuzz-{text}"))


def commands(path: str, out: str) -> st.SearchStrategy[list[str]]:
    return st.one_of(
        st.tuples(st.just("write"), st.just(path)).map(list),
        st.tuples(st.just("import"), st.just(path)).map(list),
        st.builds(lambda n, u, w: ["mappe", n, "-u", u, "-c", "nova", "--gueltig-am", w],
                  TEXT, USER, WHEN),
        st.builds(lambda n, u, w: ["mappe", n, "-u", u, "-c", "nova", "--bekannt-am", w,
                                   "--text"], TEXT, USER, WHEN),
        st.builds(lambda n, u, c: ["mappe", n, "-u", u, "-c", "nova", "--cap", c],
                  TEXT, USER, NUMBER),
        st.builds(lambda n, u: ["history", n, "-u", u, "-c", "nova"], TEXT, USER),
        st.builds(lambda u, n: ["entities", "-u", u, "-c", "nova", "--limit", n], USER, NUMBER),
        st.builds(lambda i, u, b, e: ["timeline", "move", i, "-u", u, "-c", "nova",
                                      "--beginn", b, "--ende", e], TEXT, USER, DAY, DAY),
        st.builds(lambda u, m: ["timeline", "list", "-u", u, "-c", "nova", "--month", m],
                  USER, TEXT),
        st.builds(lambda u, a, b: ["timeline", "list", "-u", u, "-c", "nova", "--from", a,
                                   "--to", b], USER, DAY, DAY),
        st.builds(lambda u, ti, b: ["timeline", "add", "-u", u, "-c", "nova", "--typ",
                                    "ereignis", "--titel", ti, "--beginn", b], WRITER, TEXT,
                  DAY),
        st.builds(lambda i, u, n: ["timeline", "link", i, "-u", u, "-c", "nova", "--betrifft",
                                   n], TEXT, WRITER, TEXT),
        st.builds(lambda u, n: ["audit", "list", "-u", u, "--limit", n], USER, NUMBER),
        st.builds(lambda u, d: ["check", "--user", u, "--on", d], USER, DAY),
        st.builds(lambda u, s, w, h: ["correct", "-u", u, "-c", "nova", "--subjekt", s,
                                      "--beziehung", "beruf", "--wert", w, "--herkunft", h],
                  WRITER, TEXT, TEXT, st.one_of(st.just("mensch"), TEXT)),
        st.builds(lambda u: ["export", out, "-u", u], USER),
        st.builds(lambda d: ["decay", "run", "--as-of", d, "--user",
                             f"{SESSION_PREFIX}fuzz-nobody"], DAY),
    )


ENVS = st.fixed_dictionaries({}, optional={
    "NEO4J_URI": st.sampled_from(["http://127.0.0.1:7474", "not a uri", "bolt://[::1",
                                  "bolt://127.0.0.1:1", "bolt://db.example.org:7687", "",
                                  "bolt+s://127.0.0.1:1"]),
    "KG_QUERY_TIMEOUT": st.sampled_from(["abc", "-1", "0", "1e999", "nan", ""]),
    "KG_MAPPE_CAP": st.sampled_from(["0", "x", "99999999"]),
    "KG_KANON_DATEI": st.sampled_from(["/nonexistent.toml", "/etc/passwd", "/dev/null"]),
    "NEO4J_DATABASE": st.sampled_from(["nope", "", "[/]"]),
})


#: What the fuzz drew in the running test (its files' text and its arguments).
DRAWN: list[str] = []


@pytest.fixture
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory, store: SyncMemory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("fuzz")
    before = set(store.run(users_under(store, "")))
    DRAWN.clear()
    yield folder
    # Every user the fuzz wrote is under a test session's prefix, so that a session's
    # purge finds it. A new user outside every prefix that the fuzz named (in an argument
    # or a file) was written by it; others may be another session's, on a shared server.
    strays = {u for u in set(store.run(users_under(store, ""))) - before
              if not re.match(r"ts[0-9a-f]{6}-", u) and any(u in text for text in DRAWN)}
    mine = f"{SESSION_PREFIX}fuzz-"  # this session's, never another's
    store.run(raw_cypher(store, "MATCH (n) WHERE n.user_id STARTS WITH $p DETACH DELETE n",
                         p=mine))
    store.run(raw_cypher(store, "MATCH (n:Nutzer) WHERE n.id STARTS WITH $p DETACH DELETE n",
                         p=mine))
    assert not strays, f"the fuzz wrote users outside the session's prefix: {sorted(strays)}"


@settings(max_examples=int(os.environ.get("KG_FUZZ_EXAMPLES", "120")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_fuzz_the_cli(fuzz_dir: Path, data: st.DataObject) -> None:
    path = fuzz_dir / "input.json"
    path.write_bytes(content := data.draw(FILE, label="file"))
    args = data.draw(commands(str(path), str(fuzz_dir / "out.jsonl")), label="args")
    DRAWN.extend([content.decode(errors="replace"), *args])
    env = {"KG_CONNECTION_TIMEOUT": "2", "KG_RETRY_TIME": "0"}
    env |= data.draw(ENVS, label="env")
    clean(run(args, env=env))


#: The commands of `commands` that write to the store, and where their user is.
WRITING = {("timeline", "add"): "-u", ("timeline", "link"): "-u", ("correct",): "-u",
           ("decay", "run"): "--user"}


@settings(max_examples=300, deadline=None)
@given(args=commands("input.json", "out.jsonl"))
def test_the_fuzz_writes_only_under_the_session_prefix(args: list[str]) -> None:
    """A command that writes names a user under the session's prefix (or an empty,
    invalid one): a plain random id would stay on a named test server after the
    session's purge. Before, `timeline add` and `correct` drew any text as the user."""
    for command, flag in WRITING.items():
        if tuple(args[:len(command)]) == command:
            user = args[args.index(flag) + 1]
            assert user == "" or user.startswith(SESSION_PREFIX), args


def user_ids(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from [v] if k == "user_id" else user_ids(v)
    elif isinstance(value, list):
        for v in value:
            yield from user_ids(v)


@settings(max_examples=300, deadline=None)
@given(value=ORDERISH_VALUE)
def test_the_fuzz_files_name_only_users_under_the_session_prefix(value: Any) -> None:
    """An order of a fuzzed file may be valid (`{"auftrag_id":"0","user_id":"Lena",
    "character_id":"nan","tripel":[{}]}` is written as a refused order of user Lena):
    every text user_id in it is under the session's prefix."""
    for user in user_ids(value):
        assert not isinstance(user, str) or user.startswith(SESSION_PREFIX), value


def test_a_point_of_time_is_never_a_number() -> None:
    """The library's instant() and the MCP server's read options: 0 is no day of 1970."""
    from pydantic import TypeAdapter, ValidationError

    from kg.errors import InvalidInput
    from kg.models import instant
    from kg_mcp.server import WhenArg

    with pytest.raises(InvalidInput, match="not int"):
        instant(0, "gueltig_am")  # type: ignore[arg-type]
    for number in (0, 86400, 1.5, True):
        with pytest.raises(ValidationError, match="must be a date, an instant or ISO 8601 "
                           r"text, not (int|float|bool)"):
            TypeAdapter(WhenArg).validate_python(number)


@pytest.mark.parametrize("text", ["20260101", "2026-W01", "2026-001", "2026-01-01X10:00Z"])
def test_a_point_of_time_is_a_date_or_an_instant_as_the_docs_write_them(text: str) -> None:
    """`20260101` (ISO basic) and `2026-W01` (a week) were read as midnight instants and
    refused for lacking a zone, with a hint at the day's start, where a bare date means
    its end. Only YYYY-MM-DD and an instant after it are points of time here."""
    from kg.errors import InvalidInput
    from kg.models import instant

    with pytest.raises(InvalidInput, match="is neither a date"):
        instant(text, "gueltig_am")
    done = run(["mappe", "Lena", "-u", "u1", "-c", "nova", "--gueltig-am", text])
    bad_input(done, "is neither a date")


def test_a_long_bad_point_of_time_is_quoted_cut_short() -> None:
    """A docs check: a 319-character `gueltig_am` came back whole in a 463-character
    error (and an order's `zeitpunkt` too). An error quotes what was wrong, cut after 40
    characters."""
    from kg.api import parse_order
    from kg.errors import InvalidInput
    from kg.models import instant

    long = "2026-" + "x" * 300
    with pytest.raises(InvalidInput) as refused:
        instant(long, "gueltig_am")
    assert "x" * 41 not in str(refused.value) and "…" in str(refused.value)
    assert len(str(refused.value)) < 200
    order = {"auftrag_id": "a", "user_id": "u", "character_id": "c", "zeitpunkt": "s" * 300,
             "tripel": []}
    with pytest.raises(InvalidInput, match="zeitpunkt") as refused:
        parse_order(order)
    assert "s" * 41 not in str(refused.value) and "…" in str(refused.value)
    with pytest.raises(InvalidInput, match="zeitpunkt: 0 is not an ISO 8601 instant"):
        parse_order({**order, "zeitpunkt": 0})


def test_a_span_moved_to_the_end_of_the_calendar_is_bad_input(pair: Pair) -> None:
    from datetime import date

    from kg.errors import InvalidInput
    from kg.models import NeuerEintrag

    span = NeuerEintrag(typ="termin", titel="Urlaub", beginn=date(2026, 12, 20),
                        ende=date(2026, 12, 27))
    entry = pair.store.run(pair.store.memory.timeline_add(pair.user_id, "nova", span))
    with pytest.raises(InvalidInput, match="would end after 9999-12-31: give its end"):
        pair.store.run(pair.store.memory.timeline_move(
            pair.user_id, "nova", entry.id, date(9999, 12, 30)))


def test_a_configuration_file_that_is_not_utf8_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """.env, the extension canon and the MCP tokens file: each one not UTF-8 is bad input
    (exit 2, the file named), never "a bug in kg"."""
    from kg.canon import load_canon
    from kg.errors import ConfigError

    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\xff\xfe not text")
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        load_canon(garbage)
    bad_input(run(["mcp", "token", "list", "--tokens-file", str(garbage)]), "not UTF-8 text")
    bad_input(run(["browser", "historie", "-u", "u1", "-c", "nova", "--entity", "Lena",
                   "--beziehung", "wohnt_in"], env={"KG_KANON_DATEI": str(garbage)}),
              "not UTF-8 text")
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_bytes(b"NEO4J_URI=bolt://127.0.0.1:1\n\xff\xfe=x\n")
    bad_input(run(["status"]), ".env is not UTF-8 text")


@pytest.mark.parametrize(("flag", "value", "why"), [
    ("-u", "", "must not be empty"),
    ("-u", "u\nx", "control characters"),
    ("-u", "u" * 5000, "at most"),
    ("-c", "", "must not be empty"),
])
def test_a_timeline_entry_needs_ids_as_an_order_does(
    store: SyncMemory, cli_env: dict[str, str], flag: str, value: str, why: str
) -> None:
    """`kg timeline add` took any user and character id (an empty one, one with a line
    break): its entry and lock node made the user's export fail, and `kg check` saw
    nothing. The ids are held to the rule of an order's; nothing is written."""
    ids = {"-u": new_user_id("tl"), "-c": "nova"} | {flag: value}
    done = run(["timeline", "add", "-u", ids["-u"], "-c", ids["-c"], "--typ", "termin",
                "--titel", "Probe", "--beginn", "2027-01-01"], env=cli_env)
    bad_input(done, why)
    written = store.run(raw_cypher(
        store, "MATCH (x) WHERE x.user_id = $u OR x:Nutzer AND x.id = $u "
        "OR x:TimelineEintrag AND x.character_id = $c RETURN count(x) AS n",
        u=ids["-u"], c=ids["-c"] if flag == "-c" else "\x00"))
    assert written == [{"n": 0}]
    if flag == "-u":
        bad_input(run(["decay", "run", "-u", value, "--day", "2026-12-01"], env=cli_env), why)


@pytest.mark.parametrize(("beginn", "genauigkeit"), [("9999-12-31", "tag"),
                                                    ("9999-12-01", "monat")])
def test_an_event_at_the_end_of_the_calendar_is_written(
    pair: Pair, beginn: str, genauigkeit: str
) -> None:
    """The window of an event on 31 December 9999 (or in that month) ends past the
    calendar: the writer raised OverflowError ("a bug in kg"). It ends at the calendar's
    last instant; the fact is written and holds from the event."""
    from tests.conftest import t

    done = pair.write(t("Ada", "beruf", wert="Astronautin",
                        ereignis={"titel": "Start", "beginn": beginn,
                                  "genauigkeit": genauigkeit}))
    assert done.ergebnisse[0].ausgang == "geschrieben"
    [fact] = pair.mappe("Ada").fakten
    assert fact.ab_datum is not None and fact.ab_datum.year == 9999


@pytest.mark.parametrize("args", [
    ["purge", "-u", "{user}", "-c", "", "--yes"],
    ["purge", "-u", "", "--yes"],
    ["purge", "-u", "u" * 201, "--yes"],
    ["check", "-u", ""],
    ["audit", "-u", ""],
    ["audit", "list", "-u", "{user}", "-c", ""],
    ["entities", "-u", "", "-c", "nova"],
    ["mappe", "Lena", "-u", "{user}", "-c", "a\tb"],
    ["export", "-u", "{user}", "-c", "", "{tmp}/x.jsonl"],
    ["timeline", "list", "-u", "{user}", "-c", "", "--monat", "2026-12"],
    ["browser", "mappe", "-u", "", "-c", "nova", "--entity", "Lena"],
    ["mcp", "serve", "-u", "a\tb", "-c", "nova"],
])
def test_every_id_option_holds_ids_to_an_orders_rule(
    pair: Pair, cli_env: dict[str, str], tmp_path: Path, args: list[str]
) -> None:
    """An empty, control-character or over-long user or character id is bad input on
    every command, as in an order. `kg purge -u U -c ''` had answered "purged user U
    (all characters)" and deleted nothing; `kg check -u ''` had checked the whole
    database; listings had answered empty tables."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    given = [a.format(user=pair.user_id, tmp=tmp_path) for a in args]
    done = run(given, env=cli_env)
    flag = "--user/-u" if given[given.index("-u") + 1] != pair.user_id else "--character/-c"
    bad_input(done, f"error: {flag} ")
    assert "Value error" not in done.output
    assert [f.objekt.name for f in pair.mappe("Lena").fakten] == ["Kassel"]
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.parametrize("flag", ["--day", "--as-of"])
def test_an_empty_decay_day_is_bad_input(cli_env: dict[str, str], flag: str) -> None:
    """`kg decay run --day ''` ran today's global sweep and recorded it."""
    bad_input(run(["decay", "run", flag, ""], env=cli_env), "is not a date")


@pytest.mark.parametrize("who", [["-u", "nobody-{run}"], ["-u", "{user}", "-c", "ghost"]])
def test_an_export_of_nothing_keeps_the_file_it_would_replace(
    pair: Pair, cli_env: dict[str, str], tmp_path: Path, who: list[str]
) -> None:
    """A typo in the user id (or a character without data) replaced a backup with a
    header and exit 0. An export of a pair or user with nothing in the store is bad
    input; the file stays as it was."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    backup = tmp_path / "backup.jsonl"
    assert run(["export", "-u", pair.user_id, str(backup)], env=cli_env).exit_code == 0
    before = backup.read_bytes()
    given = [w.format(user=pair.user_id, run=uuid.uuid4().hex[:8]) for w in who]
    bad_input(run(["export", *given, str(backup)], env=cli_env), "nothing")
    assert backup.read_bytes() == before


@pytest.mark.parametrize("args", [
    ["check", "-u", "nobody-{run}"],
    ["check", "-u", "nobody-{run}", "--json"],
    ["purge", "-u", "nobody-{run}", "--yes"],
    ["purge", "-u", "{user}", "-c", "ghost", "--yes", "--json"],
])
def test_a_check_or_purge_of_nothing_is_bad_input(
    pair: Pair, cli_env: dict[str, str], args: list[str]
) -> None:
    """A typo in the user id made `kg check` answer "clean: every invariant holds" (a
    monitoring job with a wrong --user stayed green) and `kg purge` "purged user ...",
    both exit 0. As for `kg export`, a user or pair with nothing in the store is bad
    input, and nothing of anyone is deleted."""
    pair.write(t("Lena", "wohnt_in", "Kassel"))
    given = [a.format(user=pair.user_id, run=uuid.uuid4().hex[:8]) for a in args]
    done = run(given, env=cli_env)
    bad_input(done, "has nothing in this store")
    assert "clean" not in done.output and "purged" not in done.stdout
    assert [f.objekt.name for f in pair.mappe("Lena").fakten] == ["Kassel"]


@pytest.mark.parametrize(("args", "words"), [
    (["list", "--monat", "2026-12", "--von", "2026-01-01", "--bis", "2026-01-31"], "not both"),
    (["list", "--monat", ""], "YYYY-MM"),
    (["list", "--von", "", "--bis", "2026-01-31"], "is not a date"),
    (["add", "--typ", "termin", "--titel", "x", "--beginn", "2027-01-01", "--ende", ""],
     "is not a date"),
    (["add", "--typ", "ereignis", "--titel", "x", "--beginn", "2027-01-01", "--betrifft", ""],
     "error:"),
])
def test_a_timeline_option_given_empty_or_twice_is_bad_input(
    store: SyncMemory, cli_env: dict[str, str], args: list[str], words: str
) -> None:
    """The CLI listed December and ignored a window given with it (MCP refuses both);
    an empty --ende or --betrifft was taken as not given."""
    user = new_user_id("tl")
    command, *rest = args
    bad_input(run(["timeline", command, "-u", user, "-c", "nova", *rest], env=cli_env), words)
    written = store.run(raw_cypher(
        store, "MATCH (x:TimelineEintrag {user_id: $u}) RETURN count(x) AS n", u=user))
    assert written == [{"n": 0}]


class Endless(io.BytesIO):
    """Standard input without end, like /dev/zero: a read of all of it fails the test."""

    def read(self, size: int | None = -1) -> bytes:
        assert size is not None and 0 <= size <= 1001, f"read({size}) reads without bound"
        return b"\0" * size


def test_an_order_or_an_import_line_beyond_its_bound_is_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: SyncMemory,
    cli_env: dict[str, str],
) -> None:
    """`kg write /dev/zero` and `kg import /dev/zero` read until memory ran out (then
    "unexpected MemoryError … a bug in kg"). Both read at most their bound (made small
    here) and say so."""
    import cli.facts
    import kg.transfer.parse

    monkeypatch.setattr(cli.facts, "MAX_ORDER_BYTES", 1000)
    monkeypatch.setattr(kg.transfer.parse, "MAX_LINE", 1000)
    big = tmp_path / "big"
    big.write_text("\0" * 5000)
    bad_input(run(["write", str(big)]), "larger than")
    with monkeypatch.context() as stdin:
        stdin.setattr("typer.testing.make_input_stream", lambda data, charset: Endless())
        bad_input(run(["write", "-"]), "larger than")
    bad_input(run(["import", str(big)], env=cli_env), "big:1: the line is longer than")


@pytest.mark.parametrize(("both", "words"), [
    (["--objekt", "Kassel", "--wert", "x"], "give --objekt or --wert, not both"),
    (["--wert", "x", "--neu-objekt", "Kassel", "--neu-wert", "A"],
     "give --neu-objekt or --neu-wert, not both"),
    # (a stranger's reading of the docs: accepted, and the date silently dropped)
    (["--wert", "Ärztin", "--zeitpunkt", "2026-01-01"],
     "--zeitpunkt says when the replacement began: give --neu-objekt or --neu-wert"),
])
def test_a_correction_names_its_flags(both: list[str], words: str) -> None:
    """Given both replacements, `kg correct` answered with the library's field names
    (neu_objekt, neu_wert) instead of the flags (no server needed: refused before)."""
    bad_input(run(["correct", "-u", "u1", "-c", "nova", "--subjekt", "Lena",
                   "--beziehung", "beruf", "--herkunft", "mensch", *both]), words)


def test_a_full_disk_or_a_file_size_limit_is_said_in_words(pair: Pair, tmp_path: Path) -> None:
    """Found by a stranger's attack: an export that could not be written (a file size
    limit, a full disk) and `kg audit list > /dev/full` answered "unexpected OSError ...
    this is a bug in kg" with exit 1. Now: what could not be written and what to do,
    exit 2; the old export stays as it was, no temporary file is left, and Python's
    flush at exit adds nothing."""
    import resource
    import subprocess
    import sys

    pair.write(t("Lena", "hobby", wert="x" * 1900))
    backup = tmp_path / "keep.jsonl"
    backup.write_text("old\n", encoding="utf-8")

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    kg = [sys.executable, "-m", "cli.main"]
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([*kg, "export", "-u", pair.user_id, str(backup)], cwd=root,
                          capture_output=True, text=True, preexec_fn=small_files, timeout=120,
                          check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: cannot write {backup}: File too large — "), done.stderr
    assert "nothing was exported" in done.stderr and "bug in kg" not in done.stderr
    assert backup.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.jsonl"]
    if not Path("/dev/full").exists():
        return
    with open("/dev/full", "w", encoding="utf-8") as full:
        listed = subprocess.run([*kg, "audit", "list", "-u", pair.user_id, "-c", "nova"],
                                cwd=root, stdout=full, stderr=subprocess.PIPE, text=True,
                                timeout=120, check=False)
    assert listed.returncode == 2, listed.stderr
    assert listed.stderr == ("error: cannot write the output: No space left on device — free "
                             "space or lift the file size limit, or write to another disk\n")


def test_a_server_lost_midway_is_said_once_and_says_what_was_not_done(
    store: SyncMemory,
) -> None:
    """Found by a stranger's attack: the server killed during `kg import` printed the
    driver's own log line ("[#D714] _: <CONNECTION> error: Failed to read from defunct
    connection ...") before the error, and the error did not say that nothing was
    imported, as every other import error does. The driver's records stay out of the
    terminal once a command holds a store; an import's or a purge's server failure says
    nothing of it was done (one transaction)."""
    import asyncio
    import subprocess
    import sys
    from types import SimpleNamespace

    from kg.errors import ServerUnavailable
    from kg.transfer.store import whole

    # In a process of its own: pytest's log capture would swallow the record here.
    code = ("import logging\nfrom cli.common import memory\nwith memory():\n"
            "    logging.getLogger('neo4j.io').error('[#D714] _: <CONNECTION> error: x')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr

    async def lost(*args: Any, **kwargs: Any) -> None:
        raise ServerUnavailable("Neo4j is not reachable at bolt://127.0.0.1:1 "
                                "(ServiceUnavailable) — start it.")

    db = SimpleNamespace(write=lost, settings=SimpleNamespace(maintenance_timeout=1.0),
                         user_turn=lambda user_id, **_: contextlib.nullcontext())
    for undone in ("imported", "deleted"):
        with pytest.raises(ServerUnavailable) as refused:
            asyncio.run(whole(db, "u", lost, undone))  # type: ignore[arg-type]
        assert str(refused.value).endswith(f"— start it; nothing was {undone}"), refused.value

    # The connection lost at the COMMIT: it may have been done, and the error says so
    # as it is (a review: "nothing was imported" contradicted "whether it was written
    # is unknown", and hid the cause `lost_at_commit` reads).
    from neo4j.exceptions import IncompleteCommit

    from kg.db import lost_at_commit

    async def lost_at_the_commit(*args: Any, **kwargs: Any) -> None:
        unknown = ServerUnavailable("Neo4j at bolt://127.0.0.1:1 lost the connection at the "
                                    "commit: whether it was written is unknown.")
        raise unknown from IncompleteCommit("lost")

    db.write = lost_at_the_commit
    with pytest.raises(ServerUnavailable) as unknown:
        asyncio.run(whole(db, "u", lost, "imported"))  # type: ignore[arg-type]
    assert "nothing was" not in str(unknown.value) and lost_at_commit(unknown.value)
