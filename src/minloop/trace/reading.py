"""A run's steps read back from its events: ``TraceStep`` (one round) and ``TraceCall`` (one
tool call with its result), folded from the events of one step by ``fold_step``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..layers.tracing import Event
from ..messages import Message

__all__ = ["TraceCall", "TraceStep", "fold_step", "step_dict"]


@dataclass(frozen=True, slots=True)
class TraceCall:
    """One tool call of a step and what it really returned (``content`` is None if it never did)."""

    id: str
    name: str
    arguments: str
    content: str | None = None
    error: str | None = None
    latency: float | None = None
    rerouted_to: str | None = None
    server: str | None = None


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One round as recorded. ``complete`` is True once its ``step_end`` was written."""

    index: int
    started: float
    tool_choice: Any = "auto"
    decayed: bool = False
    offered: tuple[str, ...] = ()
    request: tuple[Message, ...] = ()
    response: Message | None = None
    model_error: str | None = None
    model_latency: float | None = None
    usage: Mapping[str, Any] | None = None
    calls: tuple[TraceCall, ...] = ()
    tools_started: float | None = None
    tool_latency: float | None = None
    decision: str | None = None
    valid: bool | None = None
    complete: bool = False

    @property
    def errors(self) -> list[str]:
        return [c.error for c in self.calls if c.error]


def fold_step(index: int, events: Sequence[Event]) -> TraceStep:
    """One step's events (step_start ... step_end) folded into a ``TraceStep``."""
    first: dict[str, Event] = {}
    calls: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    for e in events:
        if e.kind == "tool_call":
            calls.append(e.data)
            first.setdefault("tool_call", e)
        elif e.kind == "tool_result":
            results[str(e.data.get("call_id"))] = e.data
        else:
            first.setdefault(e.kind, e)
    data = {kind: e.data for kind, e in first.items()}
    request, response = data.get("model_request", {}), data.get("model_response", {})
    end = data.get("step_end")
    return TraceStep(
        index=index,
        started=events[0].time,
        tool_choice=data.get("step_start", {}).get("tool_choice", request.get("tool_choice", "auto")),
        decayed=bool(data.get("step_start", {}).get("decayed")),
        offered=tuple(request.get("tools") or ()),
        request=tuple(request.get("messages") or ()),
        response=response.get("message"),
        model_error=response.get("error"),
        model_latency=response.get("latency"),
        usage=response.get("usage"),
        calls=tuple(_call(c, results.get(str(c.get("id")))) for c in calls),
        tools_started=first["tool_call"].time if "tool_call" in first else None,
        tool_latency=(end or {}).get("tool_latency"),
        decision=(end or {}).get("decision"),
        valid=(end or {}).get("valid"),
        complete=end is not None,
    )


def _call(call: Mapping[str, Any], result: Mapping[str, Any] | None) -> TraceCall:
    result = result or {}
    return TraceCall(
        id=str(call.get("id")),
        name=str(call.get("name")),
        arguments=str(call.get("arguments")),
        content=result.get("content"),
        error=result.get("error"),
        latency=result.get("latency"),
        rerouted_to=result.get("rerouted_to"),
        server=call.get("server"),
    )


def step_dict(step: TraceStep) -> dict[str, Any]:
    out = {f.name: getattr(step, f.name) for f in fields(step) if f.name != "calls"}
    out["calls"] = [{f.name: getattr(c, f.name) for f in fields(c)} for c in step.calls]
    return out
