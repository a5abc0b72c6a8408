"""One connection to an MCP server, over stdio (a command line) or streamable HTTP (a URL), in
either protocol era: the 2026-07-28 protocol (no handshake; each request says its version) or the
handshake protocol before it. ``protocol="auto"`` tries the first and falls back to the second."""

from __future__ import annotations

import asyncio
import logging
import shlex
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO, TypeVar

from ..exceptions import MCPConnectionError, MinloopError, MissingDependencyError, ToolDefinitionError
from ..tools import DEFAULT_TIMEOUT, Tool
from .content import ServerContent
from .convert import MCPLoginError, MCPToolError, payload, to_tool
from .fresh import Freshness, list_tools
from .logs import Source, route_sdk_logs, serving
from .questions import call_asking
from .transport import Refusals, command_name, http_transport, stdio_transport

__all__ = ["MCPServer"]

INSTALL_HINT = 'pip install "minloop[mcp]"'
CONNECT_TIMEOUT = 20.0
log = logging.getLogger("minloop.mcp")
T = TypeVar("T")


class MCPServer(ServerContent):
    """An MCP server whose tools a ``Loop`` can use: ``async with MCPServer("python -m mcp_server_time") as s``.

    ``target`` is a command line (a string, split like a shell would, or a list of arguments)
    for a server spoken to over stdio, or an ``http://`` / ``https://`` URL for one spoken to over
    streamable HTTP. A leading ``python`` or ``python3`` means the interpreter running minloop,
    and a command not found on ``PATH`` is also looked up beside it (a virtualenv's ``bin``), so
    servers installed in minloop's environment start without activating it.

    Entering the ``async with`` starts (or connects to) the server, settles the protocol, lists
    its tools and makes ``tools``: ordinary minloop tools whose arguments are checked against the
    server's input schema before anything is sent and whose structured results are checked
    against its output schema. Leaving it closes the connection (and stops a stdio server).
    ``name`` labels the server in traces and errors (default: the name the server gives itself);
    ``prefix`` is put before every tool name (``prefix_tool``) to keep apart tools of the same
    name; ``timeout`` bounds each call in seconds; ``needs_approval`` is ``None`` to follow the
    server's tool annotations (destructive and not read-only needs approval), ``True`` for every
    tool or ``False`` for none. ``env`` adds environment variables for a stdio server (it
    otherwise gets only HOME, PATH and the like, as the MCP SDK decides); ``cwd`` is its working
    directory. ``protocol`` is ``"auto"`` (the 2026-07-28 protocol when the server speaks it, else
    the handshake protocol), ``"legacy"`` (the handshake only) or a protocol version to use
    without asking; ``protocol_version`` is the one the connection settled on. ``headers`` are
    sent with every HTTP request and ``auth`` (an ``httpx2.Auth``, e.g. ``minloop.mcp.oauth(...)``)
    signs them; neither is ever written to a trace, a run store or a log. Beside its tools,
    ``resources()``, ``read(uri)``, ``prompts()`` and ``prompt(name, arguments)`` reach the
    server's resources and prompts while the block is open.
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
        protocol: str = "auto",
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
    ) -> None:
        self.target = target
        self.url = target if isinstance(target, str) and target.startswith(("http://", "https://")) else None
        self.argv = [] if self.url else (shlex.split(target) if isinstance(target, str) else list(target))
        if not self.url and not self.argv:
            raise MCPConnectionError("an MCP server needs a command line or an http(s) URL, got nothing")
        if (headers or auth is not None) and not self.url:
            raise MCPConnectionError(
                f"headers and auth are for a server reached by URL; {self.argv[0]!r} is started over stdio "
                "(give it what it needs in env= instead)"
            )
        self.name = name or self.url or command_name(self.argv)
        self._named = name is not None
        self.prefix, self.timeout, self.approval = prefix, timeout, needs_approval
        self.env, self.cwd, self.connect_timeout = dict(env or {}), cwd, connect_timeout
        self.protocol, self.headers, self.auth = protocol, dict(headers or {}), auth
        self.protocol_version: str | None = None
        self.tools: list[Tool] = []
        self.own_names: dict[str, str] = {}  # the name the model sees -> the server's own name
        self.client: Any = None  # the SDK's mcp.Client while connected
        self._task: asyncio.Task[None] | None = None
        self._calls: Any = None  # the connection's task group, where requests run
        self._pending: set[asyncio.Future[Any]] = set()
        self._stop = asyncio.Event()
        self._stderr: TextIO | None = None
        self._lost: str | None = None
        self._fresh = Freshness()
        self._refusals = Refusals()  # the server refused the credentials (HTTP 401 or 403)

    def __repr__(self) -> str:
        return f"MCPServer({self.target!r}, name={self.name!r})"

    @property
    def session(self) -> Any:
        """The SDK's ``ClientSession`` while connected, else ``None``."""
        return None if self.client is None else self.client.session

    def about(self) -> dict[str, Any]:
        """What the trace and ``minloop run --json`` say about this server."""
        return {"name": self.name, "transport": "http" if self.url else "stdio",
                "protocol": self.protocol_version}  # fmt: skip

    async def __aenter__(self) -> MCPServer:
        if self._task is not None:
            raise MinloopError(
                f"MCP server {self.name!r} is already open; leave its `async with` block first"
            )
        try:
            from mcp import types
        except ImportError:
            raise MissingDependencyError("the MCP client (the mcp package)", INSTALL_HINT) from None
        self._types, self._lost, self._stop = types, None, asyncio.Event()
        route_sdk_logs()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        task = self._task = asyncio.create_task(self._connection(ready), name=f"MCP server {self.name}")
        try:
            await ready
        except BaseException:
            self._task = None
            task.cancel()  # when connecting failed the task has already ended
            await asyncio.wait({task})
            raise
        log.info("MCP server %s (protocol %s): %d tools (%s)", self.name, self.protocol_version,
                 len(self.tools), ", ".join(t.name for t in self.tools))  # fmt: skip
        return self

    async def __aexit__(self, *_: object) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        self._stop.set()
        try:
            await asyncio.wait({task})  # it closes the connection; a server already gone is no error
        except asyncio.CancelledError:
            task.cancel()
            raise

    async def _connection(self, ready: asyncio.Future[None]) -> None:
        """The connection's own task. The SDK's transport and session run their task groups and
        cancel scopes here, so a transport that fails (a server that went away) ends this task
        only, never the run that uses the server's tools."""
        source = Source(self.name)
        serving.set(source)  # this task's context: the SDK's records name this server
        ended: BaseException | None = None
        try:
            await self._connect_and_serve(ready)
        except BaseException as exc:  # reported to whoever waits on the connection
            ended = exc
            if not isinstance(exc, Exception | asyncio.CancelledError):
                raise  # KeyboardInterrupt, SystemExit: as they are
        finally:
            self._ended(ready, ended)
            source.named(self.name)

    async def _connect_and_serve(self, ready: asyncio.Future[None]) -> None:
        import anyio
        from mcp import Client
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        async with AsyncExitStack() as stack:
            client = Client(
                self._transport(), mode=self.protocol, cache=None, message_handler=self._fresh.notified
            )
            async with asyncio.timeout(self.connect_timeout):
                await stack.enter_async_context(client)
                self.protocol_version = client.protocol_version
                listed, ttl = await list_tools(client)
            self.client = client
            info = client.server_info
            if not self._named and info is not None and info.name:
                self.name = info.name
            source = serving.get()
            if source is not None:
                source.named(self.name)
            self._offer(listed, ttl)
            async with anyio.create_task_group() as calls:
                self._calls = calls
                if self.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    calls.start_soon(self._fresh.follow, client, self.name)
                if not ready.done():
                    ready.set_result(None)
                await self._stop.wait()
                calls.cancel_scope.cancel()  # requests still running when the block is left

    def _ended(self, ready: asyncio.Future[None], exc: BaseException | None) -> None:
        """The connection is over: say why to whoever waits (the opener, or calls in flight)."""
        self.client, self._calls = None, None
        if not ready.done():
            if isinstance(exc, Exception):
                ready.set_exception(self._cannot_connect(exc))
            elif exc is None or isinstance(exc, asyncio.CancelledError):
                ready.cancel()
            else:
                ready.set_exception(exc)
        elif not self._stop.is_set():
            self._lost = self._lost or self._gone(exc)
        elif isinstance(exc, Exception):
            log.warning("MCP server %s: error while closing: %s", self.name, _leaf(exc))
        message = self._lost or f"MCP server {self.name!r} is not connected (use `async with`)"
        for waiting in self._pending:
            if not waiting.done():
                waiting.set_exception(ConnectionError(message))
        self._pending.clear()
        if self._stderr is not None:
            self._stderr.close()

    def _gone(self, exc: BaseException | None) -> str:
        leaf = _leaf(exc) if exc is not None else None
        why = (
            ""
            if leaf is None or isinstance(leaf, asyncio.CancelledError)
            else f" ({type(leaf).__name__}: {leaf})"
        )
        return (
            f"MCP server {self.name!r} went away{why}, so its tools cannot be used any more in this "
            f"session{self._stderr_tail()}"
        )

    def _offer(self, listed: list[Any], ttl: int | None) -> None:
        """Make ``tools`` from a listing; with a ``ttlMs``, the listing is asked for again when it runs out."""
        before = {t.name for t in self.tools}
        self.tools = [self._tool(t) for t in listed]
        self.own_names = {t.name: item.name for t, item in zip(self.tools, listed, strict=True)}
        self._fresh.listed(ttl)
        now = {t.name for t in self.tools}
        if before and now != before:
            added, gone = ", ".join(sorted(now - before)) or "none", ", ".join(sorted(before - now)) or "none"
            log.info("MCP server %s: its tools changed (added: %s; removed: %s)", self.name, added, gone)

    def _tool(self, listed: Any) -> Tool:
        made = to_tool(
            listed,
            self.call,
            server=self.name,
            prefix=self.prefix,
            timeout=self.timeout,
            approval=self.approval,
        )
        return replace(made, source=self)

    async def current(self) -> list[Tool]:
        """The server's tools now: listed again when it may have changed them since the last time
        (see ``fresh``), else the last list. A listing that fails keeps the last list, with a
        warning, and is tried again at the next step."""
        if not self._fresh.due() or self._lost is not None or self._calls is None:
            return self.tools
        try:
            async with asyncio.timeout(self.timeout):
                listed, ttl = await self._run(lambda: list_tools(self.client))
        except Exception as exc:
            self._fresh.stale = True
            log.warning("MCP server %s: could not list its tools again, the last list stays: %s",
                        self.name, _leaf(exc))  # fmt: skip
            return self.tools
        self._offer(listed, ttl)
        return self.tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool`` (its name on the server) and return what the model reads. The call runs in
        the connection's task; when the connection is gone it fails at once with ``ConnectionError``."""
        return await self._run(lambda: self._send(tool, arguments))

    async def _run(self, request: Callable[[], Awaitable[T]]) -> T:
        """Run ``request()`` in the connection's task and wait for it; cancelling the wait cancels it."""
        if self._lost is not None or self._calls is None:
            raise ConnectionError(
                self._lost or f"MCP server {self.name!r} is not connected (use `async with`)"
            )
        answer: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.add(answer)
        try:
            self._calls.start_soon(self._answer, request, answer)
        except RuntimeError:
            pass  # the connection is ending; it fails the request when it has ended
        try:
            return await answer  # a timeout cancels it, and so the request
        finally:
            self._pending.discard(answer)

    async def _answer(self, request: Callable[[], Awaitable[T]], answer: asyncio.Future[T]) -> None:
        import anyio

        with anyio.CancelScope() as scope:
            answer.add_done_callback(lambda done: scope.cancel() if done.cancelled() else None)
            try:
                value = await request()
            except Exception as exc:
                if not answer.done():
                    answer.set_exception(exc)
            else:
                if not answer.done():
                    answer.set_result(value)

    async def _send(self, tool: str, arguments: dict[str, Any]) -> Any:
        """One ``tools/call`` and what the model reads of its result; when the server asks the
        user questions, ``Asked``, and the next round once they are answered (``.questions``)."""
        from mcp.shared.exceptions import MCPError

        types = self._types
        try:
            result = await call_asking(self.client.session, tool, arguments, self.name, types)
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                self._lost = (
                    f"MCP server {self.name!r} closed the connection (it exited or crashed), so its "
                    f"tools cannot be used any more in this session{self._stderr_tail()}"
                )
                raise ConnectionError(self._lost) from None
            if self._refusals.last is not None:
                raise MCPLoginError(self.name, self._refusals.last) from None
            # the server is there and answered: its tool handler failed (a JSON-RPC error)
            raise MCPToolError(
                f"server {self.name!r} answered the call with an error: {exc.message} (JSON-RPC error {exc.code})"
            ) from None
        self._fresh.called = True
        return payload(result, self.name)

    def _transport(self) -> Any:
        if self.url:
            return http_transport(self.url, self.headers, self.auth, self._refusals)
        # closed when the connection has ended, once its last lines are in the error
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        return stdio_transport(self.name, self.argv, self.env, self.cwd, self._stderr)

    def _cannot_connect(self, exc: Exception) -> MinloopError:
        if isinstance(exc, MCPConnectionError | ToolDefinitionError):
            return exc
        leaf = _leaf(exc)
        if self._refusals.last is not None:
            why = (f"it refused the credentials ({self._refusals.last}); give them with headers= or auth= "
                   "(on the command line --mcp-header)")  # fmt: skip
        elif isinstance(leaf, TimeoutError):
            why = f"no answer within {self.connect_timeout:g}s"
        elif getattr(leaf, "code", None) == self._types.CONNECTION_CLOSED:
            why = "it exited or closed the connection before the MCP handshake"
        else:
            why = f"{type(leaf).__name__}: {leaf}"
        if self.protocol != "auto":
            why += f"; it may not speak the {self.protocol} protocol (protocol='auto' lets the server's answer decide)"
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


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
