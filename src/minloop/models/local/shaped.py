"""The same tool again for each other code a request names: "What is the status of orders A1234
and C5502?", "Who wrote 978-0-13-468599-1, and who wrote 978-0-262-03384-8?", "订单A1234和C5502
分别是什么状态？".

A code is a word with a digit ("A1234", "BA117", an ISBN), or two to five capitals ("AAPL"). When
the calls since the user spoke are of one tool and took a code the request writes, each other
word of the request with the code's shape (its runs of capitals, small letters and digits, about
as long) is looked up with the same tool, one call at a time. A code of capitals alone is taken
only when the request joins it to the first with "and", "or", a comma, "和"..., so that "AAPL's
price in EUR" does not look up "EUR". Dates and times are left to their own rules: "the flights
on 2026-12-05 and 2026-12-06" is not read here.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

__all__ = ["another", "runs", "shape"]

CALLS_AT_MOST = 4  # calls of the tool since the user spoke, this rule's own included
_WORD = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9][A-Za-z0-9_-]*(?<![_-])")
_DIGIT_CODE = re.compile(r"(?=.*\d)[A-Za-z0-9_-]+")
_CAPITALS = re.compile(r"[A-Z]{2,5}")
_DATE_OR_TIME = re.compile(r"\d{4}-\d{1,2}(?:-\d{1,2})?|\d{1,2}[:/.-]\d{1,2}(?:[:/.-]\d{2,4})?")
_JOINED = r"\s*(?:,|;|&|/|\band\b|\bor\b|\bvs\.?|和|与|跟|及|、|还是|或者?)\s*"


def shape(value: str) -> str:
    """A code's shape: "A" for a capital, "a" for a small letter, "9" for a digit ("BA117": "AA999")."""
    return re.sub(r"[0-9]", "9", re.sub(r"[a-z]", "a", re.sub(r"[A-Z]", "A", value)))


def runs(value: str) -> str:
    """A code's shape with each run written once ("BA117": "A9", "978-0-13-468599-1": "9-9-9-9-9")."""
    return re.sub(r"(.)\1+", r"\1", shape(value))


def another(
    text: str, calls: Sequence[Mapping[str, Any]], names: Collection[str]
) -> tuple[str, dict[str, Any]] | None:
    """The next call (tool and arguments) for a code of ``text`` of the same shape as one the calls
    took, that no call took yet (see the module); ``None`` when there is none."""
    tools = {c["name"] for c in calls}
    if len(tools) != 1 or not tools <= set(names) or len(calls) >= CALLS_AT_MOST:
        return None
    taken = {str(v).casefold() for c in calls for v in c["arguments"].values()}
    words = list(dict.fromkeys(_WORD.findall(text)))
    for key, value in calls[0]["arguments"].items():
        if not isinstance(value, str) or not _code(value) or value.casefold() not in text.casefold():
            continue
        for word in words:
            if word.casefold() not in taken and _alike(word, value, text):
                return calls[0]["name"], {**calls[0]["arguments"], key: word}
    return None


def _code(value: str) -> bool:
    if _DATE_OR_TIME.fullmatch(value):
        return False
    return bool(_DIGIT_CODE.fullmatch(value) or _CAPITALS.fullmatch(value))


def _alike(word: str, value: str, text: str) -> bool:
    """Whether ``word`` is a code of ``value``'s shape, about as long; a code of capitals alone
    only when joined to ``value`` in ``text``."""
    if not _code(word) or runs(word) != runs(value) or abs(len(word) - len(value)) > max(1, len(value) // 4):
        return False
    if _DIGIT_CODE.fullmatch(value):
        return True
    one, two = re.escape(value), re.escape(word)
    return bool(re.search(rf"\b{one}(?:'s)?{_JOINED}{two}\b|\b{two}(?:'s)?{_JOINED}{one}\b", text))
