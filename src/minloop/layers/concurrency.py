"""A cap on the tool calls of a run that run at once: ``Loop(..., tool_concurrency=8)``.

Without it, every call of one reply runs at once (``minloop.execute``). With it, at most
``limit`` calls of a run run at once, and at most ``per_tool[name]`` calls of that tool; the
others wait, and take a free slot in the order they were made. A call that is cancelled (its
run cancelled, or the stream that drives it closed) gives its slot back at once, waiting or
running. The results keep their order, each right after the reply that asked for it, as without
a cap; a call's timeout counts from when it starts, not from when it began to wait.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from ..exceptions import MinloopError
from ..layer import Execute, Layer
from ..messages import ToolCall
from ..state import RunState
from ..tools import Tool

__all__ = ["ConcurrencyCap", "Slots"]


class Slots:
    """``size`` slots, handed out first come, first served (``async with slots: ...``)."""

    __slots__ = ("free", "waiting")

    def __init__(self, size: int) -> None:
        self.free = size
        self.waiting: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        if self.free > 0 and not self.waiting:
            self.free -= 1
            return
        turn = asyncio.get_running_loop().create_future()
        self.waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._give()  # handed a slot, then cancelled before taking it: pass it on
            elif turn in self.waiting:
                self.waiting.remove(turn)
            raise

    async def __aexit__(self, *_: Any) -> None:
        self._give()

    def _give(self) -> None:
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.free += 1


class _RunSlots:
    """One run's slots: for all its calls, and for each capped tool."""

    __slots__ = ("all", "tools")

    def __init__(self, limit: int, per_tool: Mapping[str, int]) -> None:
        self.all = Slots(limit)
        self.tools = {name: Slots(n) for name, n in per_tool.items()}


class ConcurrencyCap(Layer):
    """At most ``limit`` calls of a run at once, and at most ``per_tool[name]`` calls of that
    tool (``limit=None``: only the tools named are capped). The slots are the run's own: one
    loop's concurrent runs each have theirs."""

    def __init__(self, limit: int | None = 8, per_tool: Mapping[str, int] | None = None) -> None:
        per_tool = dict(per_tool or {})
        for name, n in [("limit", limit), *((f"per_tool[{k!r}]", v) for k, v in per_tool.items())]:
            if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
                raise MinloopError(f"ConcurrencyCap: {name} must be a whole number >= 1, got {n!r}")
        if limit is None and not per_tool:
            raise MinloopError("ConcurrencyCap: give a limit, per_tool caps, or both")
        self.limit = limit
        self.per_tool = per_tool

    def check_tools(self, tools: Sequence[Tool]) -> None:
        have = sorted({t.name for t in tools})
        unknown = [name for name in self.per_tool if name not in have]
        if unknown:
            raise MinloopError(
                f"ConcurrencyCap: per_tool names {_names(unknown)}, which the loop does not have; "
                f"its tools are {_names(have) if have else 'none'}"
            )

    def slots(self, run: RunState) -> _RunSlots:
        """``run``'s slots (``slots(run).all.free`` is how many are free)."""
        return run.local(self, lambda: _RunSlots(self.limit or 0, self.per_tool))

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        slots = self.slots(run)
        own = slots.tools.get(tool.name)
        if own is None:
            return await self._within(slots, execute)
        async with own:  # the tool's own slot first: a call waiting for it holds no run slot
            return await self._within(slots, execute)

    async def _within(self, slots: _RunSlots, execute: Execute) -> Any:
        if self.limit is None:
            return await execute()
        async with slots.all:
            return await execute()


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)
