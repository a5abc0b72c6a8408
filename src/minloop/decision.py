"""The decision step (S8, S9, S10, S18): what did the model ask for, and what do we tell it next.

* ``decide`` turns an assistant message into ``Answer | CallTools | Blank | Unfinished``. ``tool_calls`` of
  ``None`` and ``[]`` both mean "no call" (S8); a non-empty list is a call even when the model
  also sent text (S2).
* A round is *invalid* when the reply is blank (no text, no calls) or when every call in it
  failed for a reason the model caused: an unknown tool name (``ERR_TOOL_UNKNOWN``) or
  arguments that are not valid JSON or do not match the schema (``ERR_TOOL_ARGS_INVALID``).
  Tool-side failures (timeout, exception, schema mismatch of the output) do not count.
* Repetition guard: the same tool with the same arguments runs at most ``repeat_limit`` times
  (default 2: a retry is allowed) in a run. A further identical call is not executed; the
  model reads ``ERR_TOOL_REPEATED`` and the next call is sent with tools off, as after decay,
  so the loop ends with an answer instead of burning ``max_steps``.
* Conclusion check (S23, optional): text without calls is not always a final answer ("Let me
  check..."). With ``Controls(answer_check=...)``, a reply the check rejects is kept in the
  transcript as ``Unfinished``, counts as an invalid round, and the next call says so.
* Decision decay (S10): after ``decay_after`` consecutive invalid rounds, the next model call
  gets ``tool_choice="none"`` and an instruction to answer directly, so the loop converges.
* Control message (S18): after tool results are injected, the next call carries a message
  naming the three exits (answer / call tools / ask to clarify). It is sent, not stored: the
  transcript in ``RunResult.messages`` stays the conversation itself, and ``Step.control``
  records what was sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from .execute import MAX_RESULT_CHARS, ToolResult
from .messages import Message, ResultRole, ToolCall, tool_calls_of
from .tools import Tool

__all__ = ["Answer", "Blank", "CallTools", "Controls", "Decision", "Unfinished", "decide", "is_valid_round"]

CONTROL_TEXT = (
    "Use the tool results above. If they answer the question, give the user the final answer; "
    "if more information is needed, call another tool; if the request is unclear, ask the user "
    "to clarify."
)
DECAY_TEXT = "Answer the user directly now, without calling any tools."
UNFINISHED_TEXT = (
    "Your last reply did not answer the request. Give the final answer now, or call a tool if "
    "information is missing."
)
MODEL_FAULTS = frozenset({"ERR_TOOL_UNKNOWN", "ERR_TOOL_ARGS_INVALID", "ERR_TOOL_REPEATED"})


@dataclass(frozen=True, slots=True)
class Controls:
    """The loop's decision controls. Every default follows the seed."""

    decay_after: int = 2
    control_message: bool = True
    control_role: Literal["system", "developer", "user"] = "system"
    control_text: str = CONTROL_TEXT
    decay_text: str = DECAY_TEXT
    result_role: ResultRole = "tool"
    fallback: Tool = field(default_factory=lambda: _default_fallback())
    repeat_limit: int = 2
    max_result_chars: int = MAX_RESULT_CHARS
    answer_check: Callable[[str], bool] | None = None
    unfinished_text: str = UNFINISHED_TEXT


def _default_fallback() -> Tool:
    """``ask_for_clarification``, imported on first use so ``import minloop`` builds no tool."""
    from .builtins.clarify import ask_for_clarification

    return ask_for_clarification


@dataclass(frozen=True, slots=True)
class Answer:
    message: Message


@dataclass(frozen=True, slots=True)
class CallTools:
    message: Message
    calls: tuple[ToolCall, ...]


@dataclass(frozen=True, slots=True)
class Blank:
    message: Message


@dataclass(frozen=True, slots=True)
class Unfinished:
    """Text the conclusion check (S23) did not accept as a final answer."""

    message: Message


Decision: TypeAlias = Answer | CallTools | Blank | Unfinished


def decide(message: Message, step: int = 1, answer_check: Callable[[str], bool] | None = None) -> Decision:
    """Classify the model's reply; calls get unique ids if the model left them out."""
    raw_calls = tool_calls_of(message)
    if raw_calls:
        calls = _with_ids([ToolCall.from_wire(c) for c in raw_calls if isinstance(c, dict)], step)
        if calls:
            return CallTools(_clean_assistant(message, calls), calls)
    content = message.get("content")
    if isinstance(content, str) and content.strip():
        answer = {"role": "assistant", "content": content}
        return Answer(answer) if answer_check is None or answer_check(content) else Unfinished(answer)
    return Blank(message)


def is_valid_round(decision: Decision, results: Sequence[ToolResult]) -> bool:
    match decision:
        case Answer():
            return True
        case Blank() | Unfinished():
            return False
        case CallTools():
            return any(r.error not in MODEL_FAULTS for r in results)


def control_message(controls: Controls, *, decayed: bool, after_tools: bool, unfinished: bool = False) -> Message | None:
    if decayed:
        return {"role": controls.control_role, "content": controls.decay_text}
    if unfinished:
        return {"role": controls.control_role, "content": controls.unfinished_text}
    if after_tools and controls.control_message:
        return {"role": controls.control_role, "content": controls.control_text}
    return None


def _with_ids(calls: list[ToolCall], step: int) -> tuple[ToolCall, ...]:
    seen: set[str] = set()
    out = []
    for j, c in enumerate(calls, 1):
        if not c.id or c.id in seen:
            c = ToolCall(f"call_s{step}_{j}", c.name, c.arguments)
        seen.add(c.id)
        out.append(c)
    return tuple(out)


def _clean_assistant(message: Message, calls: tuple[ToolCall, ...]) -> Message:
    """The assistant message as stored: wire-format calls with string arguments and ids."""
    content = message.get("content")
    return {
        "role": "assistant",
        "content": content if isinstance(content, str) and content else None,
        "tool_calls": [c.to_wire() for c in calls],
    }
