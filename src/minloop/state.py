"""Per-run state and the tagged union a round returns. The ``Loop`` itself holds none of it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .messages import Message, TranscriptChecker
from .result import Status, Step
from .trace.events import Tracer

__all__ = ["Continue", "Final", "NextStep", "RunState", "Stop"]


@dataclass(frozen=True, slots=True)
class Final:
    """The model answered: the run succeeds with this message."""

    message: Message


@dataclass(frozen=True, slots=True)
class Continue:
    """Tools were called (or the reply was blank): go round again."""


@dataclass(frozen=True, slots=True)
class Stop:
    """The run ends without an answer, for ``reason``."""

    status: Status
    reason: str


NextStep = Final | Continue | Stop


@dataclass(slots=True)
class RunState:
    messages: list[Message]
    trace_id: str
    log: Any
    tracer: Tracer
    deadline: float | None = None  # time.monotonic() value, from the run's time budget
    steps: list[Step] = field(default_factory=list)
    invalid_streak: int = 0
    tool_rounds: int = 0
    calls_seen: dict[tuple[str, str], int] = field(default_factory=dict)
    token_ratio: float = 1.0  # provider tokens / our estimate, from the last call's usage
    started: float = field(default_factory=time.perf_counter)
    check: TranscriptChecker = field(default_factory=TranscriptChecker)

    @property
    def index(self) -> int:
        """The number of the round in progress."""
        return len(self.steps) + 1

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()
