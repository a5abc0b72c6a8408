"""What the evidence check says, in English and in Chinese: the notes that send an answer back
to the model, and the plain statement a run ends with when its answer stays unsupported."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...language import Language

__all__ = ["DECLINES", "HONESTY", "NOTES", "READING", "RETURNED", "SEPARATOR", "UNUSED", "plain_statement"]

NOTES: dict[Language, str] = {
    "en": (
        "Your answer states {facts}, which no tool result and no user message gives. Answer again using only "
        "what the tool results say. If they do not give it, say plainly that you do not have that "
        "information; do not guess."
    ),
    "zh": (
        "你的回答中的 {facts} 没有出现在任何工具结果或用户消息中。请只根据工具结果重新回答；"
        "如果工具结果里没有，请直接说明你没有这些信息，不要猜测。"
    ),
}
HONESTY: dict[Language, str] = {
    "en": (
        "State only facts that the user or a tool result gave. If no tool provides what the user asks "
        "for, say so and name what is missing."
    ),
    "zh": "只陈述用户或工具结果给出的事实。如果没有工具能提供用户要的信息，请直接说明，并指出缺少什么。",
}
UNUSED: dict[Language, str] = {
    "en": (
        "Your answer uses nothing the tool results say. Answer again from the tool results only. If they do "
        "not give what the user asked for, say plainly that you do not have that information and name what "
        "is missing; do not guess."
    ),
    "zh": (
        "你的回答没有用到任何工具结果。请只根据工具结果重新回答；如果工具结果里没有用户要的信息，"
        "请直接说明你没有这些信息，并指出缺少什么，不要猜测。"
    ),
}
READING: dict[Language, str] = {
    "en": " The tool result gives the time as {times}.",
    "zh": "工具结果中的时间是 {times}。",
}
DECLINES: dict[Language, str] = {
    "en": "I can't answer that reliably: the tools I have did not provide the information it needs.",
    "zh": "我无法可靠地回答这个问题：现有工具没有提供所需的信息。",
}
SEPARATOR: dict[Language, str] = {"en": ", ", "zh": "、"}
RETURNED: dict[Language, str] = {
    "en": "I can't answer that reliably from what the tools returned. They returned: {results}.",
    "zh": "我无法根据工具返回的结果可靠地回答这个问题。工具返回：{results}。",
}
_BETWEEN: dict[Language, str] = {"en": "; ", "zh": "；"}
QUOTED_CHARS = 200


def plain_statement(messages: Sequence[Mapping[str, Any]], language: Language) -> str:
    """The statement that ends a run whose answer stays unsupported: that the model cannot answer
    reliably, and, when tools ran since the user last spoke, what they returned, quoted (the last
    three results, each cut at ``QUOTED_CHARS``). It says nothing the tools did not."""
    results = list(dict.fromkeys(_results(messages)))[-3:]
    if not results:
        return DECLINES[language]
    return RETURNED[language].format(results=_BETWEEN[language].join(results))


def _results(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The tool results since the user last spoke, oldest first, as "name: value"."""
    names = {
        call.get("id"): (call.get("function") or {}).get("name")
        for message in messages
        for call in message.get("tool_calls") or []
        if isinstance(call, dict)
    }
    found = []
    for message in reversed(messages):
        if message.get("role") == "user":
            break
        if message.get("role") == "tool":
            name = message.get("name") or names.get(message.get("tool_call_id")) or "tool"
            found.append(f"{name}: {_quoted(message.get('content'))}")
    return found[::-1]


def _quoted(content: Any) -> str:
    """A tool result's content without its trace id; a lone ``result`` as its value."""
    try:
        data = json.loads(str(content))
    except ValueError:
        data = str(content)
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "trace_id"}
        data = data["result"] if list(data) == ["result"] else data
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"
