"""Answers held to the evidence: facts in a final answer must come from the user or a tool.

``EvidenceCheck`` is a conclusion check for ``Controls(answer_check=...)``. It reads the facts an
answer states (numbers, quantities, dates and times, in digits or Chinese numerals, and
multi-word names such as "Joe Biden") and looks for each in the user's and the tools' messages.
An answer whose facts are all found passes. Otherwise the check rejects it with a note naming
what is unsupported, in the user's language, and the model answers once more (the embedded
model with tools off and a short answer, see ``is_note``); if that answer
is still unsupported, the run ends with a plain statement that the tools could not provide it
(``Replacement``), never with the invented facts.

What counts as found, deliberately lenient so that honest answers pass:

* a number equal to one in the evidence, or to it rounded (3.14 for 3.14159, 700万 for
  7006652 within 0.5%), a 12-hour clock hour (3 for 15), 0, 1 and list markers ("1.");
* a name when most of its words appear in the evidence (or name the same time zone).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...decision import Replacement
from ...language import Language, numbers_in, user_language
from .grounding import Evidence

__all__ = ["HONESTY", "EvidenceCheck", "evidence_of", "is_note", "unsupported"]

_FACT = re.compile(
    r"(?<![A-Za-z0-9_.])\d[\d,]*(?:\.\d+)?(?:\s?(?:°[CF]?|℃|%|％|[万亿千百]+|[a-zA-Z]{1,3}\b))?"
    r"|(?<![\d.])[零〇一二两三四五六七八九十百千万亿]{2,}(?:点[零〇一二三四五六七八九]+)?"
)
_LIST_MARKER = re.compile(r"^\s*(\d{1,2})[.)]\s", re.MULTILINE)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|[A-Z]\.))+")
_LEADING = frozenset({
    "The", "A", "An", "In", "On", "At", "It", "I", "This", "That", "These", "Those", "My", "Your", "Our", "Their",
    "Today", "Now", "Sorry",
})  # fmt: skip
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
DECLINES: dict[Language, str] = {
    "en": "I can't answer that reliably: the tools I have did not provide the information it needs.",
    "zh": "我无法可靠地回答这个问题：现有工具没有提供所需的信息。",
}
_SEPARATOR: dict[Language, str] = {"en": ", ", "zh": "、"}


def evidence_of(messages: Sequence[Mapping[str, Any]]) -> Evidence:
    """What an answer may draw on: the user's, system and tool messages (not the assistant's own)."""
    return Evidence.of(messages)


def unsupported(answer: str, evidence: Evidence) -> list[str]:
    """The facts ``answer`` states that ``evidence`` does not give, as written, without repeats."""
    markers = {m.start(1) for m in _LIST_MARKER.finditer(answer)}
    facts: dict[str, None] = {}
    for match in _FACT.finditer(answer):
        values = [abs(v) for v in numbers_in(match.group())]
        if match.start() in markers or not values:
            continue
        if not _supported(max(values), _tolerance(match.group(), max(values)), evidence):
            facts.setdefault(match.group().strip())
    for match in _NAME.finditer(answer):
        words = match.group().split()
        words = words[1:] if words[0] in _LEADING else words
        if len(words) >= 2 and not evidence.has(" ".join(words)):
            facts.setdefault(" ".join(words))
    return list(facts)


def _tolerance(written: str, value: float) -> float:
    """How far a number may be from the evidence: a rounded one ("700万", "3.14") within its precision."""
    digits = re.sub(r"[^\d.]", "", written.split("e")[0])
    whole, _, decimals = digits.partition(".")
    significant = len((whole + decimals).lstrip("0")) if decimals else len(whole.lstrip("0").rstrip("0"))
    unit = 0.5 * 10 ** -len(decimals) if decimals else 0.5
    return max(unit, 0.005 * value) if 0 < significant <= 3 or not digits else unit


def _supported(value: float, tolerance: float, evidence: Evidence) -> bool:
    if value in (0.0, 1.0):
        return True
    known = [abs(n) for n in evidence.numbers]
    if any(abs(value - n) <= tolerance for n in known):
        return True
    return value.is_integer() and 1 <= value <= 12 and (value + 12) in known  # 3 o'clock for 15:00


@dataclass(frozen=True, slots=True)
class EvidenceCheck:
    """The evidence check as an answer check: ``Controls(answer_check=EvidenceCheck())``.

    ``retries`` is how many times an unsupported answer is sent back before the run ends with
    a plain statement that the tools could not provide it. The note sent back is in the user's
    language unless ``note_language`` names one ("en" or "zh").
    """

    retries: int = 1
    note_language: Language | None = None

    def __call__(self, answer: str, messages: Sequence[Mapping[str, Any]]) -> str | Replacement | None:
        facts = unsupported(answer, evidence_of(messages))
        if not facts:
            return None
        language = user_language(messages)
        if _rejected(messages) >= self.retries:
            return Replacement(DECLINES[language])  # the unsupported facts are not repeated to the user
        note = self.note_language or language
        return NOTES[note].format(facts=_SEPARATOR[note].join(facts[:5]))


def is_note(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is the check's note sending an unsupported answer back."""
    content = message.get("content")
    starts = (note.split("{facts}")[0] for note in NOTES.values())
    return message.get("role") != "user" and isinstance(content, str) and content.startswith(tuple(starts))


def _rejected(messages: Sequence[Mapping[str, Any]]) -> int:
    """Replies without calls since the user last spoke: every one of them was not accepted."""
    count = 0
    for message in reversed(messages):
        if message.get("role") == "user":
            break
        if message.get("role") == "assistant" and not message.get("tool_calls"):
            count += 1
    return count
