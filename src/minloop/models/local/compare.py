"""Which of two things an answer says is warmer, dearer or more, held to the two results.

Asked "Is it warmer in Paris or in Berlin right now?", the 1.5B model answered "It is warmer in
Paris than in Berlin right now." from 18 °C and 12 °C: right, but it quotes no value, so the
evidence check called it unused and replaced it. Asked "东京和悉尼哪个更暖和？", it answered
"东京比悉尼更暖和。" from 21 °C and 27 °C: wrong, and a check that counts quoted values lets it
through once the values are written beside it.

``compared`` reads an answer's first comparison ("X is warmer than Y", "warmer in X than in Y",
"X比Y更暖和") between the things of two results served since the user spoke (a call's argument
value, or a place of the same time zone: "东京" for "Tokyo"), when the two results differ in
exactly one number under the same key: it says whether the answer has the order of those
numbers right. ``None`` when the answer compares nothing this way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...language import Language
from ...language.zones import resolve_zone
from .results import Outcome, served

__all__ = ["ORDER", "compared", "order_note"]

ORDER: dict[Language, str] = {
    "en": "Your answer compares {first} and {second} the wrong way round: the results give {first_value} "
    "for {first} and {second_value} for {second}. Answer again from these values.",
    "zh": "你的回答把 {first} 和 {second} 比反了：工具结果中 {first} 是 {first_value}，{second} 是 "
    "{second_value}。请根据这些数值重新回答。",
}
_HAN = re.compile(r"[\u3400-\u9fff]+")

_MORE_EN = r"warmer|hotter|higher|more expensive|dearer|pricier|bigger|larger|greater|heavier|longer|more"
_LESS_EN = r"colder|cooler|lower|cheaper|less expensive|smaller|fewer|lighter|shorter|less"
_MORE_ZH = r"暖和|暖|热|高|贵|多|大|重|长"
_LESS_ZH = r"冷|凉|低|便宜|少|小|轻|短"
_EN = re.compile(rf"\b(?:(?P<more>{_MORE_EN})|(?P<less>{_LESS_EN}))\b", re.IGNORECASE)
_ZH = re.compile(rf"(?:更|还要|要)?(?:(?P<more>{_MORE_ZH})|(?P<less>{_LESS_ZH}))")
_CLAUSE = re.compile(r"[^.。!！?？;；,，]*(?:\bthan\b|比)[^.。!！?？;；,，]*", re.IGNORECASE)


def compared(answer: str, messages: Sequence[Mapping[str, Any]]) -> bool | None:
    """Whether the answer's comparison of two results has their order right (see the module)."""
    done = served(messages)
    clause = _CLAUSE.search(answer)
    if len(done) != 2 or clause is None:
        return None
    values = _differing(done[0].result, done[1].result)
    text = clause.group()
    places = [_place(text, o) for o in done]
    if values is None or places[0] is None or places[1] is None or places[0] == places[1]:
        return None
    if "比" in text:  # "东京比悉尼更暖和": the comparative right after the other thing
        word = _ZH.search(text, text.index("比") + 1, text.index("比") + 12)
    else:  # "warmer in Paris than in Berlin", "Paris is warmer than Berlin": the last before "than"
        than = re.search(r"\bthan\b", text, re.IGNORECASE)
        words = list(_EN.finditer(text, 0, than.start() if than else len(text)))
        word = words[-1] if words else None
    if word is None:
        return None
    first_is_more = values[0] > values[1]
    subject_first = places[0] < places[1]  # the thing named first is said to be more (or less)
    return (subject_first == first_is_more) == (word.lastgroup == "more")


def _differing(first: Any, second: Any) -> tuple[float, float] | None:
    """The one number under the same key that differs between two results, else ``None``."""
    if not isinstance(first, Mapping) or not isinstance(second, Mapping):
        return None
    pairs = [
        (float(first[k]), float(second[k]))
        for k in first.keys() & second.keys()
        if isinstance(first[k], int | float)
        and isinstance(second[k], int | float)
        and not isinstance(first[k], bool)
    ]
    differing = [p for p in pairs if p[0] != p[1]]
    return differing[0] if len(differing) == 1 else None


def _place(answer: str, outcome: Outcome) -> int | None:
    """Where the answer first names the thing ``outcome`` was called for: one of its string
    argument values as written, or a Chinese place name of the same time zone."""
    found = [answer.find(v) for v in outcome.arguments.values() if isinstance(v, str) and v and v in answer]
    zones = {resolve_zone(v) for v in outcome.arguments.values() if isinstance(v, str)} - {None}
    for at in range(len(answer)) if zones else ():
        if any(
            resolve_zone(answer[at : at + n]) in zones
            for n in (2, 3, 4)
            if _HAN.fullmatch(answer[at : at + n])
        ):
            found.append(at)
            break
    return min(found) if found else None


def order_note(messages: Sequence[Mapping[str, Any]], language: Language) -> str:
    """The note sending back an answer whose comparison has the wrong order (``compared`` is
    ``False``): the two things and their values, as the results give them."""
    first, second = served(messages)
    values = _differing(first.result, second.result) or (0.0, 0.0)
    names = [
        next((str(v) for v in o.arguments.values() if isinstance(v, str)), o.tool) for o in (first, second)
    ]
    shown = [f"{v:g}" for v in values]
    return ORDER[language].format(
        first=names[0], second=names[1], first_value=shown[0], second_value=shown[1]
    )
