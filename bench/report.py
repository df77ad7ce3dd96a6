"""The Markdown report and the plot of a benchmark result (JSON from bench/run.py).

python -m bench.report                                  # the newest result
python -m bench.report bench/results/<stamp>.json       # a given one

Either redraws that result's .md and the plot and regenerates the README's figures
table from it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: The targets the goals table holds a run to (latencies in ms at the largest size).
GOALS = {
    "mappe_p50_ms": 5.0,
    "mappe_p99_ms": 20.0,
    "pg_over_mappe_p50": 1.2,  # PostgreSQL p50 / Mappe p50 at least
    "mappe_p99_over_pg_p99": 1.5,  # Mappe p99 at most PostgreSQL p99 times this
    "mappe_over_cheapest_floor": 2.0,  # Mappe p50 at most this times the cheapest floor
    "turn_over_mappe": 1.5,  # the turn's Mappen p50 at most this times one Mappe
    "hub_max_ms": 15.0,
    "write_p50_ms": 6.0,  # one writer, a 5-triple order
    "writes_4_per_s": 300.0,
    "load_facts_per_s": 30_000,
    "cli_p50_s": 0.30,
    "growth": 1.5,
}

def _mb(n: int | None) -> str:
    return "–" if n is None else f"{n / 1024 / 1024:,.0f} MB"


def _ms(d: dict[str, Any] | None, key: str) -> str:
    if not d or key not in d:
        return "–"
    return f"{d[key]:.2f}"


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if not a or not b else a / b


def _fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _get(s: dict[str, Any], *path: str) -> Any:
    """A figure of one size, None where an (older) result does not have it."""
    value: Any = s
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def write_rounds(config: dict[str, Any]) -> str:
    """How the write phases ran: rounds taking turns since 2026-12-02, one before."""
    n = config.get("write_rounds", 1)
    return "one round" if n == 1 else f"{n} alternating rounds"


def rate_spread(w: dict[str, Any] | None) -> str:
    """A writer setting's orders/s over its rounds, where there were several."""
    rates = (w or {}).get("orders_per_s_rounds") or []
    if len(rates) < 2:
        return ""
    return f" (median of {len(rates)} rounds, {min(rates):,.0f}-{max(rates):,.0f})"


def cheapest_floor(s: dict[str, Any]) -> tuple[str, float] | None:
    """The driver's cheapest `RETURN 1` round trip of one size, p50: held-session
    `session.run` or `execute_query` (older results: none)."""
    ways = [
        (name, _get(s, key, "p50"))
        for name, key in (
            ("held session.run", "floor_session"),
            ("execute_query", "floor_execute_query"),
        )
    ]
    found = [(name, p50) for name, p50 in ways if p50 is not None]
    return min(found, key=lambda w: w[1]) if found else None


RESULTS = ROOT / "bench" / "results"


def stamp(result: dict[str, Any]) -> str:
    """A result's file stem (older results carry only their date)."""
    return str(result.get("stamp") or result["date"])


def newest(results: Path = RESULTS) -> Path:
    """The newest result file: stems are start times, so the greatest name is newest."""
    found = sorted(results.glob("*.json"))
    if not found:
        raise SystemExit(f"no results in {results}")
    return found[-1]


def loadavg(s: dict[str, Any], phase: str) -> str:
    """The 1-minute load average over a phase of one size: mean / max of the samples
    (older results recorded only start and end of the reads and the load)."""
    phases = s.get("loadavg")
    if isinstance(phases, dict) and phase in phases:
        p = phases[phase]
        return f"{p['mean_1m']:.1f} / {p['max_1m']:.1f}"
    old = s.get("loadavg_reads") if phase == "reads" else s.get("load", {}).get("loadavg")
    if phase in ("reads", "load") and old:
        return f"{old[0][0]:.1f} → {old[1][0]:.1f}"
    return "–"


def probe(s: dict[str, Any], phase: str) -> str:
    """The speed probe at the start and end of a phase of one size (ms; lower is faster)."""
    p = _get(s, "loadavg", phase)
    if not isinstance(p, dict) or "probe_start_ms" not in p:
        return "–"
    return f"{p['probe_start_ms']:.1f} → {p['probe_end_ms']:.1f}"


def fsync(s: dict[str, Any], phase: str) -> str:
    """The fsync probe at the start and end of a phase of one size (ms)."""
    p = _get(s, "loadavg", phase)
    if not isinstance(p, dict) or p.get("fsync_start_ms") is None:
        return "–"
    return f"{p['fsync_start_ms']:.2f} → {p['fsync_end_ms']:.2f}"


def goals(result: dict[str, Any]) -> list[tuple[str, str, str, bool | None, str]]:
    """(goal, target, measured, met, load average of the phase) at the largest size.
    A figure the run did not measure reads – and is neither met nor missed."""
    sizes = result["sizes"]
    if not sizes:
        return []
    small, large = sizes[0], sizes[-1]
    at = large["size"]
    reads = loadavg(large, "reads")
    m = large["mappe"]
    pg = large.get("postgres") or {}
    rows: list[tuple[str, str, str, bool | None, str]] = []

    def goal(name: str, target: str, value: float | None, shown: str, met: bool | None,
             phase: str = reads) -> None:
        if value is None:  # not measured (an older result, a skipped phase)
            rows.append((name, target, "–", None, "–"))
        else:
            rows.append((name, target, shown, met, phase))

    vs_pg = _ratio(pg.get("p50"), m["p50"])
    goal(f"faster than PostgreSQL at {at}: SQL p50 / Mappe p50", "≥ 1.2", vs_pg,
         _fmt(vs_pg), vs_pg is not None and vs_pg >= GOALS["pg_over_mappe_p50"])
    tail = _ratio(m["p99"], pg.get("p99"))
    goal(f"Mappe p99 / SQL p99 at {at}", "≤ 1.5", tail,
         f"{_fmt(tail)} ({m['p99']:.2f} / {_fmt(pg.get('p99'))} ms)",
         tail is not None and tail <= GOALS["mappe_p99_over_pg_p99"])
    parity = large.get("parity") or {}
    checked = parity.get("postgres_checked")
    same = parity.get("postgres_equal")
    goal("parity with PostgreSQL (same facts, history, places, type)", "100 %",
         checked or None, f"{same} / {checked}", same == checked)
    floor = cheapest_floor(large)
    over = _ratio(m["p50"], floor[1]) if floor else None
    goal(f"Mappe p50 / cheapest floor p50 at {at}", "≤ 2", over,
         f"{_fmt(over)} (floor: {floor[0]} {floor[1]:.2f} ms)" if floor else "",
         over is not None and over <= GOALS["mappe_over_cheapest_floor"])
    turn = large.get("mappen_turn") or {}
    turn_ratio = _ratio(turn.get("p50"), m["p50"])
    n = result.get("config", {}).get("turn", 5)
    goal(f"the turn's {n} Mappen in one call: p50 / one Mappe p50", "≤ 1.5", turn_ratio,
         f"{_fmt(turn_ratio)} ({_fmt(turn.get('p50'))} ms)",
         turn_ratio is not None and turn_ratio <= GOALS["turn_over_mappe"])
    pg_turn = (large.get("postgres_turn") or {}).get("p50")
    turn_vs_pg = _ratio(pg_turn, turn.get("p50"))
    goal(f"the turn's {n} Mappen faster than PostgreSQL's {n}: SQL p50 / Mappen p50", "> 1",
         turn_vs_pg, f"{_fmt(turn_vs_pg)} ({_fmt(pg_turn)} / {_fmt(turn.get('p50'))} ms)",
         turn_vs_pg is not None and turn_vs_pg > 1)
    hub = _get(large, "hubs", "max")
    goal(f"hub entities: Mappe max at {at}", "≤ 15 ms", hub, f"{hub or 0:.2f} ms",
         hub is not None and hub <= GOALS["hub_max_ms"], loadavg(large, "hubs"))
    w1 = _get(large, "writes", "1", "p50")
    goal("write order (5 triples), 1 writer p50", "≤ 6 ms", w1, f"{w1 or 0:.2f} ms",
         w1 is not None and w1 <= GOALS["write_p50_ms"], loadavg(large, "writes_1"))
    w4 = _get(large, "writes", "4", "orders_per_s")
    goal("4 writers (distinct users)", "≥ 300 orders/s", w4,
         f"{w4 or 0:,.1f} orders/s{rate_spread(_get(large, 'writes', '4'))}",
         w4 is not None and w4 >= GOALS["writes_4_per_s"], loadavg(large, "writes_4"))
    load = _get(large, "load", "facts_per_s")
    goal(f"bulk load (the {at} step)", "≥ 30,000 facts/s", load, f"{load or 0:,.0f} facts/s",
         load is not None and load >= GOALS["load_facts_per_s"], loadavg(large, "load"))
    cli = _get(large, "cli_start", "p50_s")
    goal("CLI start: `kg mappe … --json` as a whole process, p50", "≤ 0.30 s", cli,
         f"{cli or 0:.3f} s", cli is not None and cli <= GOALS["cli_p50_s"],
         loadavg(large, "cli"))
    goal(f"Mappe p50 at {at} (earlier goal)", "≤ 5 ms", m["p50"], f"{m['p50']:.2f} ms",
         m["p50"] <= GOALS["mappe_p50_ms"])
    goal(f"Mappe p99 at {at} (earlier goal)", "≤ 20 ms", m["p99"], f"{m['p99']:.2f} ms",
         m["p99"] <= GOALS["mappe_p99_ms"])
    growth = _ratio(m["p50"], small["mappe"]["p50"]) if len(sizes) > 1 else None
    goal(f"growth (p50 {at} / p50 {small['size']}, earlier goal)", "≤ 1.5", growth,
         _fmt(growth), growth is not None and growth <= GOALS["growth"])
    vs_naive = _ratio(large["naive"]["p50"], m["p50"])
    goal(f"faster than naive at {at} (naive p50 / Mappe p50, earlier goal)", "> 1", vs_naive,
         _fmt(vs_naive), vs_naive is not None and vs_naive > 1)
    if "mappe_asof" in large:
        a = large["mappe_asof"]
        rows.append((f"as-of Mappe p50 / p99 at {at} (beside it, no target)", "–",
                     f"{a['p50']:.2f} / {a['p99']:.2f} ms", None, reads))
    return rows


def goals_table(result: dict[str, Any]) -> list[str]:
    """The goals as Markdown table lines."""
    lines = [
        "| goal | target | measured | met | load average (mean / max) |",
        "|---|---|---|---|---|",
    ]
    for goal, target, measured, met, load in goals(result):
        mark = "–" if met is None else ("yes" if met else "**no**")
        lines.append(f"| {goal} | {target} | {measured} | {mark} | {load} |")
    return lines


def table(result: dict[str, Any]) -> str:
    """The README table: one column per size."""
    sizes = result["sizes"]
    head = "| | " + " | ".join(s["size"] + " facts" for s in sizes) + " |"
    sep = "|---|" + "---:|" * len(sizes)
    lines = [head, sep]

    def row(name: str, cell: Any) -> None:
        lines.append(f"| {name} | " + " | ".join(cell(s) for s in sizes) + " |")

    row("fact edges in the store", lambda s: f"{s['store']['facts']:,}")
    row("floor `RETURN 1` p50 (ms): the library's path", lambda s: _ms(s["floor"], "p50"))
    if any("floor_session" in s for s in sizes):
        row(
            "floor p50 (ms): held-session `session.run` / `execute_query`",
            lambda s: f"{_ms(s.get('floor_session'), 'p50')} / "
            f"{_ms(s.get('floor_execute_query'), 'p50')}",
        )
    row(
        "**Mappe** p50 / p95 / p99 (ms)",
        lambda s: (
            f"**{_ms(s['mappe'], 'p50')}** / {_ms(s['mappe'], 'p95')} / {_ms(s['mappe'], 'p99')}"
        ),
    )
    row("Mappe p50 / floor", lambda s: _fmt(_ratio(s["mappe"]["p50"], s["floor"]["p50"]), 1))
    if any("floor_session" in s for s in sizes):
        row(
            "Mappe p50 / cheapest floor",
            lambda s: _fmt(
                _ratio(s["mappe"]["p50"], (cheapest_floor(s) or ("", None))[1]), 1
            ),
        )
    if any("mappen_turn" in s for s in sizes):
        n = result.get("config", {}).get("turn", 5)
        row(
            f"**turn: {n} Mappen in one call**⁴ p50 / p99 (ms)",
            lambda s: f"**{_ms(s.get('mappen_turn'), 'p50')}** / "
            f"{_ms(s.get('mappen_turn'), 'p99')}",
        )
        row(
            "turn / one Mappe (p50)",
            lambda s: _fmt(_ratio(_get(s, "mappen_turn", "p50"), s["mappe"]["p50"]), 1),
        )
        row(
            f"PostgreSQL 15, the same {n} dossiers p50 / p99 (ms)",
            lambda s: f"{_ms(s.get('postgres_turn'), 'p50')} / "
            f"{_ms(s.get('postgres_turn'), 'p99')}",
        )
        row(
            "PostgreSQL turn / turn (p50)",
            lambda s: _fmt(
                _ratio(_get(s, "postgres_turn", "p50"), _get(s, "mappen_turn", "p50")), 1
            ),
        )
    if any("mappe_asof" in s for s in sizes):
        row(
            "**as-of Mappe**² p50 / p95 / p99 (ms)",
            lambda s: (
                f"**{_ms(s.get('mappe_asof'), 'p50')}** / {_ms(s.get('mappe_asof'), 'p95')} / "
                f"{_ms(s.get('mappe_asof'), 'p99')}"
            ),
        )
        row(
            "as-of / current Mappe (p50)",
            lambda s: _fmt(_ratio(s.get("mappe_asof", {}).get("p50"), s["mappe"]["p50"]), 1),
        )
    row(
        "Mappe query only p50 / p99 (ms)",
        lambda s: f"{_ms(s['mappe_query'], 'p50')} / {_ms(s['mappe_query'], 'p99')}",
    )
    row("naive p50 / p99 (ms)", lambda s: f"{_ms(s['naive'], 'p50')} / {_ms(s['naive'], 'p99')}")
    row("naive / Mappe (p50)", lambda s: _fmt(_ratio(s["naive"]["p50"], s["mappe"]["p50"]), 1))
    row(
        "PostgreSQL 15 p50 / p99 (ms)",
        lambda s: f"{_ms(s.get('postgres'), 'p50')} / {_ms(s.get('postgres'), 'p99')}",
    )
    row(
        "PostgreSQL / Mappe (p50)",
        lambda s: _fmt(_ratio(s.get("postgres", {}).get("p50"), s["mappe"]["p50"]), 1),
    )
    if any("after_idle" in s for s in sizes):
        row(
            "after 50 ms idle⁷: floor / **Mappe** p50 (ms)",
            lambda s: f"{_ms(_get(s, 'after_idle', 'floor'), 'p50')} / "
            f"**{_ms(_get(s, 'after_idle', 'mappe'), 'p50')}**",
        )
        row(
            "after 50 ms idle⁷: PostgreSQL floor / dossier p50 (ms)",
            lambda s: f"{_ms(_get(s, 'after_idle', 'pg_floor'), 'p50')} / "
            f"{_ms(_get(s, 'after_idle', 'postgres'), 'p50')}",
        )
        row(
            "after 50 ms idle⁷: PostgreSQL / Mappe (p50)",
            lambda s: _fmt(
                _ratio(_get(s, "after_idle", "postgres", "p50"),
                       _get(s, "after_idle", "mappe", "p50")), 1
            ),
        )
    row(
        "hub entities: Mappe p50 / max (ms)",
        lambda s: f"{_ms(s.get('hubs'), 'p50')} / {_ms(s.get('hubs'), 'max')}",
    )
    row(
        "their neighbours⁵: Mappe p50 / p99 / max (ms)",
        lambda s: (
            f"{_ms(s.get('hub_neighbours'), 'p50')} / {_ms(s.get('hub_neighbours'), 'p99')}"
            f" / {_ms(s.get('hub_neighbours'), 'max')}"
        ),
    )
    row(
        "write order (5 triples), 1 writer p50 / p99 (ms)",
        lambda s: f"{_ms(s['writes']['1'], 'p50')} / {_ms(s['writes']['1'], 'p99')}",
    )
    row(
        "write orders/s, 1 / 4 writers",
        lambda s: f"{s['writes']['1']['orders_per_s']} / {s['writes']['4']['orders_per_s']}",
    )
    row(
        "4 writers p50 / p99 (ms)",
        lambda s: f"{_ms(s['writes']['4'], 'p50')} / {_ms(s['writes']['4'], 'p99')}",
    )
    row("bulk load (facts/s)", lambda s: f"{s['load']['facts_per_s']:,}")
    if any("cli_start" in s for s in sizes):
        row(
            "CLI start `kg mappe … --json` p50 / p95 (s)",
            lambda s: f"{_fmt(_get(s, 'cli_start', 'p50_s'), 3)} / "
            f"{_fmt(_get(s, 'cli_start', 'p95_s'), 3)}",
        )
    row("decay sweep over all edges (s)", lambda s: f"{s['decay']['seconds']}")
    row("`kg check` (s)", lambda s: f"{s['check']['seconds']}" if "check" in s else "–")
    row(
        "store files on disk¹ (+ transaction logs)",
        lambda s: f"{_mb(s['memory']['store_bytes'])} (+{_mb(s['memory']['tx_log_bytes'])})",
    )
    row("heap in use", lambda s: _mb(s["memory"]["heap_used_bytes"]))
    row("PostgreSQL database size", lambda s: _mb(s["memory"]["pg_bytes"]))
    row("bench process peak RSS", lambda s: _mb(s["memory"]["bench_rss_peak_bytes"]))
    row("load average³ during the reads (mean / max)", lambda s: loadavg(s, "reads"))
    row("load average³ during the bulk load", lambda s: loadavg(s, "load"))
    row(
        "load average³ during the writes, 1 / 4 writers",
        lambda s: f"{loadavg(s, 'writes_1')} · {loadavg(s, 'writes_4')}",
    )
    row("load average³ during the decay sweep", lambda s: loadavg(s, "decay"))
    if any(_get(s, "loadavg", "reads", "probe_start_ms") is not None for s in sizes):
        row(
            "speed probe⁶ (ms), start → end: reads · 4 writers",
            lambda s: f"{probe(s, 'reads')} · {probe(s, 'writes_4')}",
        )
    if any(_get(s, "loadavg", "writes_1", "fsync_start_ms") is not None for s in sizes):
        row(
            "fsync probe⁸ (ms), start → end: 1 writer · 4 writers",
            lambda s: f"{fsync(s, 'writes_1')} · {fsync(s, 'writes_4')}",
        )
    lines += [
        "",
        "¹ Neo4j writes its store files at checkpoints (every 15 minutes by default); until "
        "then the data sits in the transaction logs, so the small sizes show almost nothing.",
    ]
    if any("asof" in s for s in sizes):
        a = sizes[-1]["asof"]
        lines += [
            "",
            "² `Memory.mappe(..., gueltig_am=..., bekannt_am=...)`: valid at "
            f"{str(a['gueltig_am'])[:10]} (a year back, inside the generated data), known as "
            "of the moment after each size's load (every loaded version), interleaved with "
            "the other readers.",
        ]
    lines += [
        "",
        f"³ 1-minute load average of the machine ({result['machine']['cores']} cores, shared "
        "with other work), sampled every second over the phase: mean / max "
        "(older results: start → end).",
    ]
    if any("mappen_turn" in s for s in sizes):
        n = result.get("config", {}).get("turn", 5)
        lines += [
            "",
            f"⁴ `Memory.mappen` of {n} entities of one user in one call (each sampled entity "
            f"and {n - 1} more of its user in the pair), interleaved with the other readers; "
            f"PostgreSQL assembles the same {n} dossiers with the dossier statement once per "
            "entity, all in one pipeline (one round trip).",
        ]
    if any("hub_neighbours" in s for s in sizes):
        lines += [
            "",
            "⁵ `Memory.mappe` of up to 10 entities with an active fact to each hub (the "
            "residents of a hub city, the staff of a hub employer), 5 calls each after a "
            "warm-up pass: their degree 2 walks the hub's hundreds of facts. Since run "
            "2026-12-01T2026 only entities whose fact to the hub is not resting (before, "
            "one through a resting fact never walked the hub).",
        ]
    if any(_get(s, "loadavg", "reads", "probe_start_ms") is not None for s in sizes):
        lines += [
            "",
            "⁶ A fixed piece of pure Python timed in the bench process just before and just "
            "after the phase (`bench.loadavg.speed_probe`, the least of three; lower is "
            "faster): the machine's speed then. Its share of the host changes, and the load "
            "average does not show it (recorded since 2026-12-01). It catches a slower "
            "processor, not slower round trips (run 2026-12-02T0030: the probe 1.3× slower, "
            "the driver's floor 3.1×): compare runs by it and by the driver's held-session "
            "floor, which no code of kg touches.",
        ]
    idle = next((s["after_idle"] for s in sizes if "after_idle" in s), None)
    if idle is not None:
        lines += [
            "",
            f"⁷ Each call after {idle['pause_ms']:.0f} ms in which the bench process sent "
            f"nothing (`bench.run.idle_reads`, {idle['mappe']['n']} entities, the readers in "
            "a new random order for each): a chat reads the Mappe once per turn, after "
            "seconds of idleness, where the readers above follow each other within a "
            "millisecond or two. Not a goal's figure; the goals are stated for the "
            "interleaved run.",
        ]
    if any(_get(s, "loadavg", "writes_1", "fsync_start_ms") is not None for s in sizes):
        lines += [
            "",
            "⁸ 4 KiB written into a file beside the store and made durable with fsync, the "
            "median of 20, just before and just after the phase (`bench.loadavg."
            "fsync_probe`; since 2026-12-02): a write order waits for the same kind of "
            "fsync of Neo4j's transaction log, and the host's disk is shared. A writer "
            "blocked in fsync also counts in the load average.",
        ]
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = result["sizes"]
    xs = [s["store"]["facts"] for s in sizes]
    fig, ax = plt.subplots(figsize=(8, 6), dpi=120)
    series = [
        ("mappe", "Mappe (store, one query)", "tab:blue"),
        ("mappe_asof", "as-of Mappe", "tab:purple"),
        ("mappen_turn", "turn: Mappen in one call", "tab:cyan"),
        ("postgres_turn", "PostgreSQL, the turn's dossiers", "tab:olive"),
        ("naive", "naive (1 + N queries)", "tab:orange"),
        ("postgres", "PostgreSQL 15 (one SQL query)", "tab:green"),
    ]
    styles = [("p50", "-", "o"), ("p95", "--", "s"), ("p99", ":", "^")]
    for key, name, color in series:
        if not all(key in s for s in sizes):
            continue
        for pct, line, marker in styles:
            ax.plot(
                xs,
                [s[key][pct] for s in sizes],
                line,
                marker=marker,
                color=color,
                label=f"{name} {pct}",
            )
    ax.plot(
        xs, [s["floor"]["p50"] for s in sizes], "-", color="grey", lw=1, label="floor RETURN 1 p50"
    )
    ax.axhline(5, color="tab:red", lw=0.8, ls="--")
    ax.axhline(20, color="tab:red", lw=0.8, ls=":")
    ax.text(xs[0], 5, " goal p50 5 ms", color="tab:red", va="bottom", fontsize=8)
    ax.text(xs[0], 20, " goal p99 20 ms", color="tab:red", va="bottom", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("fact edges in the store")
    ax.set_ylabel("latency per Mappe (ms, warm)")
    ax.set_title(
        f"Mappe latency vs database size ({stamp(result)}, {result['machine']['cores']} cores)"
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def profile_text(result: dict[str, Any]) -> str:
    prof = result.get("profile") or {}
    out = []
    for key, p in prof.items():
        e = p["entity"]
        out.append(
            f"**{key}** — {e['kind']} {e['name']!r}: {p['db_hits']:,} db hits in all, "
            f"result after {p['available_after_ms']} ms"
        )
        out.append("")
        out.append("| operator | db hits | rows | details |")
        out.append("|---|---:|---:|---|")
        for o in p["top"][:8]:
            details = o["details"].replace("|", "\\|")
            out.append(f"| {o['operator']} | {o['db_hits']:,} | {o['rows']:,} | `{details}` |")
        out.append("")
    py = result.get("python_profile") or []
    if py:
        out.append("Python side of one Mappe call (cProfile over 200 calls, self time):")
        out.append("")
        out.append("| function | self ms per Mappe | cumulative ms |")
        out.append("|---|---:|---:|")
        for r in py[:10]:
            out.append(
                f"| `{r['function']}` | {r['self_ms_per_mappe']} | {r['cum_ms_per_mappe']} |"
            )
        out.append("")
    return "\n".join(out)


def markdown(result: dict[str, Any], plot_rel: str) -> str:
    m = result["machine"]
    c = result["config"]
    lines = [
        f"# Benchmark {stamp(result)}",
        "",
        f"Command: `{result['command']}` (git {m.get('git')})",
        "",
        "## Machine and versions",
        "",
        f"- CPU: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB memory "
        "(shared with other work while it ran: see the load averages below)",
        f"- {m['os']}, Python {m['python']}",
        f"- Neo4j {m['neo4j_server']} Community (heap {m['neo4j_heap']}, page cache "
        f"{m['neo4j_pagecache']}), Python driver {m['neo4j_driver']} "
        f"({m.get('neo4j_driver_kind', 'pure Python')})",
        f"- PostgreSQL {m['postgres']}, psycopg {m['psycopg']}",
        f"- seed {c['seed']}, {c['samples']} sampled entities per size, Mappe cap "
        f"{c['mappe_cap']}, resting threshold {c['ruhe_schwelle']}, {write_rounds(c)} of "
        f"{c['orders']} orders per writer setting after {c.get('write_warmup', 20)} untimed, "
        "load batches of "
        f"{c['batch_facts']} facts × {c['load_concurrency']} in flight",
        "",
        "## Figures",
        "",
        table(result),
        "",
        f"![Mappe latency vs size]({plot_rel})",
        "",
        "## Goals",
        "",
        *goals_table(result),
    ]
    lines += ["", "## Per size", ""]
    for s in result["sizes"]:
        lines.append(f"### {s['size']}")
        lines.append("")
        lines.append(f"- store: {s['store']}")
        lines.append(f"- load: {s['load']}")
        if "pg_load" in s:
            lines.append(f"- PostgreSQL load (COPY): {s['pg_load']}")
        if "check" in s:
            lines.append(f"- kg check: {s['check']}")
        lines.append(f"- samples: {s['samples']}")
        if "asof" in s:
            lines.append(f"- as-of point: {s['asof']}")
        for key in (
            "floor", "floor_session", "floor_execute_query", "mappe", "mappen_turn",
            "mappe_asof", "mappe_query", "naive", "pg_floor", "postgres", "postgres_turn",
            "hubs", "hub_neighbours", "cli_start",
        ):
            if key in s:
                lines.append(f"- {key}: {s[key]}")
        lines.append(f"- parity (same facts from the three readers): {s['parity']}")
        if "write_warmup" in s:
            lines.append(f"- write warm-up (untimed, users of its own): {s['write_warmup']}")
        for k, w in s["writes"].items():
            lines.append(f"- writes, {k} writer(s): {w}")
        lines.append(f"- decay: {s['decay']}")
        lines.append(f"- memory: {s['memory']}")
        if isinstance(s.get("loadavg"), dict):
            for phase, p in s["loadavg"].items():
                lines.append(f"- load average during {phase}: {p}")
        else:
            lines.append(f"- load average during the reads: {s.get('loadavg_reads')}")
        lines.append("")
    lines += ["## Profile of the Mappe query at the largest size", "", profile_text(result)]
    lines += ["## Log", "", "```", *result.get("log", []), "```", ""]
    return "\n".join(lines)


START, END = "<!-- results:start -->", "<!-- results:end -->"
#: The READMEs whose figures table (between the markers) is the newest result's.
READMES = (ROOT / "README.md", ROOT / "bench" / "README.md")


def readme_section(result: dict[str, Any], plot_link: str = "/docs/bench-mappe.png") -> str:
    """The README's benchmark section: date, command, table, plot and goals."""
    m = result["machine"]
    name = stamp(result)
    samples = result.get("config", {}).get("samples", 1000)
    order = (
        "in a new random order for each entity"
        if result.get("config", {}).get("reader_order") == "shuffled"
        else "always in the same order"
    )
    lines = [
        f"Measured on {result['date']} (run {name}, UTC) on this project's machine "
        f"({m['cores']} cores {m['cpu']}, {m['memory_gib']} GiB, shared with other work — "
        f"the load average of each phase is in the table), Neo4j {m['neo4j_server']} "
        f"Community with heap {m['neo4j_heap']} and page cache {m['neo4j_pagecache']}, "
        f"PostgreSQL {(m['postgres'] or '–').split()[0]}, Python {m['python']} with the "
        f"driver {m['neo4j_driver']} ({m.get('neo4j_driver_kind', 'pure Python')}). "
        "Latencies are per call, end to end in the Python process, warm, over "
        f"{samples:,} sampled entities per size, the readers interleaved entity by entity, "
        f"{order}. "
        f"Full report: [`bench/results/{name}.md`](/bench/results/{name}.md); "
        "`python -m bench.compare` sets it against the previous committed result.",
        "",
        table(result),
        "",
        f"![Mappe latency against database size]({plot_link})",
        "",
        *goals_table(result),
    ]
    lines += [
        "",
        f"Reproduce: `{result['command']}` (the server it needs: "
        "[bench/README.md](/bench/README.md#reproduce)); compare with the previous "
        "committed result: `python -m bench.compare`.",
    ]
    return "\n".join(lines)


def update_readme(result: dict[str, Any], readme: Path) -> None:
    """Replace the section between the result markers of `readme` (if it has them)."""
    if not readme.exists():
        return
    text = readme.read_text(encoding="utf-8")
    if START not in text or END not in text:
        return
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{START}\n{readme_section(result)}\n{END}{tail}", encoding="utf-8")


def write(result: dict[str, Any], md_path: Path, plot_path: Path) -> Path:
    plot(result, plot_path)
    try:
        rel = plot_path.resolve().relative_to(ROOT)
        plot_rel = "../../" + str(rel)
    except ValueError:
        plot_rel = str(plot_path)
    md_path.write_text(markdown(result, plot_rel), encoding="utf-8")
    if shown_in_readme(md_path):
        for readme in READMES:
            update_readme(result, readme)
    return md_path


def shown_in_readme(md_path: Path) -> bool:
    """The README shows the newest kept result; a result written elsewhere (a trial run
    with --out) or an older one leaves it alone."""
    kept = md_path.resolve().parent == RESULTS.resolve()
    return kept and md_path.with_suffix(".json").resolve() == newest().resolve()


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else newest()
    result = json.loads(path.read_text())
    plot_path = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "docs" / "bench-mappe.png"
    print(write(result, path.with_suffix(".md"), plot_path))


if __name__ == "__main__":
    main()
