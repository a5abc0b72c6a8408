"""Driving a run one step at a time: ``LoopRun``, what ``Loop.iter`` returns."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, assert_never

from pydantic_core import to_jsonable_python

from .messages import Message
from .result import RunResult, Status, Step
from .state import Continue, Final, RunState, Stop

if TYPE_CHECKING:
    from .loop import Loop

__all__ = ["LoopRun"]


class LoopRun:
    """A run in progress. Iterate it to drive the loop one step at a time (each iteration yields
    the ``Step`` just taken); after the last step ``result`` holds the ``RunResult``.
    ``messages`` is the live transcript.

    Cancelling the task that drives it ends the run with status ``cancelled`` (``result`` and
    the trace keep every completed step) and re-raises ``CancelledError``, as asyncio expects.
    """

    def __init__(self, loop: Loop, state: RunState) -> None:
        self.loop = loop
        self.state = state
        self.result: RunResult | None = None
        model = getattr(loop.model, "name", type(loop.model).__name__)
        if state.log.isEnabledFor(logging.INFO):
            tools = sorted(loop.registry)
            state.log.info("run start: model=%s tools=%s max_steps=%d", model, tools, loop.max_steps)
        if not state.tracer.sinks:
            return
        state.tracer.emit(
            "run_start",
            0,
            model=model,
            tools=sorted(loop.registry),
            max_steps=loop.max_steps,
            messages=list(state.messages),
        )

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
            outcome = await self.loop.step(self.state)
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
        """End the run here with status ``cancelled``, unless it has ended already (what a
        cancelled driver does; for a caller that stops driving between steps)."""
        if self.result is None:
            self._finish("cancelled", self._last_assistant(), "the run was cancelled")

    def _finish(
        self, status: Status, final: Message | None, error: str | None, forced_by: str | None = None
    ) -> None:
        s, spec = self.state, self.loop.output_spec
        duration = time.perf_counter() - s.started
        value, text = None, (final or {}).get("content")
        if spec is not None and isinstance(text, str) and (status == "success" or forced_by):
            from .output import OutputError

            try:
                value = spec.parse(text)
            except OutputError:
                pass  # a forced answer that does not validate: the text is still the final message
        price = self.loop.price
        cost = None
        if price is not None:
            from .budget import Spent

            cost = Spent.of(s.steps, price).cost
        self.result = RunResult(
            status,
            final,
            list(s.messages),
            tuple(s.steps),
            s.trace_id,
            duration,
            error,
            value,
            forced_by,
            cost,
        )
        if s.tracer.sinks:
            self._trace_end(self.result)
        s.log.info("run end: %s after %d steps%s", status, len(s.steps), f" ({error})" if error else "")

    def _trace_end(self, result: RunResult) -> None:
        usage = result.usage
        self.state.tracer.emit(
            "run_end",
            len(result.steps),
            status=result.status,
            error=result.error,
            final_message=result.final_message,
            output_value=to_jsonable_python(result.output_value, fallback=str),
            forced_by=result.forced_by,
            duration=result.duration,
            steps=len(result.steps),
            usage={**asdict(usage), "total_tokens": usage.total_tokens},
            model_calls=result.model_calls,
            tool_calls=result.tool_calls,
            cost=result.cost,
        )

    def _last_assistant(self) -> Message | None:
        return next((m for m in reversed(self.state.messages) if m.get("role") == "assistant"), None)
