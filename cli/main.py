"""The `kg` command: typer sub-apps by area, each command one library call.

Exit codes: 0 ok; 1 an order not fully written or check violations; 2 bad input or
configuration, or a query that needs more memory than the server allows (ask for less);
3 Neo4j unreachable / auth / database; 4 schema not current; 5 launcher failed;
6 unknown entity; 7 ambiguous name; 8 timeline rule broken.

A process runs one command, so it builds only that one (`for_argv`): typer turns every
command it is given into a click command before it parses the arguments, which for all
thirty took ~10 ms of a `kg mappe` that takes ~300, and their modules' imports ~5 ms more.
`app`, the whole `kg`, is built when asked for (`--help`, a name that is no command,
tests).
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

import typer

#: Every command and group of `kg`: its name, the module that defines it, and the function
#: (a command) or the Typer app (a group) there. `kg --help` lists them in this order,
#: the commands before the groups.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("server", "cli.server", "server_app"),
    ("schema", "cli.server", "schema_app"),
    ("status", "cli.server", "status"),
    ("write", "cli.facts", "write"),
    ("correct", "cli.facts", "correct"),
    ("entities", "cli.facts", "entities"),
    ("mappe", "cli.facts", "mappe"),
    ("history", "cli.facts", "history"),
    ("audit", "cli.facts", "audit_app"),
    ("timeline", "cli.timeline", "timeline_app"),
    ("demo", "cli.demo", "demo"),
    ("browser", "cli.browser", "browser"),
    ("query", "cli.browser", "query"),
    ("decay", "cli.maintenance", "decay_app"),
    ("check", "cli.maintenance", "check"),
    ("export", "cli.transfer", "export"),
    ("import", "cli.transfer", "import_"),
    ("purge", "cli.transfer", "purge"),
    ("mcp", "cli.mcp_server", "mcp_app"),
)

HELP = "Faktengedächtnis: the fact memory of a chat companion, on Neo4j."


def build(only: str | None = None) -> typer.Typer:
    """`kg` with every command, or with only the one named `only`. Such a `kg` is still a
    group whose one command is `only` (`kg mappe …`, not `kg …`): its help, usage lines
    and errors read as the whole `kg`'s do for that command."""
    app = typer.Typer(
        name="kg", help=HELP, no_args_is_help=True, pretty_exceptions_enable=False,
        add_completion=False,
    )
    for name, module, attribute in COMMANDS:
        if only is not None and name != only:
            continue
        target = getattr(importlib.import_module(module), attribute)
        if isinstance(target, typer.Typer):
            app.add_typer(target, name=name)
        else:
            app.command(name)(target)
    if only is not None:
        # Without a callback typer would make a lone command the program itself.
        app.callback()(_no_options)
    return app


def _no_options() -> None:
    pass


def for_argv(argv: Sequence[str]) -> typer.Typer:
    """The `kg` to run for `argv`: only its command when `argv[1]` names one, else all."""
    name = argv[1] if len(argv) > 1 else None
    return build(name if any(name == n for n, _, _ in COMMANDS) else None)


def __getattr__(name: str) -> typer.Typer:
    """`app`, every command of `kg`, built on first use."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    app = globals()["app"] = build()
    return app


def main(app: typer.Typer | None = None) -> None:
    try:
        (app or for_argv(sys.argv))()
    except OSError as exc:
        if exc.errno not in OUTPUT_FULL:
            _unexpected(exc)
        # The output could not be written (`kg audit list > /dev/full`, a file size
        # limit): what the command did stands, only its answer is lost.
        _drop_stdout()
        what = exc.filename or "the output"
        sys.stderr.write(f"error: cannot write {what}: {exc.strerror} — free space or lift "
                         "the file size limit, or write to another disk\n")
        raise SystemExit(2) from None
    except Exception as exc:  # the last line of defence: a user never sees a traceback
        _unexpected(exc)


#: Errors of a full output (a disk, a file size limit, a quota): the command's answer is
#: lost, not the command.
OUTPUT_FULL = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})


def _drop_stdout() -> None:
    """Standard output that can take nothing more: Python's flush at exit would fail on
    it again ("Exception ignored ..."), so it goes nowhere from now on."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)
    except (OSError, ValueError):
        pass


def _unexpected(exc: BaseException) -> NoReturn:
    text = " ".join(str(exc).split())[:300]
    sys.stderr.write(
        f"error: unexpected {type(exc).__name__}: {text} — this is a bug in kg; please "
        "report it with the command you ran\n"
    )
    raise SystemExit(1) from None


if __name__ == "__main__":
    main()
