"""Whether an answer draws on the tool results: states a number (or one worked out from them), a
word or a weekday that only the results since the user last spoke gave (``draws_on_tools``),
for the evidence check's rule that an answer after tools ran must use them."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from ..language import numbers_in
from .derived import derived
from .results import outcomes

__all__ = ["LIST_MARKER", "among", "draws_on_tools", "rounded_among", "tool_values"]

LIST_MARKER = re.compile(r"^\s*(\d{1,2})[.)]\s", re.MULTILINE)  # "1." before a list item: no fact
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "sunday")
_CN_DAYS = "一二三四五六日天"
_CN_WEEKDAY = re.compile(rf"(?:星期|周|礼拜|禮拜)([{_CN_DAYS}])")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


def draws_on_tools(answer: str, messages: Sequence[Mapping[str, Any]]) -> bool | None:
    """Whether ``answer`` states something only the tool results since the user last spoke gave:
    a number (or one worked out from them), a word or a weekday that no user message has (a
    number without its sign too). ``None`` when no tool ran."""
    tools = tool_values(messages)
    if tools is None:
        return None
    user = "\n".join(str(m.get("content")) for m in messages if m.get("role") == "user")
    said, given = numbers_in(user), [abs(n) for n in numbers_in(tools)]  # "down 2.1%" for -2.1
    worked = given + derived(messages)  # a count, a sum, a difference of them
    for value in map(abs, numbers_in(LIST_MARKER.sub(" ", answer))):
        plain = among(value, given) if value in (0.0, 1.0) else rounded_among(value, worked)
        if plain and not among(value, said):
            return True
    words = set(_terms(answer)) | {_WEEKDAYS[_CN_DAYS.index(d)] for d in _CN_WEEKDAY.findall(answer)}
    return bool(words & (set(_terms(tools)) - set(_terms(user))))


def tool_values(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The values (not the keys) of the tool results since the user last spoke; ``None`` when none."""
    found = [value for done in outcomes(messages) for value in _values(done.result)]
    return "\n".join(found) if found else None


def _values(data: Any) -> list[str]:
    if isinstance(data, dict):
        return [v for key, item in data.items() if key != "trace_id" for v in _values(item)]
    if isinstance(data, list):
        return [v for item in data for v in _values(item)]
    return [str(data)]


def _terms(text: str) -> list[str]:
    """Words of three letters or more, and pairs of neighbouring Chinese characters."""
    lowered = text.lower()
    return re.findall(r"[a-z]{3,}", lowered) + [
        a + b for run in _HAN.findall(lowered) for a, b in pairwise(run)
    ]


def among(value: float, numbers: Sequence[float]) -> bool:
    return any(abs(value - n) <= 1e-9 * max(1.0, abs(n)) for n in numbers)


def rounded_among(value: float, numbers: Sequence[float]) -> bool:
    """Whether ``value`` is one of ``numbers`` rounded to its own decimals ("381.89" for 381.892)."""
    decimals = 0 if value.is_integer() else len(repr(value).partition(".")[2])
    return any(abs(value - n) <= max(0.5 * 10**-decimals, 1e-9 * max(1.0, abs(n))) for n in numbers)
