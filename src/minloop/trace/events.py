"""Trace events and the sink protocol (S13, S19).

The loop reports what happens through a ``Tracer`` made per run from the sinks the caller
passed in (nothing global). Events, in order::

    run_start
      step_start, model_request, model_response, [tool_call..., tool_result...], step_end
      ...
    run_end

``data`` holds JSON-ready values: full messages, not truncated (views truncate for display).
A sink is anything with ``emit(event)``; it is called synchronously, so it should be quick
(the SQLite store writes one row per event in WAL mode).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

__all__ = ["Event", "EventKind", "TraceSink", "Tracer"]

EventKind: TypeAlias = Literal[
    "run_start", "step_start", "model_request", "model_response", "tool_call", "tool_result", "step_end", "run_end"
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
    """Fans events out to the run's sinks; costs one attribute check when there are none."""

    __slots__ = ("trace_id", "sinks", "redact")

    def __init__(self, trace_id: str, sinks: Sequence[TraceSink] = (), redact: Any = None) -> None:
        self.trace_id = trace_id
        self.sinks = tuple(sinks)
        self.redact = redact

    def emit(self, kind: EventKind, step: int, **data: Any) -> None:
        if not self.sinks:
            return
        if self.redact is not None:
            data = self.redact(data)
        event = Event(kind, self.trace_id, step, time.time(), data)
        for sink in self.sinks:
            sink.emit(event)
