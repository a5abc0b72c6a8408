"""What a run produces: per-step records and the final ``RunResult``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any, Literal, TypeAlias

from pydantic_core import to_jsonable_python

from .decision import DecisionKind
from .execute import ToolResult
from .messages import Message, ToolCall
from .models.base import ToolChoice, Usage

__all__ = ["RunResult", "Status", "Step", "pending_dict", "step_dict", "step_of"]

Status: TypeAlias = Literal[
    "success",
    "max_steps_exceeded",
    "budget_exceeded",
    "output_invalid",
    "model_error",
    "timeout",
    "cancelled",
    "context_overflow",
    "paused",
]
"""``success``: the model answered. ``max_steps_exceeded``: the step budget ran out before an
answer. ``model_error``: the model call itself failed after retries (``RunResult.error`` holds
the cause). ``timeout``: the run's ``time_budget`` ran out. ``cancelled``: the task driving the
run was cancelled. ``context_overflow``: the messages cannot fit the model's window, even after
the context policy did what it could. ``budget_exceeded``: a usage budget (tokens, model calls,
tool calls, cost) would be exceeded by the next call (``RunResult.error`` names it).
``output_invalid``: with a typed ``output``, the answer still did not validate on a call made
with tools off after decision decay, or an answer check ended the run with a statement in its
place (the embedded model's "the tools I have did not provide the information"): ``success``
always comes with a validated ``output_value``. ``paused``: a call needs a person's decision
(approval, or a call that may or may not have run before a crash); ``RunResult.pending`` lists
them, and the run goes on when resumed from its store."""


@dataclass(frozen=True, slots=True)
class Step:
    """One step: the model's decision and, if it called tools, their results."""

    index: int
    decision: DecisionKind
    message: Message
    tool_calls: tuple[ToolCall, ...] = ()
    results: tuple[ToolResult, ...] = ()
    model_latency: float = 0.0
    tool_latency: float = 0.0
    usage: Usage = field(default_factory=Usage)
    tool_choice: ToolChoice = "auto"
    control: str | None = None
    valid: bool = True
    context: Any = None  # what a layer that fits the context reported (a ContextReport)

    @property
    def errors(self) -> list[str]:
        return [r.error for r in self.results if r.error]


@dataclass(frozen=True, slots=True)
class RunResult:
    status: Status
    final_message: Message | None
    messages: list[Message]
    steps: tuple[Step, ...]
    trace_id: str
    duration: float
    error: str | None = None
    output_value: Any = None
    forced_by: str | None = None
    cost: float | None = None
    pending: tuple[Any, ...] = ()  # with status "paused": the calls waiting for a decision

    @property
    def ok(self) -> bool:
        return self.status == "success"

    @property
    def model_calls(self) -> int:
        """Model calls made: one per step."""
        return len(self.steps)

    @property
    def tool_calls(self) -> int:
        """Tool calls run or tried (calls refused by the tool-call budget are not counted)."""
        return sum(r.error != "ERR_TOOL_BUDGET" for s in self.steps for r in s.results)

    @property
    def output(self) -> str | None:
        """The final answer's text, or ``None``."""
        content = (self.final_message or {}).get("content")
        return content if isinstance(content, str) else None

    @property
    def usage(self) -> Usage:
        total = Usage()
        for step in self.steps:
            total = total + step.usage
        return total

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready document of the whole run."""
        usage = self.usage
        return {
            "status": self.status,
            "trace_id": self.trace_id,
            "final_message": self.final_message,
            "error": self.error,
            "output_value": to_jsonable_python(self.output_value, fallback=str),
            "forced_by": self.forced_by,
            "duration": round(self.duration, 4),
            "usage": {**asdict(usage), "total_tokens": usage.total_tokens},
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "cost": self.cost,
            "pending": [pending_dict(p) for p in self.pending],
            "steps": [step_dict(s) for s in self.steps],
            "messages": self.messages,
        }


def step_dict(step: Step) -> dict[str, Any]:
    return {
        "index": step.index,
        "decision": step.decision,
        "valid": step.valid,
        "tool_choice": step.tool_choice,
        "control": step.control,
        "context": _plain(step.context),
        "model_latency": round(step.model_latency, 4),
        "tool_latency": round(step.tool_latency, 4),
        "usage": asdict(step.usage),
        "tool_calls": [asdict(c) for c in step.tool_calls],
        "results": [asdict(r) for r in step.results],
        "message": step.message,
    }


def _plain(value: Any) -> Any:
    return asdict(value) if is_dataclass(value) and not isinstance(value, type) else value


def step_of(data: dict[str, Any]) -> Step:
    """A ``Step`` from its ``to_dict`` form (how a stored run keeps its steps)."""
    return Step(
        index=data["index"],
        decision=data["decision"],
        message=data["message"],
        tool_calls=tuple(ToolCall(**c) for c in data["tool_calls"]),
        results=tuple(ToolResult(**r) for r in data["results"]),
        model_latency=data["model_latency"],
        tool_latency=data["tool_latency"],
        usage=Usage(**data["usage"]),
        tool_choice=data["tool_choice"],
        control=data["control"],
        valid=data["valid"],
        context=data["context"],
    )


def pending_dict(pending: Any) -> Any:
    """A pending call as JSON: its own ``to_dict()`` when it has one (a server's question shows a
    page's host, never its whole address)."""
    own = getattr(pending, "to_dict", None)
    return own() if callable(own) else to_jsonable_python(pending, fallback=str)
