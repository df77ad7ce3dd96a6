"""The test session never touches the user's own store."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from cli.launcher import LocalServer
from kg.api import SyncMemory
from kg.settings import Settings
from tests.conftest import raw_cypher


def test_the_session_runs_on_its_own_server(neo4j_settings: Settings) -> None:
    if os.environ.get("KG_TEST_NEO4J_URI"):
        assert neo4j_settings.neo4j_uri == os.environ["KG_TEST_NEO4J_URI"]
        return
    # The launcher's default store (the one `./run demo` fills) is on 7687 in the
    # default home; the session's server is neither.
    assert not neo4j_settings.neo4j_uri.endswith(":7687")
    session = LocalServer.from_env()  # what CLI commands of the tests reach
    assert session.uri == neo4j_settings.neo4j_uri
    assert session.home.name.startswith("test-neo4j-")
    assert session.home != session.jars.parent
    assert Path(session.home).is_dir()


def test_the_demo_as_run_demo_leaves_it_passes_kg_check(
    neo4j_settings: Settings, store: SyncMemory
) -> None:
    """`./run demo` is `kg schema apply`, `kg demo` and the day's `kg decay run --if-due`;
    on the store it leaves, `kg check` finds nothing (here on the session's own server,
    for the demo's user; the suite never touches the real demo store). What it wrote is
    removed afterwards: the demo's user and the day's global run, which would otherwise
    stand in for a sweep in every later test's check."""
    from typer.testing import CliRunner

    from cli.main import app

    today = datetime.now(UTC).date()
    find = "MATCH (d:DecayLauf {tag: $tag}) RETURN count(d) AS n"
    had_run = store.run(raw_cypher(store, find, tag=today))[0]["n"] > 0
    runner = CliRunner()
    try:
        for args in (["schema", "apply"], ["demo"], ["decay", "run", "--if-due"]):
            done = runner.invoke(app, args)
            assert done.exit_code == 0, (args, done.output)
        # A sweep that another test recorded today covers the demo's edges only with this.
        runner.invoke(app, ["decay", "run", "--user", "demo-user"])
        checked = runner.invoke(app, ["check", "--user", "demo-user", "--json"])
        assert checked.exit_code == 0, checked.output
    finally:
        store.run(store.memory.purge("demo-user"))
        if not had_run:
            store.run(raw_cypher(store, "MATCH (d:DecayLauf {tag: $tag}) DELETE d", tag=today))
