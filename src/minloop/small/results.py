"""What the tool results since the user last spoke say, call by call, for the evidence check.

One rule of ``EvidenceCheck`` reads them, and its plain statement of what the tools did:
``unserved``, every call failed (the loop's error envelope: the service is down, the city is
unknown) or found nothing (``"found": false``, or every list in the result empty). Then nothing a
tool said can answer the request, and an answer that does not say so is replaced by the plain
statement of what happened: the 1.5B model, told the flight-status service was down, answered
"The flight BA117 is delayed", which holds no number for the fact check to find.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "Outcome",
    "call_arguments",
    "kind_of",
    "outcomes",
    "reason",
    "since_user",
    "text_of",
    "unserved",
]

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9@._+-]*[a-z0-9]|[a-z0-9]")


@dataclass(frozen=True)
class Outcome:
    """One call since the user last spoke: its tool, arguments, result and what the result was."""

    tool: str
    arguments: dict[str, Any]
    result: Any
    kind: Literal["served", "failed", "empty"]


def outcomes(messages: Sequence[Mapping[str, Any]]) -> list[Outcome]:
    """The calls made since the user last spoke that have a result, oldest first."""
    recent = since_user(messages)
    calls = {
        call.get("id"): call.get("function") or {}
        for message in recent
        for call in message.get("tool_calls") or []
        if isinstance(call, dict)
    }
    found: list[Outcome] = []
    for message in recent:
        if message.get("role") not in ("tool", "function"):
            continue
        fn = calls.get(message.get("tool_call_id")) or {}
        arguments = _loads(fn.get("arguments"))
        result = _loads(message.get("content"))
        if isinstance(result, dict):
            result = {k: v for k, v in result.items() if k != "trace_id"}
            result = result["result"] if list(result) == ["result"] else result  # a tool's plain value
        name = str(message.get("name") or fn.get("name") or "tool")
        found.append(Outcome(name, arguments if isinstance(arguments, dict) else {}, result, kind_of(result)))
    return found


def since_user(messages: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The messages from the user's last one on (all of them when the user said nothing)."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), 0)
    return messages[last:]


def kind_of(result: Any) -> Literal["served", "failed", "empty"]:
    """What a result (read from JSON) was: served, failed (the loop's error envelope) or empty."""
    if isinstance(result, dict) and isinstance(result.get("code"), str) and "error" in result:
        return "failed"
    if isinstance(result, dict):
        if result.get("found") is False:
            return "empty"
        lists = [v for v in result.values() if isinstance(v, list)]
        return "empty" if lists and not any(lists) else "served"
    return "empty" if result in ([], None, "") else "served"


def unserved(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether tools ran since the user last spoke and every one failed or found nothing."""
    done = outcomes(messages)
    return bool(done) and all(o.kind != "served" for o in done)


def text_of(data: Any) -> str:
    """A result's values as text (its keys say nothing an answer would repeat)."""
    if isinstance(data, dict):
        return " ".join(text_of(v) for v in data.values())
    if isinstance(data, list):
        return " ".join(text_of(v) for v in data)
    return "" if isinstance(data, bool) or data is None else str(data)


def call_arguments(call: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """A wire call's tool name and arguments (``None`` when they are no JSON object: cut off)."""
    fn = call.get("function") or {}
    arguments = _loads(fn.get("arguments") or "{}")
    return str(fn.get("name")), arguments if isinstance(arguments, dict) else None


def _loads(content: Any) -> Any:
    if not isinstance(content, str):
        return content
    try:
        return json.loads(content)
    except ValueError:
        return content


def reason(error: str) -> str:
    """A tool error's message without the exception's class name ("LookupError: unknown ticker
    symbol: NVIDIA" is "unknown ticker symbol: NVIDIA")."""
    return re.sub(r"^[A-Z]\w*(?:Error|Exception)?: ", "", error)
