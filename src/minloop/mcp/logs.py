"""The mcp package's log records as one line each on the ``minloop.mcp`` logger, naming the server.

The MCP SDK logs on ``mcp.*`` and on ``client``, with full tracebacks for events it recovers from
(a line on a server's stdout that is not JSON-RPC is logged, then ignored). While an ``MCPServer``
connection runs, its records become one line each, ``MCP server 'NAME': what happened``, at
warning level at most (what fails a call reaches the caller as an error of its own). Records
made outside minloop's connections go on to the root logger's handlers as before.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

from pydantic import ValidationError

__all__ = ["Source", "route_sdk_logs", "serving"]

log = logging.getLogger("minloop.mcp")
_SDK_LOGGERS = ("mcp", "client")  # the SDK's client session logs on "client"


class Source:
    """The server whose connection is running. Its records are held until the server has said
    its name in the handshake, so that every line names it the same way."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.held: list[logging.LogRecord] | None = []

    def take(self, record: logging.LogRecord) -> None:
        if self.held is not None:
            self.held.append(record)
        else:
            relay(record, self.name)

    def named(self, name: str) -> None:
        """From now on records go out at once; the held ones go out now."""
        self.name = name
        held, self.held = self.held or [], None
        for record in held:
            relay(record, name)


serving: ContextVar[Source | None] = ContextVar("minloop_mcp_server", default=None)


def relay(record: logging.LogRecord, name: str) -> None:
    text = record.getMessage()
    if record.exc_info and record.exc_info[1] is not None:
        text = f"{text}: {summary(record.exc_info[1])}"
    log.log(min(record.levelno, logging.WARNING), "MCP server %r: %s", name, text)


def summary(exc: BaseException, limit: int = 300) -> str:
    """One line for an exception: a validation error's first problem and the input it refused."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        text = f"{first['msg']}: {first.get('input')!r}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Relay(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        source = serving.get()
        if source is None:  # not a minloop connection: as if the record had propagated
            logging.getLogger().handle(record)
        else:
            source.take(record)


_relay = _Relay()


def route_sdk_logs() -> None:
    """Send the SDK's records through ``minloop.mcp`` (done once, when a server is opened)."""
    for name in _SDK_LOGGERS:
        logger = logging.getLogger(name)
        if _relay not in logger.handlers:
            logger.addHandler(_relay)
            logger.propagate = False
