"""`kg server`, `kg schema` and `kg status`: the store itself."""

from __future__ import annotations

import time
from collections.abc import Coroutine
from typing import Any

import typer
from pydantic import SecretStr

from cli.common import JsonOpt, call, err, fail, out, print_json, user_opt
from cli.launcher import LauncherError, LocalServer
from kg import schema
from kg.api import Memory, Status, SyncMemory
from kg.errors import KgError, SchemaOutdated
from kg.settings import Settings

server_app = typer.Typer(help="Run a local Neo4j 5.26 (no Docker needed).\n\n"
                         "Example: kg server start", no_args_is_help=True)
schema_app = typer.Typer(help="Schema migrations under cypher/migrations, and names "
                         "stored by an earlier rule.\n\n"
                         "Example: kg schema apply", no_args_is_help=True)


def _server() -> LocalServer:
    try:
        return LocalServer.from_env()
    except KgError as error:
        fail(error)


@server_app.command("start")
def server_start(
    warm: bool = typer.Option(
        True, "--warm/--no-warm",
        help="Once it answers, have it plan a chat turn's queries (writes nothing).",
    ),
) -> None:
    """Fetch Neo4j Community once, start it, return when Bolt answers.

    Then it has the server plan a chat turn's queries, so the first turn does not wait
    for that (`Memory.warm`; skipped, silently, while the schema is not applied).

    Example: kg server start
    """
    server = _server()
    began = time.monotonic()
    from cli.launcher import StartInterrupted

    try:
        note = server.start()
    except KgError as error:
        fail(error)
    except StartInterrupted:
        err.print("interrupted: the server this start launched was stopped again")
        raise typer.Exit(130) from None
    if note:
        err.print(f"note: {note}")
    out.print(
        f"Neo4j {server.uri} is up ({time.monotonic() - began:.1f}s); "
        f"Browser {server.browser_url}; logs {server.log_file}"
    )
    if warm:
        _warm(server)


def _warm(server: LocalServer) -> None:
    """`Memory.warm` on the server just started; a note where it could not."""
    settings = Settings(neo4j_uri=server.uri, neo4j_password=SecretStr(server.password))
    try:
        with SyncMemory(settings) as sync:
            seconds = sync.run(sync.memory.warm())
    except SchemaOutdated:
        return  # a new store: nothing can run before `kg schema apply`, nobody waits
    except KgError as error:
        err.print(f"note: the queries were not planned ahead: {error}")
        return
    out.print(f"Planned a chat turn's queries ({seconds:.1f}s).")


@server_app.command("stop")
def server_stop(
    kill: bool = typer.Option(False, "--kill", help="SIGKILL instead of a clean shutdown."),
) -> None:
    """Stop the local Neo4j.

    Example: kg server stop
    """
    server = _server()
    note = server.clean_stale()
    if note:
        err.print(f"note: {note}")
    try:
        stopped = server.stop(kill=kill)
    except OSError as exc:  # e.g. the server runs as another user
        fail(LauncherError(f"cannot signal the server: {exc.strerror}"))
    out.print("stopped" if stopped else "not running")


@server_app.command("status")
def server_status() -> None:
    """Whether the local Neo4j runs, where its home and logs are.

    Example: kg server status
    """
    server = _server()
    note = server.clean_stale()
    if note:
        err.print(f"note: {note}")
    pid = server.pid()
    answering = server.bolt_answers()
    out.print(f"home   {server.home}")
    out.print(f"logs   {server.log_file}")
    out.print(f"pid    {pid or '-'}")
    out.print(f"bolt   {server.uri} {'answering' if answering else 'not answering'}")
    out.print(f"browser {server.browser_url}")
    if not answering:
        raise typer.Exit(3)


@server_app.command("logs")
def server_logs(
    lines: int = typer.Option(40, min=1, max=1_000_000, help="How many lines."),
) -> None:
    """Print the tail of the local server's log.

    Example: kg server logs --lines 100
    """
    out.print(_server().log_tail(lines), markup=False)


@schema_app.command("apply")
def schema_apply(as_json: bool = JsonOpt) -> None:
    """Apply pending migrations in order and record them in the graph.

    Example: kg schema apply
    """
    states, stale = call(lambda m: _with_names(m, schema.apply(m.db), as_json),
                         check_schema=False)
    _print_states(states, as_json)
    _say_stale(stale)


@schema_app.command("status")
def schema_status(as_json: bool = JsonOpt) -> None:
    """List migrations: applied, pending, or changed since applied; and, where they
    are all applied, how many names an earlier rule stored (`kg schema renormalize`).

    Example: kg schema status --json
    """
    states, stale = call(lambda m: _with_names(m, schema.status(m.db), as_json),
                         check_schema=False)
    _print_states(states, as_json)
    _say_stale(stale)
    if any(s.status != "applied" for s in states):
        raise typer.Exit(4)


async def _with_names(
    m: Memory, states: Coroutine[Any, Any, list[schema.MigrationState]], as_json: bool
) -> tuple[list[schema.MigrationState], int]:
    """The migrations' states and, once they are all applied, how many entities hold a
    name an earlier rule stored (a dry run of `kg schema renormalize`; not for --json,
    whose answer stays the list of migrations)."""
    done = await states
    if as_json or any(s.status != "applied" for s in done):
        return done, 0
    try:
        return done, len((await m.renormalize_names(dry_run=True)).geaendert)
    except KgError as error:  # a hint only: the migrations' answer stands
        err.print(f"names: not counted ({error})", markup=False)
        return done, 0


def _say_stale(stale: int) -> None:
    """After an upgrade whose rule for names grew: what to run, on stderr."""
    if stale:
        held = "entity holds a name" if stale == 1 else "entities hold names"
        err.print(f"names: {stale} {held} "
                  "an earlier rule stored, which no lookup by the name finds: run `kg schema "
                  "renormalize --dry-run`, then without --dry-run", markup=False)


#: How many changes `kg schema renormalize` lists; --json has every one.
SHOWN = 50


@schema_app.command("renormalize")
def schema_renormalize(
    user: str | None = user_opt(None, "Only this user's entities; default every user's."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show what would change; write nothing."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Store every entity's name and lookup key as this version's writer stores them.

    After an upgrade whose rule strips more from a name (this one: variation selectors,
    the combining grapheme joiner, Hangul fillers), `kg check` reports the names stored
    before (name_norm, format_namesakes): no lookup by the name finds them. Safe while
    orders are written (one user at a time, under that user's write lock).

    Example: kg schema renormalize --dry-run
    """
    result = call(lambda m: m.renormalize_names(user, dry_run=dry_run))
    if as_json:
        print_json(result)
        return
    from kg.check import stored_key
    from kg.models import shown

    verb = "would store" if result.dry_run else "stored"
    for c in result.geaendert[:SHOWN]:
        key = c.stored_key or stored_key(c.name_norm)
        out.print(f"{c.user_id}  {c.id}  {shown(c.name)} → {shown(c.neuer_name)} "
                  f"(key {key} → {shown(c.neuer_name_norm)})", markup=False)
    if len(result.geaendert) > SHOWN:
        out.print(f"… and {len(result.geaendert) - SHOWN} more (--json lists every one)",
                  markup=False)
    out.print(f"{result.gelesen} names read, {verb} {len(result.geaendert)} again"
              + (f"; {result.namensvettern} of them now share their name with another "
                 "entity (namesakes: a lookup by the name asks which, an id tells them "
                 "apart)" if result.namensvettern else ""), markup=False)
    if result.gelassen:
        many = len(result.gelassen)
        left = "entity was left as it is" if many == 1 else "entities were left as they are"
        err.print(f"{many} {left}: a name too long once cleaned, or no user id (kg check's "
                  "node_fields and pair_ids name them; mend or purge them by hand): "
                  + ", ".join(result.gelassen[:5]), markup=False)


def _print_states(states: list[schema.MigrationState], as_json: bool) -> None:
    if as_json:
        print_json(states)
        return
    from rich.table import Table

    table = Table("version", "name", "status", "applied at")
    for s in states:
        table.add_row(
            f"{s.version:04d}",
            s.name,
            s.status,
            s.applied_at.isoformat(timespec="seconds") if s.applied_at else "-",
        )
    out.print(table)


def status(as_json: bool = JsonOpt) -> None:
    """Connect and show server, version, database, schema and counts.

    Example: kg status
    """

    async def get(m: Memory) -> Status:
        return await m.status()

    result = call(get, check_schema=False)
    if as_json:
        print_json(result)
        if result.schema_problem is not None:
            # (Exit 4 as the text form and `kg schema status --json` do: a script that
            # reads only the exit code learns the store is refused; it was exit 0.)
            raise typer.Exit(4)
        return
    out.print(f"server    {result.uri}")
    out.print(f"neo4j     {result.version} {result.edition}")
    out.print(f"database  {result.database}")
    out.print(f"schema    version {result.schema_version} of {result.schema_needed}"
              + ("" if result.schema_problem is None else "  (not current: see below)"))
    out.print(f"entities  {result.entities}")
    out.print(f"facts     {result.facts} ({result.active_facts} active)")
    if result.schema_problem is not None:
        # (The same words as every other command's refusal: a changed migration is not
        # helped by `kg schema apply`, which refuses it.)
        err.print(f"error: {result.schema_problem}")
        raise typer.Exit(4)
