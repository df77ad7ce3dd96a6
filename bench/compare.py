"""The newest benchmark result against the previous committed one, figure by figure.

    python -m bench.compare                       # newest result vs previous committed
    python -m bench.compare NEW.json [OLD.json]   # any two results
    python -m bench.compare --goals A.json B.json ...   # each goal, run by run

Prints, per size and figure, both values and the ratio newest / previous: for a latency
or a duration below 1 means faster, for a rate above 1 means more. The machine is
shared, so the load average of each run's reads and writes is printed beside them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.report import RESULTS, ROOT, goals, loadavg, newest, stamp

#: (figure, where it sits in a size's result). Latencies are milliseconds.
FIGURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("fact edges in the store", ("store", "facts")),
    ("floor p50 (ms)", ("floor", "p50")),
    ("floor, held session.run p50 (ms)", ("floor_session", "p50")),
    ("floor, execute_query p50 (ms)", ("floor_execute_query", "p50")),
    ("Mappe p50 (ms)", ("mappe", "p50")),
    ("Mappe p95 (ms)", ("mappe", "p95")),
    ("Mappe p99 (ms)", ("mappe", "p99")),
    ("turn, Mappen in one call p50 (ms)", ("mappen_turn", "p50")),
    ("turn, Mappen in one call p99 (ms)", ("mappen_turn", "p99")),
    ("as-of Mappe p50 (ms)", ("mappe_asof", "p50")),
    ("as-of Mappe p95 (ms)", ("mappe_asof", "p95")),
    ("as-of Mappe p99 (ms)", ("mappe_asof", "p99")),
    ("Mappe query only p50 (ms)", ("mappe_query", "p50")),
    ("Mappe query only p99 (ms)", ("mappe_query", "p99")),
    ("naive p50 (ms)", ("naive", "p50")),
    ("naive p99 (ms)", ("naive", "p99")),
    ("PostgreSQL p50 (ms)", ("postgres", "p50")),
    ("PostgreSQL p99 (ms)", ("postgres", "p99")),
    ("PostgreSQL turn p50 (ms)", ("postgres_turn", "p50")),
    ("PostgreSQL turn p99 (ms)", ("postgres_turn", "p99")),
    ("after 50 ms idle: floor p50 (ms)", ("after_idle", "floor", "p50")),
    ("after 50 ms idle: Mappe p50 (ms)", ("after_idle", "mappe", "p50")),
    ("after 50 ms idle: PostgreSQL p50 (ms)", ("after_idle", "postgres", "p50")),
    ("hub Mappe p50 (ms)", ("hubs", "p50")),
    ("hub Mappe max (ms)", ("hubs", "max")),
    ("hub neighbours' Mappe p50 (ms)", ("hub_neighbours", "p50")),
    ("hub neighbours' Mappe p99 (ms)", ("hub_neighbours", "p99")),
    ("write order, 1 writer p50 (ms)", ("writes", "1", "p50")),
    ("write order, 1 writer p99 (ms)", ("writes", "1", "p99")),
    ("write orders/s, 1 writer", ("writes", "1", "orders_per_s")),
    ("write order, 4 writers p50 (ms)", ("writes", "4", "p50")),
    ("write order, 4 writers p99 (ms)", ("writes", "4", "p99")),
    ("write orders/s, 4 writers", ("writes", "4", "orders_per_s")),
    ("bulk load (facts/s)", ("load", "facts_per_s")),
    ("decay sweep (s)", ("decay", "seconds")),
    ("kg check (s)", ("check", "seconds")),
    ("CLI start p50 (s)", ("cli_start", "p50_s")),
    ("speed probe before the reads (ms; lower is faster)", ("loadavg", "reads", "probe_start_ms")),
    ("speed probe after the reads (ms)", ("loadavg", "reads", "probe_end_ms")),
    ("fsync probe before the 4 writers (ms)", ("loadavg", "writes_4", "fsync_start_ms")),
    ("fsync probe after the 4 writers (ms)", ("loadavg", "writes_4", "fsync_end_ms")),
)

#: Phases whose load average is printed with each size.
PHASES = (("reads", "reads"), ("load", "bulk load"), ("writes_4", "4 writers"))


def figure(size: dict[str, Any], path: tuple[str, ...]) -> float | None:
    value: Any = size
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return float(value) if isinstance(value, int | float) else None


def rows(new: dict[str, Any], old: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(size, figure, previous, newest, ratio newest / previous) for every size both runs
    measured, the load averages first (pure). A figure only one of them has (an older
    result lacks the newer readers) reads – on the other side and has no ratio."""
    before = {s["size"]: s for s in old["sizes"]}
    out = []
    for s in new["sizes"]:
        o = before.get(s["size"])
        if o is None:
            continue
        for phase, name in PHASES:
            out.append(
                (s["size"], f"load average during {name}", loadavg(o, phase),
                 loadavg(s, phase), "")
            )
        for name, path in FIGURES:
            a, b = figure(o, path), figure(s, path)
            if a is None and b is None:
                continue
            ratio = f"{b / a:.2f}" if a and b is not None else "–"
            out.append((s["size"], name, _num(a), _num(b), ratio))
    return out


def _num(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.2f}"


def committed(results: Path = RESULTS) -> list[Path]:
    """The result files git knows (committed on this branch), oldest first."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--", str(results.relative_to(ROOT))],
        capture_output=True,
        text=True,
        check=False,
    )
    return sorted(
        ROOT / line for line in done.stdout.splitlines() if line.endswith(".json")
    )


def previous(new: Path, results: Path = RESULTS) -> Path:
    """The newest committed result older than `new`."""
    older = [p for p in committed(results) if p.name < new.name]
    if not older:
        raise SystemExit(f"no committed result older than {new.name} in {results}")
    return older[-1]


def text(new: dict[str, Any], old: dict[str, Any], new_path: Path, old_path: Path) -> str:
    lines = [
        f"newest:   {new_path.name} (run {stamp(new)}, git {new['machine'].get('git')})",
        f"previous: {old_path.name} (run {stamp(old)}, git {old['machine'].get('git')})",
        "ratio = newest / previous (latency, seconds: < 1 is faster; rates: > 1 is more)",
        "",
    ]
    found = rows(new, old)
    if not found:
        sizes = ", ".join(s["size"] for s in new["sizes"])
        before = ", ".join(s["size"] for s in old["sizes"])
        return "\n".join([*lines, f"no size in common (newest: {sizes}; previous: {before})"])
    table = [("size", "figure", "previous", "newest", "ratio"), *found]
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    for r in table:
        lines.append(
            "  ".join(
                cell.ljust(w) if i < 2 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
    return "\n".join(lines)


def across(results: list[dict[str, Any]]) -> list[tuple[str, str, list[str], str]]:
    """(goal, target, what each run measured, how many runs met it) for runs of the same
    code minutes apart (pure): on a shared host a timed goal is met in one run and missed
    in the next, and one run's table cannot say which is usual. A goal a run did not
    measure reads – there and is not counted."""
    per_run = [goals(r) for r in results]
    out = []
    for i, (name, target, *_rest) in enumerate(per_run[0] if per_run else []):
        cells = [run[i] for run in per_run if i < len(run) and run[i][0] == name]
        if len(cells) < len(per_run):
            continue  # the runs do not state this goal alike (another size, an older run)
        judged = [met for _, _, _, met, _ in cells if met is not None]
        count = f"{sum(judged)} of {len(judged)}" if judged else "–"
        out.append((name, target, [measured for _, _, measured, _, _ in cells], count))
    return out


def across_table(results: list[dict[str, Any]]) -> str:
    """`across` as a Markdown table, a column per run (its stamp)."""
    head = ["goal", "target", *(stamp(r) for r in results), "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, target, measured, count in across(results):
        lines.append("| " + " | ".join([name, target, *measured, count]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--goals"]:
        if len(args) < 3:
            raise SystemExit("--goals takes two or more result files (bench/results/*.json)")
        print(across_table([json.loads(Path(a).read_text(encoding="utf-8"))
                            for a in args[1:]]))
        return
    new_path = Path(args[0]) if args else newest()
    old_path = Path(args[1]) if len(args) > 1 else previous(new_path)
    new = json.loads(new_path.read_text(encoding="utf-8"))
    old = json.loads(old_path.read_text(encoding="utf-8"))
    print(text(new, old, new_path, old_path))


if __name__ == "__main__":
    main()
