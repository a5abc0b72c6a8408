"""What the evidence check says, in English and in Chinese: the notes that send an answer back
to the model, and the plain statement a run ends with when its answer stays unsupported."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..language import Language, last_said
from .results import outcomes, reason

__all__ = [
    "BETWEEN",
    "DECLINES",
    "NOTES",
    "NO_TOOL",
    "RETURNED",
    "SEPARATOR",
    "UNUSED",
    "last_said",
    "plain_statement",
    "plainly",
    "ungrounded_note",
]

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
DECLINES: dict[Language, str] = {
    "en": "I can't answer that reliably: the tools I have did not provide the information it needs.",
    "zh": "我无法可靠地回答这个问题：现有工具没有提供所需的信息。",
}
NO_TOOL: dict[Language, str] = {
    "en": "I can't answer that reliably: none of my tools provides it. They can {what}.",
    "zh": "我无法可靠地回答这个问题：我的工具都不提供这项信息。现有工具：{what}。",
}
SEPARATOR: dict[Language, str] = {"en": ", ", "zh": "、"}
RETURNED: dict[Language, str] = {
    "en": "I can't answer that reliably from what the tools returned: {results}.",
    "zh": "我无法根据工具返回的结果可靠地回答这个问题：{results}。",
}
SAID: dict[Language, dict[str, str]] = {
    "en": {
        "unasked": "{tool} gave {values}, not what you asked for",
        "nothing": "{tool} found nothing{asked}",
        "failed": "{tool} did not answer ({reason})",
        "late": "{tool} did not answer in time",
        "asked": " for {values}",
    },
    "zh": {
        "unasked": "{tool} 只给出了 {values}，没有你问的内容",
        "nothing": "{tool} 没有找到{asked}结果",
        "failed": "{tool} 没有给出结果（{reason}）",
        "late": "{tool} 没有及时响应",
        "asked": " {values} 的",
    },
}
# Why the loop itself refused or stopped a call, in Chinese; in English the envelope's own words
# are used, and a tool's own error (ERR_TOOL_FAILED) is quoted as the tool wrote it.
LOOP_REASONS_ZH = {
    "ERR_TOOL_ARGS_INVALID": "调用的参数不符合工具的要求",
    "ERR_TOOL_SCHEMA_MISMATCH": "工具返回的结果不符合它声明的格式",
    "ERR_TOOL_UNKNOWN": "没有这个工具",
    "ERR_TOOL_DENIED": "这次调用没有获得批准",
    "ERR_TOOL_BUDGET": "调用次数已用完",
    "ERR_TOOL_IN_DOUBT": "无法确定这次调用是否已经执行",
    "ERR_TOOL_NOT_STORED": "这次调用的结果没有保存下来",
    "ERR_TOOL_INPUT_REQUIRED": "工具需要用户补充信息",
    "ERR_TOOL_UNAUTHORIZED": "没有调用这个工具的权限",
}
BETWEEN: dict[Language, str] = {"en": "; ", "zh": "；"}
QUOTED_CHARS = 200


def ungrounded_note(missing: dict[str, list[str]], language: Language = "en") -> str:
    """The instruction after a call whose required values the conversation does not give, in the
    user's language: the small model often repeats it in its answer."""
    if language == "zh":
        what = "；".join(f"{name} 需要 {'、'.join(args)}" for name, args in missing.items())
        return f"现在不要调用函数：{what}，对话中没有给出这些值。请直接简短地回答用户；如果需要这些值，请向用户询问。"
    what = "; ".join(f"{name} needs {', '.join(args)}" for name, args in missing.items())
    return (
        f"Do not call a function now: {what}, and the conversation does not give these values. "
        "Answer the user directly and briefly. If the request needs those values, ask the user for them."
    )


def plain_statement(
    messages: Sequence[Mapping[str, Any]],
    language: Language,
    menu: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The statement that ends a run whose answer stays unsupported, in plain words: that the
    model cannot answer reliably, and what each tool run since the user last spoke did (the last
    three): what it gave (and that it is not what the request asks for), that it found nothing,
    or that it failed and why; when no tool ran, what the tools of ``menu`` do. It says nothing the
    tools did not, and never shows a tool's raw JSON or the run's trace id."""
    results = list(dict.fromkeys(_results(messages, language)))[-3:]
    if results:
        return RETURNED[language].format(results=BETWEEN[language].join(results))
    if not menu:
        return DECLINES[language]
    return NO_TOOL[language].format(what=_abilities(menu, language))


def _results(messages: Sequence[Mapping[str, Any]], language: Language) -> list[str]:
    """What each tool run since the user last spoke did, oldest first, in plain words. A call the
    loop refused as made twice already is left out: its tool ran, and its result is told once."""
    words, said = SAID[language], []
    for done in outcomes(messages):
        code = done.result["code"] if done.kind == "failed" else None
        if code == "ERR_TOOL_REPEATED":
            continue
        if code == "ERR_TOOL_TIMEOUT":
            said.append(words["late"].format(tool=done.tool))
        elif code is not None:
            why = LOOP_REASONS_ZH.get(code) if language == "zh" else None
            said.append(
                words["failed"].format(tool=done.tool, reason=why or _cut(reason(str(done.result["error"]))))
            )
        elif done.kind == "empty":
            asked = words["asked"].format(values=_plain(done.arguments)) if done.arguments else ""
            said.append(words["nothing"].format(tool=done.tool, asked=asked))
        else:
            said.append(words["unasked"].format(tool=done.tool, values=_cut(_plain(done.result))))
    return said


def plainly(data: Any) -> str:
    """A tool's result in words, cut to ``QUOTED_CHARS``: "temperature 18, condition sunny"."""
    return _cut(_plain(data))


def _plain(data: Any) -> str:
    """A JSON value in words: "temperature 18, condition sunny"; list items apart by "; "."""
    if isinstance(data, dict):
        return ", ".join(f"{str(k).replace('_', ' ')} {_plain(v)}" for k, v in data.items() if k != "found")
    if isinstance(data, list):
        return "; ".join(_plain(item) for item in data) or "-"
    return str(data) if not isinstance(data, bool) else ("yes" if data else "no")


def _abilities(menu: Sequence[Mapping[str, Any]], language: Language) -> str:
    """What the tools do: the first sentence of each description (in Chinese, their names)."""
    specs = [spec.get("function") or {} for spec in menu][:6]
    if language == "zh":
        return "、".join(str(fn.get("name")) for fn in specs)
    done = []
    for fn in specs:
        first = re.split(r"(?<=[.:;])\s", str(fn.get("description") or fn.get("name")).strip())[0]
        first = first.rstrip(".:;")
        done.append(first[:1].lower() + first[1:] if first[:2] != first[:2].upper() else first)
    return "; ".join(done)


def _cut(text: str) -> str:
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"
