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
from .pairs import pairs
from .policy import since_user
from .results import Outcome, served
from .signs import FALLING, RISING

__all__ = ["ORDER", "compared", "differing", "named", "order_note", "placed", "shown_names"]

ORDER: dict[Language, str] = {
    "en": "Your answer compares {first} and {second} the wrong way round: the results give {first_value} "
    "for {first} and {second_value} for {second}, so {higher} is higher and {lower} is lower. "
    "Answer again from these values.",
    "zh": "你的回答把 {first} 和 {second} 比反了：工具结果中 {first} 是 {first_value}，{second} 是 "
    "{second_value}，所以 {higher} 更高，{lower} 更低。请根据这些数值重新回答。",
}
_HAN = re.compile(r"[\u3400-\u9fff]+")

_MORE_EN = r"warmer|hotter|higher|more expensive|dearer|pricier|bigger|larger|greater|heavier|longer|more"
_LESS_EN = r"colder|cooler|lower|cheaper|less expensive|smaller|fewer|lighter|shorter|less"
_MORE_ZH = r"暖和|暖|热|高|贵|多|大|重|长"
_LESS_ZH = r"冷|凉|低|便宜|少|小|轻|短"
_EN = re.compile(rf"\b(?:(?P<more>{_MORE_EN})|(?P<less>{_LESS_EN}))\b", re.IGNORECASE)
_ZH = re.compile(rf"(?:更|还要|要)?(?:(?P<more>{_MORE_ZH})|(?P<less>{_LESS_ZH}))")
_KEYS = [  # what a comparative compares, among the keys of a result that differ
    (
        re.compile(r"expensive|dear|pric|cheap|cost|贵|便宜", re.IGNORECASE),
        re.compile(r"price|cost|fare|rate|amount", re.IGNORECASE),
    ),
    (re.compile(r"warm|hot|cold|cool|暖|热|冷|凉", re.IGNORECASE), re.compile(r"temp", re.IGNORECASE)),
    (
        re.compile(f"{RISING.pattern}|{FALLING.pattern}", re.IGNORECASE),  # "rose more", "涨得多"
        re.compile(r"change|percent|pct", re.IGNORECASE),
    ),
]
_PIVOT = r"\bthan\b|\bcompared (?:to|with)\b"
_PART = r"(?:[^.。!！?？;；,，]|(?<=\d)[.,](?=\d))*"  # a decimal point or a thousands comma is no end
_CLAUSE = re.compile(rf"{_PART}(?:{_PIVOT}|比){_PART}", re.IGNORECASE)


def compared(answer: str, messages: Sequence[Mapping[str, Any]]) -> bool | None:
    """Whether the answer's comparison of two results has their order right (see the module)."""
    done = served(messages)
    clause = _CLAUSE.search(answer)
    if len(done) != 2 or clause is None:
        return None
    text = clause.group()
    word = _word(text)
    values = word and _differing(done[0].result, done[1].result, word.group(), text)
    places = [placed(text, o, alias) for o, alias in zip(done, named(messages), strict=True)]
    if not word or not values or places[0] is None or places[1] is None or places[0] == places[1]:
        return None
    first_is_more = values[0] > values[1]
    subject_first = places[0] < places[1]  # the thing named first is said to be more (or less)
    more = (word.lastgroup == "more") != bool(FALLING.search(text))  # "fell more": lower
    return (subject_first == first_is_more) == more


def named(messages: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """The names the request gave the two things ("苹果和亚马逊"): the first call's, then the
    second's; empty when it joins none."""
    return (pairs(since_user(messages)[0]) or [("", "")])[0]


def _word(text: str) -> re.Match[str] | None:
    """The comparative of a clause: the one right after "比", else the last before "than"."""
    if "比" in text:  # "东京比悉尼更暖和": the comparative right after the other thing
        word = _ZH.search(text, text.index("比") + 1, text.index("比") + 12)
    else:  # "warmer in Paris than in Berlin", "Paris is warmer than Berlin": the last before "than"
        than = re.search(_PIVOT, text, re.IGNORECASE)
        words = list(_EN.finditer(text, 0, than.start() if than else len(text)))
        word = words[-1] if words else None
    return word


def _differing(first: Any, second: Any, word: str = "", clause: str = "") -> tuple[float, float] | None:
    """The one number under the same key that differs between two results, else ``None``; of
    several, the one whose key is what ``word`` compares (a price for "cheaper", "贵"), or else
    what the words of its ``clause`` do ("rose more": the change)."""
    found = differing(first, second)
    if len(found) > 1:
        keys = next((k for w, k in _KEYS if w.search(word)), None) or _nearest(clause, word)
        found = {k: v for k, v in found.items() if keys and keys.search(k)}
    return next(iter(found.values())) if len(found) == 1 else None


def differing(first: Any, second: Any) -> dict[str, tuple[float, float]]:
    """The numbers under the same key that differ between two results, by key, in the first's order."""
    if not isinstance(first, Mapping) or not isinstance(second, Mapping):
        return {}
    return {
        k: (float(first[k]), float(second[k]))
        for k in first
        if k in second
        and isinstance(first[k], int | float)
        and isinstance(second[k], int | float)
        and not isinstance(first[k], bool)
        and first[k] != second[k]
    }


def _nearest(clause: str, word: str) -> re.Pattern[str] | None:
    """The keys of the comparison whose word in ``clause`` is nearest its comparative ``word``
    ("rose more today with a price of...": the change, not the price)."""
    at = clause.find(word)
    near = [(abs(m.start() - at), keys) for w, keys in _KEYS for m in w.finditer(clause)]
    return min(near, key=lambda found: found[0])[1] if near and at >= 0 else None


def placed(answer: str, outcome: Outcome, alias: str = "") -> int | None:
    """Where the answer first names the thing ``outcome`` was called for: one of its string
    argument values as written, else the name the request gave it (``alias``), or a Chinese place
    name of the same time zone."""
    folded = answer.casefold()
    values = [v.casefold() for v in outcome.arguments.values() if isinstance(v, str) and v]
    found = [folded.find(v) for v in values if v in folded]
    if not found and alias and alias.casefold() in folded:
        found.append(folded.find(alias.casefold()))
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


def shown_names(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The two served things as a note names them: the call's value, or the name the request gave
    ("苹果" for "AAPL") when it does not write the call's value."""
    request, aliases = since_user(messages)[0], named(messages)
    called = [
        next((str(v) for v in o.arguments.values() if isinstance(v, str)), o.tool) for o in served(messages)
    ]
    return [
        alias if alias and value not in request else value
        for value, alias in zip(called, aliases, strict=True)
    ]


def order_note(answer: str, messages: Sequence[Mapping[str, Any]], language: Language) -> str:
    """The note sending back an answer whose comparison has the wrong order (``compared`` is
    ``False``): the two things, as the request names them, and their values, as the results
    give them."""
    first, second = served(messages)
    clause = _CLAUSE.search(answer)
    word = _word(clause.group()) if clause else None
    text = clause.group() if clause else ""
    values = _differing(first.result, second.result, word.group() if word else "", text) or (0.0, 0.0)
    names = shown_names(messages)
    shown = [f"{v:g}" for v in values]
    higher, lower = names if values[0] > values[1] else names[::-1]
    return ORDER[language].format(
        first=names[0],
        second=names[1],
        first_value=shown[0],
        second_value=shown[1],
        higher=higher,
        lower=lower,
    )
