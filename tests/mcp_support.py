"""Drive `kg mcp serve` with the SDK's own client, from synchronous tests.

A `Remote` keeps one MCP client session open on an event loop of its own thread, so a
module's tests (and hypothesis examples) share one server process instead of paying
its start for every call. The servers are real subprocesses: stdio through the SDK's
`stdio_client`, HTTP through `kg mcp serve --http` and `streamable_http_client`.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager, suppress
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, TextContent

from cli.launcher import free_port
from kg.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def server_env(settings: Settings) -> dict[str, str]:
    """What a server subprocess needs to reach the test session's Neo4j (and nothing else)."""
    return {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_USERNAME": settings.neo4j_username,
        "NEO4J_PASSWORD": settings.neo4j_password.get_secret_value(),
        "NEO4J_DATABASE": settings.neo4j_database,
        "PYTHONPATH": str(ROOT),
    }


def kg_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "cli.main", *args]


def stdio_transport(
    settings: Settings, user: str, character: str, errlog: Path
) -> Callable[[], AbstractAsyncContextManager[Any]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "cli.main", "mcp", "serve", "--user", user, "--character", character],
        env=server_env(settings),
        cwd=str(ROOT),
    )

    def open_transport() -> AbstractAsyncContextManager[Any]:
        log = errlog.open("a", encoding="utf-8")
        return stdio_client(params, errlog=log)

    return open_transport


def http_transport(url: str, token: str | None) -> Callable[[], AbstractAsyncContextManager[Any]]:
    def open_transport() -> AbstractAsyncContextManager[Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))

    return open_transport


class Remote:
    """One open MCP client session, usable from synchronous code."""

    def __init__(self, open_transport: Callable[[], AbstractAsyncContextManager[Any]]) -> None:
        self._open = open_transport
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._ready: Future[Client] = Future()
        self._stop: asyncio.Event | None = None
        self._main = asyncio.run_coroutine_threadsafe(self._hold(), self._loop)
        self.client = self._ready.result(timeout=90)

    async def _hold(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with Client(self._open(), read_timeout_seconds=60) as client:
                self._ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def run(self, make: Callable[[Client], Coroutine[Any, Any, Any]]) -> Any:
        return asyncio.run_coroutine_threadsafe(make(self.client), self._loop).result(timeout=120)

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        return self.run(lambda c: c.call_tool(tool, arguments))  # type: ignore[no-any-return]

    def ok(self, tool: str, **arguments: Any) -> Any:
        """Structured content of a successful call (fails the test on a tool error)."""
        result = self.call(tool, **arguments)
        assert not result.is_error, f"{tool} failed: {text(result)}"
        assert result.structured_content is not None, tool
        return result.structured_content

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        with suppress(Exception):
            self._main.result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def everything(result: CallToolResult) -> str:
    """All a client sees of a result, as one string (for leak checks)."""
    return text(result) + json.dumps(result.structured_content, ensure_ascii=False)


class HttpServer:
    """`kg mcp serve --http` as a subprocess on a free loopback port."""

    def __init__(self, settings: Settings, tokens_file: Path, errlog: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._log = errlog.open("a", encoding="utf-8")
        env = {**os.environ, **server_env(settings)}
        self.process = subprocess.Popen(
            kg_command(
                "mcp", "serve", "--http", "--port", str(self.port),
                "--tokens-file", str(tokens_file),
            ),
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"kg mcp serve --http exited: {errlog.read_text()[-2000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("kg mcp serve --http did not listen within 90 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()
