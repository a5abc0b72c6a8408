"""Messages in the Chat Completions wire format, and the transcript rules (S4, S5, S16, S17, S21).

A message is a plain ``dict`` exactly as the Chat Completions API sends and receives it, so a
transcript can be stored, logged and replayed without conversion. ``check_transcript`` is run
before every model call; a caller's malformed list raises ``TranscriptError`` naming the index
and the rule.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .exceptions import TranscriptError

__all__ = [
    "Message",
    "ResultRole",
    "ToolCall",
    "check_transcript",
    "normalize_input",
    "tool_calls_of",
]

Message: TypeAlias = dict[str, Any]
ResultRole: TypeAlias = Literal["tool", "function"]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
RESULT_ROLES = frozenset({"tool", "function"})


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call requested by the model: an instruction, never a result (S5)."""

    id: str
    name: str
    arguments: str

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> ToolCall:
        fn = raw.get("function") or {}
        args = fn.get("arguments")
        if args is None:
            args = "{}"
        elif not isinstance(args, str):  # some servers send an object, not a string
            args = json.dumps(args, ensure_ascii=False)
        return cls(id=str(raw.get("id") or ""), name=str(fn.get("name") or ""), arguments=args)

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


def tool_calls_of(message: Message) -> list[dict[str, Any]]:
    """The non-empty list of tool calls of an assistant message, else ``[]`` (S8).

    ``None`` (OpenAI) and ``[]`` (Llama-style servers) both mean "no call".
    """
    calls = message.get("tool_calls")
    return calls if isinstance(calls, list) and len(calls) > 0 else []


def normalize_input(prompt: str | Sequence[Message]) -> list[Message]:
    """A prompt string becomes ``[{"role": "user", ...}]``; a list is copied shallowly."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    if not isinstance(prompt, Sequence):
        raise TranscriptError(None, "not_a_list", f"expected a str or a list, got {type(prompt).__name__}")
    return [dict(m) if isinstance(m, dict) else m for m in prompt]  # type: ignore[misc]


def check_transcript(messages: Sequence[Any]) -> None:
    """Raise ``TranscriptError`` unless ``messages`` is a valid transcript to send.

    Rules: every item is an object with a known role; at least one user message (S4); assistant
    tool calls are well formed with unique ids; every tool result directly follows the assistant
    message that asked for it, answers one of its pending ``tool_call_id`` s exactly once (S16,
    S21), carries the tool name for the legacy ``function`` role (S5), and has a string content
    holding JSON (S17); no call is left unanswered before the next non-result message.
    """
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        raise TranscriptError(None, "not_a_list", "messages must be a list of message objects")
    pending: dict[str, str] = {}  # tool_call_id -> tool name, for the latest assistant message
    issued: frozenset[str] = frozenset()
    open_index = -1
    has_user = False
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise TranscriptError(i, "not_an_object", f"expected a dict, got {type(msg).__name__}")
        role = msg.get("role")
        if role not in ROLES:
            raise TranscriptError(i, "invalid_role", f"role {role!r} is not one of {sorted(ROLES)}")
        if role in RESULT_ROLES:
            _check_result(i, msg, pending, issued, open_index)
            continue
        if pending:
            raise TranscriptError(
                open_index, "unanswered_tool_call",
                f"tool call(s) {sorted(pending)} have no result before message {i}",
            )
        has_user = has_user or role == "user"
        issued = frozenset()
        if role == "assistant":
            pending = _check_assistant(i, msg)
            issued = frozenset(pending)
            open_index = i
        elif not _has_content(msg):
            raise TranscriptError(i, "missing_content", f"a {role} message needs content")
    if pending:
        raise TranscriptError(
            open_index, "unanswered_tool_call", f"tool call(s) {sorted(pending)} have no result"
        )
    if not has_user:
        raise TranscriptError(None, "no_user_message", "at least one user message is required")


def _has_content(msg: Message) -> bool:
    content = msg.get("content")
    return isinstance(content, str) or (isinstance(content, list) and len(content) > 0)


def _check_assistant(i: int, msg: Message) -> dict[str, str]:
    calls = msg.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise TranscriptError(i, "bad_tool_calls", "tool_calls must be a list or null")
    content = msg.get("content")
    if content is not None and not isinstance(content, str | list):
        raise TranscriptError(i, "content_not_string", "assistant content must be a string or null")
    if not calls and not _has_content(msg):
        raise TranscriptError(i, "missing_content", "an assistant message needs content or tool_calls")
    pending: dict[str, str] = {}
    for j, call in enumerate(calls or []):
        fn = call.get("function") if isinstance(call, dict) else None
        call_id = call.get("id") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not call_id:
            raise TranscriptError(
                i, "bad_tool_calls", f"tool_calls[{j}] needs an id and function.name"
            )
        if not isinstance(fn.get("arguments"), str):
            raise TranscriptError(i, "bad_tool_calls", f"tool_calls[{j}].function.arguments must be a string")
        if call_id in pending:
            raise TranscriptError(i, "duplicate_tool_call_id", f"tool call id {call_id!r} repeats")
        pending[str(call_id)] = fn["name"]
    return pending


def _check_result(
    i: int, msg: Message, pending: dict[str, str], issued: frozenset[str], open_index: int
) -> None:
    role = msg["role"]
    call_id = msg.get("tool_call_id")
    if not issued:
        raise TranscriptError(
            i, "orphan_tool_result",
            f"a {role} message must directly follow the assistant message that requested it",
        )
    if call_id not in pending:
        rule = "duplicate_tool_result" if call_id in issued else "tool_call_id_mismatch"
        raise TranscriptError(
            i, rule,
            f"tool_call_id {call_id!r} does not answer a pending call of message {open_index} "
            f"(pending: {sorted(pending)})",
        )
    if role == "function" and not msg.get("name"):
        raise TranscriptError(i, "missing_name", "a function message must carry the tool name")
    content = msg.get("content")
    if not isinstance(content, str):
        raise TranscriptError(
            i, "content_not_string",
            f"tool result content must be a JSON string, got {type(content).__name__} "
            "(use json.dumps)",
        )
    try:
        json.loads(content)
    except ValueError as exc:
        raise TranscriptError(i, "content_not_json", f"tool result content is not JSON: {exc}") from None
    del pending[call_id]

