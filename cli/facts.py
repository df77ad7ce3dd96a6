"""`kg write`, `kg correct`, `kg entities`, `kg mappe`, `kg history`, `kg audit`."""

from __future__ import annotations

import json
import sys

import typer

from cli.common import (
    CharOpt,
    JsonOpt,
    UserOpt,
    call,
    character_opt,
    err,
    fail,
    out,
    parse_start,
    parse_when,
    print_json,
    user_opt,
)
from kg.api import Memory, correction_order, parse_order, zeitpunkt_without_replacement
from kg.errors import InvalidInput
from kg.mappe import Mappe, MappeFakt, render
from kg.models import Auftrag, AuftragErgebnis, DuplicateKey, unique_keys
from kg.settings import MAPPE_CAP_MAX

#: The most bytes `kg write` reads: an order holds at most 200 triples of names and
#: values of at most 2,000 characters, a few MiB even with every character escaped.
MAX_ORDER_BYTES = 16 * 1024 * 1024


def _read_json(source: str) -> object:
    try:
        if source == "-":
            raw = sys.stdin.buffer.read(MAX_ORDER_BYTES + 1)
        else:
            with open(source, "rb") as f:
                raw = f.read(MAX_ORDER_BYTES + 1)
        if len(raw) > MAX_ORDER_BYTES:
            err.print(f"error: {source} is larger than {MAX_ORDER_BYTES // 2**20} MiB; an "
                      "order holds at most 200 triples — send one turn's order", markup=False)
            raise typer.Exit(2)
        # (A byte order mark, as some editors save UTF-8, is no part of the JSON: RFC 8259
        # lets a reader ignore it, and json said "decode using utf-8-sig".)
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except OSError as exc:
        err.print(f"error: cannot read {source}: {exc.strerror}", markup=False)
        raise typer.Exit(2) from None
    except UnicodeDecodeError as exc:
        err.print(f"error: {source} is not UTF-8 text (byte {exc.start}: {exc.reason}) — "
                  "save the order as UTF-8", markup=False)
        raise typer.Exit(2) from None
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except DuplicateKey as exc:
        err.print(f"error: {source}: {exc} — give each key once", markup=False)
        raise typer.Exit(2) from None
    except json.JSONDecodeError as exc:
        err.print(
            f"error: {source} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            markup=False,
        )
        raise typer.Exit(2) from None
    except RecursionError:
        err.print(f"error: {source} is nested too deeply to be an order", markup=False)
        raise typer.Exit(2) from None


def _print_result(result: AuftragErgebnis, as_json: bool) -> None:
    if as_json:
        print_json(result)
    else:
        head = f"order {result.auftrag_id}: {result.status}"
        out.print(
            head
            + (
                " (wiederholt — already written, nothing written again)"
                if result.wiederholt
                else ""
            ),
            markup=False,
        )
        for r in result.ergebnisse:
            out.print(f"  [{r.index}] {r.ausgang:<12} {r.detail()}", markup=False)
            for k in r.kandidaten:
                out.print(
                    f"        candidate {k.id} {k.name} ({k.typ}) {'; '.join(k.merkmale)}",
                    markup=False,
                )
    if result.status != "ok":
        raise typer.Exit(1)


def write(
    source: str = typer.Argument(..., help="Order JSON file, or - for standard input."),
    as_json: bool = JsonOpt,
) -> None:
    """Write one order (Auftrag) through the Fakten-Agent; exit 1 unless every triple held.

    Example: echo '{"auftrag_id": "t1", "user_id": "u1", "character_id": "nova",
    "tripel": [{"subjekt": "Lena", "beziehung": "wohnt_in", "objekt": "Kassel",
    "herkunft": "mensch"}]}' | kg write -
    """
    data = _read_json(source)
    try:
        order = parse_order(data)
    except InvalidInput as error:
        fail(error)
    result = call(lambda m: m.write(order), interrupted=(
        f"order {order.auftrag_id} is written whole or not at all, and may have been "
        "written before the stop — send it again: with the same auftrag_id it is written "
        "once (`wiederholt` where it was)"))
    _print_result(result, as_json)


def correct(
    user: str = UserOpt,
    character: str = CharOpt,
    subjekt: str = typer.Option(..., help="Subject of the wrong fact: a name or an id."),
    beziehung: str = typer.Option(..., help="Relation of the wrong fact."),
    herkunft: str = typer.Option(
        ..., help="Herkunft (mensch, nova, modell, recherche); required, no default."
    ),
    objekt: str | None = typer.Option(
        None, help="Object entity of the wrong fact: a name or an id."
    ),
    wert: str | None = typer.Option(None, help="Or its value."),
    neu_objekt: str | None = typer.Option(
        None, help="Replacement object, a name or an id (optional)."
    ),
    neu_wert: str | None = typer.Option(None, help="Replacement value (optional)."),
    zeitpunkt: str | None = typer.Option(
        None, help="When the replacement began: a date (its start, UTC) or an ISO 8601 "
        "instant with a time zone. Default: where the corrected value began."
    ),
    notiz: str | None = typer.Option(None, help="Why it is wrong (kept in the audit)."),
    auftrag_id: str | None = typer.Option(None, help="Idempotency id (default: generated)."),
    as_json: bool = JsonOpt,
) -> None:
    """Correct a wrong fact: retired as never true, optionally with its replacement.

    Example: kg correct -u u1 -c nova --subjekt Mittelmeer --beziehung ist_ein
    --wert Ozean --neu-wert Nebenmeer --herkunft mensch

    The replacement takes the wrong value's place: it holds from where that one began
    (with its event, if it began with one), unless --zeitpunkt says when.
    """
    for a, b in (("--objekt", objekt), ("--wert", wert)), (("--neu-objekt", neu_objekt),
                                                           ("--neu-wert", neu_wert)):
        if a[1] is not None and b[1] is not None:
            fail(InvalidInput(f"give {a[0]} or {b[0]}, not both"))
    if objekt is None and wert is None:
        fail(InvalidInput("give --objekt or --wert: the object or the value of the wrong "
                          "fact"))
    if zeitpunkt is not None and neu_objekt is None and neu_wert is None:
        fail(zeitpunkt_without_replacement("--zeitpunkt", "--neu-objekt or --neu-wert"))
    when = parse_start(zeitpunkt, "--zeitpunkt")
    Ref = str | dict[str, str] | None

    def build(subjekt: str | dict[str, str], objekt: Ref, neu_objekt: Ref) -> Auftrag:
        return correction_order(
            user, character, subjekt=subjekt, beziehung=beziehung, herkunft=herkunft,
            objekt=objekt, wert=wert, neu_objekt=neu_objekt, neu_wert=neu_wert,
            zeitpunkt=when, notiz=notiz, auftrag_id=auftrag_id,
        )

    try:
        order = build(subjekt, objekt, neu_objekt)
    except InvalidInput as error:
        fail(error)

    async def write(m: Memory) -> AuftragErgebnis:
        # An entity may be named by its id, as in `kg mappe`: the id of one of the user's
        # entities is taken as that entity, whatever else is named so.
        async def ref(text: str | None) -> Ref:
            if text is not None and await m.db.query(
                "entity_by_id", user_id=user, character_id=character, entity_id=text
            ):
                return {"id": text}
            return text

        by_id = [await ref(subjekt), await ref(objekt), await ref(neu_objekt)]
        if by_id == [subjekt, objekt, neu_objekt]:
            return await m.write(order)
        return await m.write(build(by_id[0] or subjekt, by_id[1], by_id[2]))

    _print_result(call(write), as_json)


def entities(
    user: str = UserOpt,
    character: str = CharOpt,
    limit: int = typer.Option(1000, min=1, max=1_000_000, help="Most entities to list."),
    as_json: bool = JsonOpt,
) -> None:
    """List a user's entities with their type and active fact count in the pair (the
    type fact not counted).

    Example: kg entities -u u1 -c nova
    """
    rows = call(lambda m: m.entities(user, character, limit))
    if as_json:
        print_json(rows)
        return
    # Ids are what a maintainer copies into the next command: never cut them short.
    from rich.table import Column, Table

    table = Table(Column("id", overflow="fold", min_width=32), "name", "typ", "fakten")
    for e in rows:
        table.add_row(e.id, e.name, e.typ, str(e.fakten))
    out.print(table)


def mappe(
    entity: str = typer.Argument(..., help="Entity name or id."),
    user: str = UserOpt,
    character: str = CharOpt,
    gueltig_am: str | None = typer.Option(
        None, help="Valid time: what held then (a date = the end of that day, UTC, or an "
        "ISO 8601 instant with a time zone)."
    ),
    bekannt_am: str | None = typer.Option(
        None, help="System time: as the store knew it then (date or instant, as above)."
    ),
    cap: int | None = typer.Option(
        None, min=1, max=MAPPE_CAP_MAX, help="Most facts (default KG_MAPPE_CAP)."
    ),
    as_json: bool = JsonOpt,
    text: bool = typer.Option(False, "--text", help="Only the prompt text block."),
    budget: int = typer.Option(
        # (At least the MCP tools' 100: at 1 the text was "…" alone.)
        1500, min=100, max=1_000_000, help="Character budget of the prompt text."
    ),
) -> None:
    """Show the Mappe of an entity: facts to degree 2, history, derived knowledge.

    Example: kg mappe Lena -u u1 -c nova --json
    """
    v = parse_when(gueltig_am, "--gueltig-am")
    x = parse_when(bekannt_am, "--bekannt-am")

    async def read(m: Memory) -> Mappe:
        eid = await m.entity_id(user, character, entity)
        return await m.mappe(user, character, eid, gueltig_am=v, bekannt_am=x, cap=cap)

    if as_json and text:
        fail(InvalidInput("give --json or --text, not both"))
    result = call(read)
    if as_json:
        print_json(result)
    elif text:
        out.print(render(result, budget), markup=False)
    else:
        print_mappe(result, budget, show_stand=True)


def print_mappe(
    result: Mappe, budget: int = 1500, show_text: bool = True, *, show_stand: bool = False
) -> None:
    if show_text:
        out.print(render(result, budget), markup=False)
    from rich.table import Table

    table = Table(
        "grad",
        "subjekt",
        "beziehung",
        "objekt / wert",
        "herkunft",
        "ab",
        "stärke",
        title=f"Mappe {result.entitaet.name}",
        # The instant to read it again with: --bekannt-am answers the same from it.
        caption=f"stand {result.stand.isoformat()}" if show_stand and result.stand else None,
    )
    for f in result.fakten:
        table.add_row(
            str(f.grad),
            f.subjekt.name,
            f.beziehung,
            f.objekt.name if f.objekt else f"„{f.wert}“",
            f.herkunft,
            f"{f.ab} noch bis {f.bis}" if f.bis else f.ab or "",
            f"{f.staerke:.2f}",
        )
    for h in result.historie:
        table.add_row(
            "hist",
            h.subjekt.name,
            h.beziehung,
            h.objekt.name if h.objekt else f"„{h.wert}“",
            h.herkunft,
            f"{h.ab} bis {h.bis}",
            f"{h.staerke:.2f}",
        )
    out.print(table)


def history(
    entity: str = typer.Argument(..., help="Entity name or id."),
    user: str = UserOpt,
    character: str = CharOpt,
    beziehung: str | None = typer.Option(None, help="Only this relation."),
    gueltig_am: str | None = typer.Option(
        None, help="Only values begun by then (date = end of that day, UTC, or an instant)."
    ),
    bekannt_am: str | None = typer.Option(
        None, help="As the store knew it then (date or instant, as above)."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Every value an entity's relations ever had ("where did Lena live before?").

    Example: kg history Lena -u u1 -c nova --beziehung wohnt_in --bekannt-am 2026-11-01
    """
    v = parse_when(gueltig_am, "--gueltig-am")
    x = parse_when(bekannt_am, "--bekannt-am")

    async def read(m: Memory) -> list[MappeFakt]:
        eid = await m.entity_id(user, character, entity)
        return await m.history(user, character, eid, beziehung, gueltig_am=v, bekannt_am=x)

    rows = call(read)
    if as_json:
        print_json(rows)
        return
    from rich.table import Table

    table = Table("beziehung", "objekt / wert", "ab", "bis", "aktiv", "herkunft")
    for f in rows:
        table.add_row(
            f.beziehung,
            f.objekt.name if f.objekt else f"„{f.wert}“",
            f.ab or "",
            f.bis or "",
            "ja" if f.aktiv else "nein",
            f.herkunft,
        )
    out.print(table)


audit_app = typer.Typer(
    help="The audit of write orders (forensics, with retention).\n\n"
    "Example: kg audit list -u u1 -c nova --limit 5"
)


@audit_app.callback(invoke_without_command=True)
def audit_default(
    ctx: typer.Context,
    user: str | None = user_opt(None, "The human's user_id."),
    character: str | None = character_opt(None, "Only this character."),
    limit: int = typer.Option(20, min=1, max=1_000_000, help="Most orders."),
    as_json: bool = JsonOpt,
) -> None:
    """The newest orders of a user or pair; `kg audit prune` applies the retention.

    Example: kg audit -u u1 -c nova --limit 5
    """
    if ctx.invoked_subcommand is not None:
        given = [flag for flag, value in (("--user", user), ("--character", character),
                                          ("--limit", limit != 20), ("--json", as_json))
                 if value]
        if given:
            # Options here belong to the listing; a subcommand would ignore them (and
            # `prune` applies the retention to every user).
            err.print(f"error: {', '.join(given)} given before the subcommand; give the "
                      f"options after the subcommand: kg audit {ctx.invoked_subcommand} …",
                      markup=False)
            raise typer.Exit(2)
        return
    if user is None:
        err.print("error: give --user (and optionally --character)")
        raise typer.Exit(2)
    audit_list(user, character, limit, as_json)


@audit_app.command("list")
def audit_list(
    user: str = UserOpt,
    character: str | None = character_opt(None, "Only this character."),
    limit: int = typer.Option(20, min=1, max=1_000_000, help="Most orders."),
    as_json: bool = JsonOpt,
) -> None:
    """The newest orders of a user or pair, with the outcome per triple.

    Example: kg audit list -u u1 -c nova --limit 5
    """
    rows = call(lambda m: m.audit(user, character, limit))
    if as_json:
        print_json(rows)
        return
    from rich.table import Table

    table = Table("recorded", "auftrag_id", "character", "status", "outcomes")
    for a in rows:
        outcomes = ", ".join(r.ausgang for r in a.ergebnis.ergebnisse)
        table.add_row(
            a.erfasst.isoformat(timespec="seconds"),
            a.auftrag_id,
            a.character_id,
            a.status,
            outcomes,
        )
    out.print(table)


@audit_app.command("prune")
def audit_prune(
    days: int | None = typer.Option(
        None, min=1, max=36_500,
        help="Keep this many days, 1-36500 (default KG_AUDIT_RETENTION_DAYS)."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Delete every user's orders older than the retention period.

    Example: kg audit prune --days 365
    """
    deleted = call(lambda m: m.audit_prune(keep_days=days))
    if as_json:
        print_json({"deleted": deleted})
    else:
        out.print(f"deleted {deleted} orders")
