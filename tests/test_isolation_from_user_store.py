"""The test session never touches the user's own store."""

from __future__ import annotations

import os
from pathlib import Path

from kg.launcher import LocalServer
from kg.settings import Settings


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
