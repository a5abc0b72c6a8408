"""Per-run state, the records a step passes between its four parts, and what a step returns.
The loop holds none of it: one loop serves any number of concurrent runs."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypeVar

from .decision import AnswerCheck, Controls
from .execute import ExecContext
from .messages import Message, TranscriptChecker
from .models.base import Model, ModelRequest, ModelResponse, ToolChoice
from .result import Status, Step
from .tools import Tool

__all__ = ["Continue", "Final", "Limit", "Outcome", "Prompt", "Reply", "RunState", "Stop"]

T = TypeVar("T")


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
    step was the answer asked for at that limit."""

    status: Status
    reason: str
    forced_by: str | None = None


@dataclass(frozen=True, slots=True)
class Limit:
    """A limit the next model call would pass: ``max_steps``, or one a layer sets (``name``)."""

    name: str
    status: Status
    reason: str


Outcome: TypeAlias = Final | Continue | Stop


@dataclass(frozen=True, slots=True)
class Prompt:
    """What the next model call sends, as ``receive`` made it; layers may change it. ``control``
    then ``notes`` follow ``messages`` (the transcript as sent) in one control message. At a
    ``limit`` the run stops, unless a layer asks there for the answer (``forced_by``)."""

    messages: list[Message]
    tools: Sequence[dict[str, Any]]
    tool_choice: ToolChoice
    control: str | None = None
    notes: tuple[str, ...] = ()
    control_role: str = "system"
    answer_check: AnswerCheck | None = None
    decayed: bool = False
    limit: Limit | None = None
    forced_by: str | None = None
    context: Any = None

    @property
    def control_text(self) -> str | None:
        """The control message's text, or ``None`` when none is sent."""
        texts = [t for t in (self.control, *self.notes) if t]
        return "\n\n".join(texts) if texts else None

    def request(self) -> ModelRequest:
        """The request the model receives."""
        text, sent = self.control_text, self.messages
        if text is not None:
            sent = [*sent, {"role": self.control_role, "content": text}]
        return ModelRequest(sent, self.tools, self.tool_choice, answer_check=self.answer_check)


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model call returned, and how long it took."""

    response: ModelResponse
    latency: float


@dataclass(slots=True)
class RunState:
    """One run as the steps and the layers see it: the transcript, the steps so far, the seed's
    decision counters and whatever the layers keep for this run (``scratch``)."""

    messages: list[Message]
    trace_id: str
    log: Any  # a logging.LoggerAdapter keyed by the trace id
    calls: ExecContext  # what executing this run's tool calls needs, made once per run
    model: Model  # the model this run calls (a layer may wrap it for one run)
    controls: Controls
    deadline: float | None = None  # time.monotonic() value when the run's time is up
    steps: list[Step] = field(default_factory=list)
    invalid_streak: int = 0
    tool_steps: int = 0
    note: str | None = None  # why the last reply was not accepted as an answer, sent with the next call
    prompt: Prompt | None = None  # what the step in progress sent (or is about to send)
    started: float = field(default_factory=time.perf_counter)
    check: TranscriptChecker = field(default_factory=TranscriptChecker)
    scratch: dict[Any, Any] = field(default_factory=dict)

    @property
    def index(self) -> int:
        """The number of the step in progress."""
        return len(self.steps) + 1

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The run's tools by name."""
        return self.calls.tools

    def local(self, owner: Any, make: Callable[[], T]) -> T:
        """What ``owner`` (a layer, or a class shared by layers) keeps for this run, made by
        ``make()`` on first use."""
        key = id(owner)
        if key not in self.scratch:
            self.scratch[key] = make()
        return self.scratch[key]  # type: ignore[no-any-return]
