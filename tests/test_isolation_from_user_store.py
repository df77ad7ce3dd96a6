"""The test session never touches the user's own store."""

from __future__ import annotations

import os
import uuid
from datetime import UTC, date, datetime
from pathlib import Path

from cli.launcher import LocalServer
from kg.api import SyncMemory
from kg.models import NeuerEintrag
from kg.settings import Settings
from tests.conftest import SESSION_PREFIX, Pair, purge_users_under, raw_cypher, t, users_under


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


def test_the_session_purges_exactly_the_users_under_its_prefix(
    store: SyncMemory, pair: Pair
) -> None:
    """On a server the session shares (`KG_TEST_NEO4J_URI`), it ends by purging every
    user under its prefix: their facts, entries, orders and locks, and nobody else's.
    Here under a prefix of this test's own, with the fixture's pair outside it."""
    under = f"{SESSION_PREFIX}sweep-{uuid.uuid4().hex[:6]}-"
    mine = [Pair(store, f"{under}{k}") for k in range(2)]
    entry = NeuerEintrag(typ="termin", titel="Umzug", beginn=date(2026, 11, 1))
    for who in [*mine, pair]:
        who.write(t("Lena", "wohnt_in", "Kassel"))
        store.run(store.memory.timeline_add(who.user_id, "nova", entry))
    assert store.run(users_under(store, under)) == [who.user_id for who in mine]

    assert store.run(purge_users_under(store, under)) == [who.user_id for who in mine]
    assert store.run(users_under(store, under)) == []
    left = "MATCH (n) WHERE n.user_id STARTS WITH $p OR n.id STARTS WITH $p RETURN count(n) AS n"
    assert store.run(raw_cypher(store, left, p=under)) == [{"n": 0}]
    assert [f.objekt.name for f in pair.mappe("Lena").fakten if f.objekt] == ["Kassel"]
    kept = store.run(
        store.memory.timeline_window(pair.user_id, "nova", date(2026, 11, 1), date(2026, 11, 30))
    )
    assert [e.titel for e in kept] == ["Umzug"]
