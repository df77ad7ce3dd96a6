"""`kg decay run`, `kg decay forget-ahead` and `kg check`: keeping the store honest."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from cli.common import JsonOpt, call, err, out, parse_day, print_json, user_opt
from kg.api import Memory

if TYPE_CHECKING:  # only the commands that run them load these modules
    from datetime import date

    from kg.check import CheckReport
    from kg.decay import DecayRun

decay_app = typer.Typer(help="The daily decay sweep over the active fact edges.\n\n"
                        "Example: kg decay run", no_args_is_help=True)


@decay_app.command("run")
def decay_run(
    day_text: str | None = typer.Option(
        None, "--day", "--as-of",
        help="Compute the strengths for this day (YYYY-MM-DD; default today, UTC); alias --as-of.",
    ),
    if_due: bool = typer.Option(
        False, "--if-due", help="Do nothing when the day's sweep has run (safe hourly from cron)."
    ),
    user: str | None = user_opt(
        None, "Sweep only this user's edges (not recorded as the day's run)."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Write staerke_decay and decay_am on every active fact edge; never touches aktiv.

    Example: kg decay run --if-due
    """
    day = parse_day(day_text, "--day") if day_text is not None else None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("sweeping"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[edges]} edges"), TimeElapsedColumn(),
        console=err.rich, transient=True, disable=as_json or not err.is_terminal,
    )
    task = bar.add_task("sweep", total=None, edges=0)

    def progress(done: int, total: int, edges: int) -> None:
        # Shown from the first batch on: an error before it (no server, a bad user)
        # stays one line, where a bar started at once left an empty line after it.
        if not bar.live.is_started:
            bar.start()
        bar.update(task, completed=done, total=total, edges=edges)

    async def run(m: Memory) -> DecayRun:
        return await m.decay_run(user, day=day, if_due=if_due, progress=progress)

    try:
        result = call(run)
    finally:
        if bar.live.is_started:  # (a bar never shown prints an empty line as it stops)
            bar.stop()
    if as_json:
        print_json(result)
        return
    scope = f" of user {result.user_id}" if result.user_id else ""
    if result.skipped:
        out.print(f"decay {result.day}{scope}: already swept — nothing to do", markup=False)
        return
    out.print(
        f"decay {result.day}{scope}: {result.edges} active fact edges swept, "
        f"{result.resting} rest below {result.threshold:g}, {result.seconds:.1f}s"
        + ("" if result.recorded else " (scoped: not recorded as the day's run)"),
        markup=False,
    )


@decay_app.command("forget-ahead")
def decay_forget_ahead(as_json: bool = JsonOpt) -> None:
    """Delete the sweeps recorded for a day after tomorrow, which no sweep can have
    reached (`kg check` reports them under decay_has_a_run).

    Example: kg decay forget-ahead
    """

    async def run(m: Memory) -> list[date]:
        return await m.decay_forget_ahead()

    days = call(run)
    if as_json:
        print_json({"geloescht": [d.isoformat() for d in days]})
    elif days:
        out.print(f"deleted {len(days)} decay run(s) recorded for a day after tomorrow: "
                  + ", ".join(d.isoformat() for d in days), markup=False)
    else:
        out.print("no decay run is recorded for a day after tomorrow — nothing to do",
                  markup=False)


def check(
    user: str | None = user_opt(
        None, "Check only this user's data; default the whole database."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Prove the store's invariants; exit 1 with the violations when any is broken.

    Example: kg check --json
    """
    report = call(lambda m: m.check(user))
    if as_json:
        print_json(report)
    else:
        _print_report(report)
    if not report.ok:
        raise typer.Exit(1)


def _print_report(report: CheckReport) -> None:
    scope = f"user {report.user_id}" if report.user_id else "the whole database"
    out.print(f"kg check — {scope}, {report.day}", markup=False)
    for c in report.checks:
        mark = "ok  " if c.ok else "FAIL"
        out.print(f"  {mark} {c.item} {c.name:<22} {c.count:>8}  {c.title}", markup=False)
        if not c.ok:
            if c.detail:
                out.print(f"         {c.detail}", markup=False)
            for sample in c.samples:
                out.print(f"         - {sample}", markup=False)
    from rich.markup import escape
    from rich.table import Table

    table = Table("kind", "name", "count", "class", "decay", "run", "referenced", "verdict",
                  title="decay convention §4", title_justify="left")
    for r in report.table:
        run = "—"
        if r.recent_run is not None:
            late = r.newest_run is not None and r.newest_run > report.day
            run = "recent" if r.recent_run else ("future" if late else "stale")
            run += f" {r.newest_run}" if r.newest_run else ""
        table.add_row("rel" if r.kind == "relationship" else r.kind, escape(r.name),
                      str(r.count), r.classification,
                      ", ".join(r.decay) or "—", run.strip(), "yes" if r.referenced else "no",
                      escape(r.verdict))
    out.print(table)
    bad = report.violations
    out.print("clean: every invariant holds" if not bad else
              f"{len(bad)} of {len(report.checks)} checks found violations: "
              + ", ".join(f"{c.name} ({c.count})" for c in bad), markup=False)
