"""Driving a run one step at a time: ``LoopRun``, what ``Loop.iter`` returns."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import assert_never

from .layer import Stack
from .log import log_run_end
from .messages import Message
from .result import RunResult, Status, Step
from .state import Continue, Final, Outcome, RunState, Stop

__all__ = ["LoopRun"]


class LoopRun:
    """A run in progress. Iterate it to drive the loop one step at a time (each iteration yields
    the ``Step`` just taken); after the last step ``result`` holds the ``RunResult``.
    ``messages`` is the live transcript.

    Cancelling the task that drives it ends the run with status ``cancelled`` (``result`` and
    the trace keep every completed step) and re-raises ``CancelledError``, as asyncio expects.
    """

    def __init__(self, state: RunState, stack: Stack, step: Callable[[RunState], Awaitable[Outcome]]) -> None:
        self.state = state
        self.stack = stack
        self.result: RunResult | None = None
        self._step = step
        stack.start(state)

    @property
    def trace_id(self) -> str:
        return self.state.trace_id

    @property
    def messages(self) -> list[Message]:
        return self.state.messages

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self.state.steps)

    def __aiter__(self) -> LoopRun:
        return self

    async def __anext__(self) -> Step:
        if self.result is not None:
            raise StopAsyncIteration
        before = len(self.state.steps)
        try:
            outcome = await self._step(self.state)
        except asyncio.CancelledError:
            self.cancel()
            raise
        match outcome:
            case Continue():
                pass
            case Final(message):
                self._finish("success", message, None)
            case Stop(status, reason, forced_by):
                self._finish(status, self._last_assistant(), reason, forced_by)
            case _:
                assert_never(outcome)
        if len(self.state.steps) == before:
            raise StopAsyncIteration
        return self.state.steps[-1]

    def cancel(self) -> None:
        """End the run here with status ``cancelled``, unless it has ended already."""
        if self.result is None:
            self._finish("cancelled", self._last_assistant(), "the run was cancelled")

    # fmt: off
    def _finish(self, status: Status, final: Message | None, error: str | None, forced_by: str | None = None) -> None:
        s = self.state
        took = time.perf_counter() - s.started
        result = RunResult(status, final, list(s.messages), tuple(s.steps), s.trace_id, took, error, None, forced_by)
    # fmt: on
        self.result = self.stack.end(s, result)
        log_run_end(s.log, status, len(s.steps), error)

    def _last_assistant(self) -> Message | None:
        return next((m for m in reversed(self.state.messages) if m.get("role") == "assistant"), None)
