"""A trace sink that keeps events in memory, for tests."""

from __future__ import annotations

from ..trace.events import Event, EventKind

__all__ = ["RecordingSink"]


class RecordingSink:
    """Keeps every event it receives: ``Loop(..., sinks=[sink])`` then inspect ``sink.events``."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[tuple[EventKind, int]]:
        return [(e.kind, e.step) for e in self.events]
