"""Red line: tools never call an LLM.

While a tool executes, a context variable names it. Every model shipped with minloop calls
``ensure_not_in_tool`` first and raises ``NestedModelCallError`` if it is set; a custom
``Model`` can do the same.

What the guard sees: calls made from the tool's own task or thread, including ``await``-ed
coroutines, tasks it creates and ``asyncio.to_thread`` / ``contextvars.copy_context``
workers (they copy the context). What it cannot see: a bare ``threading.Thread`` or a process
pool started by the tool (no context is copied), another process, or an LLM reached over the
network with a client other than a minloop model.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

from .exceptions import NestedModelCallError

__all__ = ["current_tool", "ensure_not_in_tool"]

current_tool: Final[ContextVar[str | None]] = ContextVar("minloop_current_tool", default=None)


def ensure_not_in_tool(model_name: str) -> None:
    tool_name = current_tool.get()
    if tool_name is not None:
        raise NestedModelCallError(
            f"model {model_name!r} was called from inside tool {tool_name!r}: tools never call "
            "an LLM; return data and let the loop's own model call reason about it"
        )
