"""Trace events, the sink protocol, and the layer that reports a run to its sinks.

``Loop(..., sinks=[...])`` installs ``Tracing``: it reports what happens through a ``Tracer``
made per run from the sinks the caller passed in (nothing global). Events, in order::

    run_start (or run_resumed, for a run that goes on from its store)
      step_start, model_request, model_response, [tool_call..., tool_result...], step_end
      ...
    run_end

and, from the layers that make them: ``tool_attempt`` (each failed try of a call that is
retried, and the last try), ``tool_cache_hit`` (a call answered from the result cache).
Another layer reports an event to the run's trace with ``report(run, kind, **data)``.

``data`` holds JSON-ready values: full messages, not truncated (views truncate for display).
A sink is anything with ``emit(event)``; it is called synchronously, so it should be quick
(the SQLite store writes one row per event in WAL mode).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic_core import to_jsonable_python

from ..decision import CallTools, Decision
from ..exceptions import ModelError
from ..layer import CallModel, Layer
from ..models.base import ModelRequest
from ..result import RunResult, Step, pending_dict
from ..state import Outcome, Reply, RunState

__all__ = ["Event", "EventKind", "RecordingSink", "TraceSink", "Tracer", "Tracing", "mark_resumed", "report"]

_RESUMED = object()  # the key, in a run's scratch, of how it was resumed
_TRACERS = object()  # the key, in a run's scratch, of the run's tracers


def mark_resumed(run: RunState, how: dict[str, Any]) -> None:
    """Say that ``run`` goes on from a store: its trace gets ``run_resumed`` (with ``how``: the
    step it goes on from and the decisions made) instead of ``run_start``."""
    run.scratch[id(_RESUMED)] = how


EventKind: TypeAlias = Literal[
    "run_start",
    "run_resumed",
    "step_start",
    "model_request",
    "model_response",
    "tool_call",
    "tool_result",
    "tool_attempt",
    "tool_cache_hit",
    "step_end",
    "run_end",
]


@dataclass(frozen=True, slots=True)
class Event:
    kind: EventKind
    trace_id: str
    step: int
    time: float
    data: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class TraceSink(Protocol):
    def emit(self, event: Event) -> None: ...


class Tracer:
    """Fans events out to the run's sinks; costs one attribute check when there are none.

    Messages are redacted once each: a transcript only grows, so the redacted copy of a message
    object already seen is reused (the memo keeps the object alive, so its id stays its own).
    """

    __slots__ = ("_seen", "redact", "sinks", "trace_id")

    def __init__(self, trace_id: str, sinks: Sequence[TraceSink] = (), redact: Any = None) -> None:
        self.trace_id = trace_id
        self.sinks = tuple(sinks)
        self.redact = redact
        self._seen: dict[int, tuple[Any, Any]] = {}

    def emit(self, kind: EventKind, step: int, **data: Any) -> None:
        if not self.sinks:
            return
        data = {k: asdict(v) if is_dataclass(v) and not isinstance(v, type) else v for k, v in data.items()}
        if self.redact is not None:
            messages = data.pop("messages", None)
            data = self.redact(data)
            if messages is not None:
                data["messages"] = [self._redacted(m) for m in messages]
        event = Event(kind, self.trace_id, step, time.time(), data)
        for sink in self.sinks:
            sink.emit(event)

    def _redacted(self, message: Any) -> Any:
        hit = self._seen.get(id(message))
        if hit is None or hit[0] is not message:
            hit = (message, self.redact(message))
            self._seen[id(message)] = hit
        return hit[1]


def report(run: RunState, kind: EventKind, **data: Any) -> None:
    """Report an event of ``run``'s step in progress to its trace sinks (nothing without any)."""
    for tracer in run.scratch.get(id(_TRACERS), ()):
        tracer.emit(kind, run.index, **data)


class RecordingSink:
    """Keeps every event it receives: ``Loop(..., sinks=[sink])`` then inspect ``sink.events``."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[tuple[EventKind, int]]:
        return [(e.kind, e.step) for e in self.events]


class Tracing(Layer):
    """Reports each run to ``sinks``, after ``redact``; ``max_steps`` is the loop's, for ``run_start``."""

    def __init__(
        self,
        sinks: Sequence[TraceSink],
        redact: Callable[[Any], Any] | None = None,
        max_steps: int | None = None,
    ) -> None:
        self.sinks = tuple(sinks)
        self.redact = redact
        self.max_steps = max_steps

    def tracer(self, run: RunState) -> Tracer:
        """The run's tracer."""
        return run.local(self, lambda: self._made(run))

    def _made(self, run: RunState) -> Tracer:
        tracer = Tracer(run.trace_id, self.sinks, self.redact)
        run.scratch.setdefault(id(_TRACERS), []).append(tracer)
        return tracer

    def reserve(self, run: RunState) -> bool:
        """Refuse a new run's id that a sink already has a run under (a sink with ``holds``)."""
        return not any(holds(run.trace_id) for s in self.sinks if (holds := getattr(s, "holds", None)))

    def start(self, run: RunState) -> None:
        resumed = run.scratch.get(id(_RESUMED))
        if resumed is not None:
            self.tracer(run).emit("run_resumed", run.index, **resumed)
            return
        model = getattr(run.model, "name", type(run.model).__name__)
        tools = sorted(run.tools)
        sources = {t.source: None for t in run.tools.values() if t.source is not None}
        servers = {"servers": [s.about() for s in sources]} if sources else {}
        self.tracer(run).emit("run_start", 0, model=model, tools=tools, max_steps=self.max_steps,
                              messages=list(run.messages), **servers)  # fmt: skip

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        tracer, prompt, step = self.tracer(run), run.prompt, run.index
        choice = request.tool_choice
        tracer.emit("step_start", step, tool_choice=choice, decayed=bool(prompt and prompt.decayed))
        tracer.emit("model_request", step, messages=request.messages, tools=list(run.tools), tool_choice=choice,
                    context=prompt.context if prompt else None)  # fmt: skip
        try:
            reply = await call(request)
        except ModelError as exc:
            tracer.emit("model_response", step, error=f"{type(exc).__name__}: {exc}")
            raise
        response = reply.response
        tracer.emit(
            "model_response", step, message=response.message, usage=response.usage, latency=reply.latency
        )
        return reply

    async def after_model(self, run: RunState, reply: Reply, decision: Decision) -> Decision:
        if not isinstance(decision, CallTools):
            return decision
        tracer = self.tracer(run)
        for c in decision.calls:
            known = run.tools.get(c.name)
            where = {"server": known.server} if known is not None and known.server else {}
            tracer.emit("tool_call", run.index, id=c.id, name=c.name, arguments=c.arguments,
                        known=known is not None, timeout=known.timeout if known else None, **where)  # fmt: skip
        return decision

    async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
        tracer = self.tracer(run)
        for r in step.results:
            tracer.emit("tool_result", step.index, **asdict(r))
        tracer.emit("step_end", step.index, decision=step.decision, valid=step.valid, usage=step.usage,
                    model_latency=step.model_latency, tool_latency=step.tool_latency)  # fmt: skip
        return outcome

    def end(self, run: RunState, result: RunResult) -> RunResult:
        usage = result.usage
        self.tracer(run).emit(
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
            pending=[pending_dict(p) for p in result.pending],
        )
        return result
