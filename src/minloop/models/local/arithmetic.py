"""The expression of a request's arithmetic follow-up, written from the numbers it multiplies.

When a request needs a result multiplied ("Microsoft's share price in euros", "250 US dollars in
yen", "10 shares of Nvidia"), ``policy.follow_up`` calls the calculator. Told to call it with the
numbers of the request and of the results, the 0.5B model wrote the calculator's own example,
``(17 + 5) * 3``, or that example with the amount in it, ``(250 + 5) * 3``, on the development set
of ``benchmarks/user_tools_dev.py``. ``product`` writes the expression itself when every factor is
plain to read: the one amount the request states that no call took, a currency tool's rate, and
the one price of each other result. A rate is used only the way it was asked for: its base is
the currency of the price result, or the currency the request names beside its amount ("250
US dollars", "100 欧元"); a rate the other way round would give a sure-looking wrong answer. It
multiplies only those, and only two or more of them; otherwise the model is asked, as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...language import code_names
from .results import Outcome

__all__ = ["AMOUNT", "amounts", "calculator", "product", "written"]

# An amount: a number not inside a date, a time, an id or a code ("A1234", "2026-12-05", "BA117").
AMOUNT = re.compile(r"(?<![A-Za-z0-9_.:/-])\d+(?:\.\d+)?(?![A-Za-z0-9_:/-]|\.\d|\s*[年月日号点时分])")

_COUNTS_EN = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_COUNT_EN = re.compile(rf"\b(?P<word>{'|'.join(_COUNTS_EN)})\s+(?=[a-z])", re.IGNORECASE)
_COUNT_ZH = re.compile(r"(?P<word>[两二三四五六七八九十])(?=[张晚股个份杯本位瓶件台辆套间])")
_COUNTS = (
    {word: n for n, word in enumerate(_COUNTS_EN, start=2)}
    | {ch: n for n, ch in enumerate("二三四五六七八九十", start=2)}
    | {"两": 2}
)

_PRICE = re.compile(r"price|cost|fare", re.IGNORECASE)
_RATE = re.compile(r"rate", re.IGNORECASE)


def amounts(text: str) -> list[float]:
    """The amounts ``text`` states: its numbers (``AMOUNT``), and counts written as words ("two
    tickets", "three nights", "两张票", "三晚")."""
    found = [float(n) for n in AMOUNT.findall(text)]
    return found + [
        float(_COUNTS[m["word"].lower()]) for m in (*_COUNT_EN.finditer(text), *_COUNT_ZH.finditer(text))
    ]


def calculator(tools: Sequence[Mapping[str, Any]]) -> str | None:
    """The one tool that evaluates an arithmetic expression, if there is exactly one."""
    found = [
        str(fn.get("name"))
        for fn in (t.get("function") or {} for t in tools)
        if list((fn.get("parameters") or {}).get("properties") or {}) == ["expression"]
    ]
    return found[0] if len(found) == 1 else None


def product(
    text: str, amounts: Sequence[float], done: Sequence[Outcome], currency_tool: str | None
) -> str | None:
    """``a * b [* c]`` from the request's (``text``) untaken ``amounts`` (one at most), the rate
    a call to ``currency_tool`` returned and the price each other call returned (``done``: the
    calls since the user spoke, ``results.outcomes``), or ``None`` when a factor is not plain (two
    amounts, two prices in one result, a rate whose base is not the currency of what it
    multiplies) or fewer than two are found."""
    if len(amounts) > 1:
        return None
    factors = [written(a) for a in amounts]
    priced = [o.result for o in done if o.tool != currency_tool]
    for outcome in done:
        rate = outcome.tool == currency_tool
        if rate and not _based(outcome.arguments, text, amounts, priced):
            return None
        found = _numbers_under(_RATE if rate else _PRICE, outcome.result, text)
        if len(found) != 1:
            return None
        factors += found
    return " * ".join(factors) if len(factors) >= 2 else None


def _based(arguments: Mapping[str, Any], text: str, amounts: Sequence[float], priced: Sequence[Any]) -> bool:
    """Whether a rate call's base currency is that of the price it multiplies (the results'
    ``currency``) or, for an amount of the request, the one named beside that amount."""
    base = str(arguments.get("base") or "").upper()
    if not base:
        return False
    if priced:
        return all(isinstance(p, dict) and str(p.get("currency", "")).upper() == base for p in priced)
    found = re.search(rf"(?<![\d.]){re.escape(written(amounts[0]))}(?![\d])", text) if amounts else None
    if found is None:
        return False
    names = (base.lower(), *code_names(base))
    after, before = text[found.end() :].lstrip().lower(), text[: found.start()].rstrip().lower()
    return after.startswith(names) or before.endswith(names)


def _numbers_under(key: re.Pattern[str], data: Any, text: str = "") -> list[str]:
    """The numbers of a JSON result's top level whose key ``key`` matches, as written; without
    any, those of the one entry of a list in it that ``text`` names by a value ("the 07:04
    train" of a list of departures)."""
    if not isinstance(data, dict):
        return []
    found = [
        written(v)
        for k, v in data.items()
        if key.search(str(k)) and isinstance(v, int | float) and not isinstance(v, bool)
    ]
    entries = [e for v in data.values() if isinstance(v, list) for e in v if isinstance(e, dict)]
    own = [{v for v in e.values() if isinstance(v, str) and len(v) > 2} for e in entries]
    shared = set.intersection(*own) if own else set()  # "EUR" of every entry names none of them
    named = [e for e, values in zip(entries, own, strict=True) if any(v in text for v in values - shared)]
    return found or (_numbers_under(key, named[0]) if len(named) == 1 else [])


def written(value: float) -> str:
    """A number as the expression writes it: ``10`` for 10.0, ``415.1`` as it is."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))
