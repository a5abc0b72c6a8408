"""A Chinese request to the embedded model with a user's own (English) tools (``LocalModel(guide=True)``).

Measured on ``benchmarks/user_tools_dev.py``, the 0.5B model, left to itself, answered half the
Chinese requests in English, and answered many Chinese requests that a tool serves without
calling it ("英镑兑日元的汇率是多少？" got a made-up rate). Two rules here:

* ``answer_in``: a Chinese request's answer is decoded under a pattern that makes it begin in
  Chinese, or with a name the user wrote in Latin letters ("Ada Lovelace 的邮箱是 ..."): once it
  has begun in Chinese the model goes on in Chinese, even from English results. (Digits first
  are not allowed: the model then wrote "1.2500000000000001美元"; and a name three times at
  most: allowed any number of times, it wrote a tracking number to the token limit.)
* ``with_english``: the request's English translation (made once, to rank and ground the calls)
  is shown to the model before its first decision, in a note after the request: the tools are
  described in English. Of the twelve Chinese requests of the development set that the 0.5B
  model had answered without a call, it then called a tool for six (two of them the wrong
  one), and two of seven that had called answered instead; it turns a Chinese request that no
  result can serve into a call whose failure is then told, more than it adds right answers.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ...language import Language, user_language
from ..base import ModelRequest

__all__ = ["CHINESE", "WORDS", "answer_in", "first_chinese", "in_english", "latin_names", "with_english"]

# The answer begins with a Chinese character; the rest is any JSON string content.
CHINESE = r'^[\u4e00-\u9fff](?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*$'

# An English answer in words: it does not begin as JSON (given the calculator's result, the 1.5B
# model answered '{"expression": "250 * 151.2", "result": 37800.0}').
WORDS = r'^(?:[^{\["\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*$'
_JSON = re.compile(r"\bjson\b", re.IGNORECASE)

_LATIN_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.'@_-]*(?:\s+[A-Za-z0-9][A-Za-z0-9.'@_-]*)*")


def answer_in(
    answer: dict[str, Any], language: Language, said: str = "", tools: bool = False
) -> dict[str, Any]:
    """The answer schema ``{"answer": string}`` for a request in ``language``: for Chinese, the
    string under ``CHINESE``, which may first give a name the user wrote in Latin letters
    (``said`` is the user's message: "Ada Lovelace 的邮箱是 ..."); a typed answer or an English
    one beside ``tools`` in words (``WORDS``: not beginning as JSON, unless the user asks for
    JSON); a typed answer as it is."""
    inner = answer.get("properties", {}).get("answer")
    if inner != {"type": "string"} or (language != "zh" and (not tools or _JSON.search(said))):
        return answer
    if language != "zh":
        return {**answer, "properties": {"answer": {"type": "string", "pattern": WORDS}}}
    names = "".join(f"{re.escape(name).replace(chr(92) + ' ', ' ')}|" for name in latin_names(said))
    pattern = f"^(?:(?:{names[:-1]}) ?){{0,3}}" + CHINESE[1:] if names else CHINESE
    return {**answer, "properties": {"answer": {"type": "string", "pattern": pattern}}}


def latin_names(text: str) -> list[str]:
    """The runs of Latin letters and digits in a Chinese text ("Ada Lovelace", "A1234"), and their
    words, longest first; not a number alone: allowed the "12" of "2026年12月5日", the 1.5B model
    began its answer "122026年12月5日..."."""
    runs = [r.strip() for r in _LATIN_RUN.findall(text)]
    words = [w for r in runs for w in r.split()]
    named = {n for n in [*runs, *words] if re.search(r"[A-Za-z]", n)}
    return sorted(named, key=lambda n: (-len(n), n))[:12]


def in_english(english: str) -> str:
    """The note that gives the model a non-English request's English translation before it decides:
    the tools are described in English."""
    return f'The user\'s message in English: "{english}"'


def first_chinese(request: ModelRequest) -> bool:
    """Whether ``request`` is a Chinese request's first decision with tools: it is translated
    first, so that grounding finds a call's English values in the translation too ("MSFT" for "微软")."""
    last = request.messages[-1] if request.messages else {}
    chinese = isinstance(last.get("content"), str) and user_language(request.messages) == "zh"
    return bool(request.tools) and last.get("role") == "user" and chinese


def with_english(request: ModelRequest, english: str | None) -> ModelRequest:
    """``request`` with the note giving its English translation after the user's message (as is
    without one)."""
    if not english:
        return request
    return replace(request, messages=[*request.messages, {"role": "system", "content": in_english(english)}])
