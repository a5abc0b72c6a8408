"""Numbers an answer may work out from the tool results rather than copy them, for the evidence
check: "how many people work in sales and legal together" is answered by adding two results,
"how many lifts are closed" by a difference, "what is the total across all courses" by a sum.

``derived`` gives, from the tool results since the user last spoke and the numbers of the
user's last message: the number of items of each list, the sum and the mean of each list's
numbers (of one key, for a list of objects), and the sum, difference, product, quotient and
mean of any two of those numbers or counts (the first 24; a text gives its number when it holds
just one: "980.20 CHF", not a date or a time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from ..language import last_said, numbers_in
from .results import outcomes

__all__ = ["derived"]

OPERANDS = 24


def derived(messages: Sequence[Mapping[str, Any]]) -> list[float]:
    """The numbers worked out from the last results and the user's last message (see the module)."""
    operands: list[float] = []
    found: list[float] = []
    for done in reversed(outcomes(messages)):
        _walk(done.result, operands, found)
    operands += numbers_in(last_said(messages))
    operands = list(dict.fromkeys(operands))[:OPERANDS]
    for a, b in combinations(operands, 2):
        found += [a + b, abs(a - b), a * b, (a + b) / 2]
        found += [x / y for x, y in ((a, b), (b, a)) if y]
    return found


def _walk(data: Any, operands: list[float], found: list[float]) -> None:
    """Collect ``data``'s numbers into ``operands``, and its lists' counts, sums and means into ``found``."""
    if isinstance(data, dict):
        for key, item in data.items():
            if key != "trace_id":
                _walk(item, operands, found)
    elif isinstance(data, list):
        found.append(float(len(data)))
        operands.append(float(len(data)))  # two lists' counts add up
        for column in _columns(data):
            found += [sum(column), sum(column) / len(column)]
        for item in data:
            _walk(item, operands, found)
    elif isinstance(data, int | float) and not isinstance(data, bool):
        operands.append(abs(float(data)))
    elif isinstance(data, str) and len(numbers := numbers_in(data)) == 1:  # "980.20 CHF", not a date
        operands.append(abs(numbers[0]))


def _columns(items: list[Any]) -> list[list[float]]:
    """The numbers of a list of numbers, or of each key of a list of objects, when there are two or more."""
    if all(_is_number(x) for x in items):
        columns = [items]
    else:
        keys = {k for x in items if isinstance(x, dict) for k in x}
        columns = [[x.get(k) for x in items if isinstance(x, dict)] for k in sorted(keys)]
    return [[float(v) for v in c] for c in columns if len(c) >= 2 and all(_is_number(v) for v in c)]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
