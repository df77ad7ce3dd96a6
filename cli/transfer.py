"""`kg export`, `kg import`, `kg purge`: a user's or a pair's data as JSON Lines, and deletion."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from cli.common import JsonOpt, UserOpt, call, character_opt, err, out, print_json

if TYPE_CHECKING:  # only the commands that run it load the transfer module
    from kg.transfer import Anzahl, ExportErgebnis, ImportErgebnis, PurgeErgebnis
    from kg.transfer import Progress as ProgressFn

CharOpt = character_opt(None, "Only this character's pair (default: the whole user).")


@contextmanager
def progress_bar(label: str, quiet: bool) -> Iterator[ProgressFn]:
    """A rich progress bar on stderr (stdout stays clean for --json); none when quiet."""
    if quiet or not err.is_terminal:
        yield lambda phase, done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=err.rich, transient=True)
    task = bar.add_task(label, total=None)
    with bar:
        def update(phase: str, done: int, total: int) -> None:
            bar.update(task, description=phase, completed=done, total=total)

        yield update


def _scope(user: str, character: str | None) -> str:
    return f"user {user!r}" + (f", character {character!r}" if character else " (all characters)")


def _counts(anzahl: Anzahl) -> str:
    return (f"{anzahl.entitaeten} entities, {anzahl.fakten} facts ({anzahl.werte} value facts), "
            f"{anzahl.eintraege} timeline entries, {anzahl.nachfolger} NACHFOLGER, "
            f"{anzahl.betrifft} BETRIFFT, {anzahl.auftraege} orders")


def export(
    datei: str = typer.Argument(..., help="The JSON Lines file to write (replaced if it exists)."),
    user: str = UserOpt,
    character: str | None = CharOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Export a user's data, or one pair's, to a JSON Lines file (one record per line).

    Entities, facts with all temporal and decay properties, timeline entries with
    their NACHFOLGER and BETRIFFT links, and the audited orders; sorted, so the same
    data always gives the same bytes.

    Example: kg export --user u1 --character nova u1-nova.jsonl
    """
    with progress_bar("export", as_json) as bar:
        result: ExportErgebnis = call(
            lambda m: m.export(datei, user, character, bar),
            interrupted=f"the export writes its file whole or not at all: {datei} is as it "
            "was before, or the whole export if it was stopped as it ended — run it again "
            "to be sure")
    if as_json:
        print_json(result)
        return
    out.print(f"exported {_scope(user, character)} to {result.datei}: {result.zeilen} lines — "
              f"{_counts(result.anzahl)}", markup=False)


def import_(
    datei: str = typer.Argument(..., help="A file written by `kg export`."),
    as_json: bool = JsonOpt,
) -> None:
    """Import a file written by `kg export`: all of it, or nothing.

    Every line is validated first (a bad line is reported with its number), then
    the whole file is written in one transaction. Entities the user has already are
    kept; facts, entries or orders already in the store are a conflict.

    Example: kg import u1-nova.jsonl
    """
    with progress_bar("import", as_json) as bar:
        result: ImportErgebnis = call(
            lambda m: m.import_file(datei, bar),
            interrupted="the import is one transaction: nothing of it was written, or all "
            "of it if it was stopped as it committed — import the file again: it is "
            "refused as already there if it went through")
    for warning in result.warnungen:
        err.print(f"warning: {warning}", markup=False)
    if as_json:
        print_json(result)
        return
    kept = (f" ({result.entitaeten_vorhanden} entities were there already and kept)"
            if result.entitaeten_vorhanden else "")
    out.print(f"imported {result.datei} for {_scope(result.user_id, result.character_id)}: "
              f"{_counts(result.anzahl)}{kept}", markup=False)


def purge(
    user: str = UserOpt,
    character: str | None = CharOpt,
    yes: bool = typer.Option(False, "--yes", help="Really delete; without it nothing happens."),
    as_json: bool = JsonOpt,
) -> None:
    """Delete a user's data, or one pair's, completely (the right to be forgotten).

    A pair loses its facts, value nodes, timeline entries and orders, and the
    entities no other pair of the user has facts or entries on. Without --character
    the whole user goes, entities and lock node included. Other pairs stay untouched.

    Example: kg purge --user u1 --character nova --yes
    """
    if not yes:
        err.print(f"error: purge deletes all data of {_scope(user, character)} for good; "
                  "add --yes to do it (and `kg export` first to keep a copy)", markup=False)
        raise typer.Exit(2)
    result: PurgeErgebnis = call(
        lambda m: m.purge(user, character),
        interrupted="the purge is one transaction: nothing was deleted, or all of it if it "
        "was stopped as it committed — run it again: it says \"purged already\" if it "
        "went through")
    if as_json:
        print_json(result)
        return
    from rich.table import Table

    table = Table("deleted", "count", title=f"purged {_scope(user, character)}")
    for label, value in (
        ("facts", result.fakten), ("of them value facts (Wert nodes)", result.werte),
        ("timeline entries", result.eintraege), ("NACHFOLGER links", result.nachfolger),
        ("orders", result.auftraege), ("entities", result.entitaeten),
        ("user lock node", result.nutzer),
    ):
        table.add_row(label, str(value))
    out.print(table)
    if result.entitaeten_behalten:
        out.print(f"kept {result.entitaeten_behalten} entities: other pairs of the user still "
                  "have facts or entries on them", markup=False)
    if result.fremde_kanten:
        err.print(f"warning: deleted {result.fremde_kanten} edges of other users' data into "
                  "this user's entities with them (a store kg check finds broken: "
                  "one_user_per_fact); run `kg check` for the rest", markup=False)
