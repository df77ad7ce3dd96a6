"""The MCP `mappe` round trip over stdio and streamable HTTP, beside the library call.

One run, one store, the readers interleaved entity by entity so that the machine's
load falls on all of them alike:

- **library**: `Memory.entity_id` + `Memory.mappe` + `render` in this process — what
  the `mappe` tool does inside the server;
- **stdio**: `call_tool("mappe")` through the SDK's client to `kg mcp serve` as a
  subprocess, bound to the bench pair;
- **http**: the same through `kg mcp serve --http` on loopback with the pair's token.

The data set is small and generated: `bench.writes.order` orders (20 people, 7 cities,
11 pets) written through the Fakten-Agent for a fresh user, purged at the end. Run
against a started server with the schema applied (NEO4J_* as for the library):

    python -m bench.mcp --rounds 300
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bench.writes import order
from cli.launcher import free_port
from kg.api import Memory
from kg.errors import NothingStored
from kg.mappe import render
from kg.settings import Settings
from kg_mcp.binding import PairRef, TokenFile

ROOT = Path(__file__).resolve().parent.parent
NAMES = [f"P{i}" for i in range(20)] + [f"Stadt{i}" for i in range(7)]


def percentiles(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {"p50": statistics.median(ordered), "p95": at(0.95), "p99": at(0.99)}


def server_env(settings: Settings) -> dict[str, str]:
    return {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_USERNAME": settings.neo4j_username,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "NEO4J_DATABASE": settings.neo4j_database,
        "PYTHONPATH": str(ROOT),
    }


async def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError("kg mcp serve --http exited early")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        await asyncio.sleep(0.1)
    raise RuntimeError("kg mcp serve --http did not listen")


async def run(rounds: int, warm: int) -> None:
    settings = Settings()
    pair = PairRef(user_id=f"bench-mcp-{uuid.uuid4().hex[:8]}", character_id="nova")
    memory = await Memory.open(settings)
    tmp = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    http: subprocess.Popen[bytes] | None = None
    try:
        for i in range(60):
            await memory.write(order(pair.user_id, i))

        tokens, token = TokenFile().with_new_token("bench", pair)
        tokens.save(tmp / "tokens.json")
        port = free_port()
        log = (tmp / "server.log").open("w")
        http = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "mcp", "serve", "--http", "--port", str(port),
             "--tokens-file", str(tmp / "tokens.json")],
            cwd=ROOT, env={**os.environ, **server_env(settings)},
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
        )
        await wait_listening(port, http)
        stdio = StdioServerParameters(
            command=sys.executable,
            args=["-m", "cli.main", "mcp", "serve", "-u", pair.user_id, "-c", pair.character_id],
            env=server_env(settings), cwd=str(ROOT),
        )
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            Client(stdio_client(stdio, errlog=log)) as via_stdio,
            Client(streamable_http_client(
                f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(headers=headers)
            )) as via_http,
        ):

            async def library(name: str) -> Any:
                eid = await memory.entity_id(pair.user_id, pair.character_id, name)
                return render(await memory.mappe(pair.user_id, pair.character_id, eid))

            def tool(client: Client) -> Callable[[str], Awaitable[Any]]:
                async def call(name: str) -> Any:
                    result = await client.call_tool("mappe", {"entitaet": name})
                    if result.is_error:
                        raise RuntimeError(f"mappe {name}: {result.content}")
                    return result

                return call

            readers = {"library": library, "stdio": tool(via_stdio), "http": tool(via_http)}
            # The three answer the same text.
            for name in NAMES[:3]:
                texts = {await library(name)}
                for r in ("stdio", "http"):
                    texts.add((await readers[r](name)).structured_content["text"])
                assert len(texts) == 1, texts
            ms: dict[str, list[float]] = {r: [] for r in readers}
            for i in range(warm + rounds):
                name = NAMES[i % len(NAMES)]
                for label, read in readers.items():
                    began = time.perf_counter()
                    await read(name)
                    if i >= warm:
                        ms[label].append((time.perf_counter() - began) * 1000)
        load = os.getloadavg()
        base = percentiles(ms["library"])
        print(f"mappe round trip, {rounds} calls per reader over {len(NAMES)} entities "
              f"(+{warm} warm-up), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"{'reader':<8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'p50 / library':>14}")
        for label, values in ms.items():
            p = percentiles(values)
            print(f"{label:<8} {p['p50']:8.2f} {p['p95']:8.2f} {p['p99']:8.2f} "
                  f"{p['p50'] / base['p50']:14.2f}")
    finally:
        if http is not None:
            http.terminate()
            http.wait(timeout=15)
        with contextlib.suppress(NothingStored):  # never hide the error that got here
            await memory.purge(pair.user_id)
        await memory.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=300, help="Calls per reader.")
    parser.add_argument("--warm", type=int, default=30, help="Warm-up calls per reader.")
    args = parser.parse_args(argv)
    asyncio.run(run(args.rounds, args.warm))


if __name__ == "__main__":
    main()
