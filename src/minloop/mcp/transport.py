"""How a connection reaches its server: a command started over stdio, or a URL over streamable HTTP."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from ..exceptions import MCPConnectionError

__all__ = ["Refusals", "command_name", "http_transport", "resolve", "stdio_transport"]


def stdio_transport(
    name: str, argv: list[str], env: Mapping[str, str], cwd: str | Path | None, errlog: TextIO
) -> Any:
    """The SDK's stdio transport for ``argv``; the server's stderr goes to ``errlog``."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = resolve(argv[0])
    if command is None:
        raise MCPConnectionError(
            f"cannot start MCP server {name!r}: command {argv[0]!r} was not found on PATH "
            f"nor in {Path(sys.executable).parent}; install it or give its full path"
        )
    params = StdioServerParameters(command=command, args=argv[1:], env=dict(env) or None, cwd=cwd)
    return stdio_client(params, errlog=errlog)


class Refusals:
    """Whether the server refused the credentials: set by an answer of HTTP 401 or 403 (the SDK's
    transport reports it as a plain JSON-RPC error), cleared by a request that got through."""

    def __init__(self) -> None:
        self.last: str | None = None

    async def __call__(self, response: Any) -> None:
        if response.status_code in (401, 403):
            said = response.headers.get("www-authenticate", "")
            error = said.split('error="', 1)[1].split('"', 1)[0] if 'error="' in said else ""
            self.last = f"HTTP {response.status_code} {response.reason_phrase}" + (
                f", {error}" if error else ""
            )
        elif response.is_success and response.request.method == "POST":
            self.last = None


@asynccontextmanager
async def http_transport(
    url: str, headers: Mapping[str, str], auth: Any, refusals: Refusals
) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP transport, on an HTTP client that sends ``headers`` with every
    request and lets ``auth`` (an ``httpx2.Auth``, e.g. the SDK's ``OAuthClientProvider``) sign them."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    # the SDK's own timeouts: 30 s to connect or write, 300 s to read (a server may hold a stream open)
    client = httpx2.AsyncClient(headers=dict(headers), auth=auth, timeout=httpx2.Timeout(30, read=300),
                                event_hooks={"response": [refusals]})  # fmt: skip
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(client)
        yield await stack.enter_async_context(streamable_http_client(url, http_client=client))


def command_name(argv: list[str]) -> str:
    """``mcp_server_time`` for ``python -m mcp_server_time``, ``server`` for ``python server.py``."""
    if Path(argv[0]).name.startswith("python") and len(argv) > 1:
        if argv[1] == "-m" and len(argv) > 2:
            return argv[2]
        if argv[1].endswith(".py"):
            return Path(argv[1]).stem
    return Path(argv[0]).name


def resolve(command: str) -> str | None:
    """``python`` is the interpreter running minloop; a command not on PATH is looked for beside it."""
    if command in ("python", "python3"):
        return sys.executable
    found = shutil.which(command)
    if found:
        return found
    beside = Path(sys.executable).parent / command
    return str(beside) if os.access(beside, os.X_OK) and beside.is_file() else None
