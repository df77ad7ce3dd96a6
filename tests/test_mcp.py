"""`kg mcp serve`, driven with the MCP SDK's own client over stdio and HTTP.

The servers are real subprocesses against the test session's Neo4j: a stdio server
bound to one pair with --user/--character, and an HTTP server whose bearer tokens each
bind one pair. Tools are listed with their schemas; an order is written and read back
through `mappe`; a replay answers `wiederholt`; an ambiguous name answers candidates
and the retry with an id succeeds; the timeline and the `mappe://` resource work; bad
input comes back as tool errors in words with nothing written; requests without a
known token are refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client
from typer.testing import CliRunner

from cli.launcher import free_port
from cli.main import app
from kg.api import SyncMemory
from kg.errors import ConfigError, NothingStored
from kg.settings import Settings
from kg_mcp.binding import PairRef, TokenFile
from tests.conftest import new_user_id
from tests.mcp_support import (
    ROOT,
    HttpServer,
    Remote,
    everything,
    http_transport,
    server_env,
    stdio_transport,
    text,
)
from tests.reliability_support import cypher

TOOLS = {
    "mappe", "mappen", "history", "resolve", "entities", "write", "correct",
    "timeline_add", "timeline_move", "timeline_cancel", "timeline_list", "status",
}


class Setup:
    """The module's servers and pairs: A = (user_a, nova) on stdio and by token, B = a
    second character of the same user, C = another user; all hold the same names."""

    def __init__(self, tmp: Path, settings: Settings) -> None:
        user_a = new_user_id("mcp-a")
        self.a = PairRef(user_id=user_a, character_id="nova")
        self.b = PairRef(user_id=user_a, character_id="luna")
        self.c = PairRef(user_id=new_user_id("mcp-c"), character_id="nova")
        tokens = TokenFile()
        self.tokens: dict[str, str] = {}
        for label, p in (("a", self.a), ("b", self.b), ("c", self.c)):
            tokens, self.tokens[label] = tokens.with_new_token(label, p)
        self.tokens_file = tmp / "tokens.json"
        tokens.save(self.tokens_file)
        self.errlog = tmp / "server.log"
        self.http = HttpServer(settings, self.tokens_file, self.errlog)
        self.stdio = Remote(stdio_transport(settings, self.a.user_id, "nova", self.errlog))
        self.http_a = Remote(http_transport(self.http.url, self.tokens["a"]))
        self.http_b = Remote(http_transport(self.http.url, self.tokens["b"]))
        self.http_c = Remote(http_transport(self.http.url, self.tokens["c"]))

    def close(self) -> None:
        for r in (self.stdio, self.http_a, self.http_b, self.http_c):
            r.close()
        self.http.stop()


@pytest.fixture(scope="module")
def mcp(
    store: SyncMemory, neo4j_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Setup]:
    setup = Setup(tmp_path_factory.mktemp("mcp"), neo4j_settings)
    try:
        yield setup
    finally:
        setup.close()
        for user in {setup.a.user_id, setup.c.user_id}:
            with contextlib.suppress(NothingStored):  # (the tests run wrote none for it)
                store.run(store.memory.purge(user))


def order_id() -> str:
    return f"mcp-{uuid.uuid4().hex[:10]}"


def triple(s: Any, rel: str, o: Any = None, *, wert: str | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"subjekt": s, "beziehung": rel, "herkunft": "mensch"}
    if o is not None:
        t["objekt"] = o
    if wert is not None:
        t["wert"] = wert
    return t


def user_data(store: SyncMemory, user_id: str) -> list[Any]:
    """A user's nodes and edges and orders, for "nothing written" checks."""
    return store.run(cypher(
        store.memory,
        "CALL () { MATCH (e:Entitaet {user_id: $u}) RETURN count(e) AS entities } "
        "CALL () { MATCH (:Entitaet {user_id: $u})-[r]->() RETURN count(r) AS edges } "
        "CALL () { MATCH (t:TimelineEintrag {user_id: $u}) RETURN count(t) AS entries } "
        "CALL () { MATCH (a:Auftrag {user_id: $u}) RETURN count(a) AS orders } "
        "RETURN entities, edges, entries, orders",
        u=user_id,
    ))


# -- listing -------------------------------------------------------------------------


def test_tools_are_listed_with_schemas_and_no_pair_argument(mcp: Setup) -> None:
    for remote in (mcp.stdio, mcp.http_a):
        tools = {t.name: t for t in remote.run(lambda c: c.list_tools()).tools}
        assert set(tools) == TOOLS
        for t in tools.values():
            assert t.description and len(t.description) > 40, t.name
            assert t.input_schema["type"] == "object"
            blob = json.dumps(t.input_schema)
            for word in ("user_id", "character_id"):
                assert word not in blob, (t.name, word)
            assert t.output_schema is not None, t.name
        mappe = tools["mappe"]
        assert mappe.input_schema["required"] == ["entitaet"]
        assert {"gueltig_am", "bekannt_am", "budget"} <= set(mappe.input_schema["properties"])
        assert {"text", "mappe"} <= set(mappe.output_schema["properties"])
        write = tools["write"].input_schema
        assert write["required"] == ["auftrag_id"]
        assert "herkunft" in json.dumps(write["$defs"]["Tripel"])
        assert tools["mappe"].annotations and tools["mappe"].annotations.read_only_hint
        templates = remote.run(lambda c: c.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["mappe://{name}"]


# -- write, read back, replay, ambiguity ----------------------------------------------


def test_write_then_mappe_then_replay(mcp: Setup, store: SyncMemory) -> None:
    oid = order_id()
    tripel = [
        triple("Lena", "wohnt_in", "Kassel"),
        triple("Kassel", "liegt_in", "Deutschland"),
        triple("Lena", "beruf", wert="Ärztin"),
    ]
    first = mcp.stdio.ok("write", auftrag_id=oid, tripel=tripel)
    assert first["status"] == "ok" and not first["wiederholt"]
    assert [r["ausgang"] for r in first["ergebnisse"]] == ["geschrieben"] * 3
    assert (first["user_id"], first["character_id"]) == (mcp.a.user_id, "nova")

    result = mcp.stdio.call("mappe", entitaet="Lena")
    assert not result.is_error
    assert "wohnt in Kassel" in text(result)
    assert "abgeleitet" in text(result) and "Deutschland" in text(result)
    mappe = result.structured_content["mappe"]
    assert mappe["entitaet"]["name"] == "Lena"
    facts = {f["id"] for f in mappe["fakten"]}
    assert {r["fakt_id"] for r in first["ergebnisse"]} <= facts
    assert result.structured_content["text"] == text(result)

    before = user_data(store, mcp.a.user_id)
    again = mcp.http_a.ok("write", auftrag_id=oid, tripel=tripel)  # same pair over HTTP
    assert again["wiederholt"] is True
    assert again["ergebnisse"] == first["ergebnisse"]
    assert user_data(store, mcp.a.user_id) == before

    # The idempotency key is the pair's: another pair's order of the same id is its own
    # order, written, and its answer carries nothing of pair A's order (no ids, no values).
    other = mcp.http_b.call("write", auftrag_id=oid, tripel=[triple("Lena", "hobby", wert="Judo")])
    assert not other.is_error and "wiederholt" not in text(other).lower()
    assert not any(r["fakt_id"] in everything(other) for r in first["ergebnisse"])
    assert "Kassel" not in everything(other) and "Ärztin" not in everything(other)

    # An optional argument sent as null is the default, as when it is left out (a cap of
    # null failed: "Unable to apply constraint 'ge' to supplied value None").
    assert mcp.stdio.ok("mappe", entitaet="Lena", cap=None)["mappe"]["entitaet"]["name"] == "Lena"
    several = mcp.http_a.ok("mappen", entitaeten=["Lena", "Kassel"], budget=400)
    assert [m["entitaet"]["name"] for m in several["mappen"]] == ["Lena", "Kassel"]
    assert "Judo" not in json.dumps(several)
    hist = mcp.http_a.ok("history", entitaet="Lena", beziehung="wohnt_in")
    assert [h["objekt"]["name"] for h in hist["result"]] == ["Kassel"]
    # As known before it was written (a stranger's reading of the docs: history "as known
    # on" a date was the library's and the CLI's, not an agent's): nothing yet.
    assert mcp.http_a.ok("history", entitaet="Lena", bekannt_am="2020-01-01")["result"] == []
    assert mcp.http_a.ok("history", entitaet="Lena", beziehung="wohnt_in",
                         gueltig_am=first["erfasst"])["result"] == hist["result"]


def test_ambiguous_name_gives_candidates_and_retry_with_id(mcp: Setup) -> None:
    made = mcp.stdio.ok("write", auftrag_id=order_id(), tripel=[
        triple({"neu": "Max"}, "wohnt_in", "Hamburg"),
        triple({"neu": "Max"}, "beruf", wert="Bäcker"),
    ])
    assert [r["ausgang"] for r in made["ergebnisse"]] == ["geschrieben", "geschrieben"]
    ids = {r["subjekt_id"] for r in made["ergebnisse"]}
    assert len(ids) == 2

    failed = mcp.stdio.call("mappe", entitaet="Max")
    assert failed.is_error
    words = text(failed)
    assert words.startswith("'Max' is ambiguous"), words
    assert "ambiguous" in words and all(i in words for i in ids), words
    assert "Traceback" not in words

    found = mcp.stdio.ok("resolve", name="Max")
    assert found["entitaet"] is None
    assert {k["id"] for k in found["kandidaten"]} == ids

    order = mcp.stdio.ok(
        "write", auftrag_id=order_id(), tripel=[triple("Max", "hobby", wert="Segeln")]
    )
    outcome = order["ergebnisse"][0]
    assert outcome["ausgang"] == "mehrdeutig"
    assert {k["id"] for k in outcome["kandidaten"]} == ids

    baecker = next(r["subjekt_id"] for r in made["ergebnisse"] if r["index"] == 1)
    retry = mcp.stdio.ok(
        "write", auftrag_id=order_id(), tripel=[triple({"id": baecker}, "hobby", wert="Segeln")]
    )
    assert retry["ergebnisse"][0]["ausgang"] == "geschrieben"
    mappe = mcp.stdio.ok("mappe", entitaet=baecker)
    assert "Segeln" in mappe["text"] and "Bäcker" in mappe["text"]


def test_an_argument_naming_the_pair_is_told_why_it_is_refused(mcp: Setup) -> None:
    """The pair is the server's; an argument that tries to name it is told so, however
    it is written (a stranger's attack: `userId` got only "takes no argument")."""
    for word in ("user_id", "userId", "USER-ID", "characterId", "pair"):
        refused = mcp.http_c.call("mappe", entitaet="Lena", **{word: "u2"})
        assert refused.is_error, word
        assert f"takes no argument {word!r} — the pair is fixed" in text(refused), text(refused)
    other = mcp.http_c.call("mappe", entitaet="Lena", tiefe=3)
    assert other.is_error and "takes no argument 'tiefe'" in text(other)
    assert "the pair is fixed" not in text(other)


def test_correct_and_resource(mcp: Setup) -> None:
    wrong = triple("Mittelmeer", "ist_ein", wert="Ozean")
    mcp.http_c.ok("write", auftrag_id=order_id(), tripel=[wrong])
    falsch = {"subjekt": "Mittelmeer", "beziehung": "ist_ein", "wert": "Ozean"}
    # Who says the fact is wrong is required, as a fact's herkunft (a stranger's attack:
    # MCP took a correction without one, where `kg correct` refuses it); in `write` too.
    for tool, args in (("correct", {"falsch": falsch}), ("write", {"berichtigungen": [falsch]})):
        refused = mcp.http_c.call(tool, auftrag_id=order_id(), **args)
        assert refused.is_error and "herkunft" in text(refused), text(refused)
    fixed = mcp.http_c.ok(
        "correct",
        auftrag_id=order_id(),
        falsch={**falsch, "herkunft": "mensch"},
        richtig=triple("Mittelmeer", "ist_ein", wert="Nebenmeer"),
    )
    assert [r["ausgang"] for r in fixed["ergebnisse"]] == ["berichtigt", "geschrieben"]
    contents = mcp.http_c.run(lambda c: c.read_resource("mappe://Mittelmeer")).contents
    assert "Nebenmeer" in contents[0].text and "Ozean" not in contents[0].text
    assert contents[0].mime_type == "text/plain"
    # A relation in another case is the relation the canon has not, said so (a stranger's
    # attack: "Ist_Ein" against "ist_ein" read "must be a fact of the same subject and
    # relation").
    cased = mcp.http_c.ok(
        "correct", auftrag_id=order_id(),
        falsch={**falsch, "beziehung": "Ist_Ein", "wert": "Nebenmeer", "herkunft": "mensch"},
        richtig=triple("Mittelmeer", "ist_ein", wert="Randmeer"))
    assert [r["grund"] for r in cased["ergebnisse"]] == [
        "unbekannte_beziehung", "zusammen_abgelehnt"], cased
    assert "did you mean 'ist_ein'?" in cased["ergebnisse"][0]["meldung"], cased


def test_correct_gives_the_replacement_a_time(mcp: Setup) -> None:
    """The replacement takes the wrong fact's place, or begins at `zeitpunkt`. A day
    alone is its start (UTC), as the CLI reads it; the tools refused it before."""
    mcp.http_c.ok("write", auftrag_id=order_id(), tripel=[triple("Ute", "wohnt_in", "Bonn")],
                  zeitpunkt="2026-01-01")
    mcp.http_c.ok("write", auftrag_id=order_id(), tripel=[triple("Ute", "wohnt_in", "Ulm")],
                  zeitpunkt="2026-02-01T00:00:00Z")
    fixed = mcp.http_c.ok(
        "correct",
        auftrag_id=order_id(),
        falsch={"herkunft": "mensch", "subjekt": "Ute", "beziehung": "wohnt_in", "objekt": "Ulm"},
        richtig=triple("Ute", "wohnt_in", "Köln"),
        zeitpunkt="2026-03-01",
    )
    assert [r["ausgang"] for r in fixed["ergebnisse"]] == ["berichtigt", "abgeloest"]
    text = mcp.http_c.ok("mappe", entitaet="Ute")["text"]
    assert "Köln (ab 1. März 2026)" in text and "Bonn (bis 1. März 2026)" in text, text


def test_correct_refuses_a_replacement_of_another_subject_or_relation(mcp: Setup) -> None:
    """Found by a stranger's attack: `richtig` of another subject (Kassel cannot be a
    person) retired Lena's job and her type and wrote nothing in their place
    (teilweise); `richtig` of another relation was written as news beside a correction
    that found nothing. Both are refused before anything is written; the same subject
    by id and by name is one."""
    mcp.http_c.ok("write", auftrag_id=order_id(), tripel=[
        {"subjekt": "Lea", "beziehung": "beruf", "wert": "Ärztin", "herkunft": "mensch"},
        triple("Kassel", "liegt_in", "Hessen")])
    before = mcp.http_c.ok("mappe", entitaet="Lea")["text"]
    falsch = {"herkunft": "mensch", "subjekt": "Lea", "beziehung": "beruf", "wert": "Ärztin"}
    lea = mcp.http_c.ok("resolve", name="Lea")["entitaet"]["id"]
    for richtig in (
        {"subjekt": "Kassel", "beziehung": "beruf", "wert": "Koch", "herkunft": "mensch"},
        {"subjekt": "Lea", "beziehung": "hobby", "wert": "Koch", "herkunft": "mensch"},
        # (the review: a new Lea passed as the same subject, and got the job)
        {"subjekt": {"neu": "Lea"}, "beziehung": "beruf", "wert": "Koch", "herkunft": "mensch"},
    ):
        for wrong in (falsch, {**falsch, "wert": "Lehrerin"}, {**falsch, "subjekt": {"id": lea}}):
            refused = mcp.http_c.call("correct", auftrag_id=order_id(), falsch=wrong,
                                      richtig=richtig)
            assert refused.is_error and "same subject and relation" in text(refused), (
                text(refused))
    assert mcp.http_c.ok("mappe", entitaet="Lea")["text"] == before
    fixed = mcp.http_c.ok("correct", auftrag_id=order_id(), falsch=falsch, richtig={
        "subjekt": {"id": lea}, "beziehung": "beruf", "wert": "Köchin", "herkunft": "mensch"})
    assert [r["ausgang"] for r in fixed["ergebnisse"]] == ["berichtigt", "geschrieben"]


def test_timeline_tools(mcp: Setup) -> None:
    mcp.http_c.ok("write", auftrag_id=order_id(), tripel=[triple("Jana", "wohnt_in", "Bonn")])
    added = mcp.http_c.ok(
        "timeline_add",
        eintrag={"typ": "ereignis", "titel": "Jana zieht um", "beginn": "2026-11-14",
                 "genauigkeit": "monat"},
        betrifft="Jana",
    )
    assert added["text"] == "November 2026" and added["person_name"] == "Jana"
    listed = mcp.http_c.ok("timeline_list", monat="2026-11")["result"]
    assert [e["id"] for e in listed] == [added["id"]]
    moved = mcp.http_c.ok("timeline_move", eintrag_id=added["id"], beginn="2026-12-01")
    chain = mcp.http_c.ok("timeline_list", eintrag_id=added["id"])["result"]
    assert [e["id"] for e in chain] == [added["id"], moved["id"]]
    cancelled = mcp.http_c.ok("timeline_cancel", eintrag_id=moved["id"])
    assert cancelled == {"auftrag_id": f"absage-{moved['id']}", "retired": [], "reinstated": []}
    # Another pair does not see or touch it.
    assert mcp.http_a.ok("timeline_list", monat="2026-12")["result"] == []
    assert mcp.http_a.call("timeline_cancel", eintrag_id=moved["id"]).is_error


def test_status_names_the_bound_pair(mcp: Setup) -> None:
    assert mcp.stdio.ok("status")["user_id"] == mcp.a.user_id
    status = mcp.http_b.ok("status")
    assert (status["user_id"], status["character_id"]) == (mcp.b.user_id, "luna")
    assert status["schema_version"] == status["schema_needed"]


# -- refused and bad input --------------------------------------------------------------


def _post(url: str, token: str | None) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_http_refuses_missing_and_unknown_tokens(mcp: Setup) -> None:
    assert _post(mcp.http.url, None) == 401
    assert _post(mcp.http.url, "not-a-token") == 401
    assert _post(mcp.http.url, mcp.tokens["a"] + "x") == 401
    with pytest.raises(Exception):  # noqa: B017 - the SDK's client fails to connect
        Remote(http_transport(mcp.http.url, "wrong")).close()


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("mappe", {"entitaet": 42}, "entitaet"),
    ("mappe", {"entitaet": "Lena", "budget": "viel"}, "budget"),
    ("mappe", {"entitaet": "Lena", "budget": True}, "true is not a number"),
    ("mappen", {"entitaeten": ["Lena"], "cap": False}, "false is not a number"),
    ("entities", {"limit": True}, "true is not a number"),
    ("mappe", {"entitaet": "x" * 1_000_000}, "at most 200"),
    ("mappe", {"entitaet": "Lena\u0000; MATCH (n) DETACH DELETE n"}, "control characters"),
    ("mappe", {"entitaet": "Lena", "gueltig_am": "2026-11-30T10:00:00"}, "time zone"),
    ("mappe", {"entitaet": "Lena", "bekannt_am": "20261130"}, "bekannt_am: "),
    ("mappe", {"entitaet": "Lena", "gueltig_am": "0001-01-01T00:00:00+01:00"}, "years 1-9999"),
    ("mappe", {"entitaet": "Lena", "user_id": "someone-else"}, "no tool can name a user"),
    ("mappen", {"entitaeten": ["Lena"] * 1000}, "at most 50"),
    ("write", {"auftrag_id": "x", "tripel": "Lena wohnt in Kassel"}, "tripel"),
    ("write", {"auftrag_id": "x", "character_id": "luna", "tripel": []}, "no tool can name"),
    ("write", {"auftrag_id": "x"}, "at least one triple"),
    ("write", {"tripel": []}, "auftrag_id"),
    ("timeline_move", {"eintrag_id": "nope", "beginn": "gestern"}, "beginn"),
    ("timeline_list", {"monat": "2026-13"}, "not YYYY-MM"),
    ("timeline_list", {"monat": "2026-12", "von": "2026-01-01", "bis": "2026-02-01"},
     "not monat and von and bis"),
    ("timeline_list", {"von": "2026-01-01"}, "give monat"),
    ("correct", {"auftrag_id": "x", "zeitpunkt": "2026-01-01", "falsch": {
        "subjekt": "Lena", "beziehung": "beruf", "wert": "Ärztin", "herkunft": "mensch"}},
     "zeitpunkt says when the replacement began: give richtig"),
    ("drop_database", {}, "there is no tool 'drop_database'"),
]


POINTS_OF_TIME: list[object] = [
    "2026-11-30", " 2026-11-30 ", "2026-11-30T00:00:00+01:00", "2026-11-30 18:00Z",
    "2026-11-30T18:00:00.1234567Z", "0001-01-01T00:00:00+01:00", "0001-01-01",
    "9999-12-31T23:59:59-01:00", "2026-11-30T10:00:00", "20261130", "2026-W48",
    "2026-02-30", "now", "", 0, 1.5, True, ["2026-11-30"],
]


@pytest.mark.parametrize("value", POINTS_OF_TIME, ids=repr)
def test_a_point_of_time_reads_as_on_the_cli(value: object) -> None:
    """MCP's `gueltig_am` / `bekannt_am` take what the library and the CLI take, as the
    same instant, and refuse what they refuse (no server: the argument type alone).
    Pydantic's own date type had read `0001-01-01T00:00:00+01:00` as the day 0001-01-01."""
    from pydantic import TypeAdapter
    from pydantic import ValidationError as Invalid

    from kg.errors import InvalidInput
    from kg.models import instant
    from kg_mcp.server import WhenArg

    try:
        expected: object = instant(value, "gueltig_am")  # type: ignore[arg-type]
    except InvalidInput:
        expected = InvalidInput
    try:
        got: object = TypeAdapter(WhenArg).validate_python(value)
    except Invalid:
        got = InvalidInput
    assert got == expected


@pytest.mark.parametrize(("tool", "arguments", "expected"), BAD_CALLS)
def test_bad_input_is_a_tool_error_in_words(
    mcp: Setup, store: SyncMemory, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    before = user_data(store, mcp.a.user_id)
    for remote in (mcp.stdio, mcp.http_a):
        result = remote.run(lambda c: c.call_tool(tool, arguments))
        assert result.is_error, (tool, arguments)
        words = text(result)
        assert expected in words, words
        # The library's words as they are (a stranger's reading of docs/mcp.md: every
        # domain error began "Error executing tool <name>:", which is a crash's).
        assert not words.startswith("Error executing tool"), words
        assert "Traceback" not in words and 'File "' not in words
        assert "function-" not in words and "Value error" not in words  # no pydantic inside
        assert len(words) < 2000  # no echo of a huge argument
    assert user_data(store, mcp.a.user_id) == before


def test_hostile_triples_are_rejected_one_by_one_and_nothing_written(
    mcp: Setup, store: SyncMemory
) -> None:
    before = user_data(store, mcp.a.user_id)
    result = mcp.stdio.ok("write", auftrag_id=order_id(), tripel=[
        triple("Lena", "WOHNT_IN]->() DETACH DELETE n //", "Kassel"),
        triple("Lena", "wohnt_in", wert="Kassel"),  # the canon wants an entity
        {"subjekt": "Lena", "beziehung": "hobby", "wert": "Judo"},  # no herkunft
        triple("Lena", "hobby", wert="x" * 5000),
    ])
    assert result["status"] == "abgelehnt"
    assert {r["ausgang"] for r in result["ergebnisse"]} == {"abgelehnt"}
    assert all(r["meldung"] for r in result["ergebnisse"])
    after = user_data(store, mcp.a.user_id)
    # Only the order's audit is recorded; no entity, fact or entry.
    assert {k: v for k, v in after[0].items() if k != "orders"} == {
        k: v for k, v in before[0].items() if k != "orders"
    }


def test_token_cli_creates_lists_and_removes(tmp_path: Path) -> None:
    runner = CliRunner()
    path = tmp_path / "t.json"
    made = runner.invoke(app, ["mcp", "token", "add", "-u", "u1", "-c", "nova",
                               "--tokens-file", str(path)])
    assert made.exit_code == 0, made.output
    token = made.stdout.strip().splitlines()[-1]
    assert token not in path.read_text() and len(token) >= 40
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    listed = runner.invoke(app, ["mcp", "token", "list", "--tokens-file", str(path)])
    assert "u1-nova" in listed.stdout and "u1/nova" in listed.stdout
    twice = runner.invoke(app, ["mcp", "token", "add", "-u", "u1", "-c", "nova",
                                "--tokens-file", str(path)])
    assert twice.exit_code == 2 and "exists already" in twice.output
    gone = runner.invoke(app, ["mcp", "token", "remove", "u1-nova", "--tokens-file", str(path)])
    assert gone.exit_code == 0
    assert TokenFile.load(path).tokens == []


def test_serve_refuses_a_missing_pair_and_a_public_host(tmp_path: Path) -> None:
    runner = CliRunner()
    stdio = runner.invoke(app, ["mcp", "serve"], env={"KG_MCP_USER": "", "KG_MCP_CHARACTER": ""})
    assert stdio.exit_code == 2 and "--user and --character" in stdio.output
    public = runner.invoke(app, ["mcp", "serve", "--http", "--host", "0.0.0.0"])
    assert public.exit_code == 2 and "loopback only" in public.output
    nofile = runner.invoke(
        app, ["mcp", "serve", "--http", "--tokens-file", str(tmp_path / "none.json")]
    )
    assert nofile.exit_code != 0 and "does not exist" in nofile.output


def test_a_tokens_file_that_binds_one_token_twice_is_refused(tmp_path: Path) -> None:
    """Found by a stranger's attack: one token's hash in two entries, for two users,
    started the server "for 4 token(s)" and the later entry won: u5's token acted as
    u6. A token acts for one pair: such a file is refused, naming both entries. Hex in
    capitals is the same digest; a field that is wrong says which, without pydantic's
    dump."""
    path = tmp_path / "tokens.json"
    for user in ("u5", "u6"):
        done = CliRunner().invoke(app, ["mcp", "token", "add", "-u", user, "-c", "nova",
                                        "--tokens-file", str(path)])
        assert done.exit_code == 0, done.output
    data = json.loads(path.read_text(encoding="utf-8"))
    first, second = data["tokens"]
    data["tokens"].append({**second, "name": "copy", "sha256": first["sha256"].upper()})
    path.write_text(json.dumps(data), encoding="utf-8")
    served = CliRunner().invoke(app, ["mcp", "serve", "--http", "--port", str(free_port()),
                                      "--tokens-file", str(path)])
    assert served.exit_code == 2, served.output
    assert ("has one token in two entries, 'u5-nova' and 'copy': a token is one entry, for "
            "one pair") in served.output and "MCP over HTTP" not in served.output
    # The way out it names works: list and remove still read the file.
    removed = CliRunner().invoke(app, ["mcp", "token", "remove", "copy", "--tokens-file",
                                       str(path)])
    assert removed.exit_code == 0, removed.output
    assert TokenFile.load(path).twice() is None
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tokens"] = [{**first, "sha256": first["sha256"].upper()}, second]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert TokenFile.load(path).tokens[0].sha256 == first["sha256"]
    data["tokens"][1]["sha256"] = "xyz"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError) as bad:
        TokenFile.load(path)
    assert "tokens.1.sha256" in str(bad.value) and "pydantic.dev" not in str(bad.value)


def test_a_tokens_file_entry_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    """The review of the duplicate-key rule: a hand-edited entry naming `user_id` twice
    bound the token to the last one silently; refused, with what to do."""
    path = tmp_path / "tokens.json"
    entry = ('{"name": "t", "sha256": "' + "a" * 64 + '", "user_id": "u1", '
             '"user_id": "u2", "character_id": "nova"}')
    path.write_text('{"tokens": [' + entry + "]}", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"the key 'user_id' is given twice in one object; "
                       "it is JSON written by `kg mcp token add`"):
        TokenFile.load(path)


def test_serve_refuses_a_port_another_process_listens_on(tmp_path: Path) -> None:
    """Found by a stranger's attack: on a busy port the HTTP transport said "MCP over HTTP
    on http://127.0.0.1:7772/mcp", then the web server's own error and exit 3 (which
    means Neo4j unreachable). Now one line that says what to do, exit 2, and no line
    announcing a server that never ran."""
    import socket

    tokens = tmp_path / "tokens.json"
    added = CliRunner().invoke(app, ["mcp", "token", "add", "-u", "u1", "-c", "nova",
                                     "--tokens-file", str(tokens)])
    assert added.exit_code == 0, added.output
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = CliRunner().invoke(app, ["mcp", "serve", "--http", "--port", str(port),
                                        "--tokens-file", str(tokens)])
    assert done.exit_code == 2, done.output
    assert done.output == (f"error: cannot listen on 127.0.0.1:{port}: another process "
                           "listens there — choose another --port\n"), done.output


def test_stdio_binds_the_pair_from_the_environment(
    mcp: Setup, neo4j_settings: Settings, tmp_path: Path
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cli.main", "mcp", "serve"],
        env={**server_env(neo4j_settings), "KG_MCP_USER": mcp.c.user_id,
             "KG_MCP_CHARACTER": "nova"},
        cwd=str(ROOT),
    )
    log = tmp_path / "server.log"
    remote = Remote(lambda: stdio_client(params, errlog=log.open("a")))
    try:
        status = remote.ok("status")
        assert (status["user_id"], status["character_id"]) == (mcp.c.user_id, "nova")
        assert mcp.a.user_id not in everything(remote.call("entities"))
    finally:
        remote.close()


def test_serve_says_when_neo4j_is_not_there(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cli.main", "mcp", "serve", "-u", "u1", "-c", "nova"],
        cwd=ROOT,
        env={**os.environ, "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}",
             "KG_CONNECTION_TIMEOUT": "1", "KG_RETRY_TIME": "0"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 3, result.stderr
    assert "not reachable" in result.stderr or "does not answer" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("stop", ["ctrl-c", "eof"])
def test_the_stdio_server_stops_on_ctrl_c_while_the_client_is_silent(
    store: SyncMemory, neo4j_settings: Settings, stop: str
) -> None:
    """A stranger's attack (2026-12-07): Ctrl-C did not stop `kg mcp serve` over stdio
    while its client sent nothing: the SDK reads stdin in a worker thread, which the
    cancel waited for until the next line came. It stops at once now, with no
    traceback; and it still stops where the client closes stdin."""
    import signal
    import time

    server = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "mcp", "serve", "-u", new_user_id("mcp-stop"),
         "-c", "nova"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**server_env(neo4j_settings), "PATH": os.environ.get("PATH", "")}, cwd=ROOT,
        # (Python turns SIGINT into Ctrl-C's KeyboardInterrupt only where it finds the
        # signal's default: a job started in the background has it ignored.)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert server.stdin is not None and server.stdout is not None
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}
        server.stdin.write((json.dumps(hello) + "\n").encode())
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())  # (serving, and reading stdin)
        assert answer["id"] == 1 and "serverInfo" in answer["result"], answer
        started = time.monotonic()
        if stop == "ctrl-c":
            server.send_signal(signal.SIGINT)
        else:
            server.stdin.close()
        server.wait(timeout=15)
        assert time.monotonic() - started < 10
        said = server.stderr.read().decode() if server.stderr else ""
        # (A review: reading through sys.stdin, the process then aborted at shutdown,
        # "Fatal Python error: … could not acquire lock for <stdin>", SIGABRT.)
        assert server.returncode == 0, (server.returncode, said)
        assert "Traceback" not in said and "Fatal Python error" not in said, said
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
