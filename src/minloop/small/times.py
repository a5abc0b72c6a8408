"""Times as answers write them, and the clock readings tools give, for the evidence check.

``TIME`` finds a written time (05:02, 5:02:23, 3 pm, 下午3点04分, 三点零四分; never a UTC offset
such as +09:00). ``readings`` lists the clock readings of a text as "HH:MM". ``placed`` judges
the times an answer gives for a place: after one UTC reading, "东京现在是10:27" gives Tokyo the
UTC time, while "东京现在是19:27" is that reading's moment seen in Tokyo. A reading is an instant the evidence writes in ISO
form with its offset (``2026-12-03T10:27:44+00:00``, as the built-in clock gives it), so the
place's own time at that instant is known; without such instants the rule does not apply.
"""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from ..language import chinese_number, zones_in

__all__ = ["TIME", "hour_in", "instants", "placed", "readings", "said", "shown", "stated", "time_of"]

_CN_NUMERAL = "[零〇一二两三四五六七八九十]"
TIME = re.compile(
    r"(?<![\d:+\-])(?P<h1>\d{1,2}):(?P<m1>\d{2})(?::\d{2})?(?!\d)(?:\s*(?P<x1>[ap](?:\.m\.|m))(?![a-z]))?"
    r"|\b(?P<h2>\d{1,2})\s*(?:(?P<x2>[ap](?:\.m\.|m))|o'clock)(?![a-z])"
    rf"|(?P<x3>上午|早上|凌晨|中午|下午|傍晚|晚上)?(?P<h3>\d{{1,2}}|{_CN_NUMERAL}{{1,3}})\s*[点點时時]"
    rf"(?:\s*(?P<m3>\d{{1,2}}|{_CN_NUMERAL}{{1,4}})\s*分|(?![\d零〇一二两三四五六七八九]))",
    re.IGNORECASE,
)
_AFTERNOON = ("p", "下午", "傍晚", "晚上", "中午")
_INSTANT = re.compile(r"\b(\d{4}-\d{2}-\d{2})[tT ](\d{2}:\d{2}(?::\d{2})?)(?:\.\d+)?([+-]\d{2}:?\d{2}|[zZ])")
_SENTENCE = re.compile(r"(?:[^。！？!?\n.]|\.(?!\s|$))+")
_CLAUSE = re.compile(r"[，；;、]|,(?=\s|$)|\s(?:and|but|while)\s", re.IGNORECASE)


def stated(text: str) -> list[re.Match[str]]:
    """The times a text states: every ``TIME`` but 一点, as often "a little" as one o'clock."""
    return [m for m in TIME.finditer(text) if m.group() not in ("一点", "一點")]


def readings(text: str) -> list[str]:
    """The clock readings in a text, as "HH:MM", without repeats."""
    found = (time_of(m) for m in TIME.finditer(text))
    return list(dict.fromkeys(f"{h:02d}:{m:02d}" for h, m in found if h is not None and m is not None))


def shown(text: str) -> list[str]:
    """The clock readings of a text as a note quotes them: "10:27 (UTC+00:00)" for an instant
    written with its offset, else as ``readings`` gives them."""
    moments = instants(text)
    if not moments:
        return readings(text)
    return list(dict.fromkeys(f"{t:%H:%M} (UTC{t.isoformat()[-6:]})" for t in moments))


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


def instants(text: str) -> list[datetime]:
    """The moments a text writes in ISO form with an offset, without repeats."""
    found: dict[datetime, None] = {}
    for date, clock, offset in _INSTANT.findall(text):
        try:
            found.setdefault(datetime.fromisoformat(f"{date}T{clock}{offset.upper()}"))
        except ValueError:
            continue
    return list(found)


def placed(answer: str, evidence: str) -> dict[int, str | None]:
    """The times of ``answer`` given for a place, judged against the instants in ``evidence``.

    Keys are where each such time starts in ``answer``; the value is ``None`` when one of the
    evidence's instants, seen in one of the places its clause names ("in Tokyo", "东京和纽约"),
    has that hour and minute, else the clause, as written. A clause naming no place may speak of
    any place its sentence names ("in New York it is December 3, at 6:35", "At 20:37, Thursday,
    in Tokyo"). Empty without instants.
    """
    moments = instants(evidence)
    verdicts: dict[int, str | None] = {}
    for sentence in _SENTENCE.finditer(answer) if moments else ():
        named = zones_in(sentence.group())
        for start, end in _clauses(sentence) if named else ():
            clause = answer[start:end]
            zones = zones_in(clause) or named
            local = [moment.astimezone(ZoneInfo(zone)) for moment in moments for zone in zones]
            for match in stated(clause):
                hour, minute = time_of(match)
                right = hour is not None and any(
                    hour_in(hour, {t.hour}, said(match)) and minute in (None, t.minute) for t in local
                )
                verdicts[start + match.start()] = None if right else clause.strip()
    return verdicts


def _clauses(sentence: re.Match[str]) -> list[tuple[int, int]]:
    """Where the clauses of a sentence start and end in its text."""
    at = sentence.start()
    marks = (p for m in _CLAUSE.finditer(sentence.group()) for p in (at + m.start(), at + m.end()))
    cuts = [at, *marks, sentence.end()]
    return [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2) if cuts[i] < cuts[i + 1]]


def _integer(text: str) -> int | None:
    value = float(text) if text.isdigit() else chinese_number(text)
    return int(value) if value is not None else None
