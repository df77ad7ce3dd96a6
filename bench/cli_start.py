"""How long `kg mappe ... --json` takes as a whole process, and where its imports go.

    python -m bench.cli_start --user bench-u000002 --character nova --entity <id or name>

Runs the installed `kg` command N times against the store of NEO4J_URI (after a few
warm-up runs, so the operating system's file cache is warm as on a chat server, and the
bytecode of `kg`'s modules is written as pip writes it for an installed package) and
prints p50 / p95 of the wall time and the CPU time per run; then the slowest imports of
one run from `python -X importtime` (cumulative, in ms). No entity given: the first
sampled entity of `bench.readpath`'s state file.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[max(0, math.ceil(q * len(xs)) - 1)]


def kg_command() -> list[str]:
    here = Path(sys.executable).parent / "kg"
    return [str(here)] if here.exists() else [shutil.which("kg") or "kg"]


def bytecode_env() -> dict[str, str]:
    """The environment of the timed runs: the caller's, but Python may keep its bytecode.
    With PYTHONDONTWRITEBYTECODE set (as on this machine), a checkout whose bytecode is
    missing or older than its source compiles those modules of `kg` in every run again:
    35-50 ms with none, ~6 ms for one stale module, which an installed package (pip
    compiles it) never pays. The warm-up runs write it."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(cmd: list[str], runs: int, warmup: int = 3) -> tuple[list[float], float]:
    """The wall time of each of `runs` runs of `cmd` and the CPU time per run (user +
    system, seconds), after `warmup` runs that warm the file cache and write the
    bytecode (`bytecode_env`)."""
    env = bytecode_env()
    for _ in range(warmup):
        subprocess.run(cmd, capture_output=True, check=True, env=env)
    walls = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True, env=env)
        walls.append(time.perf_counter() - t)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return walls, cpu / runs


def importtime(argv: list[str], top: int) -> list[tuple[float, str]]:
    """The `top` imports with the largest cumulative time in one run of the CLI."""
    code = "import sys; from cli.entry import main; sys.argv = ['kg', *sys.argv[1:]]; main()"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *argv],
        capture_output=True, text=True, check=False, env=bytecode_env(),
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative_us, name = line.split("|", 2)
        rows.append((int(cumulative_us) / 1000, name.rstrip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--user")
    p.add_argument("--character", default="nova")
    p.add_argument("--entity", help="entity id or name")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--top", type=int, default=25, help="imports to list")
    args = p.parse_args()
    if args.entity is None:
        port = urlsplit(os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687")).port
        state = Path(f"/tmp/kg-readpath-{port}.json")
        if not state.is_file():
            p.error(f"no entity given, and no state file of bench.readpath at {state}: "
                    "name one with --user, --character and --entity, or run "
                    "bench.readpath against this server first")
        sample = json.loads(state.read_text())["samples"][0]
        args.user, args.character, args.entity = (
            sample["user_id"], sample["character_id"], sample["entity_id"]
        )
    argv = ["mappe", args.entity, "-u", args.user, "-c", args.character, "--json"]
    walls, cpu = timed(kg_command() + argv, args.runs)
    load = os.getloadavg()[0]
    print(f"`kg {' '.join(argv)}` over {args.runs} runs (load average {load:.1f}):")
    print(f"  wall p50 {percentile(walls, 0.5):.3f} s   p95 {percentile(walls, 0.95):.3f} s   "
          f"min {min(walls):.3f} s")
    # On a loaded machine the wall time is mostly waiting for a core; the CPU time is not.
    print(f"  CPU (user + system) per run {cpu:.3f} s")
    if importlib.util.find_spec("numpy") is not None:
        # The driver imports numpy (and pandas, pyarrow) whenever they are installed; here
        # the bench's plotting brought numpy in, an install without [bench] has none.
        print("  note: numpy is installed here, and the driver imports it at start")
    print("slowest imports (cumulative ms, `python -X importtime`, one run):")
    for ms, name in importtime(argv, args.top):
        print(f"  {ms:8.1f}  {name}")


if __name__ == "__main__":
    main()
