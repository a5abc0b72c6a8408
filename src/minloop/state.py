"""Per-run state, the records a step passes between its four parts, and what a step returns.

The ``Loop`` holds none of this: a ``RunState`` is made per run, so one loop serves any number
of concurrent runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from .context import ContextReport
from .events import Tracer
from .execute import ExecContext
from .messages import Message, TranscriptChecker
from .models.base import ModelRequest, ModelResponse
from .result import Status, Step

if TYPE_CHECKING:
    from .streaming import Listener

__all__ = ["Continue", "Final", "Limit", "Outcome", "Prompt", "Reply", "RunState", "Stop"]


@dataclass(frozen=True, slots=True)
class Final:
    """The model answered: the run succeeds with this message."""

    message: Message


@dataclass(frozen=True, slots=True)
class Continue:
    """Tools were called, or the reply was not an answer: take another step."""


@dataclass(frozen=True, slots=True)
class Stop:
    """The run ends with ``status``, for ``reason``. ``forced_by`` names the limit when the last
    step was the answer asked for at that limit (``Loop(answer_at_limit=True)``)."""

    status: Status
    reason: str
    forced_by: str | None = None


@dataclass(frozen=True, slots=True)
class Limit:
    """A limit the next model call would pass: ``max_steps`` or a budget (``name``)."""

    name: str
    status: Status
    reason: str

    def stop(self, forced: bool = False) -> Stop:
        return Stop(self.status, self.reason, self.name if forced else None)


Outcome: TypeAlias = Final | Continue | Stop


@dataclass(frozen=True, slots=True)
class Prompt:
    """What ``receive`` prepared: the request, the control message sent with it, the context report."""

    request: ModelRequest
    control: str | None = None
    context: ContextReport | None = None
    decayed: bool = False


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model call returned, and how long it took."""

    response: ModelResponse
    latency: float


@dataclass(slots=True)
class RunState:
    messages: list[Message]
    trace_id: str
    log: Any  # a logging.LoggerAdapter keyed by the trace id
    tracer: Tracer
    calls: ExecContext  # what executing this run's tool calls needs, made once per run
    deadline: float | None = None  # time.monotonic() value, from the run's time budget
    steps: list[Step] = field(default_factory=list)
    invalid_streak: int = 0
    tool_steps: int = 0
    note: str | None = None  # why the last reply was not accepted as an answer, sent with the next call
    token_ratio: float = 1.0  # provider tokens / our estimate, from the last call's usage
    started: float = field(default_factory=time.perf_counter)
    check: TranscriptChecker = field(default_factory=TranscriptChecker)
    listener: Listener | None = None  # someone watching the run as a stream (``Loop.stream``)

    @property
    def index(self) -> int:
        """The number of the step in progress."""
        return len(self.steps) + 1

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()
