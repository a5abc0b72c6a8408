"""How an answer is judged in the request-set benchmarks (``user_tools_dev.py``, ``agent_eval.py``),
by rules of its own, independent of any check the loop makes:

* right: for a request a tool answers, a tool returned a result, every fact of the item is in
  the answer (a pattern, or a number equal to the item's rounded as the answer writes it),
  every number in it is in the request or a tool result (or is one of the item's facts, for
  arithmetic), and it does not say it cannot answer (a refusal that quotes the values is still
  a refusal); for a request no tool can serve, the answer says it cannot (or that nothing was
  found) and states no number absent from the request and the results;
* in language: a Chinese request's answer is written in Chinese (more Chinese characters than
  English words of its own, the words copied from the request and the results aside), an
  English request's has no Chinese of its own;
* trace ids: answers that show a run's trace id (``trc_...``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from minloop import RunResult
from minloop.language import numbers_in

Fact = str | float

DECLINE = re.compile(
    r"can't|cannot|can not|unable|don't have|do not have|not able|no (?:tool|access|way|information|data|record|"
    r"event|result|order|contact|restaurant|match)|not (?:available|found|find|provide|return|include|listed)|"
    r"(?:doesn't|does not|don't|do not|did not|didn't) (?:provide|return|include|give|find|know|respond|answer)|"
    r"nothing|sorry|couldn't|could not|isn't available|is not available|no such|unknown|failed|not responding|"
    r"无法|不能|没有|抱歉|不知道|不清楚|暂无|未提供|不提供|不支持|找不到|未找到|没找到|失败|未知|无此|不存在|未能",
    re.IGNORECASE,
)
CANNOT = re.compile(
    r"(?:can't|cannot|can not|unable to|not able to) answer|无法(?:可靠地)?(?:根据|回答)|不能回答|无法可靠",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"(?<![A-Za-z])\d+(?:\.\d+)?")  # not a label's ("PM2.5", "A1234")
_LABEL = re.compile(r"[A-Za-z]+(\d+(?:\.\d+)?)")
_WEEKDAY = re.compile(r"(?:星期|周|礼拜)[一二三四五六日天]")
_HAN = re.compile(r"[\u3400-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'.@-]*")
TRACE = re.compile(r"trc_\d{12}_[0-9a-f]{6}|trc_\w*")


def numbers(text: str) -> set[float]:
    """The numbers written in digits or in Chinese numerals (not "second" or "one", not the digits of
    a label such as "PM2.5" or "A1234"), without their sign."""
    plain = _LABEL.sub(" ", _WEEKDAY.sub(" ", re.sub(r"(?<=\d),(?=\d{3})", "", text)))
    written = numbers_in(re.sub(r"[A-Za-z]+", " ", plain))
    return {abs(float(m)) for m in _DIGITS.findall(plain)} | {abs(n) for n in written}


def invented(answer: str, sources: str, facts: Sequence[Fact] = ()) -> list[float]:
    """Numbers in the answer that neither the sources (rounded, or as a 12-hour hour) nor the facts give."""
    known = numbers(sources) | {abs(f) for f in facts if isinstance(f, float)}
    known |= {n / 100 for n in known}  # "-2.1%" is read as 0.021 too
    rounded = known | {round(n, k) for n in known for k in (0, 1, 2)}
    hours = {n - 12 for n in known if 13 <= n <= 23}
    return sorted(n for n in numbers(answer) if n not in rounded and n not in hours and n not in (0.0, 1.0))


def has_fact(answer: str, fact: Fact) -> bool:
    if isinstance(fact, str):
        return bool(re.search(fact, answer, re.IGNORECASE))
    for n in numbers(answer):
        decimals = len(str(n).split(".")[1].rstrip("0")) if not float(n).is_integer() else 0
        if round(fact, decimals) == n or abs(n - fact) <= 0.005 * abs(fact):
            return True
    return False


def in_language(answer: str, language: str, sources: str) -> bool:
    """Whether the answer is written in the request's language (see the module docstring)."""
    copied = {w.lower() for w in _LATIN_WORD.findall(sources)}
    own_words = [w for w in _LATIN_WORD.findall(answer) if w.lower() not in copied]
    han_sources = set(_HAN.findall(sources))
    if language == "zh":
        han = _HAN.findall(answer)
        return bool(han) and len(han) >= len(own_words)
    return not [c for c in _HAN.findall(answer) if c not in han_sources]


def judge(result: RunResult, group: str, language: str, request: str, facts: list[Fact]) -> dict[str, Any]:
    answer = result.output or ""
    results = " ".join(str(m.get("content")) for m in result.messages if m.get("role") == "tool")
    results_plain = TRACE.sub(" ", results)
    sources = f"{request} {results_plain}"
    extra = invented(TRACE.sub(" ", answer), sources, facts)
    if group in ("one_call", "two_step"):
        served = any(not r.error for s in result.steps for r in s.results)  # a guess is not an answer
        right = served and not extra and not CANNOT.search(answer) and all(has_fact(answer, f) for f in facts)
    else:
        right = bool(DECLINE.search(answer)) and not extra
    return {
        "right": right,
        "invented": extra,
        "in_language": in_language(answer, language, sources),
        "trace_id": bool(TRACE.search(answer)),
    }
