"""Red line: tools never call an LLM.

While a tool executes, a context variable names it. Every model shipped with minloop calls
``ensure_not_in_tool`` first and raises ``NestedModelCallError`` if it is set; a custom
``Model`` can do the same.

The breach is also written down where the tool cannot reach it (``tool_scope`` collects it),
so a tool that catches ``NestedModelCallError`` and carries on does not hide it: when the tool
returns, the executor raises the error itself and the run ends the same way as if the tool had
let it through.

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

__all__ = ["current_tool", "ensure_not_in_tool", "tool_scope"]

current_tool: Final[ContextVar[str | None]] = ContextVar("minloop_current_tool", default=None)
_breaches: Final[ContextVar[list[str] | None]] = ContextVar("minloop_guard_breaches", default=None)


def ensure_not_in_tool(model_name: str) -> None:
    tool_name = current_tool.get()
    if tool_name is not None:
        message = (
            f"model {model_name!r} was called from inside tool {tool_name!r}: tools never call "
            "an LLM; return data and let the loop's own model call reason about it"
        )
        found = _breaches.get()
        if found is not None:
            found.append(message)
        raise NestedModelCallError(message)


class tool_scope:  # lower-case: used like the function it was, ``with tool_scope(name) as breaches:``
    """Mark the code in the ``with`` block as running inside tool ``tool_name``; the list it
    yields collects every model call the guard refused there, caught by the tool or not."""

    __slots__ = ("_found", "_name", "_tokens")

    def __init__(self, tool_name: str) -> None:
        self._name = tool_name
        self._found: list[str] = []

    def __enter__(self) -> list[str]:
        self._tokens = (current_tool.set(self._name), _breaches.set(self._found))
        return self._found

    def __exit__(self, *exc: object) -> None:
        current_tool.reset(self._tokens[0])
        _breaches.reset(self._tokens[1])
