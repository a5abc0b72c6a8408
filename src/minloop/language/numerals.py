"""Numbers as people write them, in English and in Chinese.

``numbers_in(text)`` returns every number a text states:

* digits: ``1234``, ``12,000``, ``2.5``, ``1e-9``, with an English scale word after them
  (``100 million``) or a Chinese unit (``1.2万`` is 12000, ``3千万`` is 30000000);
* English number words: ``five``, ``twenty``, ``a dozen``, ``twice``, ``five million``, ``two dozen``;
* Chinese numerals: ``一千二百三十四`` (1234), ``两万``, ``三点五`` (3.5), ``二〇二六`` read digit
  by digit (2026), ``百分之五`` (5, and 0.05 as a fraction); not the 一 of words where it counts
  nothing (``一共`` "in all", ``一起`` "together", ``一样`` "the same", ``唯一`` "only");
* percentages (``5%``) also give their fraction (0.05).

``implied_numbers(text)`` returns the numbers its words imply: a week is 7 days, "quarterly"
4 times a year, "monthly" 12 (一周 and 季度 likewise); "each", "every", "per" and "next" (每)
one of a thing, "at rest" (静止) a speed of 0.
"""

from __future__ import annotations

import re

__all__ = ["chinese_number", "implied_numbers", "numbers_in"]

# A minus sign only where no word or number runs into it: "01-01-1980" is a date, "x = -1" negative.
_SIGN = r"(?:(?<![\w.-])-)?"
_NUMBER = re.compile(
    rf"(?<![\w.]){_SIGN}\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|{_SIGN}\d*\.?\d+(?:e[-+]?\d+)?", re.IGNORECASE
)
_WORD = re.compile(r"[a-z0-9]+")
_SCALES = {
    "hundred": 1e2,
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "trillion": 1e12,
    "dozen": 12.0,
}
_NUMBER_WORDS = {
    w: float(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
} | {
    "thirty": 30.0,
    "forty": 40.0,
    "fifty": 50.0,
    "sixty": 60.0,
    "seventy": 70.0,
    "eighty": 80.0,
    "ninety": 90.0,
    "hundred": 100.0,
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "half": 0.5,
    "quarter": 0.25,
    "once": 1.0,
    "twice": 2.0,
    "single": 1.0,
    "double": 2.0,
    "triple": 3.0,
    "dozen": 12.0,
    "first": 1.0,
    "second": 2.0,
    "third": 3.0,
    "decade": 10.0,
    "century": 100.0,
}
_IMPLIED = {
    "week": 7.0,
    "weeks": 7.0,
    "fortnight": 14.0,
    "weekly": 52.0,
    "monthly": 12.0,
    "quarterly": 4.0,
    "semiannually": 2.0,
    "biannually": 2.0,
    "daily": 365.0,
    "each": 1.0,  # "each hour": 1 hour; "the next month": 1 month
    "every": 1.0,
    "per": 1.0,
    "next": 1.0,
    "rest": 0.0,  # "starts from rest": 0 m/s
}
_IMPLIED_CJK = {
    "每": 1.0,
    "静止": 0.0,
    "周": 7.0,
    "星期": 7.0,
    "礼拜": 7.0,
    "季度": 4.0,
    "每季": 4.0,
    "每月": 12.0,
    "按月": 12.0,
}
_DIGITS = {
    ch: float(i)
    for i, chars in enumerate(
        ["零〇", "一壹", "二两貳贰兩", "三叁參", "四肆", "五伍", "六陆陸", "七柒", "八捌", "九玖"]
    )
    for ch in chars
}
_UNITS = {"十": 10.0, "拾": 10.0, "百": 100.0, "佰": 100.0, "千": 1e3, "仟": 1e3}
_BIG = {"万": 1e4, "萬": 1e4, "亿": 1e8, "億": 1e8}
_CN = "".join(_DIGITS) + "".join(_UNITS) + "".join(_BIG)
_CHINESE = re.compile(f"(?<![\\d.{_CN}])[{_CN}]+(?:点[{''.join(_DIGITS)}]+(?![{''.join(_DIGITS)}分]))?")
NOT_A_UNIT = "(?![卡克米瓦焦帕赫])"  # what follows 千 when it multiplies: 千克 is kg, 千卡 kcal, 千米 km
_DIGITS_WITH_UNIT = re.compile(rf"(\d+(?:\.\d+)?)\s*([十百千万亿萬億]+){NOT_A_UNIT}")
_PERCENT = re.compile(r"百分之|%|％")
# Words where 一 is no number: 一共 "in all", 一起 "together", 一样 "the same", 统一, 唯一, 万一 ...
_NOT_ONE = re.compile(
    f"(?<![{_CN}])(?:一(?=[共起样下直些般定切旦致边同律向再味贯齐])|[统唯]一|万一)(?![{_CN}])"
)


def chinese_number(text: str) -> float | None:
    """The value of a Chinese numeral (``一千二百三十四``, ``三点五``, ``二〇二六``), or None."""
    whole, _, fraction = text.partition("点")
    if not whole or any(ch not in _CN for ch in whole) or any(ch not in _DIGITS for ch in fraction):
        return None
    value = _integer(whole)
    if value is None:
        return None
    if fraction:
        value += float("0." + "".join(str(int(_DIGITS[ch])) for ch in fraction))
    return value


def _integer(text: str) -> float | None:
    if len(text) > 1 and all(ch in _DIGITS for ch in text):  # 二〇二六: read digit by digit
        return float("".join(str(int(_DIGITS[ch])) for ch in text))
    total = section = 0.0
    number: float | None = None
    for ch in text:
        if ch in _DIGITS:
            number = _DIGITS[ch]
        elif ch in _UNITS:
            section += (1.0 if number is None else number) * _UNITS[ch]
            number = None
        elif _BIG[ch] == 1e4:
            total += (section + (number or 0.0)) * 1e4 or 1e4
            section, number = 0.0, None
        else:
            total = (total + section + (number or 0.0)) * 1e8 or 1e8
            section, number = 0.0, None
    return total + section + (number or 0.0)


def numbers_in(text: str) -> list[float]:
    """Every number ``text`` states (see the module docstring), in no particular order."""
    lowered = text.lower()
    found = _digits(lowered) + _english_words(lowered) + _chinese(text)
    if _PERCENT.search(text):
        found += [n / 100 for n in _percentages(text)]
    return found


def implied_numbers(text: str) -> list[float]:
    """The numbers ``text``'s words of time imply (see the module docstring)."""
    found = [_IMPLIED[w] for w in _WORD.findall(text.lower()) if w in _IMPLIED]
    return found + [n for word, n in _IMPLIED_CJK.items() if word in text]


def _digits(text: str) -> list[float]:
    found: list[float] = []
    for match in _NUMBER.finditer(text):
        value = float(match.group().replace(",", ""))
        found.append(value)
        after = _WORD.match(text, match.end()) or _WORD.match(text, match.end() + 1)
        if after and after.group() in _SCALES:
            found.append(value * _SCALES[after.group()])
    for match in _DIGITS_WITH_UNIT.finditer(text):
        scale = 1.0
        for ch in match.group(2):
            scale *= _UNITS.get(ch) or _BIG[ch]
        found.append(float(match.group(1)) * scale)
    return found


def _english_words(text: str) -> list[float]:
    found: list[float] = []
    words = _WORD.findall(text)
    for i, word in enumerate(words):
        if word in _NUMBER_WORDS:
            value = _NUMBER_WORDS[word]
            nxt = words[i + 1] if i + 1 < len(words) else ""
            found.append(value * _SCALES[nxt] if nxt in _SCALES and nxt not in ("m", "k") else value)
    return found


def counts_nothing(text: str) -> bool:
    """Whether ``text`` has a word whose 一 counts nothing (一共, 一起, 一样, 唯一 ...)."""
    return _NOT_ONE.search(text) is not None


def _chinese(text: str) -> list[float]:
    text = _NOT_ONE.sub(" ", text) if counts_nothing(text) else text
    words = (m.group() for m in _CHINESE.finditer(text))
    values = (
        chinese_number(w) for w in words if w not in "百千万亿佰仟萬億"
    )  # 百分之, 千万 alone: no number
    return [v for v in values if v is not None]


def _percentages(text: str) -> list[float]:
    found = []
    for match in re.finditer(r"百分之([\d.]+|[" + _CN + r"点]+)", text):
        raw = match.group(1)
        value = float(raw) if raw[0].isdigit() else chinese_number(raw)
        if value is not None:
            found.append(value)
    found += [float(m.group(1)) for m in re.finditer(r"(\d+(?:\.\d+)?)\s*[%％]", text)]
    return found
