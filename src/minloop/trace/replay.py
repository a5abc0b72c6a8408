"""Replaying a stored run against the current code, offline and deterministic.

The recorded model turns are played back in order by ``RecordedModel``; the recorded tool
results (error codes included) are injected instead of running the tools, unless live tools
are given. Everything in between is the current code: the decision, the controls, the
transcript, the requests sent to the model. The replay is traced like any run, and its steps
are compared with the recorded ones; the first difference is a ``Divergence``.

Compared per step: the messages sent to the model, the tools offered, ``tool_choice``, the
calls made and the results they got, the decision and whether the step was valid; then the
run's status, its final message and its number of steps. Trace ids and latencies are not
compared. Both sides are redacted the same way, so a run recorded with secrets scrubbed still
replays.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..decision import Controls
from ..exceptions import MinloopError, ModelError
from ..execute import ToolResult
from ..layers.tracing import RecordingSink
from ..messages import ToolCall
from ..models.base import ModelRequest, ModelResponse, Usage
from ..result import RunResult
from ..standard import Loop
from ..state import RunState
from ..tools import Tool, tool
from .sqlite import Trace, TraceStep

__all__ = [
    "Divergence",
    "RecordedModel",
    "RecordedResults",
    "ReplayReport",
    "first_divergence",
    "replay",
    "replay_sync",
]

PLACEHOLDER = "<trace_id>"


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where the replay first differs: ``step`` (0 for the run as a whole), ``what`` was
    compared, ``path`` inside it (``[3].content``) and the two values there."""

    step: int
    what: str
    path: str
    recorded: Any
    replayed: Any

    def describe(self) -> str:
        where = f"step {self.step}" if self.step else "the run's end"
        return f"{where}, {self.what}{(' at ' + self.path) if self.path else ''}"


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """What a replay produced and whether it reproduced the recording."""

    recorded: Trace
    replayed: Trace
    result: RunResult
    live_tools: bool
    divergence: Divergence | None

    @property
    def reproduced(self) -> bool:
        return self.divergence is None

    def to_dict(self) -> dict[str, Any]:
        run, end = self.recorded.run, self.recorded.end or {}
        return {
            "trace_id": self.recorded.trace_id,
            "replay_trace_id": self.result.trace_id,
            "live_tools": self.live_tools,
            "reproduced": self.reproduced,
            "recorded": {"status": run.status, "steps": run.steps, "final_message": end.get("final_message")},
            "replayed": {
                "status": self.result.status,
                "steps": len(self.result.steps),
                "final_message": self.result.final_message,
            },
            "divergence": None
            if self.divergence is None
            else {**asdict(self.divergence), "description": self.divergence.describe()},
        }


class RecordedModel:
    """Plays a trace's model turns back, one per call; a recorded model failure is raised again."""

    def __init__(self, steps: Sequence[TraceStep], name: str = "recorded") -> None:
        self.name = name
        self.steps = tuple(steps)
        self.calls = 0

    async def call(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls > len(self.steps):
            raise ModelError(f"replay: the recording has no model turn for step {self.calls}")
        step = self.steps[self.calls - 1]
        if step.model_error is not None:
            raise ModelError(f"replay of a recorded failure: {step.model_error}")
        if step.response is None:
            raise ModelError(f"replay: step {step.index} ended before the model answered")
        usage = {k: v for k, v in (step.usage or {}).items() if k in Usage.__dataclass_fields__}
        return ModelResponse(json.loads(json.dumps(step.response)), Usage(**usage))


@dataclass(frozen=True)
class RecordedResults:
    """The loop's executor during a replay: each call gets the result recorded for it, keyed by
    (step, call id), with the recorded trace id swapped for the replay's."""

    recorded: Mapping[tuple[int, str], ToolResult]
    recorded_trace_id: str

    async def __call__(self, calls: Sequence[ToolCall], state: RunState) -> list[ToolResult]:
        return [self._result(state, c) for c in calls]

    def _result(self, state: RunState, call: ToolCall) -> ToolResult:
        found = self.recorded.get((state.index, call.id))
        if found is None or found.name != call.name:
            body = {
                "error": "replay: the recording has no result for this call",
                "code": "ERR_TOOL_FAILED",
                "tool": call.name,
                "trace_id": state.trace_id,
            }
            return ToolResult(call.id, call.name, json.dumps(body), "ERR_TOOL_FAILED")
        content = found.content.replace(self.recorded_trace_id, state.trace_id)
        return ToolResult(found.call_id, found.name, content, found.error, found.latency, found.rerouted_to)


async def replay(
    trace: Trace,
    *,
    tools: Sequence[Tool | Callable[..., Any]] | None = None,
    controls: Controls | None = None,
) -> ReplayReport:
    """Rerun ``trace`` on the current code. ``tools=None`` injects the recorded tool results;
    a list of tools runs them for real (``--live-tools``) and compares what they return."""
    start = trace.start
    if "messages" not in start or not trace.steps:
        raise MinloopError(f"trace {trace.trace_id} has no run_start or no step to replay")
    capture = RecordingSink()
    options: dict[str, Any] = {
        "max_steps": int(start.get("max_steps") or len(trace.steps)),
        "tool_choice": _first_choice(trace.steps[0].tool_choice),
        "controls": controls or Controls(),
        "sinks": [capture],
    }
    model = RecordedModel(trace.steps, str(start.get("model") or "recorded"))
    if tools is None:
        stubs = [_stub(name) for name in start.get("tools", [])]
        recorded = RecordedResults(_recorded_results(trace), trace.trace_id)
        loop = Loop(model, stubs, executor=recorded, **options)
    else:
        loop = Loop(model, tools, **options)
    result = await loop.run(list(start["messages"]))
    replayed = Trace.from_events(capture.events)
    return ReplayReport(trace, replayed, result, tools is not None, first_divergence(trace, replayed))


def replay_sync(trace: Trace, **options: Any) -> ReplayReport:
    """Blocking ``replay``."""
    return asyncio.run(replay(trace, **options))


def first_divergence(recorded: Trace, replayed: Trace) -> Divergence | None:
    """The first place where ``replayed`` differs from ``recorded``, or None."""
    ids = (recorded.trace_id, replayed.trace_id)
    for index in range(1, max(len(recorded.steps), len(replayed.steps)) + 1):
        expected = recorded.steps[index - 1] if index <= len(recorded.steps) else None
        actual = replayed.steps[index - 1] if index <= len(replayed.steps) else None
        if expected is None or actual is None:
            what = "an extra step" if expected is None else "a missing step"
            return Divergence(index, what, "", _outline(expected), _outline(actual))
        for what, view in STEP_VIEWS:
            found = _difference(view(expected, ids[0]), view(actual, ids[1]), what, index)
            if found:
                return found
    end = _end_view(recorded.end, ids[0]), _end_view(replayed.end, ids[1])
    return _difference(end[0], end[1], "the run's end", 0)


def _difference(recorded: Any, replayed: Any, what: str, step: int) -> Divergence | None:
    path = _first_path(recorded, replayed)
    if path is None:
        return None
    return Divergence(step, what, path[0], path[1], path[2])


def _first_path(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first differing leaf of two JSON-like values, as (path, a, b)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in a or key not in b:
                return f"{path}.{key}", a.get(key), b.get(key)
            found = _first_path(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        for i in range(max(len(a), len(b))):
            if i >= len(a) or i >= len(b):
                return f"{path}[{i}]", a[i] if i < len(a) else None, b[i] if i < len(b) else None
            found = _first_path(a[i], b[i], f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else (path, a, b)


def _masked(value: Any, trace_id: str) -> Any:
    return json.loads(json.dumps(value, default=str).replace(trace_id, PLACEHOLDER))


def _calls(step: TraceStep, trace_id: str) -> list[dict[str, str]]:
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in step.calls]


def _results(step: TraceStep, trace_id: str) -> Any:
    return _masked([{"content": _json(c.content), "error": c.error} for c in step.calls], trace_id)


STEP_VIEWS: tuple[tuple[str, Callable[[TraceStep, str], Any]], ...] = (
    ("the messages sent to the model", lambda s, t: _masked(list(s.request), t)),
    ("the tools offered", lambda s, t: sorted(s.offered)),
    ("tool_choice", lambda s, t: s.tool_choice),
    ("the model's failure", lambda s, t: s.model_error is not None),
    ("the tool calls", _calls),
    ("the tool results", _results),
    ("the decision", lambda s, t: {"decision": s.decision, "valid": s.valid}),
)


def _end_view(end: Mapping[str, Any] | None, trace_id: str) -> dict[str, Any]:
    end = end or {}
    return _masked(
        {"status": end.get("status"), "final_message": end.get("final_message"), "steps": end.get("steps")},
        trace_id,
    )


def _json(content: str | None) -> Any:
    try:
        return json.loads(content) if content is not None else None
    except ValueError:
        return content


def _outline(step: TraceStep | None) -> dict[str, Any] | None:
    if step is None:
        return None
    return {"decision": step.decision, "calls": [c.name for c in step.calls], "model_error": step.model_error}


def _first_choice(choice: Any) -> Any:
    """The Loop's ``tool_choice`` that reproduces step 1's recorded choice."""
    if isinstance(choice, dict):
        return (choice.get("function") or {}).get("name") or "auto"
    return choice if choice in ("auto", "none", "required") else "auto"


def _recorded_results(trace: Trace) -> dict[tuple[int, str], ToolResult]:
    return {
        (step.index, c.id): ToolResult(c.id, c.name, c.content, c.error, c.latency or 0.0, c.rerouted_to)  # type: ignore[arg-type]
        for step in trace.steps
        for c in step.calls
        if c.content is not None
    }


def _stub(name: str) -> Tool:
    """A tool with the recorded name that is never run (its results come from the recording)."""

    def recorded() -> None:
        raise MinloopError(f"replay: {name} is replayed from the recording, not run")

    return tool(name=name, description="replayed from the recording")(recorded)
