"""The fact memory as an MCP server: tools over the same `kg.Memory`, bound to one pair.

Beside the library, not inside it: the chat backend imports `kg` and never pays for the
MCP SDK. `kg mcp serve` (cli/mcp.py) runs it over stdio or streamable HTTP.
"""

from kg_mcp.binding import Binding, FixedPair, PairRef, TokenFile, TokenPair
from kg_mcp.server import build_server

__all__ = ["Binding", "FixedPair", "PairRef", "TokenFile", "TokenPair", "build_server"]
