"""`kg timeline`: add, move, cancel, link, show and list the entries of a pair."""

from __future__ import annotations

import typer
from pydantic import ValidationError

from cli.common import CharOpt, JsonOpt, UserOpt, call, err, fail, out, parse_day, print_json
from kg.api import Memory
from kg.errors import KgError
from kg.models import Genauigkeit, NeuerEintrag
from kg.plain import describe
from kg.timeline import Eintrag, month_window

timeline_app = typer.Typer(
    help="Dated entries of a pair and their NACHFOLGER chains.\n\n"
    "Example: kg timeline list -u u1 -c nova --monat 2026-11", no_args_is_help=True
)


def _table(rows: list[Eintrag], as_json: bool) -> None:
    if as_json:
        print_json(rows)
        return
    # Ids are what a maintainer copies into the next command: never cut them short.
    from rich.table import Column, Table

    table = Table(
        Column("id", overflow="fold", min_width=32),
        "typ",
        "titel",
        "wann",
        "genauigkeit",
        "aktiv",
        "betrifft",
    )
    for e in rows:
        state = "abgesagt" if e.abgesagt else ("ja" if e.aktiv else "nein")
        table.add_row(e.id, e.typ, e.titel, e.text, e.genauigkeit, state, e.person_name or "")
    out.print(table)


@timeline_app.command("add")
def add(
    user: str = UserOpt,
    character: str = CharOpt,
    typ: str = typer.Option(
        ..., help="termin, geburtstag, deadline, jahrestag, erinnerung, ereignis."
    ),
    titel: str = typer.Option(..., help="Title."),
    beginn: str = typer.Option(..., help="Start date YYYY-MM-DD."),
    ende: str | None = typer.Option(None, help="End date of a span."),
    monat: bool = typer.Option(False, "--monat", help="Only the month is known (precision monat)."),
    betrifft: str | None = typer.Option(None, help="Entity (name or id) an event happens to."),
    as_json: bool = JsonOpt,
) -> None:
    """Add an entry; an ereignis names the person it happens to.

    Example: kg timeline add -u u1 -c nova --typ ereignis --titel "Lena zieht nach Kassel"
    --beginn 2026-11-01 --monat --betrifft Lena
    """
    try:
        entry = NeuerEintrag.model_validate(
            {
                "typ": typ,
                "titel": titel,
                "beginn": parse_day(beginn, "--beginn"),
                "ende": parse_day(ende, "--ende") if ende is not None else None,
                "genauigkeit": "monat" if monat else "tag",
            }
        )
    except ValidationError as exc:
        err.print(f"error: the entry is invalid — {describe(exc)}", markup=False)
        raise typer.Exit(2) from None

    async def run(m: Memory) -> Eintrag:
        person = await m.entity_id(user, character, betrifft) if betrifft is not None else None
        return await m.timeline_add(user, character, entry, person)

    _table([call(run)], as_json)


@timeline_app.command("move")
def move(
    eintrag_id: str = typer.Argument(..., help="The active entry of the chain."),
    user: str = UserOpt,
    character: str = CharOpt,
    beginn: str = typer.Option(..., help="New start date YYYY-MM-DD."),
    ende: str | None = typer.Option(
        None, help="New end date (default: a span keeps its length; --ende = --beginn for one day)."
    ),
    monat: bool = typer.Option(False, "--monat", help="New precision: only the month is known."),
    tag: bool = typer.Option(False, "--tag", help="New precision: the day is known."),
    as_json: bool = JsonOpt,
) -> None:
    """Move an entry: a successor replaces it (old -[:NACHFOLGER]-> new, old inactive).
    Without --monat or --tag the precision stays as it was.

    Example: kg timeline move 3f2a... -u u1 -c nova --beginn 2026-12-01 --monat
    """
    if monat and tag:
        # (as one flag pair, the last one given won without a word)
        err.print("error: give --monat or --tag, not both (neither keeps the precision)")
        raise typer.Exit(2)
    genauigkeit: Genauigkeit | None = "monat" if monat else "tag" if tag else None
    b = parse_day(beginn, "--beginn")
    e = parse_day(ende, "--ende") if ende is not None else None
    _table(
        [call(lambda m: m.timeline_move(user, character, eintrag_id, b, e, genauigkeit))], as_json
    )


@timeline_app.command("cancel")
def cancel(
    eintrag_id: str = typer.Argument(..., help="The active entry of the chain."),
    user: str = UserOpt,
    character: str = CharOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Cancel an entry; facts valid from it are retired, values they replaced hold again.

    Example: kg timeline cancel 3f2a... -u u1 -c nova
    """
    result = call(lambda m: m.timeline_cancel(user, character, eintrag_id))
    if as_json:
        print_json(result)
    else:
        out.print(
            f"cancelled; facts retired: {len(result.retired)}, "
            f"reinstated: {len(result.reinstated)} (order {result.auftrag_id})"
        )


@timeline_app.command("link")
def link(
    eintrag_id: str = typer.Argument(..., help="Any entry of the chain."),
    user: str = UserOpt,
    character: str = CharOpt,
    betrifft: str = typer.Option(..., help="The entity (name or id) the entry is about."),
    as_json: bool = JsonOpt,
) -> None:
    """Name the person an entry is about, on every entry of its chain that names nobody.

    A repair for `kg check`'s ereignis_person (an event written without its person by an
    older version, or whose link was deleted by hand); dates, facts and orders stay.

    Example: kg timeline link 3f2a... -u u1 -c nova --betrifft Lena
    """

    async def run(m: Memory) -> list[Eintrag]:
        person = await m.entity_id(user, character, betrifft)
        return await m.timeline_link(user, character, eintrag_id, person)

    _table(call(run), as_json)


@timeline_app.command("show")
def show(
    eintrag_id: str = typer.Argument(..., help="Any entry of the chain."),
    user: str = UserOpt,
    character: str = CharOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Show the whole chain of an entry, oldest first.

    Example: kg timeline show 3f2a... -u u1 -c nova
    """
    _table(call(lambda m: m.timeline_chain(user, character, eintrag_id)), as_json)


@timeline_app.command("list")
def list_entries(
    user: str = UserOpt,
    character: str = CharOpt,
    # The domain's words, as in `add` and `move`; the English spellings of the first
    # version stay as aliases so existing scripts keep working.
    monat: str | None = typer.Option(
        None, "--monat", "--month", help="A named month YYYY-MM (alias --month)."
    ),
    von: str | None = typer.Option(
        None, "--von", "--from", help="Window start YYYY-MM-DD (alias --from)."
    ),
    bis: str | None = typer.Option(
        None, "--bis", "--to", help="Window end YYYY-MM-DD (alias --to)."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """The pair's active entries in a month or a window.

    Example: kg timeline list -u u1 -c nova --monat 2026-11
    """
    if monat is not None and (von is not None or bis is not None):
        err.print("error: give --monat YYYY-MM, or --von and --bis, not both")
        raise typer.Exit(2)
    if monat is not None:
        try:
            first, last = month_window(monat)
        except KgError as error:
            fail(error)
    elif von is not None and bis is not None:
        first, last = parse_day(von, "--von"), parse_day(bis, "--bis")
    else:
        err.print("error: give --monat YYYY-MM, or --von and --bis")
        raise typer.Exit(2)
    _table(call(lambda m: m.timeline_window(user, character, first, last)), as_json)
