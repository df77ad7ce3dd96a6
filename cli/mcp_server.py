"""`kg mcp serve` and `kg mcp token`: the memory as a tool for any agent (see docs/mcp.md)."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ipaddress
import logging
import os
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer
from pydantic import ValidationError

from cli.common import character_opt, err, fail, out, user_opt
from kg.api import Memory
from kg.errors import ConfigError, KgError
from kg.settings import Settings

if TYPE_CHECKING:
    from kg_mcp.binding import PairRef, TokenFile, TokenVerifier

mcp_app = typer.Typer(
    help="The memory as an MCP server (tools for agents), bound to one pair.\n\n"
    "Example: kg mcp serve --user u1 --character nova",
    no_args_is_help=True,
)
token_app = typer.Typer(help="Bearer tokens of the HTTP transport, one per pair.\n\n"
                        "Example: kg mcp token add -u u1 -c nova --tokens-file ./mcp-tokens.json")
mcp_app.add_typer(token_app, name="token")

DEFAULT_TOKENS = Path("~/.config/faktengedaechtnis/mcp-tokens.json")
TokensOpt = typer.Option(
    DEFAULT_TOKENS,
    "--tokens-file",
    envvar="KG_MCP_TOKENS",
    help="JSON file of tokens (only their SHA-256 is stored).",
)


def _sdk() -> None:
    """kg_mcp needs the `mcp` extra; without it, say how to install it."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        err.print("error: the MCP server needs the mcp extra: pip install 'faktengedaechtnis[mcp]'")
        raise typer.Exit(2) from None


def _tokens(path: Path) -> TokenFile:
    from kg_mcp.binding import TokenFile

    try:
        return TokenFile.load(path) if path.exists() else TokenFile()
    except ConfigError as error:
        fail(error)


def _pair(user: str | None, character: str | None) -> PairRef:
    from kg_mcp.binding import PairRef

    if not user or not character:
        err.print(
            "error: stdio binds one pair: give --user and --character "
            "(or KG_MCP_USER and KG_MCP_CHARACTER)"
        )
        raise typer.Exit(2)
    try:
        return PairRef(user_id=user, character_id=character)
    except ValidationError as exc:
        err.print(f"error: not a valid pair: {exc.errors()[0]['msg']}")
        raise typer.Exit(2) from None


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@mcp_app.command("serve")
def serve(
    user: str | None = user_opt(None, "stdio: the human's user_id.", envvar="KG_MCP_USER"),
    character: str | None = character_opt(
        None, "stdio: the character_id.", envvar="KG_MCP_CHARACTER"
    ),
    http: bool = typer.Option(
        False, "--http", help="Serve streamable HTTP (a pair per bearer token) instead of stdio."
    ),
    host: str = typer.Option("127.0.0.1", help="HTTP: loopback address to listen on."),
    port: int = typer.Option(
        8765, min=1, max=65535, help="HTTP: port; the endpoint is http://HOST:PORT/mcp."
    ),
    tokens_file: Path = TokensOpt,
) -> None:
    """Run the MCP server over the store (NEO4J_* settings as for every command).

    stdio (for desktop clients) acts for the one pair given; HTTP acts for the pair of
    each request's bearer token and refuses requests without a known token.

    Example: kg mcp serve --user u1 --character nova
    Example: kg mcp serve --http --port 8765 --tokens-file ./mcp-tokens.json
    """
    _sdk()
    from kg_mcp.binding import TokenVerifier

    # stdout belongs to the protocol on stdio: the driver and the SDK log to stderr only.
    logging.getLogger("neo4j").setLevel(logging.ERROR)
    if http:
        if os.environ.get("KG_MCP_USER") or os.environ.get("KG_MCP_CHARACTER") or user:
            err.print("note: HTTP binds pairs by token; --user/--character are ignored")
        if not _loopback(host):
            err.print(f"error: HTTP is served on loopback only, not on {host!r}")
            raise typer.Exit(2)
        path = tokens_file.expanduser()
        if not path.exists():
            fail(ConfigError(f"tokens file {path} does not exist — add a token first"))
        tokens = _tokens(path)
        if not tokens.tokens:
            fail(ConfigError(f"tokens file {path} holds no token — add one first"))
        _port_free(host, port)
        try:
            verifier = TokenVerifier(tokens, path)
        except ConfigError as error:
            fail(error)
        err.print(
            f"MCP over HTTP on http://{host}:{port}/mcp for {len(tokens.tokens)} token(s)",
            markup=False,
        )
        _run(_serve_http(verifier, host, port))
    else:
        _run(_serve_stdio(_pair(user, character)))


def _port_free(host: str, port: int) -> None:
    """Refuse a port another process listens on before saying the server runs there:
    the HTTP server found it at its start, after that line, and ended with its own
    message and exit code 3 (which means Neo4j unreachable here)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            taken = exc.errno == errno.EADDRINUSE
            err.print(f"error: cannot listen on {host}:{port}: "
                      + ("another process listens there" if taken else str(exc.strerror))
                      + " — choose another --port", markup=False)
            raise typer.Exit(2) from None


def _run(main: Coroutine[Any, Any, None]) -> None:
    try:
        asyncio.run(main)
    except KgError as error:
        fail(error)
    except KeyboardInterrupt:
        pass


async def _serve_stdio(pair: PairRef) -> None:
    """The SDK's `run_stdio_async`, with stdin read by `StdinLines`: the SDK reads it in
    a worker thread that a cancel waits for, so Ctrl-C stopped the server only when the
    client next sent a line, and never where it sent none."""
    from mcp.server.stdio import stdio_server

    from kg_mcp.binding import FixedPair
    from kg_mcp.server import build_server

    async with await Memory.open(Settings()) as memory:
        server = build_server(memory, FixedPair(pair))
        lowlevel = server._lowlevel_server  # (the SDK's own run_stdio_async does the same)
        async with stdio_server(stdin=cast(Any, StdinLines())) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())


class StdinLines:
    """The lines of standard input for the SDK's stdio transport, read by a daemon
    thread: waiting for the next line is a wait on a queue, which a cancel ends at once,
    and the thread, still blocked in its read, does not hold the process at exit.

    It reads a private duplicate of fd 0 with `os.read`, as the SDK serves the wire from
    one, and points fd 0 at the null device meanwhile (handlers and their children read
    EOF). Through `sys.stdin`, the thread held the buffer's lock while it waited, and the
    interpreter, shutting down after Ctrl-C, aborted for it ("could not acquire lock
    for <stdin> at interpreter shutdown"; a review)."""

    def __init__(self) -> None:
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._reader: threading.Thread | None = None

    def _read(self, wire: int, loop: asyncio.AbstractEventLoop) -> None:
        decode = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        try:
            while chunk := os.read(wire, 65536):
                pending += decode.decode(chunk)
                *lines, pending = pending.split("\n")
                for line in lines:
                    loop.call_soon_threadsafe(self._lines.put_nowait, line + "\n")
            pending += decode.decode(b"", final=True)
            if pending:  # (a last line without its newline)
                loop.call_soon_threadsafe(self._lines.put_nowait, pending)
            loop.call_soon_threadsafe(self._lines.put_nowait, None)
        except (OSError, RuntimeError):  # (fd closed, or the loop closed: nobody waits)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._lines.put_nowait, None)

    def __aiter__(self) -> StdinLines:
        if self._reader is None:
            wire = os.dup(0)
            null = os.open(os.devnull, os.O_RDONLY)
            try:
                os.dup2(null, 0)
            finally:
                os.close(null)
            self._reader = threading.Thread(
                target=self._read, args=(wire, asyncio.get_running_loop()),
                name="kg mcp stdin", daemon=True)
            self._reader.start()
        return self

    async def __anext__(self) -> str:
        line = await self._lines.get()
        if line is None:
            raise StopAsyncIteration
        return line


async def _serve_http(verifier: TokenVerifier, host: str, port: int) -> None:
    from kg_mcp.binding import TokenPair
    from kg_mcp.server import build_server

    async with await Memory.open(Settings()) as memory:
        url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
        server = build_server(memory, TokenPair(verifier), http_url=url)
        await server.run_streamable_http_async(host=host, port=port)


@token_app.command("add")
def token_add(
    user: str = user_opt(..., "The human's user_id."),
    character: str = character_opt(..., "The character_id."),
    name: str | None = typer.Option(None, help="Label of the client (default USER-CHARACTER)."),
    tokens_file: Path = TokensOpt,
) -> None:
    """Create a bearer token for one pair; prints the token once (only its hash is kept).

    Example: kg mcp token add -u u1 -c nova --tokens-file ./mcp-tokens.json
    """
    _sdk()
    path = tokens_file.expanduser()
    pair = _pair(user, character)
    try:
        updated, token = _tokens(path).with_new_token(name or f"{user}-{character}", pair)
        updated.save(path)
    except ConfigError as error:
        fail(error)
    err.print(f"token for {pair} written to {path} (mode 600); it is shown only now:")
    out.print(token, markup=False)


@token_app.command("list")
def token_list(tokens_file: Path = TokensOpt) -> None:
    """The tokens of the file: name and pair (never the token).

    Example: kg mcp token list
    """
    _sdk()
    path = tokens_file.expanduser()
    if not path.exists():
        fail(ConfigError(f"tokens file {path} does not exist"))
    for t in _tokens(path).tokens:
        out.print(f"{t.name}\t{t.pair}", markup=False)


@token_app.command("remove")
def token_remove(
    name: str = typer.Argument(..., help="The token's name."),
    tokens_file: Path = TokensOpt,
) -> None:
    """Revoke a token (takes effect when the server restarts).

    Example: kg mcp token remove u1-nova
    """
    _sdk()
    path = tokens_file.expanduser()
    if not path.exists():
        fail(ConfigError(f"tokens file {path} does not exist"))
    try:
        _tokens(path).without(name).save(path)
    except ConfigError as error:
        fail(error)
    err.print(f"removed token {name!r}")
