"""When a server's tool list is asked for again: it announced a change (``list_changed`` in the
handshake protocol, a ``subscriptions/listen`` event in the 2026-07-28 one), its ``ttlMs`` ran out,
or a step called it on a connection whose changes come on the listen stream (an announcement there
may arrive just after the answer of the call that made it)."""

from __future__ import annotations

import logging
import time
from typing import Any

__all__ = ["Freshness", "list_tools"]

log = logging.getLogger("minloop.mcp")


class Freshness:
    """What one connection knows about how fresh its tool list is."""

    def __init__(self) -> None:
        self.stale = False  # the server announced a change
        self.called = False  # a call was answered since the last listing
        self.listening = False  # a subscriptions/listen stream carries the changes
        self.expires: float | None = None  # when the list's ttlMs runs out (time.monotonic())

    def due(self) -> bool:
        """Whether the list is to be asked for again now."""
        expired = self.expires is not None and time.monotonic() >= self.expires
        return self.stale or expired or (self.called and self.listening)

    def listed(self, ttl: int | None) -> None:
        self.stale = self.called = False
        self.expires = time.monotonic() + ttl / 1000 if ttl else None

    async def notified(self, message: Any) -> None:
        """The handshake protocol's notifications (the SDK client's ``message_handler``)."""
        from mcp import types

        if isinstance(message, types.ToolListChangedNotification):
            self.stale = True

    async def follow(self, client: Any, server: str) -> None:
        """Read the 2026-07-28 protocol's listen stream until it ends (run in the connection's task)."""
        from mcp.client.subscriptions import ToolsListChanged

        try:
            async with client.listen(tools_list_changed=True) as changes:
                self.listening = bool(changes.honored.tools_list_changed)
                async for event in changes:
                    if isinstance(event, ToolsListChanged):
                        self.stale = True
        except Exception as exc:  # no stream, or it ended: the list still follows its ttlMs
            log.debug("MCP server %s: no announcements of changed tools: %s", server, exc)
        self.listening = False


async def list_tools(client: Any) -> tuple[list[Any], int | None]:
    """Every page of the tool list, and its ``ttlMs`` on a 2026-07-28 connection."""
    tools: list[Any] = []
    cursor: str | None = None
    ttl: int | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        if cursor is None and "ttl_ms" in page.model_fields_set:
            ttl = page.ttl_ms
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools, ttl
