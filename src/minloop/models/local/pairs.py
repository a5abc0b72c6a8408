"""Two things a request asks the same question about, read from its words.

``pairs`` finds two names joined by "and", "or", "vs", "和", "还是"...: "Apple and Amazon",
"in Paris or in Berlin", "an Apple share or an Amazon share" (the noun after the first name must
follow the second too), "苹果和亚马逊", and two numbers or codes after one plural noun or before the same Chinese
counter: "lines 42 and 7", "42路和7路", "3号线和10号线". ``parallel`` finds a second value written the way a
call's value is written: asked "When does the first train leave from Paris to Lyon, and from
Paris to Marseille?", the 1.5B model looked up Paris to Lyon and answered for Marseille with the
Lyon times; "to Lyon" and "to Marseille" say the same call is due with "Marseille" as the
destination.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["pairs", "parallel"]

_NAMES = r"[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)*"
_BOTH_EN = re.compile(
    rf"(?P<one>{_NAMES})(?:'s)?(?:\s+(?P<noun>[a-z]+))?,?\s+(?:and|or|vs\.?|versus)\s+"
    rf"(?:(?:in|of|for|the|at|an?)\s+)?(?P<two>{_NAMES})(?(noun)\s+(?P=noun)\b)"
)
_ZH_NAME = r"[A-Za-z][A-Za-z .-]*[A-Za-z]|[\u4e00-\u9fff]{1,6}?(?=的|哪|现|今|明|分|呢|吗|是|有|在|更|谁|[，。？！\s]|$)"
_BOTH_ZH = re.compile(
    rf"(?P<one>[A-Za-z][A-Za-z .-]*[A-Za-z]|(?:(?![从到在去往])[\u4e00-\u9fff]){{2,4}})"
    rf"\s*(?:和|与|跟|及|、|还是|或者?)\s*(?P<two>{_ZH_NAME})"
)
_CODE = r"[A-Za-z]*\d[\w-]*"
_NUMBERED_EN = re.compile(rf"\b[A-Za-z]+s\s+(?P<one>{_CODE}),?\s+(?:and|or|&)\s+(?P<two>{_CODE})\b")
_NUMBERED_ZH = re.compile(
    rf"(?P<one>{_CODE})\s*(?P<unit>路|号线|号|次|层|楼|室)\s*(?:和|与|跟|及|、|还是|或者?)\s*(?P<two>{_CODE})\s*(?P=unit)"
)
_LEAD = re.compile(
    r"^(?:现在|今天|明天|目前|请|帮我|查一下)*(?:(?:[一两二三四五六七八九十]|\d+)[张股个份本位只家间])?"
    r"(?:从[\u4e00-\u9fff]{1,4}?到|[在去往到])?"  # "从巴黎到马赛", "在纽约": the place itself
)
_JOINED = re.compile(r",|\b(?:and|or|as well as|vs\.?|versus)\b", re.IGNORECASE)
_VALUE = r"[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)*|[A-Za-z]*\d[\w-]*"


def pairs(text: str, english: str | None = None) -> list[tuple[str, str]]:
    """The two things ``text`` (or its English translation) joins with "and", "or", "和"..., for
    each of the two texts that has them."""
    found = (_both(text), english and _both(english))
    return [
        (_LEAD.sub("", m["one"].strip()), _LEAD.sub("", m["two"].strip()))
        for m in found
        if isinstance(m, re.Match)
    ]


def _both(text: str) -> re.Match[str] | None:
    return next((m for p in (_BOTH_EN, _NUMBERED_EN, _NUMBERED_ZH, _BOTH_ZH) if (m := p.search(text))), None)


def parallel(
    texts: Sequence[str], call: Mapping[str, Any], taken: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """``call``'s arguments with one value replaced by the other value a text writes after the
    same word ("to Lyon, and ... to Marseille", "line 42 and line 7"), the two joined by "and",
    "or" or a comma; ``None`` unless exactly one such value is found that no call in ``taken``
    has already taken."""
    used = {str(v).casefold() for c in taken for v in (c.get("arguments") or {}).values()}
    arguments = dict(call.get("arguments") or {})
    found: list[tuple[str, str]] = []
    for text in texts:
        for key, value in arguments.items():
            if isinstance(value, str) and value.strip():
                found += [
                    (key, other)
                    for other in _after_same_word(text, value.strip())
                    if other.casefold() not in used
                ]
    if len(set(found)) != 1:
        return None
    key, other = found[0]
    return {**arguments, key: other}


def _after_same_word(text: str, value: str) -> list[str]:
    """The values ``text`` writes after the word that precedes ``value`` in it, joined to it."""
    at = re.search(rf"\b(?P<word>[a-z]+)\s+{re.escape(value)}\b", text, re.IGNORECASE)
    if at is None or _JOINED.fullmatch(at["word"]):
        return []
    others = []
    for match in re.finditer(rf"\b(?i:{re.escape(at['word'])})\s+(?P<value>{_VALUE})", text):
        between = text[min(at.end(), match.end()) : max(at.start(), match.start())]
        if match["value"].casefold() != value.casefold() and _JOINED.search(between):
            others.append(match["value"])
    return others
