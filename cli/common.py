"""What every command shares: opening the store, printing, turning errors into exit codes."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from datetime import date, datetime
from typing import Any, NoReturn, TypeVar

import typer
from pydantic import BaseModel, ValidationError

from kg.api import Memory, SyncMemory
from kg.errors import AmbiguousEntity, InvalidInput, KgError
from kg.settings import load_settings

T = TypeVar("T")

# The driver logs each retry as a warning; the CLI reports the final error in one line.
logging.getLogger("neo4j").setLevel(logging.ERROR)


class LazyConsole:
    """A rich Console made on first use, so a command that prints JSON never imports
    rich (a third of `kg mappe --json`'s start was imports)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Any = None

    @property
    def rich(self) -> Any:
        """The Console itself (for rich objects that take one, e.g. a progress bar)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rich, name)


out = LazyConsole(highlight=False, soft_wrap=True, markup=False)
err = LazyConsole(stderr=True, highlight=False, soft_wrap=True, markup=False)

JsonOpt = typer.Option(False, "--json", help="Print JSON for machines instead of text.")


def fail(error: KgError) -> NoReturn:
    from rich.markup import escape

    err.print(f"[red]error:[/red] {escape(str(error))}", markup=True)
    if isinstance(error, AmbiguousEntity):
        for k in error.kandidaten:
            err.print(f"  {k.id}  {k.name} ({k.typ}) {'; '.join(k.merkmale)}", markup=False)
    raise typer.Exit(error.exit_code)


@contextmanager
def memory(check_schema: bool = True) -> Iterator[SyncMemory]:
    """A connected store for one command; domain errors become one line and an exit code.
    The driver's own log records (a connection found broken, say) stay out of the
    terminal: the error they lead to is said once, in words."""
    import logging

    driver = logging.getLogger("neo4j")
    if not any(isinstance(h, logging.NullHandler) for h in driver.handlers):
        driver.addHandler(logging.NullHandler())
    try:
        with SyncMemory(load_settings(), check_schema=check_schema) as sync:
            yield sync
    except KgError as error:
        fail(error)


def call(
    fn: Callable[[Memory], Coroutine[Any, Any, T]], check_schema: bool = True,
    interrupted: str | None = None,
) -> T:
    """Open the store, make one library call, close. `interrupted`: what to tell a user
    who stops the call with Ctrl-C (exit 130 as for every command)."""
    with memory(check_schema) as sync:
        try:
            return sync.run(fn(sync.memory))
        except KgError as error:
            fail(error)
        except ValidationError as exc:  # a model the library built from bad input
            fail(InvalidInput(f"invalid input — {validation_text(exc)}"))
        except KeyboardInterrupt:
            if interrupted is None:
                raise
            err.print(f"interrupted: {interrupted}")
            raise typer.Exit(130) from None


def checked_id(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str | None:
    """The callback of every user and character id option: the id held to the rule of
    an order's ids (`kg.models.ident`: not empty, no control characters, at most 200
    characters), so that no command takes an id that no order could have written."""
    if value is None or ctx.resilient_parsing:
        return value
    from kg.models import ident

    try:
        return ident(value, "/".join(param.opts))
    except InvalidInput as error:
        fail(error)


def user_opt(default: Any, help: str, **more: Any) -> Any:
    """The `--user/-u` option of a command, its id checked (`checked_id`)."""
    return typer.Option(default, "--user", "-u", callback=checked_id, help=help, **more)


def character_opt(default: Any, help: str, **more: Any) -> Any:
    """The `--character/-c` option of a command, its id checked (`checked_id`)."""
    return typer.Option(default, "--character", "-c", callback=checked_id, help=help, **more)


#: The pair's options of most commands.
UserOpt = user_opt(..., "The human's user_id.")
CharOpt = character_opt(..., "The character_id of the pair.")


def validation_text(exc: ValidationError) -> str:
    """The first problems of a ValidationError in one line, bounded."""
    parts = []
    for e in exc.errors()[:3]:
        loc = ".".join(str(p)[:40] for p in e["loc"][:4])
        msg = str(e["msg"]).removeprefix("Value error, ")[:200]
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(value), ensure_ascii=False, indent=2) + "\n")


def parse_when(text: str | None, name: str) -> datetime | None:
    """A date or an instant option, read as the library reads one (`kg.models.instant`):
    a bare date means the end of that day (UTC); a time without a zone is refused, never
    guessed."""
    from kg.errors import InvalidInput
    from kg.models import instant

    try:
        return instant(text, name)
    except InvalidInput as error:
        fail(error)


def parse_start(text: str | None, name: str) -> datetime | None:
    """A valid-time start option (when something began), read as the library reads an
    order's `zeitpunkt` (`kg.models.start_of`): a date is the start of that day (UTC)."""
    from kg.errors import InvalidInput
    from kg.models import start_of

    try:
        return start_of(text, name)
    except InvalidInput as error:
        fail(error)


def parse_day(text: str, name: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        err.print(f"error: {name} {text!r} is not a date (YYYY-MM-DD)", markup=False)
        raise typer.Exit(2) from None
