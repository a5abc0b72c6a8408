"""One connection to an MCP server, over stdio (a command line) or streamable HTTP (a URL)."""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO, Any

from ..exceptions import MCPConnectionError, MinloopError, MissingDependencyError, ToolDefinitionError
from ..tools import DEFAULT_TIMEOUT, Tool
from .convert import MCPToolError, payload, to_tool

__all__ = ["MCPServer"]

INSTALL_HINT = 'pip install "minloop[mcp]"'
CONNECT_TIMEOUT = 20.0
log = logging.getLogger("minloop.mcp")


class MCPServer:
    """An MCP server whose tools a ``Loop`` can use: ``async with MCPServer("python -m mcp_server_time") as s``.

    ``target`` is a command line (a string, split like a shell would, or a list of arguments)
    for a server spoken to over stdio, or an ``http://`` / ``https://`` URL for one spoken to over
    streamable HTTP. A leading ``python`` or ``python3`` means the interpreter running minloop,
    and a command not found on ``PATH`` is also looked up beside it (a virtualenv's ``bin``), so
    servers installed in minloop's environment start without activating it.

    Entering the ``async with`` starts (or connects to) the server, lists its tools and makes
    ``tools``: ordinary minloop tools whose arguments are checked against the server's input
    schema before anything is sent and whose structured results are checked against its output
    schema. Leaving it closes the connection (and stops a stdio server). ``name`` labels the
    server in traces and errors (default: the name the server gives itself); ``prefix`` is put
    before every tool name (``prefix_tool``) to keep apart tools of the same name; ``timeout``
    bounds each call in seconds; ``needs_approval`` is ``None`` to follow the server's tool
    annotations (destructive and not read-only needs approval), ``True`` for every tool or
    ``False`` for none. ``env`` adds environment variables for a stdio server (it otherwise gets
    only HOME, PATH and the like, as the MCP SDK decides); ``cwd`` is its working directory.
    """

    def __init__(
        self,
        target: str | Sequence[str],
        *,
        name: str | None = None,
        prefix: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        needs_approval: bool | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self.target = target
        self.url = target if isinstance(target, str) and target.startswith(("http://", "https://")) else None
        self.argv = [] if self.url else (shlex.split(target) if isinstance(target, str) else list(target))
        if not self.url and not self.argv:
            raise MCPConnectionError("an MCP server needs a command line or an http(s) URL, got nothing")
        self.name = name or self.url or _command_name(self.argv)
        self._named = name is not None
        self.prefix, self.timeout, self.approval = prefix, timeout, needs_approval
        self.env, self.cwd, self.connect_timeout = dict(env or {}), cwd, connect_timeout
        self.tools: list[Tool] = []
        self.own_names: dict[str, str] = {}  # the name the model sees -> the server's own name
        self.session: Any = None
        self._stack: AsyncExitStack | None = None
        self._stderr: IO[str] | None = None
        self._lost: str | None = None

    def __repr__(self) -> str:
        return f"MCPServer({self.target!r}, name={self.name!r})"

    async def __aenter__(self) -> MCPServer:
        if self._stack is not None:
            raise MinloopError(
                f"MCP server {self.name!r} is already open; leave its `async with` block first"
            )
        self._lost = None
        try:
            from mcp import types
            from mcp.client.session import ClientSession
        except ImportError:
            raise MissingDependencyError("the MCP client (the mcp package)", INSTALL_HINT) from None
        self._types = types
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            streams = await stack.enter_async_context(self._transport())
            self.session = await stack.enter_async_context(ClientSession(*streams))
            async with asyncio.timeout(self.connect_timeout):
                init = await self.session.initialize()
                listed = await self._list_tools()
            if not self._named and init.server_info.name:
                self.name = init.server_info.name
            self.tools = [self._tool(t) for t in listed]
            self.own_names = {t.name: item.name for t, item in zip(self.tools, listed, strict=True)}
        except BaseException as exc:
            raise await self._failed(stack, exc) from None
        self._stack = stack
        log.info(
            "MCP server %s: %d tools (%s)", self.name, len(self.tools), ", ".join(t.name for t in self.tools)
        )
        return self

    def _tool(self, listed: Any) -> Tool:
        return to_tool(
            listed,
            self.call,
            server=self.name,
            prefix=self.prefix,
            timeout=self.timeout,
            approval=self.approval,
        )

    async def __aexit__(self, *_: object) -> None:
        stack, self._stack, self.session = self._stack, None, None
        if stack is not None:
            await _close_quietly(stack, self.name)
        if self._stderr is not None:
            self._stderr.close()

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool`` (its name on the server) and return what the model reads."""
        if self._lost is not None or self.session is None:
            raise ConnectionError(
                self._lost or f"MCP server {self.name!r} is not connected (use `async with`)"
            )
        from mcp.shared.exceptions import MCPError

        types = self._types
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=tool, arguments=arguments))
        try:
            result = await self.session.send_request(request, types.CallToolResult)
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                self._lost = (
                    f"MCP server {self.name!r} closed the connection (it exited or crashed), so its "
                    f"tools cannot be used any more in this session{self._stderr_tail()}"
                )
                raise ConnectionError(self._lost) from None
            # the server is there and answered: its tool handler failed (a JSON-RPC error)
            raise MCPToolError(
                f"server {self.name!r} answered the call with an error: {exc.message} (JSON-RPC error {exc.code})"
            ) from None
        return payload(result, self.name)

    async def _list_tools(self) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        while True:
            params: Any = self._types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self.session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    def _transport(self) -> Any:
        if self.url:
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(self.url)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        command = _resolve(self.argv[0])
        if command is None:
            raise MCPConnectionError(
                f"cannot start MCP server {self.name!r}: command {self.argv[0]!r} was not found on PATH "
                f"nor in {Path(sys.executable).parent}; install it or give its full path"
            )
        # closed in __aexit__, or after a failed start once its last lines are in the error
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        params = StdioServerParameters(
            command=command, args=self.argv[1:], env=self.env or None, cwd=self.cwd
        )
        return stdio_client(params, errlog=self._stderr)

    async def _failed(self, stack: AsyncExitStack, exc: BaseException) -> BaseException:
        """What to raise when connecting failed. A transport that fails (a refused connection)
        cancels this task and keeps its own error for the close: that error is the cause."""
        try:
            await stack.aclose()
        except Exception as close_error:
            if isinstance(exc, asyncio.CancelledError | Exception):
                exc = close_error
        error = self._cannot_connect(exc) if isinstance(exc, Exception) else exc
        if self._stderr is not None:
            self._stderr.close()
        return error  # a cancellation from outside, KeyboardInterrupt, ... as it was

    def _cannot_connect(self, exc: Exception) -> MinloopError:
        if isinstance(exc, MCPConnectionError | ToolDefinitionError):
            return exc
        leaf = _leaf(exc)
        if isinstance(exc, TimeoutError):
            why = f"no answer within {self.connect_timeout:g}s"
        elif getattr(leaf, "code", None) == self._types.CONNECTION_CLOSED:
            why = "it exited or closed the connection before the MCP handshake"
        else:
            why = f"{type(leaf).__name__}: {leaf}"
        command = self.target if isinstance(self.target, str) else shlex.join(self.argv)
        how = f"URL {self.url}" if self.url else f"command: {command}"
        return MCPConnectionError(
            f"cannot connect to MCP server {self.name!r} ({how}): {why}{self._stderr_tail()}"
        )

    def _stderr_tail(self, limit: int = 400) -> str:
        if self._stderr is None or self._stderr.closed:
            return ""
        self._stderr.flush()
        self._stderr.seek(0)
        text = self._stderr.read().strip()
        return f"; its last output: {text[-limit:]}" if text else ""


def _command_name(argv: list[str]) -> str:
    """``mcp_server_time`` for ``python -m mcp_server_time``, ``server`` for ``python server.py``."""
    if Path(argv[0]).name.startswith("python") and len(argv) > 1:
        if argv[1] == "-m" and len(argv) > 2:
            return argv[2]
        if argv[1].endswith(".py"):
            return Path(argv[1]).stem
    return Path(argv[0]).name


def _resolve(command: str) -> str | None:
    if command in ("python", "python3"):
        return sys.executable
    found = shutil.which(command)
    if found:
        return found
    beside = Path(sys.executable).parent / command
    return str(beside) if os.access(beside, os.X_OK) and beside.is_file() else None


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _close_quietly(stack: AsyncExitStack, name: str = "") -> None:
    """Close the transport; a server that already died must not turn a finished run into an error."""
    try:
        await stack.aclose()
    except Exception as exc:
        log.warning("MCP server %s: error while closing: %s", name or "?", _leaf(exc))
