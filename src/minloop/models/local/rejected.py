"""A call its tool rejected for the value it was given, called once more with the value the tool
expects, for ``LocalModel(guide=True)``.

Measured on ``benchmarks/user_tools_dev.py``, the 1.5B model called the stock quote with
"NVIDIA" for "How much do 10 shares of Nvidia cost?" and the exchange rate with "US" for "微软的
股价换算成欧元是多少？"; the tools answered "unknown ticker symbol: NVIDIA" and "unknown currency
code: US", and the model told the user the price was not available. A tool error that quotes a
value of its call says the value was wrong, not that the service failed: the same tool is
called once more, with a note saying what the tool did not accept. Grounding checks the new
value as any other, and a call made again as it was is not run (the model answers instead).
An error that quotes no value of the call (a service that is down, a timeout) is told as it is.

A value written in Chinese that the tool rejected, or found nothing for, is first tried in
English (``in_chinese``): the 1.5B model called a coin price with "比特币", which the tool did not
know as "bitcoin". Most services know things by their English names; the value's English is the
model's own translation of it, so the call still rests on what the user wrote.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ...language import Language
from .results import kind_of, reason

__all__ = ["REJECTED", "in_chinese", "retried", "since_retried"]

_HAN = re.compile(r"[\u3400-\u9fff]")

REJECTED: dict[Language, str] = {
    "en": '{tool} did not accept "{value}" ({reason}). Call {tool} again with the value it expects for what '
    "the user asked about, for example a code or a symbol instead of a name.",
    "zh": "{tool} 不接受“{value}”（{reason}）。请针对用户所问的内容，用它需要的取值再次调用 {tool}，例如用代码或符号代替名称。",
}


def retried(
    calls: Sequence[dict[str, Any]], results: Sequence[str], language: Language
) -> tuple[str, str] | None:
    """The tool to call again, and the note saying why, when the last call's result is an error
    that quotes one of its values and that tool was called once since the user spoke."""
    if not calls or len(calls) != len(results):
        return None
    call, error = calls[-1], _error(results[-1])
    if error is None or sum(c["name"] == call["name"] for c in calls) > 1:
        return None
    for value in call["arguments"].values():
        if isinstance(value, str) and len(value) >= 2 and _quotes(error, value):
            note = REJECTED[language].format(tool=call["name"], value=value, reason=reason(error))
            return call["name"], note
    return None


def in_chinese(calls: Sequence[dict[str, Any]], results: Sequence[str]) -> tuple[str, str] | None:
    """The argument (its name and value) of the last call that is written in Chinese, when the
    tool rejected that value or found nothing for it, and was called once since the user spoke."""
    if not calls or len(calls) != len(results):
        return None
    call, error = calls[-1], _error(results[-1])
    if sum(c["name"] == call["name"] for c in calls) > 1:
        return None
    try:
        empty = error is None and kind_of(json.loads(results[-1])) == "empty"
    except ValueError:
        empty = False
    for key, value in call["arguments"].items():
        if isinstance(value, str) and _HAN.search(value) and (empty or (error and _quotes(error, value))):
            return key, value
    return None


def since_retried(
    calls: Sequence[dict[str, Any]], results: Sequence[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The calls and results without each failed one that a later call of the same tool made good."""
    if len(calls) != len(results):
        return list(calls), list(results)
    served = [_error(r) is None for r in results]
    later = [
        {c["name"] for c, ok in zip(calls[i + 1 :], served[i + 1 :], strict=True) if ok}
        for i in range(len(calls))
    ]
    kept = [i for i, call in enumerate(calls) if served[i] or call["name"] not in later[i]]
    return [calls[i] for i in kept], [results[i] for i in kept]


def _error(result: str) -> str | None:
    """The message of a tool's own failure (``ERR_TOOL_FAILED``), else ``None``."""
    try:
        data = json.loads(result)
    except ValueError:
        return None
    if (
        isinstance(data, dict)
        and data.get("code") == "ERR_TOOL_FAILED"
        and isinstance(data.get("error"), str)
    ):
        return str(data["error"])
    return None


def _quotes(error: str, value: str) -> bool:
    return bool(re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", error, re.IGNORECASE))
