"""The named-query registry (pure: no server)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kg.errors import QueryLoadError
from kg.queries import parse, registry

ROOT = Path(__file__).resolve().parent.parent


def test_parses_name_doc_and_params() -> None:
    text = "// name: one\n// Finds one.\n// params: $a, $b\nMATCH (n {a: $a}) RETURN $b;\n"
    (q,) = parse(text, "x.cypher")
    assert (q.name, q.doc, q.params, q.line) == ("one", "Finds one.", {"a", "b"}, 1)
    assert q.text == "MATCH (n {a: $a}) RETURN $b"


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
    ],
)
def test_load_errors_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(QueryLoadError, match=message):
        parse(text, "x.cypher")


USED = re.compile(r"""(?:run|one|query)\(\s*["']([a-z_]+)["']""")


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
