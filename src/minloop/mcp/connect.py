"""Opening several MCP servers at once, with tool names that must not clash."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

from ..exceptions import ToolDefinitionError
from ..tools import Tool
from .server import MCPServer

__all__ = ["connect", "parse_target"]

_PREFIXED = re.compile(r"^([A-Za-z][A-Za-z0-9_-]{0,31})=(.+)$", re.DOTALL)


def parse_target(text: str) -> MCPServer:
    """A server from its command-line form: ``COMMAND``, ``URL``, or ``PREFIX=COMMAND`` / ``PREFIX=URL``
    to put ``PREFIX_`` before each of its tool names."""
    match = _PREFIXED.match(text.strip())
    if match:
        return MCPServer(match.group(2).strip(), prefix=match.group(1))
    return MCPServer(text.strip())


@asynccontextmanager
async def connect(
    *servers: MCPServer | str | Sequence[str], reserved: Iterable[str] = ()
) -> AsyncIterator[list[Tool]]:
    """Open every server (``MCPServer``, or a command line / URL) and yield all their tools.

    Servers are closed, in reverse order, when the block ends. A tool name offered twice (by
    two servers, or by a server and one of the ``reserved`` names, e.g. your own tools') raises
    ``ToolDefinitionError`` naming both: give one server a ``prefix``. Nothing is renamed silently.
    """
    async with AsyncExitStack() as stack:
        opened = []
        for server in servers:
            item = server if isinstance(server, MCPServer) else MCPServer(server)
            opened.append(await stack.enter_async_context(item))
        yield check_names(opened, reserved)


def check_names(servers: Sequence[MCPServer], reserved: Iterable[str] = ()) -> list[Tool]:
    """All the servers' tools; ``ToolDefinitionError`` when two share a name."""
    owner: dict[str, str] = {name: "your own tools" for name in reserved}
    tools: list[Tool] = []
    for server in servers:
        for t in server.tools:
            own = server.own_names.get(t.name, t.name)
            offered = f"MCP server {server.name!r}" + (f" (its tool {own!r})" if own != t.name else "")
            if t.name in owner:
                raise ToolDefinitionError(
                    f"tool name {t.name!r} is offered by {owner[t.name]} and by {offered}: "
                    f"give the server a prefix, e.g. MCPServer(..., prefix={_suggest(server)!r}) or on the "
                    f'command line --mcp "{_suggest(server)}=COMMAND"'
                )
            owner[t.name] = offered
            tools.append(t)
    return tools


def _suggest(server: MCPServer) -> str:
    word = re.sub(r"[^A-Za-z0-9]+", "_", server.name.rsplit("/", 1)[-1]).strip("_")
    word = word.removeprefix("mcp_").removeprefix("server_") or "srv"
    return word if word[0].isalpha() else f"s{word}"
