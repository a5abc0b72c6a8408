"""Human approval: ``Loop(..., approve=fn)`` for tools declared with ``needs_approval=True``.

``approve(call)``, sync or async, is asked before each such call, once its arguments are
valid; ``call.name`` and ``call.arguments`` (a JSON string) say what would run. Only ``True``
runs it; anything else, or no approver at all, denies it: the model reads ``ERR_TOOL_DENIED``.
With a run store (``Loop(store=...)``), ``None`` means "no decision here": the run pauses
until someone decides (``minloop.runs``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, TypeAlias

from ..execute import ToolFailure
from ..layer import Execute, Layer
from ..messages import ToolCall
from ..state import RunState
from ..tools import Tool

__all__ = ["DENIED", "Approval", "Approver", "ask"]

Approver: TypeAlias = Callable[[ToolCall], "bool | Awaitable[bool | None] | None"]
DENIED = "the user did not approve this call; do not retry it"


class Approval(Layer):
    """Runs a call to a tool that needs approval only when ``approve`` says ``True``."""

    approves: ClassVar[bool] = True

    def __init__(self, approve: Approver | None = None) -> None:
        self.approve = approve

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        if not tool.needs_approval:
            return await execute()
        if await ask(self.approve, call) is not True:
            raise ToolFailure("ERR_TOOL_DENIED", DENIED)
        return await execute()


async def ask(approve: Approver | None, call: ToolCall) -> bool | None:
    """What ``approve`` says of ``call``: ``True``, ``False``, or ``None`` for no decision."""
    verdict = approve(call) if approve is not None else None
    if inspect.isawaitable(verdict):
        verdict = await verdict
    return None if verdict is None else verdict is True
