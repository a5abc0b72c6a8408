"""Dates written in the format a parameter's description names.

A description that says "The date, in the format mm-dd-yyyy" or "The date (month-day-year)"
names the order of a date's parts and the mark between them; ``date_format`` reads it, and
``in_format`` writes a date the model gave another way ("2022-08-16", "2022/08/16") in it
("08-16-2022"). A date whose month and day could be either way round ("03/04/2023") and
anything that is no date are left as they are.
"""

from __future__ import annotations

import re

__all__ = ["date_format", "in_format"]

_PART = {"y": "y", "m": "m", "d": "d", "year": "y", "month": "m", "day": "d"}
_CODED = re.compile(
    r"(?<![a-z])(y{2,4}|m{1,2}|d{1,2})([-/.])(y{2,4}|m{1,2}|d{1,2})\2(y{2,4}|m{1,2}|d{1,2})(?![a-z])"
)
_WORDED = re.compile(r"\b(year|month|day)([-/.])(year|month|day)\2(year|month|day)\b")
_DATE = re.compile(r"\s*(\d{1,4})([-/.])(\d{1,2})\2(\d{1,4})\s*")


def date_format(description: str) -> tuple[str, str] | None:
    """The order of a date's parts (``"mdy"``) and their separator that ``description`` names,
    or ``None`` when it names none."""
    text = description.lower()
    found = _CODED.search(text) or _WORDED.search(text)
    if found is None:
        return None
    order = "".join(_PART[found.group(i)[0] if found.re is _CODED else found.group(i)] for i in (1, 3, 4))
    return (order, found.group(2)) if sorted(order) == ["d", "m", "y"] else None


def in_format(value: str, form: tuple[str, str]) -> str:
    """``value`` written in ``form`` (from ``date_format``) when it is an unambiguous date."""
    match = _DATE.fullmatch(value)
    if match is None:
        return value
    first, _, second, last = match.groups()
    if len(first) == 4:
        year, month, day = first, second, last
    elif len(last) == 4:
        a, b = int(first), int(second)
        if a > 12 >= b:
            day, month = first, second
        elif b > 12 >= a:
            month, day = first, second
        else:
            return value  # "03/04/2023": March 4th or April 3rd
        year = last
    else:
        return value
    if not (1 <= int(month) <= 12 and 1 <= int(day) <= 31):
        return value
    parts = {"y": year, "m": f"{int(month):02d}", "d": f"{int(day):02d}"}
    order, mark = form
    return mark.join(parts[p] for p in order)
