"""A change told the wrong way round: "rose 2.1%" when the result gives -2.1.

The evidence check compares numbers without their sign, so that "down 2.1%" and "下跌了2.1%" are
found in a result's ``"change_percent": -2.1``. That let through the 1.5B model's "特斯拉的股价上涨了
2.1%" beside that same -2.1: the number is in the result, the direction is invented. ``turned``
reads each amount an answer gives right after a word of rising ("rose", "up", "上涨了") or falling
("fell", "down", "下跌了"), and calls it unsupported when the tool results have that number only
with the other sign. An amount after "to" ("fell to 2 degrees") is a level, not a change, and is not
read; neither is a number the results have with both signs, or one the user wrote. The note
sending such an answer back (``TURNED``) gives the result's signed number.

``follows`` is the other side: "特斯拉的股价今天是跌了。" states no number, yet it is drawn from the
results when a change in them (a number under a key that speaks of change) has its sign.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...language import Language, numbers_in
from .results import served

__all__ = ["FALLING", "RISING", "TURNED", "follows", "turned", "way"]

TURNED: dict[Language, str] = {
    "en": 'Your answer says "{fact}", but the tool result gives {value}: {way}. Answer again from the results.',
    "zh": "你的回答说“{fact}”，但工具结果中的数值是 {value}，是{way}。请根据工具结果重新回答。",
}
_WAYS: dict[Language, tuple[str, str]] = {"en": ("a rise", "a fall"), "zh": ("上涨", "下跌")}
_CHANGE_KEY = re.compile(r"change|percent|pct|delta|diff|growth|涨跌", re.IGNORECASE)

_RISE = (
    r"\b(?:rose|rise|risen|rises|rising|up|gained|gains|increased|increases|climbed|grew|grow)\b|"
    r"上涨了?|涨了?|上升了?|增长了?|升了|涨幅(?:为|是)?"
)
_FALL = (
    r"\b(?:fell|fall|fallen|falls|falling|down|drop|dropped|drops|decreased|decreases|declined|lost)\b|"
    r"下跌了?|跌了?|下?降了?|跌幅(?:为|是)?"
)
RISING = re.compile(_RISE, re.IGNORECASE)
FALLING = re.compile(_FALL, re.IGNORECASE)
_CHANGE = re.compile(
    rf"(?:(?P<rise>{_RISE})|(?P<fall>{_FALL}))\s*(?:by\s+|about\s+|约|大约)?"
    r"(?P<amount>[+-]?\d+(?:\.\d+)?\s?(?:%|％|percent)?)",
    re.IGNORECASE,
)
_TOLERANCE = 0.005


def turned(answer: str, results: str, said: str = "") -> list[tuple[str, float]]:
    """The changes ``answer`` states the wrong way round against the tools' ``results``, as written,
    each with the signed number the results give (see the module); a number the user ``said`` is
    theirs to give either way."""
    signed, given = numbers_in(results), [abs(n) for n in numbers_in(said)]
    wrong = []
    for match in _CHANGE.finditer(answer):
        written = match["amount"].strip()
        value = abs(float(re.sub(r"[^\d.]", "", written)))
        if value == 0 or any(abs(value - n) <= _TOLERANCE for n in given):
            continue
        rising = match["rise"] is not None
        same = any(abs(n - (value if rising else -value)) <= _TOLERANCE for n in signed)
        other = any(abs(n - (-value if rising else value)) <= _TOLERANCE for n in signed)
        if other and not same:
            wrong.append((match.group().strip(), -value if rising else value))
    return wrong


def way(value: float, language: Language) -> str:
    """A rise or a fall, in words: what a signed change is."""
    return _WAYS[language][value < 0]


def follows(answer: str, messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``answer`` says a rise or a fall that a change in the results served since the user
    spoke bears out (every such change of that sign)."""
    changes = [v for o in served(messages) for v in _changes(o.result)]
    rise, fall = RISING.search(answer), FALLING.search(answer)
    if not changes or bool(rise) == bool(fall):
        return False
    return all((v > 0) == bool(rise) for v in changes if v != 0) and any(v != 0 for v in changes)


def _changes(data: Any, key: str = "") -> list[float]:
    """The numbers of a result under keys that speak of change."""
    if isinstance(data, Mapping):
        return [v for k, item in data.items() for v in _changes(item, str(k))]
    if isinstance(data, list):
        return [v for item in data for v in _changes(item, key)]
    if isinstance(data, int | float) and not isinstance(data, bool) and _CHANGE_KEY.search(key):
        return [float(data)]
    if isinstance(data, str) and _CHANGE_KEY.search(key):
        return numbers_in(data)[:1]
    return []
