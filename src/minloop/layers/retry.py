"""Retries of tool calls that failed for a reason that may pass: ``Loop(..., retry=3)``.

A call is tried again only when both hold:

* the tool is safe to repeat (``idempotent``, ``read_only``, or it takes the call's
  ``CallKey``), or its author opted it in (``@tool(retry=True)``): a tool that is not safe to
  repeat is never retried, since repeating it is how a charge happens twice;
* the failure is transient: the call timed out, or the tool raised ``TransientToolError`` (a
  layer may raise ``ToolFailure(..., transient=True)``). Bad arguments, a wrong result, any
  other exception go to the model at once.

Up to ``attempts`` tries, waiting ``first_wait * factor ** (n - 1)`` seconds after the n-th,
at most ``max_wait`` and at most the tool's timeout, less up to ``jitter`` of it at random (so
that many calls failing together do not come back together). A wait that would end after the
run's time budget is not taken: the last failure stands. Each try of a retried call is in the
trace (``tool_attempt``: its number, its failure, the wait after it); the model reads one
result, the last try's.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

from ..exceptions import MinloopError
from ..execute import ToolFailure
from ..layer import Execute, Layer
from ..messages import ToolCall
from ..state import RunState
from ..tools import Tool
from .tracing import report

__all__ = ["Retry", "Retrying"]


@dataclass(frozen=True, slots=True)
class Retry:
    """How a failed call is tried again: at most ``attempts`` tries in all, waiting
    ``first_wait`` seconds after the first, ``factor`` times longer after each next one, at
    most ``max_wait``, less up to ``jitter`` (a fraction, 0 to 1) of it at random."""

    attempts: int = 3
    first_wait: float = 0.2
    factor: float = 2.0
    max_wait: float = 5.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if not isinstance(self.attempts, int) or isinstance(self.attempts, bool) or self.attempts < 1:
            raise MinloopError(f"Retry: attempts must be a whole number >= 1, got {self.attempts!r}")
        if min(self.first_wait, self.max_wait) < 0 or self.factor < 1:
            raise MinloopError("Retry: waits must be >= 0 seconds and factor >= 1")
        if not 0 <= self.jitter <= 1:
            raise MinloopError(f"Retry: jitter must be between 0 and 1, got {self.jitter!r}")

    def wait(self, attempt: int, tool: Tool) -> float:
        """Seconds to wait after failed try number ``attempt`` of a call to ``tool``."""
        longest = min(self.first_wait * self.factor ** (attempt - 1), self.max_wait, tool.timeout)
        return longest * (1 - self.jitter * random.random())


class Retrying(Layer):
    """Tries a call again, under ``retry``, when it failed for a transient reason and its tool
    may be repeated (see the module's docstring)."""

    def __init__(self, retry: Retry | int = 3) -> None:
        self.retry = retry if isinstance(retry, Retry) else Retry(retry)

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        if not (tool.repeatable or tool.retry) or self.retry.attempts == 1:
            return await execute()
        attempt = 1
        while True:
            try:
                value = await execute()
            except ToolFailure as failure:
                wait = self.retry.wait(attempt, tool)
                last = not failure.transient or attempt >= self.retry.attempts or _too_late(run, wait)
                if attempt > 1 or not last:
                    report(run, "tool_attempt", id=call.id, name=call.name, attempt=attempt, code=failure.code,
                           error=failure.message, wait=None if last else round(wait, 3))  # fmt: skip
                if last:
                    raise
                await asyncio.sleep(wait)
                attempt += 1
            else:
                if attempt > 1:
                    report(run, "tool_attempt", id=call.id, name=call.name, attempt=attempt, code=None,
                           error=None, wait=None)  # fmt: skip
                return value


def _too_late(run: RunState, wait: float) -> bool:
    """Whether waiting ``wait`` seconds would end past the run's time budget."""
    return run.deadline is not None and time.monotonic() + wait >= run.deadline
