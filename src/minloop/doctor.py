"""Lint a saved transcript for the pitfalls that stop a loop after one step, and explain each fix.

``diagnose(messages)`` reports what ``minloop.messages.transcript_problems`` finds (the walk
behind ``check_transcript``, same rule names), which keeps going after a violation, so every
problem of a transcript is reported at once: a result that does not directly follow its call,
an id that matches no call, dict content, no user message, and the rest. It never raises: any
value can be diagnosed. An empty list means ``check_transcript`` accepts the transcript.
``minloop doctor FILE`` (``minloop.cli.doctor``) is the command-line front end.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .messages import ROLES, transcript_problems

__all__ = ["FIXES", "Finding", "diagnose", "load_transcript"]

FIXES: dict[str, str] = {
    "not_a_list": 'Save the transcript as a JSON list of messages, or as an object whose "messages" key holds '
    "that list (the output of `minloop run --json`).",
    "not_an_object": 'Every item must be a message object such as {"role": "user", "content": "..."}; '
    "remove this item or wrap it in one.",
    "invalid_role": f"Use one of the roles {', '.join(sorted(ROLES))}.",
    "no_user_message": 'Add at least one {"role": "user", "content": "..."} message: the model needs a '
    "request to answer.",
    "missing_content": "Give the message a string content; an assistant message needs content, tool_calls "
    "or both.",
    "content_not_string": "Assistant content is text, or null when the message carries tool_calls.",
    "bad_tool_calls": 'Make tool_calls a list of {"id": ..., "type": "function", "function": {"name": ..., '
    '"arguments": "<JSON string>"}}: every call needs an id and a name, and its arguments '
    "are a JSON string (json.dumps them).",
    "duplicate_tool_call_id": "Give every tool call in the message its own id.",
    "orphan_tool_result": "Put each tool result immediately after the assistant message whose tool_calls it "
    "answers; move logs, status notes and system messages after the results.",
    "tool_call_id_mismatch": "Set tool_call_id to the id of the call this result answers "
    "(tool_calls[i].id of the assistant message just before); with a wrong id the "
    "model never sees its result and the loop stops after one round.",
    "duplicate_tool_result": "Keep one result per call: remove the repeated tool message.",
    "unanswered_tool_call": "Append one tool message per call right after this assistant message, before "
    "anything else; if a call never ran, answer it with an error such as "
    '{"error": "not executed"}.',
    "missing_name": 'A legacy function message carries the tool name: add "name".',
    "content_not_json": "Tool content must be a JSON string: json.dumps(...) a dict or a list before "
    'appending it, wrap plain text as json.dumps({"result": text}), and replace NaN or Infinity '
    "(not JSON) with null or a string.",
    "bad_content_part": 'Multimodal content is a list of JSON objects such as {"type": "text", "text": "..."}; '
    "convert bytes and other Python objects to strings first.",
    "not_json_serialisable": "Every value in the messages must be JSON: convert bytes, dates and other Python "
    "objects to strings first.",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: the message ``index`` (``None`` for the whole list), the rule it breaks, what is
    wrong, and how to fix it."""

    index: int | None
    rule: str
    problem: str
    fix: str


def diagnose(messages: Any) -> list[Finding]:
    """Every rule violation in ``messages``, in message order; ``[]`` when the transcript is valid."""
    findings = []
    for index, rule, problem in transcript_problems(messages):
        findings.append(Finding(index, rule, problem, FIXES[rule]))
    return sorted(findings, key=lambda f: (f.index is None, f.index or 0))


def load_transcript(file: Path) -> Any:
    """The messages saved in ``file``: a JSON list, or the ``"messages"`` of a JSON object."""
    data = json.loads(file.read_text(encoding="utf-8"))
    return data["messages"] if isinstance(data, dict) and "messages" in data else data
