"""An MCP server built with the ``mcp`` SDK that speaks one protocol era, or both.

``python era_server.py ERA [PORT]``: ERA is ``new`` (the 2026-07-28 protocol only: the
``initialize`` handshake is refused), ``old`` (the handshake protocol only: ``server/discover`` and
any request of the 2026 protocol are refused, as a server built before it does) or ``both`` (the
SDK's own dual-era serving). Without PORT it serves stdio; with it, streamable HTTP on
127.0.0.1:PORT at ``/mcp``. ``TTL_MS`` in the environment puts that ``ttlMs`` on its tool lists;
``QUIET`` makes ``rotate`` change the tools without announcing it.

Tools: ``add`` (structured), ``echo``, ``era`` (the protocol version of the request as the
server saw it), ``rotate`` (removes ``old_tool``, adds ``new_tool``, and announces the change:
``subscriptions/listen`` in the 2026 protocol, ``notifications/tools/list_changed`` before it).
One resource (``note://readme``), one resource template (``note://{name}``) and one prompt
(``greet``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

ERA = sys.argv[1] if len(sys.argv) > 1 else "both"
assert ERA in ("new", "old", "both"), ERA


async def gate(ctx: Any, call_next: Any) -> Any:
    """Refuse the other era's requests the way a server of one era does."""
    if ERA == "new" and ctx.method == "initialize":
        supported = {"supported": list(MODERN_PROTOCOL_VERSIONS)}
        raise MCPError(
            UNSUPPORTED_PROTOCOL_VERSION, "this server speaks only the 2026-07-28 protocol", supported
        )
    if ERA == "old" and (ctx.method == "server/discover" or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS):
        raise MCPError(METHOD_NOT_FOUND, "Method not found", ctx.method)
    return await call_next(ctx)


ttl = int(os.environ.get("TTL_MS", "0"))
hints: Any = {"tools/list": CacheHint(ttl_ms=ttl)} if ttl else None
server = MCPServer(f"era-{ERA}", version="1.0", middleware=[gate], cache_hints=hints)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return f"echo: {text}"


@server.tool()
def era(ctx: Context) -> str:
    """The protocol version of this request."""
    return ctx.request_context.protocol_version


@server.tool()
def old_tool() -> str:
    """A tool that goes away when rotate is called."""
    return "old"


def new_tool(word: str) -> str:
    """A tool that appears when rotate is called."""
    return f"new: {word}"


@server.tool()
async def rotate(ctx: Context) -> str:
    """Remove old_tool, add new_tool."""
    if "old_tool" in {t.name for t in await server.list_tools()}:
        server.remove_tool("old_tool")
        server.add_tool(new_tool)
    if os.environ.get("QUIET"):  # no announcement: a client learns of it when the list's ttlMs runs out
        return "rotated"
    if ctx.request_context.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
        await ctx.request_context.session.send_tool_list_changed()
    else:
        await ctx.notify_tools_changed()
    return "rotated"


@server.resource("note://readme", mime_type="text/plain")
def readme() -> str:
    """What this server is."""
    return f"A test server of the {ERA} era."


@server.resource("note://{name}")
def note(name: str) -> str:
    """A note by name."""
    return f"note {name}"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}, briefly."


async def serve_old_stdio() -> None:
    """The handshake loop alone: ``Server.run`` would let the first request choose the era."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    async with stdio_server() as (read, write), low.lifespan(low) as state:
        await serve_loop(
            low, read, write, lifespan_state=state, init_options=low.create_initialization_options()
        )


if __name__ == "__main__":
    if len(sys.argv) > 2:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif ERA == "old":
        anyio.run(serve_old_stdio)
    else:
        server.run("stdio")
