"""Trace events and the sink protocol.

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
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

__all__ = ["Event", "EventKind", "RecordingSink", "TraceSink", "Tracer"]

EventKind: TypeAlias = Literal[
    "run_start",
    "step_start",
    "model_request",
    "model_response",
    "tool_call",
    "tool_result",
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


class RecordingSink:
    """Keeps every event it receives: ``Loop(..., sinks=[sink])`` then inspect ``sink.events``."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[tuple[EventKind, int]]:
        return [(e.kind, e.step) for e in self.events]
