"""The named-query registry: parsing (pure), use, and the headers' `:param` examples."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kg.api import SyncMemory
from kg.errors import QueryLoadError
from kg.queries import Registry, parse, registry, wire_form
from tests.conftest import explain_with_examples

ROOT = Path(__file__).resolve().parent.parent


def test_parses_name_doc_and_params() -> None:
    text = "// name: one\n// Finds one.\n// params: $a, $b\nMATCH (n {a: $a}) RETURN $b;\n"
    (q,) = parse(text, "x.cypher")
    assert (q.name, q.doc, q.params, q.line) == ("one", "Finds one.", frozenset({"a", "b"}), 1)
    assert q.text == "MATCH (n {a: $a}) RETURN $b"


def test_parses_param_examples_as_the_browser_takes_them() -> None:
    text = (
        "// name: one\n// Finds one.\n// params: $a, $b\n"
        "// :param a => 'u1'\n// :param b => date('2026-12-01')\nMATCH (n {a: $a}) RETURN $b\n"
    )
    (q,) = parse(text, "x.cypher")
    assert q.examples == (("a", "'u1'"), ("b", "date('2026-12-01')"))
    assert q.doc == "Finds one."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("MATCH (n) RETURN n", r"x.cypher:1: no '// name:'"),
        ("// name: a\n// doc\nRETURN $x", r"x.cypher:1: query 'a' declares \[\] but uses \['x'\]"),
        ("// name: a\n// doc\n// params: $x\nRETURN 1", r"declares \['x'\] but uses \[\]"),
        ("// name: a\nRETURN 1", r"has no doc line"),
        (
            "// name: a\n// doc\nRETURN 1\n// name: Bad\n// doc\nRETURN 2",
            r"x.cypher:4: bad query name",
        ),
        (
            "// name: a\n// doc\n// params: $x, $y\n// :param x => 1\nRETURN $x, $y",
            r"x.cypher:1: query 'a' gives ':param' examples for \['x'\] but declares",
        ),
        ("// name: a\n// doc\n// params: $x\n// :param x = 1\nRETURN $x", r"x.cypher:4: write"),
    ],
)
def test_load_errors_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(QueryLoadError, match=message):
        parse(text, "x.cypher")


FRAGMENT = (
    "// fragment: mine\n// The user's entities as e.\nMATCH (e:Entitaet)\nWHERE e.user_id = $u\n"
)


def test_a_fragment_is_composed_into_the_queries_that_use_it() -> None:
    text = FRAGMENT + (
        "// name: a\n// doc\n// params: $u\nCALL () {\n  {{ mine }}\n  RETURN e\n}\nRETURN e"
    )
    (q,) = parse(text, "x.cypher")
    assert q.text == (
        "CALL () {\n  MATCH (e:Entitaet)\n  WHERE e.user_id = $u\n  RETURN e\n}\nRETURN e"
    )
    assert q.params == {"u"}  # a fragment's parameters are the query's


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("// name: a\n// doc\n{{ nope }}\nRETURN 1", r"x.cypher:3: no fragment named 'nope'"),
        ("// name: a\n// doc\nRETURN {{ mine }}", r"x.cypher:3: write a fragment on a line"),
        ("// fragment: f\n// doc\n{{ f }}\n// name: a\n// doc\n{{ f }}\nRETURN 1",
         r"fragment 'f' uses itself"),
        ("// fragment: f\nRETURN 1\n// name: a\n// doc\nRETURN 1", r"needs a doc line"),
    ],
)
def test_fragment_errors_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(QueryLoadError, match=message):
        parse(text, "x.cypher")


def test_an_unused_fragment_is_a_load_error(tmp_path: Path) -> None:
    (tmp_path / "queries").mkdir()
    (tmp_path / "queries" / "a.cypher").write_text(FRAGMENT + "// name: a\n// doc\nRETURN 1\n")
    with pytest.raises(QueryLoadError, match=r"a.cypher:1: fragment 'mine' is used by no query"):
        Registry.from_dir(tmp_path)


def test_the_package_shares_its_repeated_cypher_as_fragments() -> None:
    texts = [p.read_text(encoding="utf-8") for p in (ROOT / "cypher" / "queries").glob("*.cypher")]
    fragments = sum(t.count("// fragment:") for t in texts)
    uses = sum(t.count("{{ ") for t in texts)
    assert fragments >= 4 and uses > fragments
    scope = "WHERE ($user_id IS NULL OR s.user_id = $user_id) AND type(r) IN $rel_types"
    assert sum(t.count(scope) for t in texts) == 1  # the fact_edges fragment only


USED = re.compile(
    r"""(?:run|run_again|one|query|job|each|with_commit|page)\(\s*["']([a-z_]+)["']"""
)


def used_names(*folders: str) -> set[str]:
    return {
        name
        for folder in folders
        for path in (ROOT / folder).rglob("*.py")
        for name in USED.findall(path.read_text(encoding="utf-8"))
    }


def test_every_query_is_used_and_every_used_name_exists() -> None:
    """The package's registry against the package's code (the bench is not its user)."""
    used = used_names("kg", "cli")
    names = registry().names()
    assert used - names == set(), "code uses queries that do not exist"
    assert names - used == set(), "queries that no code uses"


def test_the_bench_keeps_its_queries_outside_the_package() -> None:
    from bench.queries import BENCH_CYPHER
    from bench.queries import registry as bench_registry

    bench_only = bench_registry().names() - registry().names()
    assert bench_only and all(bench_registry()[n].source.endswith(".cypher") for n in bench_only)
    assert not list((ROOT / "cypher").rglob("*bench*")), "bench Cypher ships in the wheel"
    assert {p.name for p in BENCH_CYPHER.glob("*.cypher")} == {
        bench_registry()[n].source for n in bench_only
    }
    used = used_names("bench")
    assert used - bench_registry().names() == set(), "bench code uses queries that do not exist"
    assert bench_only - used == set(), "bench queries that no bench code uses"


#: Query files whose headers do not carry `:param` examples yet. A file leaves this set
#: when every query in it has them; the test below then keeps it so.
WITHOUT_EXAMPLES: set[str] = set()


def test_every_query_header_carries_param_examples() -> None:
    missing = [
        f"{q.source}:{q.line} {q.name}"
        for q in registry()
        if q.params and not q.examples and q.source not in WITHOUT_EXAMPLES
    ]
    assert missing == []
    done = {q.source for q in registry()} - WITHOUT_EXAMPLES
    assert done >= {"system.cypher", "decay.cypher", "transfer.cypher"}
    complete = {
        source
        for source in WITHOUT_EXAMPLES
        if all(q.examples or not q.params for q in registry() if q.source == source)
    }
    assert complete == set(), "these have examples now: take them out of WITHOUT_EXAMPLES"


def test_every_header_example_explains_on_the_real_server(store: SyncMemory) -> None:
    """As pasted into Neo4j Browser (`text`), and as sent (`wire`)."""
    failures = []
    for q in registry():
        if not q.examples:
            continue
        for text in (q.text, q.wire):
            try:
                store.run(explain_with_examples(store, text, dict(q.examples)))
            except Exception as exc:  # collect every failure, then report
                failures.append(f"{q.source}:{q.line} {q.name}: {exc}")
    assert failures == []


@pytest.mark.parametrize(("text", "wire"), [
    ("MATCH (n) // why\n  WHERE n.a = 'x // y'\n\n   RETURN n",
     "MATCH (n)\nWHERE n.a = 'x // y'\nRETURN n"),
    ("  // a line of its own\n  RETURN 1\n  // and one after", "RETURN 1"),
    ("RETURN 'a\n   b' AS s // Lena's home\n", "RETURN 'a\n   b' AS s"),
    ('RETURN "q\\"//\n  x" AS s', 'RETURN "q\\"//\n  x" AS s'),
    ("RETURN `we//ird`/* a comment */, 1", "RETURN `we//ird` , 1"),
    ("RETURN 1// no space before\n  + 2", "RETURN 1\n+ 2"),
    ("RETURN 'it\\'s' AS s  // it's", "RETURN 'it\\'s' AS s"),
    # (a backslash before a line break inside a string: the next string stays whole)
    ("RETURN 'a\\\n  b' AS s,\n  'c\n   d' AS t", "RETURN 'a\\\n  b' AS s,\n'c\n   d' AS t"),
])
def test_a_query_goes_to_the_server_without_comments_and_indentation(
    text: str, wire: str
) -> None:
    """The server reads a query's whole text on every call; the Mappe's comments were
    most of its 38 KB. Strings and quoted names stay as they are, whatever they hold."""
    assert wire_form(text) == wire


def test_the_registry_sends_every_query_in_its_wire_form() -> None:
    """No comment line and no indentation is left, and the Mappe is Latin-1 (its
    comments' "…" made the server's copy of the text two bytes a character)."""
    for q in registry():
        lines = q.wire.splitlines()
        assert not [line for line in lines if line.lstrip().startswith("//")], q.name
        assert [line for line in lines if line != line.strip()] == [], q.name
    mappe = registry()["mappe"]
    assert len(mappe.wire) < 0.7 * len(mappe.text)
    assert max(map(ord, mappe.wire)) < 256


def test_the_server_is_sent_the_wire_form(store: SyncMemory, tmp_path: Path) -> None:
    """What the server ran, as it lists its own transaction: the wire form of the
    query, not the commented text kept for Neo4j Browser."""
    (tmp_path / "own.cypher").write_text(
        "// name: own_text\n// What the server runs.\n"
        "SHOW TRANSACTIONS YIELD currentQuery, transactionId\n"
        "  // a comment the server never reads\n"
        "WHERE currentQuery CONTAINS 'own text'\n"
        "RETURN currentQuery\n", encoding="utf-8")
    db = store.memory.db
    before = db.queries
    db.queries = Registry(
        [*before, *parse((tmp_path / "own.cypher").read_text(encoding="utf-8"), "own.cypher")])
    try:
        rows = store.run(db.plain_query("own_text"))
    finally:
        db.queries = before
    assert [r["currentQuery"] for r in rows] == [
        "SHOW TRANSACTIONS YIELD currentQuery, transactionId\n"
        "WHERE currentQuery CONTAINS 'own text'\nRETURN currentQuery"]


def test_kg_query_prints_each_named_query_runnable_as_pasted(store: SyncMemory) -> None:
    """The files keep shared text as `{{ fragment }}` lines, which Neo4j Browser cannot
    read: `kg query NAME` prints the composed query after its `:param` lines, and that
    output, taken as Browser takes it, must run (EXPLAIN with the examples' values)."""
    from typer.testing import CliRunner

    from cli.main import app

    runner = CliRunner()
    listed = runner.invoke(app, ["query"])
    assert listed.exit_code == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert set(names) == registry().names()
    failures = []
    for name in names:
        printed = runner.invoke(app, ["query", name])
        assert printed.exit_code == 0 and "{{" not in printed.stdout, name
        lines = printed.stdout.rstrip().splitlines()
        examples = dict(line.removeprefix(":param ").split(" => ", 1)
                        for line in lines if line.startswith(":param "))
        text = "\n".join(line for line in lines if not line.startswith(":param ")).rstrip(";")
        if set(examples) != registry()[name].params:
            failures.append(f"{name}: examples for {sorted(examples)}")
            continue
        try:
            store.run(explain_with_examples(store, text, examples))
        except Exception as exc:  # collect every failure, then report
            failures.append(f"{name}: {exc}")
    assert failures == []
    missing = runner.invoke(app, ["query", "no_such_query"])
    assert missing.exit_code == 2 and "kg query" in missing.output


def test_the_writer_carries_every_temporal_fact_property_as_integers_and_text() -> None:
    """The writer's queries name a fact's instants and days one by one (Cypher cannot
    map over a map's values): each one the one list of fact properties has must be
    converted both ways, or it would reach Python as a driver type or be stored as text."""
    from kg.writer import DAYS, INSTANTS, TO_WIRE

    assert set(INSTANTS) >= {"t_valid", "t_invalid", "t_recorded", "t_expired", "last_touched"}
    assert DAYS == ("decay_am",)
    queries = registry()
    state = " ".join(queries["order_state"].text.split())
    for key in INSTANTS:
        assert (
            f"{key}: CASE WHEN r.{key} IS :: ZONED DATETIME "
            f"THEN r.{key}.epochSeconds * 1000000 + r.{key}.microsecond ELSE r.{key} END"
        ) in state, key
    for key in DAYS:
        assert (
            f"{key}: CASE WHEN r.{key} IS :: DATE "
            f"THEN r.{key}.year * 10000 + r.{key}.month * 100 + r.{key}.day ELSE r.{key} END"
        ) in state, key
    apply = " ".join(queries["order_apply"].text.split())
    # t_recorded is the store's clock for both kinds of fact, never what the props say.
    assert "t_recorded" not in TO_WIRE
    assert apply.count("SET r = f.props, r.t_recorded = jetzt") == 2
    for key in TO_WIRE:
        made = "date" if key in DAYS else "datetime"
        # Both kinds of fact (reference and value facts) write new versions.
        assert apply.count(f"r.{key} = coalesce({made}(f.zeit.{key}), r.{key})") == 2, key


def test_a_new_version_goes_to_the_store_without_its_old_recording_time() -> None:
    """A version carried forward keeps its predecessor's props, `t_recorded` among them;
    `order_apply` records it at the store's clock anyway, so the writer does not send it
    (the driver packs a datetime in pure Python)."""
    from datetime import UTC, date, datetime

    from kg.writer import _wire_props

    then = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    fact: dict[str, Any] = {
        "rel": "WOHNT_IN",
        "props": {"id": "f1", "t_recorded": then, "t_valid": then, "decay_am": date(2026, 11, 2)},
    }
    wire = _wire_props(fact)
    assert wire["props"] == {"id": "f1"}
    assert wire["zeit"] == {"t_valid": then.isoformat(), "decay_am": "2026-11-02"}
    assert fact["props"]["t_recorded"] == then  # the plan's own dict is left as it was


def test_the_maps_a_query_takes_hold_exactly_the_keys_it_reads() -> None:
    """`order_state` takes the order's lists in one map ($refs), the Mappe and the history
    their instants in another ($at), so that every shape shares one plan. The registry
    checks only the map's name; a key the query reads that Python does not send would
    silently be null (a `since` lost, `all_history` null), so the keys are compared."""
    import asyncio
    from datetime import UTC, datetime

    from kg.canon import load_canon
    from kg.mappe import mappe_params
    from kg.models import Auftrag
    from kg.plan import refs_of
    from kg.settings import Settings
    from kg.writer import FaktenAgent
    from tests.conftest import t

    class Sent(Exception):
        pass

    class Tx:
        async def plain_one(self, name: str, **params: Any) -> None:
            self.params = params
            raise Sent

    def read(query: str, name: str) -> set[str]:
        return set(re.findall(rf"\${name}\.([A-Za-z_][A-Za-z0-9_]*)", registry()[query].text))

    canon = load_canon()
    order = Auftrag.model_validate({
        "auftrag_id": "a", "user_id": "u", "character_id": "nova",
        "tripel": [t("Lena", "wohnt_in", "Kassel")],
    })
    tx = Tx()
    with pytest.raises(Sent):
        db = SimpleNamespace(settings=SimpleNamespace(ruhe_schwelle=0.1))
        asyncio.run(FaktenAgent(db, canon)._state(tx, order, refs_of(order, canon)))  # type: ignore[arg-type]
    assert read("order_state", "refs") == set(tx.params["refs"])

    then = datetime(2025, 1, 1, tzinfo=UTC)
    at = mappe_params(Settings(), canon, "u", "nova", ["x"], gueltig_am=then)["at"]
    assert read("mappe", "at") == set(at) == {"gueltig_us", "bekannt_am"}
    assert mappe_params(Settings(), canon, "u", "nova", ["x"])["at"] == {}  # a current read
    # Memory.history sends {"bekannt_am": ...}; its as-of tests (test_bitemporal) read it.
    assert read("history", "at") == {"bekannt_am"}
    # Memory.history sends {"rel_types": [...]} or {}, Timeline.add {"id": ...} or {}
    # (their tests: a history of one relation, an entry of an entity).
    assert read("history", "only") == {"rel_types"}
    assert read("timeline_create", "betrifft") == {"id"}
