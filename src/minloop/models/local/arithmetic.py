"""The expression of a request's arithmetic follow-up, written from the numbers it multiplies.

When a request needs a result multiplied ("Microsoft's share price in euros", "250 US dollars in
yen", "10 shares of Nvidia"), ``policy.follow_up`` calls the calculator. Told to call it with the
numbers of the request and of the results, the 0.5B model wrote the calculator's own example,
``(17 + 5) * 3``, or that example with the amount in it, ``(250 + 5) * 3``, on the development set
of ``benchmarks/user_tools_dev.py``. ``product`` writes the expression itself when every factor is
plain to read: the one amount the request states that no call took, a currency tool's rate, and
the one price of each other result. It multiplies only those, and only two or more of them;
otherwise the model is asked, as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["calculator", "product", "written"]

_PRICE = re.compile(r"price|cost|fare", re.IGNORECASE)
_RATE = re.compile(r"rate", re.IGNORECASE)


def calculator(tools: Sequence[Mapping[str, Any]]) -> str | None:
    """The one tool that evaluates an arithmetic expression, if there is exactly one."""
    found = [
        str(fn.get("name"))
        for fn in (t.get("function") or {} for t in tools)
        if list((fn.get("parameters") or {}).get("properties") or {}) == ["expression"]
    ]
    return found[0] if len(found) == 1 else None


def product(
    amounts: Sequence[float],
    calls: Sequence[dict[str, Any]],
    results: Sequence[str],
    currency_tool: str | None,
) -> str | None:
    """``a * b [* c]`` from the request's untaken ``amounts`` (one at most), the rate a call to
    ``currency_tool`` returned and the price each other call returned, or ``None`` when a factor
    is not plain (two amounts, two prices in one result, a failed call) or fewer than two are found."""
    if len(amounts) > 1 or len(calls) != len(results):
        return None
    factors = [written(a) for a in amounts]
    for call, text in zip(calls, results, strict=True):
        key = _RATE if call.get("name") == currency_tool else _PRICE
        found = _numbers_under(key, text)
        if len(found) != 1:
            return None
        factors += found
    return " * ".join(factors) if len(factors) >= 2 else None


def _numbers_under(key: re.Pattern[str], text: str) -> list[str]:
    """The numbers of a JSON result's top level whose key ``key`` matches, as written."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    return [
        written(v)
        for k, v in data.items()
        if key.search(str(k)) and isinstance(v, int | float) and not isinstance(v, bool)
    ]


def written(value: float) -> str:
    """A number as the expression writes it: ``10`` for 10.0, ``415.1`` as it is."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))
