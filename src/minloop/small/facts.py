"""The facts an answer states that the conversation does not give, for the evidence check
(``minloop.small.evidence``).

What counts as found, deliberately lenient so that honest answers pass:

* a time (05:02, 3 pm, 下午3点04分) when its hour and minute are those of a clock reading in the
  evidence (the hour also in 12-hour form: 3 for 15, but "3 am" and "上午3点" are not 15:00);
  a UTC offset (+09:00) is no reading;
* any other number equal to one in the evidence outside clock readings (so the "20" of a 20:03
  reading supports neither "20°C" nor "20%"), or to it rounded (3.14 for 3.14159, 700万 for
  7006652 within 0.5%), or to one worked out from the last results (a count, a sum, a
  difference...: ``.derived``); a bare number may name a reading's hour; 0 and 1 written without
  decimals, and list markers ("1.");
* a name when most of its words appear in the evidence (or name the same time zone);
* an e-mail address or a link when the evidence has it as written (any case).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..language.numerals import NOT_A_UNIT, numbers_in
from .drawn import LIST_MARKER
from .times import TIME, hour_in, said, stated, time_of
from .values import Evidence

__all__ = ["leaves", "typed", "unsupported"]

_FACT = re.compile(
    rf"(?<![A-Za-z0-9_.])\d[\d,]*(?:\.\d+)?(?:\s?(?:°[CF]?|℃|%|％|[万亿千百]+{NOT_A_UNIT}|[a-zA-Z]{{1,3}}\b))?"
    r"|(?<![\d.])[零〇一二两三四五六七八九十百千万亿]{2,}(?:点[零〇一二三四五六七八九]+)?"
)
_ADDRESS = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|https?://[^\s，。、）)]+")
_UNIT = re.compile(
    r"\s?(?:(?:degrees?|percent|celsius|fahrenheit|dollars?|years?|people)\b|[度元岁米])", re.I
)
_TIMELY = re.compile(r"hour|time|clock|[时時点點]", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|[A-Z]\.))+")
_LEADING = frozenset({
    "The", "A", "An", "In", "On", "At", "It", "I", "This", "That", "These", "Those", "My", "Your", "Our", "Their",
    "Today", "Now", "Sorry",
})  # fmt: skip


def unsupported(answer: str, evidence: Evidence) -> list[str]:
    """The facts ``answer`` states that ``evidence`` does not give, as written, without repeats.

    A time is compared as a time: its hour and minute with the clock readings in the evidence
    (a 12-hour "3 pm" for 15:00 too). Any other number is compared with the evidence's numbers
    outside clock readings, so the "20" of a 20:03 reading supports neither "20°C" nor "20%";
    a bare number may still name a reading's hour. A typed answer (a JSON object or list) is
    read value by value, and there a bare number names an hour only under a key that speaks of
    time ("hour", "time", "时"): the 12 of a 12:00 reading is no ``"temperature_c": 12.0``.
    """
    data = typed(answer)
    if data is None:
        return _unsupported(answer, evidence, clock=True)
    found = (_unsupported(text, evidence, bool(_TIMELY.search(key))) for key, text in leaves(data))
    return list(dict.fromkeys(fact for facts in found for fact in facts))


def _unsupported(answer: str, evidence: Evidence, clock: bool) -> list[str]:
    """``unsupported`` for a text; with ``clock`` off, a bare number never names a reading's hour."""
    hours, minutes = _readings(evidence.text)
    known = [abs(n) for n in numbers_in(TIME.sub(" ", evidence.text))] + evidence.derived
    facts: dict[str, None] = {}
    for match in stated(answer):
        hour, minute = time_of(match)
        if hour is None or not (hour_in(hour, hours, said(match)) and minute in (None, *minutes)):
            facts.setdefault(match.group().strip())
    rest = TIME.sub(lambda m: " " * len(m.group()), answer)  # positions kept for the list markers
    markers = {m.start(1) for m in LIST_MARKER.finditer(rest)}
    for match in _FACT.finditer(rest):
        values = [abs(v) for v in numbers_in(match.group())]
        if match.start() in markers or not values:
            continue
        unit = bool(re.search(r"\D\s*$", match.group().strip()) or _UNIT.match(rest, match.end()))
        value = max(values)
        hours_named = hours if clock and not unit else set()
        if not _supported(
            value, _tolerance(match.group(), value), known, hours_named, "." not in match.group()
        ):
            facts.setdefault(match.group().strip())
    for match in _NAME.finditer(answer):
        words = match.group().split()
        words = words[1:] if words[0] in _LEADING else words
        if len(words) >= 2 and not evidence.has(" ".join(words)):
            facts.setdefault(" ".join(words))
    for match in _ADDRESS.finditer(answer):  # an e-mail address or a link, as written
        if match.group().lower() not in evidence.text.lower():
            facts.setdefault(match.group())
    return list(facts)


def typed(answer: str) -> dict[str, Any] | list[Any] | None:
    """The JSON object or list a typed answer is, else ``None``."""
    if not answer.lstrip().startswith(("{", "[")):
        return None
    try:
        data = json.loads(answer)
    except ValueError:
        return None
    return data if isinstance(data, dict | list) else None


def leaves(data: Any, key: str = "") -> list[tuple[str, str]]:
    """The strings and numbers of a JSON value, each with the key it stands under (as written)."""
    if isinstance(data, dict):
        return [leaf for k, item in data.items() for leaf in leaves(item, str(k))]
    if isinstance(data, list):
        return [leaf for item in data for leaf in leaves(item, key)]
    if isinstance(data, bool) or data is None:
        return []
    return [(key, data if isinstance(data, str) else json.dumps(data))]


def _readings(text: str) -> tuple[set[int], set[int]]:
    times = [time_of(m) for m in TIME.finditer(text)]
    return {h for h, _ in times if h is not None}, {m for _, m in times if m is not None}


def _tolerance(written: str, value: float) -> float:
    """How far a number may be from the evidence: a rounded one ("700万", "3.14") within its precision."""
    digits = re.sub(r"[^\d.]", "", written.split("e")[0])
    whole, _, decimals = digits.partition(".")
    significant = len((whole + decimals).lstrip("0")) if decimals else len(whole.lstrip("0").rstrip("0"))
    unit = 0.5 * 10 ** -len(decimals) if decimals else 0.5
    return max(unit, 0.005 * value) if 0 < significant <= 3 or not digits else unit


def _supported(
    value: float, tolerance: float, known: list[float], hours: set[int], plain: bool = True
) -> bool:
    """A number found among ``known`` (within ``tolerance``), or naming one of the clock ``hours``;
    0 and 1 always, when ``plain`` (written without decimals: "1.0" is a rate, not "one")."""
    if (plain and value in (0.0, 1.0)) or any(abs(value - n) <= tolerance for n in known):
        return True
    return value.is_integer() and bool(hours) and hour_in(int(value), hours)
