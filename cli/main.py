"""The `kg` command: typer sub-apps by area, each command one library call.

Exit codes: 0 ok; 1 an order not fully written or check violations; 2 bad input;
3 Neo4j unreachable / auth / database; 4 schema not current; 5 launcher failed;
6 unknown entity; 7 ambiguous name; 8 timeline rule broken.
"""

from __future__ import annotations

import sys

import typer

from cli import browser, demo, facts, maintenance, mcp_server, server, timeline, transfer

app = typer.Typer(
    name="kg",
    help="Faktengedächtnis: the fact memory of a chat companion, on Neo4j.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(server.server_app, name="server")
app.add_typer(server.schema_app, name="schema")
app.command("status")(server.status)
app.command("write")(facts.write)
app.command("correct")(facts.correct)
app.command("entities")(facts.entities)
app.command("mappe")(facts.mappe)
app.command("history")(facts.history)
app.add_typer(facts.audit_app, name="audit")
app.add_typer(timeline.timeline_app, name="timeline")
app.command("demo")(demo.demo)
app.command("browser")(browser.browser)
app.command("query")(browser.query)
app.add_typer(maintenance.decay_app, name="decay")
app.command("check")(maintenance.check)
app.command("export")(transfer.export)
app.command("import")(transfer.import_)
app.command("purge")(transfer.purge)
app.add_typer(mcp_server.mcp_app, name="mcp")


def main() -> None:
    try:
        app()
    except Exception as exc:  # the last line of defence: a user never sees a traceback
        text = " ".join(str(exc).split())[:300]
        sys.stderr.write(
            f"error: unexpected {type(exc).__name__}: {text} — this is a bug in kg; please "
            "report it with the command you ran\n"
        )
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
