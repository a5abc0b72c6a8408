"""The answer's language, held while it is decoded (``WhileDecoding.language``).

Measured on ``benchmarks/user_tools_dev.py``, the 0.5B model, left to itself, answered half the
Chinese requests in English. ``answer_in``: a Chinese request's answer is decoded under a
pattern that makes it begin in Chinese, or with a name the user wrote in Latin letters ("Ada
Lovelace 的邮箱是 ..."): once it has begun in Chinese the model goes on in Chinese, even from
English results. (Digits first are not allowed: the model then wrote "1.2500000000000001美元";
and a name three times at most: allowed any number of times, it wrote a tracking number to the
token limit.) An English answer beside tools is decoded in words (``WORDS``), not as JSON.
"""

from __future__ import annotations

import re
from typing import Any

from ...language import Language

__all__ = ["CHINESE", "WORDS", "answer_in", "latin_names"]

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
