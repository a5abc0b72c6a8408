"""The minimal agent loop.

Each step has four named parts: **receive** the message list (checked against the transcript
rules, fitted to the context window), **decide** what the model asked for
(``minloop.decision``), **execute** the tools under contract (``minloop.execute``), **inject**
the results into the transcript. ``Loop.step`` returns ``Final | Continue | Stop``
(``minloop.state``); ``LoopRun`` (``minloop.driver``) dispatches it. The ``Loop`` holds only
configuration: all run state lives in a ``RunState`` made per run, so one ``Loop`` serves any
number of concurrent runs and keeps nothing between them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .context import NO_WINDOW, ContextPolicy, Policy, calibrate, counter_for
from .decision import (
    Answer,
    AnswerCheck,
    Blank,
    CallTools,
    Controls,
    Decision,
    Unfinished,
    combine_checks,
    control_message,
    decide,
    is_valid_step,
)
from .driver import LoopRun
from .events import Tracer, TraceSink
from .exceptions import ContextOverflowError, MinloopError, ModelError
from .execute import Approver, ExecContext, ToolResult, execute_calls
from .log import current_trace_id, new_trace_id, run_logger
from .messages import Message, ToolCall, check_transcript, normalize_input
from .models.base import Model, ModelRequest, ToolChoice
from .redact import Redactor
from .result import RunResult, Step
from .state import Continue, Final, Limit, Outcome, Prompt, Reply, RunState, Stop
from .tools import Tool, registry_of

if TYPE_CHECKING:  # budgets, typed output and streaming are loaded when a loop first uses them
    from .budget import Budget, Price
    from .output import OutputSpec
    from .streaming import LoopStream

__all__ = ["Executor", "Loop", "run", "run_sync"]

Executor = Callable[[Sequence[ToolCall], RunState], Awaitable[list[ToolResult]]]
"""Carries out one step's calls; the default runs the tools (``execute_calls``). Replay swaps in
the recorded results."""


async def run_tools(calls: Sequence[ToolCall], state: RunState) -> list[ToolResult]:
    return await execute_calls(calls, state.calls)


@dataclass(frozen=True)
class Loop:
    """A configured loop: ``await loop.run(prompt)``, ``loop.run_sync(prompt)`` or ``loop.iter(prompt)``.

    ``tool_choice`` is sent on the first call; a forced choice (``"required"`` or one tool's
    name) applies until the first tool step, then the loop goes back to ``"auto"`` so it can
    end. ``time_budget`` (seconds) bounds a whole run's wall time. ``approve`` decides on calls
    to tools marked ``needs_approval``. ``context`` (a ``ContextPolicy``) decides what of the
    transcript is sent under the model's window. ``sinks`` receive trace events after
    ``redact`` (which also scrubs secrets from tool results and log lines).

    ``output`` (a Pydantic model, a type, a JSON schema) types the answer (``minloop.output``);
    ``budget`` caps tokens, calls and cost (``minloop.budget``); ``answer_at_limit`` asks, tools
    off, for an answer at ``max_steps`` or the budget instead of stopping without one.
    The answer check is ``controls.answer_check``, else the model's own ``answer_check`` if it has
    one (the embedded model's evidence check), combined with the typed output's.
    """

    model: Model
    tools: Sequence[Tool | Callable[..., Any]] = ()
    max_steps: int = 10
    tool_choice: ToolChoice | str = "auto"
    controls: Controls = field(default_factory=Controls)
    time_budget: float | None = None
    approve: Approver | None = None
    context: Policy | None = None
    sinks: Sequence[TraceSink] = ()
    redact: Callable[[Any], Any] | None = field(default_factory=Redactor)
    executor: Executor = run_tools
    output: Any = None
    budget: Budget | None = None
    answer_at_limit: bool = False
    registry: dict[str, Tool] = field(init=False, repr=False)
    specs: list[dict[str, Any]] = field(init=False, repr=False)
    output_spec: OutputSpec | None = field(init=False, repr=False)
    answer_check: AnswerCheck | None = field(init=False, repr=False)
    price: Price | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise MinloopError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.time_budget is not None and self.time_budget <= 0:
            raise MinloopError(f"time_budget must be > 0 seconds, got {self.time_budget}")
        registry = registry_of(self.tools)
        object.__setattr__(self, "registry", registry)
        object.__setattr__(self, "specs", [t.spec() for t in registry.values()])
        if isinstance(self.context, ContextPolicy) and not self._window():
            raise MinloopError(NO_WINDOW)
        spec = None
        if self.output is not None:
            from .output import OutputSpec

            spec = OutputSpec.of(self.output)
        object.__setattr__(self, "output_spec", spec)
        own = self.controls.answer_check or getattr(self.model, "answer_check", None)
        check = combine_checks(spec.check if spec else None, own)
        object.__setattr__(self, "answer_check", check)
        price = self.budget.price_for(self.model.name) if self.budget else None
        object.__setattr__(self, "price", price)

    def iter(self, prompt: str | Sequence[Message]) -> LoopRun:
        """Start a run to drive one step at a time: ``async for step in loop.iter(...)``."""
        messages = normalize_input(prompt)
        check_transcript(messages)
        trace_id = new_trace_id()
        log = run_logger(trace_id)
        c = self.controls
        calls = ExecContext(self.registry, c.fallback, trace_id, log, {}, c.repeat_limit, self.approve,
                            c.max_result_chars, self.redact)  # fmt: skip
        deadline = None if self.time_budget is None else time.monotonic() + self.time_budget
        tracer = Tracer(trace_id, self.sinks, self.redact)
        return LoopRun(self, RunState(messages, trace_id, log, tracer, calls, deadline))

    def stream(self, prompt: str | Sequence[Message]) -> LoopStream:
        """Start a run to watch as it happens: ``async with loop.stream(...) as events:
        async for event in events: ...`` (see ``minloop.streaming``)."""
        from .streaming import LoopStream

        return LoopStream(self.iter(prompt))

    async def run(self, prompt: str | Sequence[Message]) -> RunResult:
        """Run to the end and return the result. If the task running it is cancelled, this raises
        ``CancelledError`` instead; to read the ``cancelled`` result, drive ``self.iter(prompt)``
        and read its ``result``."""
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

    async def step(self, state: RunState) -> Outcome:
        """One step: receive -> decide -> execute -> inject; at a limit, stop or (opt-in) ask for the answer."""
        limit = self.limit(state)
        if limit is not None and not self.answer_at_limit:
            return limit.stop()
        timer = asyncio.timeout(state.remaining())
        try:
            async with timer:
                prompt = self.receive(state, limit)
                if limit is None and (limit := self.limit(state, prompt)) is not None:
                    if not self.answer_at_limit:
                        return limit.stop()
                    prompt = self.receive(state, limit)
                reply = await self.call_model(prompt, state)
                decision = self.decide(reply, state, limit)
                results = await self.execute(decision, state)
        except ContextOverflowError as exc:
            return Stop("context_overflow", str(exc))
        except ModelError as exc:
            return Stop("model_error", self._scrub(f"{type(exc).__name__}: {exc}"))
        except TimeoutError:
            if not timer.expired():
                raise
            return Stop(
                "timeout", f"the run's {self.time_budget:g}s time budget ran out in step {state.index}"
            )
        self.inject(state, prompt, reply, decision, results)
        return self.outcome(decision, prompt, limit)

    def limit(self, state: RunState, prompt: Prompt | None = None) -> Limit | None:
        """The limit the next call would pass: ``max_steps``, or a budget (tokens counted on ``prompt``)."""
        if len(state.steps) >= self.max_steps:
            return Limit("max_steps", "max_steps_exceeded", f"no answer within {self.max_steps} steps")
        if self.budget is None:
            return None
        from .budget import Spent

        tokens = 0
        if prompt is not None and self.budget.counts_prompts:
            tokens = counter_for(self.model, self.specs, state.token_ratio)(prompt.request.messages)
        return self.budget.check(Spent.of(state.steps, self.price), tokens, self.price)

    def receive(self, state: RunState, limit: Limit | None = None) -> Prompt:
        """Check the transcript, fit it to the window and add the control message, if any."""
        state.check(state.messages)
        decayed = 0 < self.controls.decay_after <= state.invalid_streak
        after_tools = state.messages[-1]["role"] in ("tool", "function")
        at_limit = limit is not None
        control = control_message(
            self.controls, decayed=decayed, after_tools=after_tools, note=state.note, at_limit=at_limit
        )
        structured = bool(getattr(self.model, "structured_output", False))
        if self.output_spec is not None and not structured:
            texts = [(control or {}).get("content"), self.output_spec.instruction]
            control = {"role": self.controls.control_role, "content": "\n\n".join(filter(None, texts))}
        sent, report = self.fit(state)
        messages = sent if control is None else [*sent, control]
        choice = "none" if decayed or at_limit else self._tool_choice(state)
        schema = self.output_spec.schema if self.output_spec and structured else None
        request = ModelRequest(messages, self.specs, choice, schema, self.answer_check)
        return Prompt(request, (control or {}).get("content"), report, decayed)

    def announce(self, prompt: Prompt, state: RunState) -> None:
        """Log and trace the call about to be made."""
        messages, choice = prompt.request.messages, prompt.request.tool_choice
        state.log.info("step %d start: %d messages, tool_choice=%s", state.index, len(messages), choice)
        if state.log.isEnabledFor(logging.DEBUG):
            state.log.debug("step %d input: %.300s", state.index, self._scrub(messages[-1].get("content")))
        if not state.tracer.sinks:
            return
        state.tracer.emit("step_start", state.index, tool_choice=choice, decayed=prompt.decayed)
        state.tracer.emit(
            "model_request",
            state.index,
            messages=messages,
            tools=list(self.registry),
            tool_choice=choice,
            context=prompt.context,
        )

    def fit(self, state: RunState) -> tuple[list[Message], Any]:
        """The transcript as sent: all of it, or what the context policy keeps (a copy either way)."""
        if self.context is None:
            return [*state.messages], None
        count = counter_for(self.model, self.specs, state.token_ratio)
        return self.context.apply(state.messages, count, self._window())

    def _window(self) -> int | None:
        return (self.context.window if self.context else None) or getattr(self.model, "context_window", None)

    async def call_model(self, prompt: Prompt, state: RunState) -> Reply:
        self.announce(prompt, state)
        request = prompt.request
        started = time.perf_counter()
        try:
            if state.listener is None:
                response = await self.model.call(request)
            else:
                from .streaming import stream_reply

                response = await stream_reply(self.model, request, state.listener, state.index)
        except ModelError as exc:
            state.tracer.emit("model_response", state.index, error=f"{type(exc).__name__}: {exc}")
            raise
        latency = time.perf_counter() - started
        counting = self.context is not None or (self.budget is not None and self.budget.counts_prompts)
        if counting and response.usage.prompt_tokens:
            state.token_ratio = calibrate(self.specs, request.messages, response.usage.prompt_tokens)
        if state.tracer.sinks:
            state.tracer.emit(
                "model_response", state.index, message=response.message, usage=response.usage, latency=latency
            )
        return Reply(response, latency)

    def decide(self, reply: Reply, state: RunState, limit: Limit | None) -> Decision:
        """What the reply is; at a limit tools are off, so a call there is not run (no answer)."""
        message = reply.response.message
        decision = decide(message, state.index, self.answer_check, state.messages)
        return Blank(message) if limit is not None and isinstance(decision, CallTools) else decision

    def outcome(self, decision: Decision, prompt: Prompt, limit: Limit | None) -> Outcome:
        """What the step leads to: the answer, another step, or the end of the run."""
        if limit is not None:
            stop = limit.stop(forced=isinstance(decision, Answer))
            if isinstance(decision, Unfinished):
                return Stop(
                    stop.status, f"{stop.reason}; the answer at the limit was not accepted: {decision.note}"
                )
            return stop
        spec = self.output_spec
        if isinstance(decision, Answer):
            text = decision.message["content"]  # a check's replacement is not checked as output
            if spec is not None and spec.check(text) is not None:
                return Stop("output_invalid", f"the answer check ended the run with no valid output: {text}")
            return Final(decision.message)
        if isinstance(decision, Unfinished) and prompt.decayed and spec is not None:
            note = spec.check(decision.message["content"])
            if note is not None:
                return Stop("output_invalid", f"the answer did not validate, even with tools off: {note}")
        return Continue()

    async def execute(self, decision: Decision, state: RunState) -> list[ToolResult]:
        """Run the step's calls through the executor; trace each call and each result."""
        if not isinstance(decision, CallTools):
            return []
        for c in decision.calls if state.tracer.sinks else ():
            known = self.registry.get(c.name)
            where = {"server": known.server} if known is not None and known.server else {}
            state.tracer.emit(
                "tool_call",
                state.index,
                id=c.id,
                name=c.name,
                arguments=c.arguments,
                known=known is not None,
                timeout=known.timeout if known else None,
                **where,
            )
        listener = state.listener
        if listener is not None:
            from .streaming import ToolCallFinished, ToolCallResult
        for c in decision.calls if listener else ():
            await listener(ToolCallFinished(c, state.index))  # type: ignore[misc]
        calls: Sequence[ToolCall] = decision.calls
        refused: list[ToolResult] = []
        if self.budget is not None:
            from .budget import Spent

            calls, refused = self.budget.admit(calls, Spent.of(state.steps), state.trace_id)
        token = current_trace_id.set(state.trace_id)
        try:
            results = await self.executor(calls, state) if calls else []
        finally:
            current_trace_id.reset(token)
        results = [*results, *refused]
        for r in results if state.tracer.sinks else ():
            state.tracer.emit("tool_result", state.index, **asdict(r))
        for r in results if listener else ():
            await listener(ToolCallResult(r, state.index))  # type: ignore[misc]
        return results

    def inject(
        self, state: RunState, prompt: Prompt, reply: Reply, decision: Decision, results: list[ToolResult]
    ) -> Step:
        """Append the reply and its results (each right after its call) and record the step."""
        if decision.kind != "blank":  # a blank reply is not a message worth keeping
            state.messages.append(decision.message)
        state.messages.extend(r.to_message(self.controls.result_role) for r in results)
        valid = is_valid_step(decision, results)
        state.invalid_streak = 0 if valid else state.invalid_streak + 1
        if any(r.error == "ERR_TOOL_REPEATED" for r in results):
            state.invalid_streak = max(state.invalid_streak, self.controls.decay_after)
        state.tool_steps += bool(results)
        state.note = decision.note if isinstance(decision, Unfinished) else None
        step = Step(
            index=state.index, decision=decision.kind, message=decision.message,
            tool_calls=decision.calls if isinstance(decision, CallTools) else (), results=tuple(results),
            model_latency=reply.latency, tool_latency=max((r.latency for r in results), default=0.0),
            usage=reply.response.usage, tool_choice=prompt.request.tool_choice, control=prompt.control,
            valid=valid, context=prompt.context,
        )  # fmt: skip
        state.steps.append(step)
        if state.tracer.sinks:
            state.tracer.emit("step_end", step.index, decision=step.decision, valid=valid, usage=step.usage,
                              model_latency=reply.latency, tool_latency=step.tool_latency)  # fmt: skip
        if state.log.isEnabledFor(logging.INFO):
            errors = f" {[c.name for c in step.tool_calls]} errors={step.errors}" if results else ""
            state.log.info(
                "step %d end: %s%s, %.1fms model", step.index, step.decision, errors, reply.latency * 1000
            )
        return step

    def _scrub(self, value: Any) -> Any:
        return self.redact(value) if self.redact is not None else value

    def _tool_choice(self, state: RunState) -> ToolChoice:
        choice = self.tool_choice
        if state.tool_steps or choice in ("auto", "none") or not self.specs:
            return "auto" if choice != "none" else "none"
        if isinstance(choice, dict):
            return choice
        if choice == "required":
            return "required"
        return {"type": "function", "function": {"name": choice}}


async def run(prompt: str | Sequence[Message], *, model: Model, tools: Sequence[Tool | Callable[..., Any]] = (),
              max_steps: int = 10, **options: Any) -> RunResult:  # fmt: skip
    """``await minloop.run(prompt, model=..., tools=[...])``: one run with a throwaway ``Loop``."""
    return await Loop(model, tools, max_steps, **options).run(prompt)


def run_sync(prompt: str | Sequence[Message], *, model: Model, tools: Sequence[Tool | Callable[..., Any]] = (),
             max_steps: int = 10, **options: Any) -> RunResult:  # fmt: skip
    """Blocking ``run``."""
    return Loop(model, tools, max_steps, **options).run_sync(prompt)
