"""The machine's load average while a benchmark runs, sampled so every figure can carry it.

The machine is shared, so a latency means little without the load it was measured
under. A daemon thread reads `os.getloadavg()` once a second (a read of /proc/loadavg,
microseconds: it does not disturb what it watches); each phase of a run is bracketed
with `phase()` and reports the 1-minute load average at its start and end and its mean
and maximum over the phase.

It also times this process's garbage collections (`gc.callbacks`): a full collection
walks every object of the bench (its generated data too) and stops the timed call that
triggered it, so a phase's maximum latency means little without its collections.

And it measures the machine's speed at each phase's start and end (`speed_probe`): a
fixed piece of pure Python, timed. The machine is a guest on a shared host, and its
share of the host changes: on 2026-12-01 two runs 25 minutes apart differed by 1.6-2× in
every figure, PostgreSQL's and the driver's bare round trip included, at the same load
average. The probe shows such a change; the load average does not.

And how long the disk takes to make a write durable (`fsync_probe`), at each phase's
start and end: a write order waits for Neo4j's fsync of its transaction log, and the
host's disk is shared too. A writer blocked in fsync counts in the load average, so a
high load during the writes may be the disk; the probe tells.
"""

from __future__ import annotations

import gc
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def speed_probe(rounds: int = 3) -> float:
    """Milliseconds for a fixed piece of pure Python (dicts, strings, integers, as the
    client's own work is), the least of `rounds` runs: lower is a faster machine (3-5 ms
    on this one)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        table: dict[str, int] = {}
        for i in range(20_000):
            key = f"k{i % 997}"
            table[key] = table.get(key, 0) + i * i % 7
        best = min(best, time.perf_counter() - start)
    return round(best * 1000, 2)


def fsync_probe(directory: str | None = None, writes: int = 20) -> float:
    """Milliseconds to write 4 KiB into a file and fsync it, the median of `writes`, in
    `directory` (beside the store, where the caller knows it; else the temporary
    directory); 0.1 ms on this machine when its disk is quiet."""
    where = directory if directory and os.path.isdir(directory) else tempfile.gettempdir()
    fd, path = tempfile.mkstemp(prefix=".kg-fsync-probe-", dir=where)
    try:
        times = []
        for i in range(writes):
            os.pwrite(fd, b"x" * 4096, (i % 8) * 4096)
            start = time.perf_counter()
            os.fsync(fd)
            times.append(time.perf_counter() - start)
    finally:
        os.close(fd)
        os.unlink(path)
    return round(statistics.median(times) * 1000, 3)


def now() -> list[float]:
    """The 1-, 5- and 15-minute load averages, rounded."""
    return [round(x, 2) for x in os.getloadavg()]


class LoadSampler:
    """Samples the 1-minute load average every `interval` seconds until stopped."""

    def __init__(self, interval: float = 1.0, fsync_dir: str | None = None) -> None:
        self.interval = interval
        #: Where `fsync_probe` writes: beside the store (the bench's Neo4j home), or the
        #: temporary directory.
        self.fsync_dir = fsync_dir
        self.samples: list[tuple[float, float]] = []  # (monotonic time, 1-minute load)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loadavg", daemon=True)
        #: (monotonic end, generation, milliseconds) of each garbage collection.
        self.collections: list[tuple[float, int, float]] = []
        self._collecting_since = 0.0

    def _collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._collecting_since = time.perf_counter()
        else:
            ms = (time.perf_counter() - self._collecting_since) * 1000
            self.collections.append((time.monotonic(), info["generation"], ms))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic(), os.getloadavg()[0]))
            self._stop.wait(self.interval)

    def start(self) -> LoadSampler:
        self._thread.start()
        gc.callbacks.append(self._collection)
        return self

    def stop(self) -> None:
        if self._collection in gc.callbacks:
            gc.callbacks.remove(self._collection)
        self._stop.set()
        self._thread.join(timeout=5)

    def between(self, start: float, end: float) -> list[float]:
        return [load for t, load in self.samples if start <= t <= end]

    @contextmanager
    def phase(self, into: dict[str, Any], name: str) -> Iterator[None]:
        """Record the load average over the block as `into[name]`: start and end (1, 5,
        15 minutes) and the 1-minute mean and maximum of the samples taken meanwhile;
        this process's garbage collections meanwhile (all, full ones, longest, total);
        and the speed probe just before and just after the block (outside its timing).
        A phase run in parts (the write rounds, each writer setting in turn) is one
        record: the next part adds to the one `into[name]` holds (`parts` counts them)."""
        probe_start = speed_probe()
        fsync_start = fsync_probe(self.fsync_dir)
        before, start = now(), time.monotonic()
        try:
            yield
        finally:
            end = time.monotonic()
            seen = self.between(start, end) or [os.getloadavg()[0]]
            part = {
                "start": before,
                "end": now(),
                "mean_1m": round(sum(seen) / len(seen), 2),
                "max_1m": round(max(seen), 2),
                "samples": len(seen),
                "gc": collections([c for c in self.collections if start <= c[0] <= end]),
                "probe_start_ms": probe_start,
                "probe_end_ms": speed_probe(),
                "fsync_start_ms": fsync_start,
                "fsync_end_ms": fsync_probe(self.fsync_dir),
                "parts": 1,
            }
            into[name] = merged(into[name], part) if name in into else part


def merged(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """Two records of one phase as one: from the first's start to the second's end, the
    mean weighted by samples, the longer maximum, the collections added up."""
    samples = first["samples"] + then["samples"]
    a, b = first["gc"], then["gc"]
    disk = (
        {"fsync_start_ms": first["fsync_start_ms"], "fsync_end_ms": then["fsync_end_ms"]}
        if "fsync_start_ms" in first and "fsync_end_ms" in then
        else {}
    )
    return {
        "start": first["start"],
        "end": then["end"],
        "mean_1m": round(
            (first["mean_1m"] * first["samples"] + then["mean_1m"] * then["samples"]) / samples, 2
        ),
        "max_1m": max(first["max_1m"], then["max_1m"]),
        "samples": samples,
        "gc": {
            "n": a["n"] + b["n"],
            "full": a["full"] + b["full"],
            "max_ms": max(a["max_ms"], b["max_ms"]),
            "total_ms": round(a["total_ms"] + b["total_ms"], 2),
        },
        "probe_start_ms": first["probe_start_ms"],
        "probe_end_ms": then["probe_end_ms"],
        **disk,
        "parts": first.get("parts", 1) + then.get("parts", 1),
    }


def collections(seen: list[tuple[float, int, float]]) -> dict[str, Any]:
    """Garbage collections: how many, how many full (generation 2), the longest and the
    total pause in milliseconds."""
    return {
        "n": len(seen),
        "full": sum(1 for _, generation, _ in seen if generation == 2),
        "max_ms": round(max((ms for *_, ms in seen), default=0.0), 2),
        "total_ms": round(sum(ms for *_, ms in seen), 2),
    }
