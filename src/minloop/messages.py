"""Messages in the Chat Completions wire format, and the transcript rules.

A message is a plain ``dict`` exactly as the Chat Completions API sends and receives it, so a
transcript can be stored, logged and replayed without conversion. ``check_transcript`` is run
before every model call; a caller's malformed list raises ``TranscriptError`` naming the index
and the rule (one of ``RULES``). JSON here is strict (RFC 8259): ``NaN`` and ``Infinity`` are
not JSON.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .exceptions import TranscriptError

__all__ = [
    "RULES",
    "Message",
    "ResultRole",
    "ToolCall",
    "TranscriptChecker",
    "check_transcript",
    "loads",
    "normalize_input",
    "tool_calls_of",
    "transcript_problems",
]

Message: TypeAlias = dict[str, Any]
ResultRole: TypeAlias = Literal["tool", "function"]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
RESULT_ROLES = frozenset({"tool", "function"})
RULES = frozenset(
    {
        "not_a_list",
        "not_an_object",
        "invalid_role",
        "no_user_message",
        "missing_content",
        "content_not_string",
        "bad_content_part",
        "bad_tool_calls",
        "duplicate_tool_call_id",
        "orphan_tool_result",
        "tool_call_id_mismatch",
        "duplicate_tool_result",
        "unanswered_tool_call",
        "missing_name",
        "content_not_json",
        "not_json_serialisable",
    }
)
"""Every rule name a ``TranscriptError`` can carry (the README's table lists each one)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call requested by the model: an instruction, never a result."""

    id: str
    name: str
    arguments: str

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> ToolCall:
        fn = raw.get("function")
        fn = fn if isinstance(fn, dict) else {}
        args = fn.get("arguments")
        if args is None:
            args = "{}"
        elif not isinstance(args, str):  # some servers send an object, not a string
            args = json.dumps(args, ensure_ascii=False)
        call_id, name = raw.get("id"), fn.get("name")
        return cls(
            id=call_id if isinstance(call_id, str) else "",
            name=name if isinstance(name, str) else "",
            arguments=args,
        )

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


def tool_calls_of(message: Message) -> list[dict[str, Any]]:
    """The non-empty list of tool calls of an assistant message, else ``[]``.

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
    """Raise ``TranscriptError`` for the first rule ``messages`` breaks; return if it is valid.

    Rules: every item is an object with a known role; at least one user message; assistant
    tool calls are well formed with unique ids; every tool result directly follows the assistant
    message that asked for it, answers one of its pending ``tool_call_id`` s exactly once,
    carries the tool name for the legacy ``function`` role, and has a string content holding
    strict JSON; no call is left unanswered before the next non-result message; content
    parts are JSON objects with a ``type``.
    """
    problems = transcript_problems(messages)
    if problems:
        raise TranscriptError(*problems[0])


def transcript_problems(messages: Any) -> list[tuple[int | None, str, str]]:
    """Every rule violation as ``(index, rule, detail)``, in the order found; never raises."""
    walk = _Walk()
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        walk.add(
            None, "not_a_list", f"messages must be a list of message objects, got {type(messages).__name__}"
        )
        return walk.problems
    for i, msg in enumerate(messages):
        walk.message(i, msg)
    walk.close(None)
    if not walk.has_user:
        walk.add(None, "no_user_message", "at least one user message is required")
    return walk.problems


class TranscriptChecker:
    """``check_transcript`` for a transcript that only grows, as a run's does: each call walks
    just the messages appended since the last one (a list that shrank, or whose last checked
    message was replaced, is walked again from the start), so checking every step costs O(new messages), not O(transcript)."""

    __slots__ = ("_count", "_last", "_walk")

    def __init__(self) -> None:
        self._walk, self._count = _Walk(), 0
        self._last: Message | None = None

    def __call__(self, messages: list[Message]) -> None:
        count = len(messages)
        if count < self._count or (self._count and messages[self._count - 1] is not self._last):
            self.__init__()  # type: ignore[misc]
        walk = self._walk
        for i in range(self._count, count):
            walk.message(i, messages[i])
        self._count, self._last = count, messages[-1] if messages else None
        if not walk.problems and walk.pending:
            walk.close(None)
        if not walk.problems and not walk.has_user:
            walk.add(None, "no_user_message", "at least one user message is required")
        if walk.problems:
            problem = walk.problems[0]
            self.__init__()  # type: ignore[misc]
            raise TranscriptError(*problem)


@dataclass
class _Walk:
    problems: list[tuple[int | None, str, str]] = field(default_factory=list)
    pending: dict[str, str] = field(default_factory=dict)  # unanswered call ids of the open message
    issued: frozenset[str] = frozenset()  # every call id of the open message
    open_index: int = -1
    has_user: bool = False

    def add(self, index: int | None, rule: str, detail: str) -> None:
        self.problems.append((index, rule, detail))

    def message(self, i: int, msg: Any) -> None:
        if not isinstance(msg, dict):
            return self.add(i, "not_an_object", f"expected a dict, got {type(msg).__name__}")
        role = msg.get("role")
        if not isinstance(role, str) or role not in ROLES:
            return self.add(i, "invalid_role", f"role {role!r} is not one of {sorted(ROLES)}")
        if role in RESULT_ROLES:
            return self.result(i, msg)
        self.close(i)
        self.has_user = self.has_user or role == "user"
        self.issued = frozenset()
        self.parts(i, msg.get("content"))
        if role == "assistant":
            self.assistant(i, msg)
        elif not _has_content(msg):
            self.add(i, "missing_content", f"a {role} message needs content")

    def close(self, i: int | None) -> None:
        if self.pending:
            where = "the end of the transcript" if i is None else f"message {i}"
            self.add(
                self.open_index,
                "unanswered_tool_call",
                f"tool call(s) {sorted(self.pending)} have no result before {where}",
            )
            self.pending = {}

    def parts(self, i: int, content: Any) -> None:
        for j, part in enumerate(content if isinstance(content, list) else []):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                self.add(i, "bad_content_part", f"content[{j}] must be an object with a string 'type'")
            elif not _is_json(part):
                self.add(i, "bad_content_part", f"content[{j}] is not JSON-serialisable")

    def assistant(self, i: int, msg: Message) -> None:
        calls = msg.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            self.add(i, "bad_tool_calls", "tool_calls must be a list or null")
            calls = []
        content = msg.get("content")
        if content is not None and not isinstance(content, str | list):
            self.add(i, "content_not_string", "assistant content must be a string or null")
        if not calls and not _has_content(msg):
            self.add(i, "missing_content", "an assistant message needs content or tool_calls")
        for j, call in enumerate(calls or []):
            self.call(i, j, call)
        self.issued = frozenset(self.pending)
        self.open_index = i

    def call(self, i: int, j: int, call: Any) -> None:
        fn = call.get("function") if isinstance(call, dict) else None
        call_id = call.get("id") if isinstance(call, dict) else None
        if (
            not isinstance(fn, dict)
            or not isinstance(fn.get("name"), str)
            or not isinstance(call_id, str)
            or not call_id
        ):
            return self.add(i, "bad_tool_calls", f"tool_calls[{j}] needs a string id and function.name")
        if not isinstance(fn.get("arguments"), str):
            kind = type(fn.get("arguments")).__name__
            self.add(
                i, "bad_tool_calls", f"tool_calls[{j}].function.arguments is a {kind}, not a JSON string"
            )
        if call_id in self.pending:
            self.add(i, "duplicate_tool_call_id", f"tool call id {call_id!r} repeats")
        self.pending[call_id] = fn["name"]

    def result(self, i: int, msg: Message) -> None:
        role, call_id = msg["role"], msg.get("tool_call_id")
        if not self.issued:
            self.add(
                i,
                "orphan_tool_result",
                f"a {role} message must directly follow the assistant message that requested it",
            )
        elif not isinstance(call_id, str) or call_id not in self.pending:
            rule = (
                "duplicate_tool_result"
                if isinstance(call_id, str) and call_id in self.issued
                else "tool_call_id_mismatch"
            )
            self.add(
                i,
                rule,
                f"tool_call_id {call_id!r} does not answer a pending call of message "
                f"{self.open_index} (pending: {sorted(self.pending)})",
            )
        else:
            del self.pending[call_id]
        if role == "function" and not msg.get("name"):
            self.add(i, "missing_name", "a function message must carry the tool name")
        content = msg.get("content")
        if not isinstance(content, str):
            self.add(
                i,
                "content_not_json",
                f"tool result content must be a JSON string, got {type(content).__name__} (use json.dumps)",
            )
        elif not _is_json_text(content):
            self.add(i, "content_not_json", "tool result content is not JSON (NaN and Infinity are not JSON)")


def _has_content(msg: Message) -> bool:
    content = msg.get("content")
    return isinstance(content, str) or (isinstance(content, list) and len(content) > 0)


def loads(text: str | bytes) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON by RFC 8259)."""
    if isinstance(text, bytes):
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    return _STRICT.decode(text)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


_STRICT = json.JSONDecoder(parse_constant=_not_json)  # made once: json.loads(**options) builds one per call
_STRICT_OUT = json.JSONEncoder(allow_nan=False)


def _is_json(value: Any) -> bool:
    try:
        _STRICT_OUT.encode(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _is_json_text(text: str) -> bool:
    try:
        loads(text)
    except (ValueError, RecursionError):
        return False
    return True
