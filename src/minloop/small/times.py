"""Times as answers write them, for the evidence check: ``TIME`` finds a written time (05:02,
5:02:23, 3 pm, 下午3点04分, 三点零四分; never a UTC offset such as +09:00)."""

from __future__ import annotations

import re

from ..language import chinese_number

__all__ = ["TIME", "hour_in", "said", "stated", "time_of"]

_CN_NUMERAL = "[零〇一二两三四五六七八九十]"
TIME = re.compile(
    r"(?<![\d:+\-])(?P<h1>\d{1,2}):(?P<m1>\d{2})(?::\d{2})?(?!\d)(?:\s*(?P<x1>[ap](?:\.m\.|m))(?![a-z]))?"
    r"|\b(?P<h2>\d{1,2})\s*(?:(?P<x2>[ap](?:\.m\.|m))|o'clock)(?![a-z])"
    rf"|(?P<x3>上午|早上|凌晨|中午|下午|傍晚|晚上)?(?P<h3>\d{{1,2}}|{_CN_NUMERAL}{{1,3}})\s*[点點时時]"
    rf"(?:\s*(?P<m3>\d{{1,2}}|{_CN_NUMERAL}{{1,4}})\s*分|(?![\d零〇一二两三四五六七八九]))",
    re.IGNORECASE,
)
_AFTERNOON = ("p", "下午", "傍晚", "晚上", "中午")


def stated(text: str) -> list[re.Match[str]]:
    """The times a text states: every ``TIME`` but 一点, as often "a little" as one o'clock."""
    return [m for m in TIME.finditer(text) if m.group() not in ("一点", "一點")]


def time_of(match: re.Match[str]) -> tuple[int | None, int | None]:
    """The hour and minute a time states (``None`` for what it leaves out or cannot be read); the
    hour on the 24-hour clock when the time says am or pm (下午, 晚上...), else as written."""
    hour = _integer(match["h1"] or match["h2"] or match["h3"])
    minute_text = match["m1"] or match["m3"]
    half = (match["x1"] or match["x2"] or match["x3"] or "").lower()
    if hour is not None and half and hour <= 12 and not (half == "中午" and hour >= 11):
        hour = hour % 12 + (12 if half.startswith(_AFTERNOON) else 0)
    return hour, _integer(minute_text) if minute_text else None


def said(match: re.Match[str]) -> bool:
    """Whether a time says which half of the day it is (5:35 pm, 下午3点): then its hour is exact."""
    return bool(match["x1"] or match["x2"] or match["x3"])


def hour_in(hour: int, hours: set[int], exact: bool = False) -> bool:
    """Whether ``hour`` is one of ``hours``; unless ``exact``, also as a 12-hour clock writes it
    (3 for 15)."""
    return hour in hours or (not exact and 1 <= hour <= 12 and hour + 12 in hours)


def _integer(text: str) -> int | None:
    value = float(text) if text.isdigit() else chinese_number(text)
    return int(value) if value is not None else None
