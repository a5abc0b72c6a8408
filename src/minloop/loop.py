"""The minimal agent loop: four steps, and layers around them.

Each step has four named parts: **receive** the message list (checked against the transcript
rules, with the control message), **decide** what the model asked for (``minloop.decision``),
**execute** the tools under contract (``minloop.execute``), **inject** the results into the
transcript. ``BaseLoop.step`` returns ``Final | Continue | Stop`` (``minloop.state``);
``LoopRun`` (``minloop.driver``) dispatches it. Every other control is a layer
(``minloop.layer``) that sees and may change what passes between the parts.

A loop holds only configuration: all run state is made per run (``minloop.state``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from .decision import (
    Answer,
    CallTools,
    Controls,
    Decision,
    control_message,
    decide,
    invalid_streak,
    is_valid_step,
    next_tool_choice,
)
from .driver import LoopRun
from .exceptions import ContextOverflowError, MinloopError, ModelError
from .execute import ExecContext, ToolResult, execute_calls
from .layer import Layer, Stack, StopRun
from .log import current_trace_id, log_run_start, log_step_end, log_step_start, new_trace_id, run_logger
from .messages import Message, ToolCall, TranscriptChecker, normalize_input
from .models.base import Model, ModelRequest, ToolChoice
from .redact import Redactor
from .result import RunResult, Step
from .state import Continue, Final, Limit, Outcome, Prompt, Reply, RunState, Stop
from .textcalls import calls_written
from .tools import Tool, registry_of

__all__ = ["BaseLoop", "Executor"]

Executor = Callable[[Sequence[ToolCall], RunState], Awaitable[list[ToolResult]]]
"""Carries out one step's calls: the tools by default, recorded results in a replay."""


def run_tools(calls: Sequence[ToolCall], state: RunState) -> Awaitable[list[ToolResult]]:
    return execute_calls(calls, state.calls)


@dataclass(frozen=True)
class BaseLoop:
    """The four steps and the ``layers`` given, nothing else: ``await loop.run(prompt)``,
    ``loop.run_sync(prompt)`` or ``loop.iter(prompt)`` (``minloop.Loop`` adds the built-in
    layers from keywords). ``tool_choice`` is sent on the first call (see
    ``decision.next_tool_choice``); ``time_budget`` (seconds) bounds a whole run's wall time;
    ``redact`` scrubs secrets from tool results and log lines.
    """

    model: Model
    tools: Sequence[Tool | Callable[..., Any]] = ()
    max_steps: int = 10
    tool_choice: ToolChoice | str = "auto"
    controls: Controls = field(default_factory=Controls)
    time_budget: float | None = None
    redact: Callable[[Any], Any] | None = field(default_factory=Redactor)
    executor: Executor = run_tools
    layers: Sequence[Layer] = ()
    registry: dict[str, Tool] = field(init=False, repr=False)
    specs: list[dict[str, Any]] = field(init=False, repr=False)
    stack: Stack = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise MinloopError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.time_budget is not None and self.time_budget <= 0:
            raise MinloopError(f"time_budget must be > 0 seconds, got {self.time_budget}")
        registry = registry_of(self.tools)
        object.__setattr__(self, "registry", registry)
        object.__setattr__(self, "specs", [t.spec() for t in registry.values()])
        object.__setattr__(self, "stack", Stack(self.installed()))
        self.stack.check([*registry.values(), self.controls.fallback])

    def installed(self) -> list[Layer]:  # outermost first
        return list(self.layers)

    def iter(self, prompt: str | Sequence[Message], *, layers: Sequence[Layer] = ()) -> LoopRun:
        """Start a run to drive one step at a time: ``async for step in loop.iter(...)``.
        ``layers`` go around the loop's own for this run only."""
        messages, check = normalize_input(prompt), TranscriptChecker()
        check(messages)  # the run's own checker: its first step walks these messages no more
        return self.drive(self.stack.outside(layers).new_run(lambda: self.new_state(messages, check)), layers)

    def new_state(self, messages: list[Message], check: TranscriptChecker) -> RunState:
        c, log = self.controls, run_logger(trace_id := new_trace_id())
        calls = ExecContext(self.registry, c.fallback, trace_id, log, {}, c.repeat_limit, c.max_result_chars,
                            self.redact)  # fmt: skip
        deadline = None if self.time_budget is None else time.monotonic() + self.time_budget
        return RunState(messages, trace_id, log, calls, self.model, c, deadline, check=check)

    def drive(self, state: RunState, layers: Sequence[Layer] = ()) -> LoopRun:
        """Drive ``state`` (a new run, or one rebuilt at a step boundary) from its next step."""
        stack = self.stack.outside(layers)
        if stack.wraps_tools:
            state.calls.wrap = lambda call, tool, execute: stack.run_tool(state, call, tool, execute)
        log_run_start(state.log, self.model.name, self.registry, self.max_steps)
        return LoopRun(state, stack, lambda s: self.step(s, stack))

    async def run(self, prompt: str | Sequence[Message]) -> RunResult:
        """Run to the end and return the result (cancelled, it raises ``CancelledError``: drive
        ``self.iter(prompt)`` to read a ``cancelled`` result)."""
        run = self.iter(prompt)
        async for _ in run:
            pass
        assert run.result is not None
        return run.result

    def run_sync(self, prompt: str | Sequence[Message]) -> RunResult:
        """Blocking wrapper around ``run`` for code without an event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(prompt))
        raise MinloopError("run_sync() was called inside a running event loop; use `await loop.run(...)`")

    async def step(self, state: RunState, stack: Stack | None = None) -> Outcome:
        """One step: receive -> decide -> execute -> inject, each part through the layers."""
        stack, deadline = stack or self.stack, state.deadline
        timer = asyncio.timeout(deadline - time.monotonic()) if deadline is not None else nullcontext()
        try:
            async with timer:
                prompt = await self.receive(state, stack)
                if (limit := prompt.limit) is not None:
                    return Stop(limit.status, limit.reason)
                reply = await self.call_model(state, prompt, stack)
                decision = await self.decide(state, reply, stack)
                results = await self.execute(state, decision)
            step = self.inject(state, prompt, reply, decision, results)
            outcome = Final(decision.message) if isinstance(decision, Answer) else Continue()
            return await stack.after_step(state, step, outcome)
        except StopRun as stop:
            return Stop(stop.status, stop.reason)
        except ContextOverflowError as exc:
            return Stop("context_overflow", str(exc))
        except ModelError as exc:
            text = f"{type(exc).__name__}: {exc}"
            return Stop("model_error", self.redact(text) if self.redact is not None else text)
        except TimeoutError:
            if not isinstance(timer, asyncio.Timeout) or not timer.expired():
                raise
            return Stop(
                "timeout", f"the run's {self.time_budget:g}s time budget ran out in step {state.index}"
            )

    async def receive(self, state: RunState, stack: Stack) -> Prompt:
        """Check the transcript, add the control message, and let the layers change what is sent."""
        state.check(state.messages)
        c = self.controls
        decayed = 0 < c.decay_after <= state.invalid_streak
        control = control_message(c, decayed=decayed, messages=state.messages, note=state.note)
        done = f"no answer within {self.max_steps} steps"
        limit = Limit("max_steps", "max_steps_exceeded", done) if len(state.steps) >= self.max_steps else None
        prompt = Prompt(  # tools from a source that may change them (an MCP server): the current ones
            [*state.messages], (specs := await state.calls.current(self.specs)),
            "none" if decayed else next_tool_choice(self.tool_choice, state.tool_steps, bool(specs)),
            control["content"] if control else None, control_role=c.control_role, answer_check=c.answer_check,
            decayed=decayed, limit=limit,
        )  # fmt: skip
        state.prompt = prompt = await stack.before_model(state, prompt)
        return prompt

    async def call_model(self, state: RunState, prompt: Prompt, stack: Stack) -> Reply:
        """Send the prompt (the layers may answer it from elsewhere) and time the call."""
        request = prompt.request()
        log_step_start(state.log, state.index, request, self.redact)

        async def call(request: ModelRequest) -> Reply:
            started = time.perf_counter()
            response = calls_written(await state.model.call(request), request, state.controls.text_calls)
            return Reply(response, time.perf_counter() - started)

        return await stack.call_model(state, request, call)

    async def decide(self, state: RunState, reply: Reply, stack: Stack) -> Decision:
        """What the reply is (answer, calls, blank, unfinished), then what the layers make of it."""
        check = state.prompt.answer_check if state.prompt else None
        names = state.tools if state.controls.text_calls else ()
        off = state.prompt is not None and state.prompt.tool_choice == "none"
        decision = decide(reply.response.message, state.index, check, state.messages, names, tools_off=off,
                          stopped=reply.response.stopped)  # fmt: skip
        return await stack.after_model(state, reply, decision)

    async def execute(self, state: RunState, decision: Decision) -> list[ToolResult]:
        """Run the step's calls through the executor (each one through the layers)."""
        if not isinstance(decision, CallTools):
            return []
        state.calls.step, token = state.index, current_trace_id.set(state.trace_id)  # step: for call keys
        try:
            return await self.executor(decision.calls, state)
        finally:
            current_trace_id.reset(token)

    def inject(
        self, state: RunState, prompt: Prompt, reply: Reply, decision: Decision, results: list[ToolResult]
    ) -> Step:
        """Append the reply and its results (each right after its call) and record the step."""
        if decision.kind != "blank":  # a blank reply is not a message worth keeping
            state.messages.append(decision.message)
        state.messages.extend(r.to_message(self.controls.result_role) for r in results)
        valid = is_valid_step(decision, results)
        streak = invalid_streak(state.invalid_streak, decision, results, self.controls.decay_after)
        state.invalid_streak = streak
        state.tool_steps += bool(results)
        state.note = getattr(decision, "note", None)  # an unfinished answer's, a blank reply's
        step = Step(
            index=state.index, decision=decision.kind, message=decision.message,
            tool_calls=decision.calls if isinstance(decision, CallTools) else (), results=tuple(results),
            model_latency=reply.latency, tool_latency=max((r.latency for r in results), default=0.0),
            usage=reply.response.usage, tool_choice=prompt.tool_choice, control=prompt.control_text,
            valid=valid, context=prompt.context,
        )  # fmt: skip
        state.steps.append(step)
        log_step_end(state.log, step)
        return step
