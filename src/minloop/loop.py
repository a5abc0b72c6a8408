"""The minimal agent loop (S1, S2, S3, S26).

Each round is four named steps: **receive** the message list (checked, S4-S21), **decide**
what the model asked for, **execute** the tools under contract, **inject** the results and go
again. A round returns ``Final | Continue | Stop``; ``Run`` dispatches it exhaustively. The
``Loop`` holds only configuration: all run state lives in a ``RunState`` made per run, so one
``Loop`` serves any number of concurrent runs (S26).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, assert_never

from .decision import Answer, Blank, CallTools, Controls, Decision, control_message, decide, is_valid_round
from .exceptions import MinloopError, ModelError, ToolDefinitionError
from .execute import ExecContext, ToolResult, execute_calls
from .messages import Message, check_transcript, normalize_input
from .models.base import Model, ModelRequest, ModelResponse, ToolChoice
from .result import RunResult, Status, Step
from .tools import Tool, tool
from .trace.events import Tracer, TraceSink
from .trace.redact import Redactor
from .tracing import current_trace_id, new_trace_id, run_logger

__all__ = ["Loop", "Run", "run", "run_sync"]


@dataclass(frozen=True, slots=True)
class Final:
    message: Message


@dataclass(frozen=True, slots=True)
class Continue:
    pass


@dataclass(frozen=True, slots=True)
class Stop:
    status: Status
    reason: str


NextStep = Final | Continue | Stop


@dataclass(slots=True)
class RunState:
    messages: list[Message]
    trace_id: str
    log: Any
    tracer: Tracer
    steps: list[Step] = field(default_factory=list)
    invalid_streak: int = 0
    tool_rounds: int = 0
    started: float = field(default_factory=time.perf_counter)


@dataclass(frozen=True)
class Loop:
    """A configured loop: ``await loop.run(prompt)``, ``loop.run_sync(prompt)`` or ``loop.iter(prompt)``.

    ``tool_choice`` is sent on the first call (S3); a forced choice (``"required"`` or one
    tool's name) applies until the first tool round, then the loop goes back to ``"auto"`` so
    it can end.
    """

    model: Model
    tools: Sequence[Tool | Callable[..., Any]] = ()
    max_steps: int = 10
    tool_choice: ToolChoice | str = "auto"
    controls: Controls = field(default_factory=Controls)
    sinks: Sequence[TraceSink] = ()
    redact: Callable[[Any], Any] | None = field(default_factory=Redactor)
    registry: dict[str, Tool] = field(init=False, repr=False)
    specs: list[dict[str, Any]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise MinloopError(f"max_steps must be >= 1, got {self.max_steps}")
        registry: dict[str, Tool] = {}
        for item in self.tools:
            t = item if isinstance(item, Tool) else tool(item)
            if t.name in registry:
                raise ToolDefinitionError(f"two tools are named {t.name!r}")
            registry[t.name] = t
        object.__setattr__(self, "registry", registry)
        object.__setattr__(self, "specs", [t.spec() for t in registry.values()])

    def iter(self, prompt: str | Sequence[Message]) -> Run:
        """Start a run to drive one round at a time: ``async for step in loop.iter(...)``."""
        messages = normalize_input(prompt)
        check_transcript(messages)
        trace_id = new_trace_id()
        tracer = Tracer(trace_id, self.sinks, self.redact)
        return Run(self, RunState(messages, trace_id, run_logger(trace_id), tracer))

    async def run(self, prompt: str | Sequence[Message]) -> RunResult:
        """Run to the end and return the result."""
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

    async def round(self, state: RunState) -> NextStep:
        """One round: receive -> decide -> execute -> inject."""
        if len(state.steps) >= self.max_steps:
            return Stop("max_steps_exceeded", f"no answer within {self.max_steps} steps")
        request, control = self.receive(state)
        started = time.perf_counter()
        try:
            response = await self.model.call(request)
        except ModelError as exc:
            state.tracer.emit("model_response", len(state.steps) + 1, error=f"{type(exc).__name__}: {exc}")
            return Stop("model_error", f"{type(exc).__name__}: {exc}")
        latency = time.perf_counter() - started
        state.tracer.emit("model_response", len(state.steps) + 1, message=response.message,
                          usage=asdict(response.usage), latency=latency)
        decision = decide(response.message, len(state.steps) + 1)
        results = await self.execute(decision, state)
        self.inject(state, decision, results, response, request, control, latency)
        match decision:
            case Answer(message):
                return Final(message)
            case CallTools() | Blank():
                return Continue()
            case _:
                assert_never(decision)

    def receive(self, state: RunState) -> tuple[ModelRequest, str | None]:
        check_transcript(state.messages)
        decayed = 0 < self.controls.decay_after <= state.invalid_streak
        after_tools = state.messages[-1]["role"] in ("tool", "function")
        control = control_message(self.controls, decayed=decayed, after_tools=after_tools)
        messages = [*state.messages] if control is None else [*state.messages, control]  # a snapshot
        choice = "none" if decayed else self._tool_choice(state)
        index = len(state.steps) + 1
        state.log.info("step %d start: %d messages, tool_choice=%s", index, len(messages), choice)
        state.log.debug("step %d input: %.300s", index, messages[-1].get("content"))
        state.tracer.emit("step_start", index, tool_choice=choice, decayed=decayed)
        state.tracer.emit("model_request", index, messages=messages, tools=list(self.registry), tool_choice=choice)
        return ModelRequest(messages, self.specs, choice), (control or {}).get("content")

    async def execute(self, decision: Decision, state: RunState) -> list[ToolResult]:
        if not isinstance(decision, CallTools):
            return []
        index = len(state.steps) + 1
        for c in decision.calls:
            known = self.registry.get(c.name)
            state.tracer.emit("tool_call", index, id=c.id, name=c.name, arguments=c.arguments,
                              known=known is not None, timeout=known.timeout if known else None)
        ctx = ExecContext(self.registry, self.controls.fallback, state.trace_id, state.log)
        token = current_trace_id.set(state.trace_id)
        try:
            results = await execute_calls(decision.calls, ctx)
        finally:
            current_trace_id.reset(token)
        for r in results:
            state.tracer.emit("tool_result", index, **asdict(r))
        return results

    def inject(
        self, state: RunState, decision: Decision, results: list[ToolResult],
        response: ModelResponse, request: ModelRequest, control: str | None, latency: float,
    ) -> None:
        if not isinstance(decision, Blank):  # a blank reply is not a message worth keeping
            state.messages.append(decision.message)
        role = self.controls.result_role
        state.messages.extend(r.to_message(role) for r in results)  # adjacent to their call (S16)
        valid = is_valid_round(decision, results)
        state.invalid_streak = 0 if valid else state.invalid_streak + 1
        state.tool_rounds += bool(results)
        kind = {Answer: "answer", CallTools: "tool_calls", Blank: "blank"}[type(decision)]
        step = Step(
            index=len(state.steps) + 1, decision=kind, message=decision.message,  # type: ignore[arg-type]
            tool_calls=getattr(decision, "calls", ()), results=tuple(results),
            model_latency=latency, tool_latency=max((r.latency for r in results), default=0.0),
            usage=response.usage, tool_choice=request.tool_choice, control=control, valid=valid,
        )
        state.steps.append(step)
        state.tracer.emit("step_end", step.index, decision=kind, valid=valid, model_latency=latency,
                          tool_latency=step.tool_latency, usage=asdict(step.usage))
        state.log.info(
            "step %d end: %s%s, %.1fms model", step.index, kind,
            f" {[c.name for c in step.tool_calls]} errors={step.errors}" if results else "", latency * 1000,
        )

    def _tool_choice(self, state: RunState) -> ToolChoice:
        choice = self.tool_choice
        if state.tool_rounds or choice in ("auto", "none") or not self.specs:
            return "auto" if choice != "none" else "none"
        if isinstance(choice, str) and choice != "required":
            return {"type": "function", "function": {"name": choice}}
        return choice


class Run:
    """A run in progress. Iterate it to drive the loop one round (``Step``) at a time; after the
    last round ``result`` holds the ``RunResult``. ``messages`` is the live transcript."""

    def __init__(self, loop: Loop, state: RunState) -> None:
        self.loop = loop
        self.state = state
        self.result: RunResult | None = None
        model = getattr(loop.model, "name", type(loop.model).__name__)
        state.log.info("run start: model=%s tools=%s max_steps=%d", model, sorted(loop.registry), loop.max_steps)
        state.tracer.emit("run_start", 0, model=model, tools=sorted(loop.registry), max_steps=loop.max_steps,
                          messages=list(state.messages))

    @property
    def trace_id(self) -> str:
        return self.state.trace_id

    @property
    def messages(self) -> list[Message]:
        return self.state.messages

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self.state.steps)

    def __aiter__(self) -> Run:
        return self

    async def __anext__(self) -> Step:
        if self.result is not None:
            raise StopAsyncIteration
        before = len(self.state.steps)
        nxt = await self.loop.round(self.state)
        match nxt:
            case Continue():
                pass
            case Final(message):
                self._finish("success", message, None)
            case Stop(status, reason):
                self._finish(status, self._last_assistant(), reason)
            case _:
                assert_never(nxt)
        if len(self.state.steps) == before:
            raise StopAsyncIteration
        return self.state.steps[-1]

    def _finish(self, status: Status, final: Message | None, error: str | None) -> None:
        s = self.state
        self.result = RunResult(status, final, list(s.messages), tuple(s.steps), s.trace_id, time.perf_counter() - s.started, error)
        usage = self.result.usage
        s.tracer.emit("run_end", len(s.steps), status=status, error=error, final_message=final,
                      duration=self.result.duration, steps=len(s.steps),
                      usage={**asdict(usage), "total_tokens": usage.total_tokens})
        s.log.info("run end: %s after %d steps%s", status, len(s.steps), f" ({error})" if error else "")

    def _last_assistant(self) -> Message | None:
        return next((m for m in reversed(self.state.messages) if m.get("role") == "assistant"), None)


async def run(prompt: str | Sequence[Message], *, model: Model, tools: Sequence[Tool | Callable[..., Any]] = (), max_steps: int = 10, **options: Any) -> RunResult:
    """``await minloop.run(prompt, model=..., tools=[...])``: one run with a throwaway ``Loop``."""
    return await Loop(model, tools, max_steps, **options).run(prompt)


def run_sync(prompt: str | Sequence[Message], *, model: Model, tools: Sequence[Tool | Callable[..., Any]] = (), max_steps: int = 10, **options: Any) -> RunResult:
    """Blocking ``run``."""
    return Loop(model, tools, max_steps, **options).run_sync(prompt)
