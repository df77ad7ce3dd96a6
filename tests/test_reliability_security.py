"""Reliability: security: auth on, no password shown, values parameterised, canon types.

The server-side half (auth refusing wrong and missing credentials, the password in no
log file, loopback-only sockets, CLI output against a server with a distinctive
password) runs against the private Neo4j in test_reliability_faults.py, so wrong
passwords never rate-limit the shared server's user. This file holds what needs no
private server: the code never builds Cypher text, every dynamic relationship type is
a known site fed from the canon, secrets are masked wherever the library prints.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from neo4j.exceptions import AuthError, ServiceUnavailable
from typer.testing import CliRunner

from cli.launcher import LocalServer
from cli.main import app
from kg.api import SyncMemory
from kg.canon import load_canon
from kg.db import Database
from kg.errors import ConfigError, InvalidInput, KgError
from kg.queries import registry
from kg.settings import Settings
from tests.conftest import new_user_id
from tests.reliability_support import cypher

ROOT = Path(__file__).resolve().parent.parent
SECRET = f"kg-rel-secret-{uuid.uuid4().hex}"
CYPHER_CLAUSE = re.compile(
    r"\b(MATCH|MERGE|CREATE|DELETE|DETACH|UNWIND|RETURN|REMOVE|LOAD CSV|CALL \{|"
    r"SET [a-z]\w*\.|WITH [a-z]\w*[,\s])"
)


def python_files() -> list[Path]:
    return sorted([*(ROOT / "kg").rglob("*.py"), *(ROOT / "cli").rglob("*.py")])


def literal_text(node: ast.AST) -> str:
    """The constant text inside a string expression (f-string parts, concatenations)."""
    return " ".join(
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


def scan(source: str, where: str, names: set[str]) -> list[str]:
    """Places in Python source that build Cypher text or run something unnamed."""
    tree = ast.parse(source, where)
    problems: list[str] = []
    # Text only printed for a human (the demo shows a query to paste into Neo4j Browser)
    # is never run.
    printed = {
        id(n)
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        and call.func.attr == "print"
        for arg in call.args for n in ast.walk(arg)
    }
    for node in ast.walk(tree):
        if id(node) in printed:
            continue
        built = (
            isinstance(node, ast.JoinedStr)
            or (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)))
            or (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format")
        )
        if built and CYPHER_CLAUSE.search(literal_text(node)):
            assert isinstance(node, ast.expr)  # all three are expressions
            problems.append(f"{where}:{node.lineno}: Cypher text is built here")
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        attr = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if attr == "execute_query":
            problems.append(f"{where}:{node.lineno}: execute_query bypasses the registry")
        if attr in ("run", "Query") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                if first.value not in names:
                    problems.append(f"{where}:{node.lineno}: {first.value!r} is no query")
            elif isinstance(first, (ast.JoinedStr, ast.BinOp)):
                problems.append(f"{where}:{node.lineno}: query text is computed")
            elif attr == "Query" and not (
                isinstance(first, ast.Attribute) and first.attr == "wire"
            ):
                problems.append(f"{where}:{node.lineno}: Query() of something unnamed")
    return problems


def test_the_package_never_builds_cypher_text() -> None:
    """Cypher lives in cypher/queries; the code sends registry text or names only.

    Fails on: an f-string, `%`/`+` concatenation or `.format` whose text holds a Cypher
    clause; a `.run`/`Query` whose query is anything but a registry name or a named
    query's `.wire` (its text as sent, `kg.queries.wire_form`); any `execute_query`
    (which would bypass the registry).
    """
    names = registry().names()
    problems = [
        p
        for path in python_files()
        for p in scan(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), names)
    ]
    assert problems == [], problems


@pytest.mark.parametrize(
    "bad",
    [
        'tx.run(f"MATCH (n {{name: \'{name}\'}}) RETURN n")',
        'q = "MATCH (n) WHERE n.id = " + value',
        'q = "MATCH (n:%s) RETURN n" % label',
        'q = "CREATE (n:{}) RETURN n".format(label)',
        'tx.run("no_such_query")',
        'session.run(Query(text))',
        'session.run(Query(query.text))',  # the commented text, not the one sent
        'driver.execute_query("RETURN 1")',
    ],
)
def test_the_scan_above_can_fail(bad: str) -> None:
    assert scan(bad, "<planted>", {"ping"}) != []


#: Every place a relationship type is not written in the query text itself, and where
#: its value comes from. A new site must be added here after a review.
DYNAMIC_TYPES = {
    ("order_apply", "$(f.rel)"): "the planner: canon[beziehung].rel_type",
    ("import_ref_facts", "$(row.rel_type)"): "the import: canon[beziehung].rel_type",
    ("import_value_facts", "$(row.rel_type)"): "the import: canon[beziehung].rel_type",
    ("bench_load_facts", "$(row[2])"): "the benchmark's generator (canon types)",
}


def test_every_dynamic_relationship_type_is_a_reviewed_site() -> None:
    from bench.queries import registry as with_bench  # the package's queries and the bench's

    found = {
        (q.name, expr)
        for q in with_bench()
        for expr in re.findall(r"\$\((?:[^()]|\([^()]*\))*\)", q.text)
    }
    unknown = found - set(DYNAMIC_TYPES)
    assert unknown == set(), f"review these and add them to DYNAMIC_TYPES: {unknown}"
    # And no site is listed that is gone (the docs count them from this list).
    gone = set(DYNAMIC_TYPES) - found
    assert gone == set(), f"remove these from DYNAMIC_TYPES: {gone}"
    # Labels are never dynamic: only relationship types are, and only at these sites.
    labels = [q.name for q in with_bench() if re.search(r"\(\s*\w*\s*:\s*\$\(", q.text)]
    assert labels == []


def test_relation_names_cannot_carry_cypher(tmp_path: Path) -> None:
    canon = load_canon()
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", t) for t in canon.rel_types)
    evil = tmp_path / "kanon.toml"
    evil.write_text(
        '[[relation]]\nname = "x`]->() DETACH DELETE n //"\nvorwaerts = "a"\n'
        'rueckwaerts = "b"\neinwertig = false\nobjekt = "wert"\n'
    )
    with pytest.raises(ConfigError):
        load_canon.__wrapped__(evil)


@pytest.mark.parametrize("name", ["betrifft", "nachfolger"])
def test_a_relation_is_never_stored_as_the_timelines_own_edges(
    tmp_path: Path, name: str
) -> None:
    """Found by a stranger's hunt: a canon file could add `betrifft` (or `nachfolger`),
    stored as BETRIFFT, the link of a timeline entry to its entity: `kg check` then
    found every event's link a relation of the canon's gone wrong, and a user's export
    was refused by its own import. The canon is refused, saying why."""
    extra = tmp_path / "kanon.toml"
    extra.write_text(f'[[relation]]\nname = "{name}"\nvorwaerts = "a"\nrueckwaerts = "b"\n'
                     'einwertig = false\nobjekt = "entitaet"\n')
    with pytest.raises(ConfigError, match=rf"{name}.*stored as {name.upper()}, the graph's "
                       "own relationship type .*name it otherwise"):
        load_canon.__wrapped__(extra)


def test_a_canon_file_that_brings_types_is_refused_not_ignored(tmp_path: Path) -> None:
    """Found by a stranger's hunt: a [typen.klassen] table in the canon file was read and
    ignored (a dragon stayed `sonstiges`); a canon file adds relations only."""
    extra = tmp_path / "kanon.toml"
    extra.write_text('[typen.klassen]\ntier = ["drache"]\n')
    with pytest.raises(ConfigError, match=r"\[typen\] table: a canon file adds relations only"):
        load_canon.__wrapped__(extra)
    assert load_canon.__wrapped__(None).klassen.get("drache") is None


def test_an_import_cannot_bring_its_own_relationship_type(
    store: SyncMemory, tmp_path: Path
) -> None:
    memory = store.memory
    user = new_user_id("rel-imp")
    store.run(memory.write({
        "auftrag_id": "i-1", "user_id": user, "character_id": "nova",
        "tripel": [{"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "Kassel",
                    "herkunft": "mensch"}],
    }))
    path = tmp_path / "user.jsonl"
    store.run(memory.export(path, user))
    store.run(memory.purge(user))
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    for evil in ("WOHNT_IN`]->() DETACH DELETE n //", "WOHNT_IN", "BEFREUNDET"):
        edited = [
            {**x, "beziehung": evil} if x["kind"] == "fakt" and x["beziehung"] == "wohnt_in"
            else x
            for x in lines
        ]
        bad = tmp_path / "evil.jsonl"
        bad.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in edited) + "\n")
        with pytest.raises(InvalidInput):
            store.run(memory.import_file(bad))
        left = store.run(cypher(memory, "MATCH (e:Entitaet {user_id: $u}) RETURN count(e) AS n",
                                u=user))
        assert left == [{"n": 0}], "a refused import left data behind"
    store.run(memory.import_file(path))
    types = store.run(cypher(
        memory, "MATCH (:Entitaet {user_id: $u})-[r]->() RETURN collect(DISTINCT type(r)) AS t",
        u=user,
    ))
    assert set(types[0]["t"]) <= set(memory.canon.rel_types)


def test_settings_and_errors_never_show_the_password() -> None:
    settings = Settings(neo4j_uri="bolt://127.0.0.1:1", neo4j_password=SECRET)
    shown = [repr(settings), str(settings), settings.model_dump_json(),
             json.dumps(settings.model_dump(mode="json"))]
    db = Database(None, settings)  # type: ignore[arg-type]  # translate needs no driver
    for exc in (AuthError("unauthorized"), ServiceUnavailable("down"), OSError("refused"),
                RuntimeError("other")):
        shown.append(str(db.translate(exc)))
    assert settings.neo4j_password.get_secret_value() == SECRET
    assert not any(SECRET in text for text in shown), shown


def test_the_launchers_repr_hides_the_password(tmp_path: Path) -> None:
    server = LocalServer(home=tmp_path, jars=tmp_path, password=SECRET)
    assert SECRET not in repr(server)


def test_auth_is_on_in_every_setup(neo4j_settings: Settings, store: SyncMemory) -> None:
    # compose: NEO4J_AUTH set from NEO4J_PASSWORD (never 'none'), ports on loopback only.
    compose = (ROOT / "compose.yaml").read_text()
    auth = re.search(r"NEO4J_AUTH:\s*\"?([^\"\n]+)", compose)
    assert auth and auth.group(1).strip().lower() != "none" and "/" in auth.group(1)
    assert all(p.startswith('"127.0.0.1:') for p in re.findall(r'- ("[\d.:]+")', compose))
    # The launcher's conf (its text; the file a real start writes is checked in
    # test_reliability_faults) and the library's default: a password, always.
    launcher = (ROOT / "cli" / "launcher.py").read_text()
    assert '"dbms.security.auth_enabled=true"' in launcher
    assert '"server.default_listen_address=127.0.0.1"' in launcher
    assert Settings().neo4j_password.get_secret_value()
    # The server these tests use has auth on, and the tests connect with a password.
    assert neo4j_settings.neo4j_password.get_secret_value()
    rows = store.run(cypher(
        store.memory,
        "SHOW SETTINGS YIELD name, value WHERE name = 'dbms.security.auth_enabled' "
        "RETURN value",
    ))
    assert rows == [{"value": "true"}]


def test_cli_output_never_shows_the_password(neo4j_settings: Settings) -> None:
    """`kg status` and `kg server status` against the test server (right password)."""
    password = neo4j_settings.neo4j_password.get_secret_value()
    env = {"NEO4J_URI": neo4j_settings.neo4j_uri, "NEO4J_PASSWORD": password}
    runner = CliRunner()
    texts = []
    for args in (["status"], ["status", "--json"], ["server", "status"], ["schema", "status"]):
        result = runner.invoke(app, args, env=env)
        assert "Traceback" not in result.output
        texts.append(result.output)
    assert texts[0] and neo4j_settings.neo4j_uri in texts[0]
    assert not any(password in t for t in texts)


def test_a_kg_error_is_what_callers_catch() -> None:
    """Every failure the library raises on purpose derives from KgError."""
    import kg.errors as errors

    classes: list[Any] = [
        v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, Exception)
    ]
    assert all(issubclass(c, KgError) for c in classes)
