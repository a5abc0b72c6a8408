"""Tools that may change while a run goes on: a ``ToolSource`` (an MCP server) names itself on each
of its tools (``Tool.source``), and the loop asks it for its current tools at every step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

__all__ = ["ToolSource"]

T_co = TypeVar("T_co", covariant=True)


class ToolSource(Protocol[T_co]):
    """Where tools come from when that place may change them during a run. At every step the loop
    offers what ``current()`` returns: a tool added since is offered, one removed is refused as
    unknown. ``about()`` describes the source for the trace (its name, and e.g. its protocol)."""

    name: str

    async def current(self) -> Sequence[T_co]: ...

    def about(self) -> dict[str, Any]: ...
