"""Choosing the few tools that can matter for a request, before the embedded model decides.

Every tool definition shown to the embedded model costs prompt evaluation (~100 tokens/s on two
CPU cores), and every tool that cannot serve the request is one more distractor. Above a menu
size, ``LocalModel`` shows only the tools chosen here: a BM25 ranking of the tools against the
conversation's user messages, over each tool's name, description, parameter names, parameter
descriptions and enum values. It takes a few milliseconds for 50 tools on a CPU (tens the first
time their words are stemmed), offline.

Words are lower-cased, identifiers split at ``_``, ``.``, ``-`` and camelCase, and reduced to
their stem by the Snowball English stemmer ("files" and "filed" match "file", "divided"
"divide", "preferring" "preference"). Arithmetic between numbers reads as the operation's word
("1234 * 5678" and "250 times 4" as "multiply"). Chinese, Japanese and Korean text has no
spaces, so it is indexed as pairs of neighbouring characters. A request
that shares no word with any tool selects nothing, which the caller takes as a reason to answer
directly; a request in a script that no tool is written in selects nothing either, and the
caller keeps the whole menu (see ``Selection.comparable``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import pairwise
from typing import Any

import snowballstemmer

from ..base import ModelRequest

__all__ = ["Selection", "is_large", "menu_tokens", "narrowed", "select_tools", "terms"]

_WORD = re.compile(r"[A-Za-z]+|[0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_STOP_TEXT = """
a an and are as at be by can could do does for from get give how i in is it its me my of on or please show
tell that the this to use using want what when where which who why will with would you your
note provided function python syntax type value example
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
CJK_STOP = frozenset("的了吗呢吧是我你请在和有个")
_STEMMER = snowballstemmer.stemmer("english")
# Arithmetic between numbers reads as the operation's word: "1234 * 5678" and "250 times 4" share
# "multiply" with a calculator's description, and "times" there is not the clock's "time".
_OPERATION = re.compile(  # "-" and "/" only with spaces around them: 2024-05-01 is a date
    r"(?<=\d)(?:\s*(?P<sign>\*\*|[*×÷^+])\s*|\s+(?P<spaced>[-/])\s+|,?\s+(?P<word>times)\s+)(?=[\d(])"
)
_OPERATIONS = {"+": "add", "-": "subtract", "*": "multiply", "×": "multiply", "times": "multiply"}
_OPERATIONS |= {"/": "divide", "÷": "divide", "^": "power", "**": "power"}
K1, B = 1.2, 0.75
NAME_WEIGHT = 3  # a word of the tool's name counts as often as this in its document
LIMIT = 3  # tools shown at most
# A tool is shown when it scores at least this share of the best score. On 50-tool menus built
# from BFCL's non-live items (benchmarks/menu_sizes.py), the request's own functions were among
# those shown as often at 0.5 as at 0.3 (98%), with a quarter fewer tools shown.
RATIO = 0.5


@dataclass(frozen=True)
class Selection:
    """The tools chosen for a request, in the menu's order, with every tool's score."""

    tools: list[dict[str, Any]]
    scores: dict[str, float] = field(default_factory=dict)
    comparable: bool = True  # the request shares a writing system with the tools

    @property
    def found(self) -> bool:
        return bool(self.tools)


def terms(text: str) -> list[str]:
    """The index terms of a text: stemmed words; pairs of neighbouring CJK characters."""
    out: list[str] = []
    text = _OPERATION.sub(lambda m: f" {_OPERATIONS[m[m.lastgroup or 0]]} ", text)
    for chunk in _WORD.findall(_CAMEL.sub(" ", text)):
        if _CJK.match(chunk):  # no spaces between words: pairs of neighbouring characters
            pairs = [a + b for a, b in pairwise(chunk) if not (a in CJK_STOP and b in CJK_STOP)]
            out.extend(pairs or [chunk])
            continue
        word = chunk.lower()
        if word not in STOP_WORDS and (len(word) > 1 or word.isdigit()):
            out.append(_stem(word))
    return out


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """The word's Snowball stem: "divided" and "divide" are both "divid" (~80 µs, so kept)."""
    return str(_STEMMER.stemWord(word))


def document(spec: dict[str, Any]) -> list[str]:
    """The terms of one Chat Completions tool spec."""
    fn = spec.get("function", spec)
    name = str(fn.get("name", ""))
    words = terms(name.replace("_", " ").replace(".", " ")) * NAME_WEIGHT
    words += terms(str(fn.get("description") or ""))
    words += terms(" ".join(_schema_text(fn.get("parameters") or {})))
    return words


def _schema_text(schema: Any) -> Iterable[str]:
    if not isinstance(schema, dict):
        return
    for key, sub in (schema.get("properties") or {}).items():
        yield str(key).replace("_", " ")
        if isinstance(sub, dict):
            yield str(sub.get("description") or "")
            yield " ".join(str(v) for v in sub.get("enum") or [] if isinstance(v, str))
            yield from _schema_text(sub)
            yield from _schema_text(sub.get("items"))


def _query(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The user's words; the last user message counts twice."""
    said = [
        str(m["content"]) for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)
    ]
    return [*terms(" ".join(said)), *(terms(said[-1]) if said else [])]


def select_tools(
    tools: Sequence[dict[str, Any]],
    messages: Sequence[dict[str, Any]],
    *,
    limit: int = LIMIT,
    ratio: float = RATIO,
    keep: Iterable[str] = (),
) -> Selection:
    """The tools (at most ``limit``) that can matter for the conversation, in the menu's order.

    A tool is chosen when it shares words with the user's messages, ranks among the ``limit``
    best and scores at least ``ratio`` times the best tool's score. Tools named in ``keep`` (for
    example, already called in this conversation) are always shown. The chosen tools keep the
    order they have in the menu: with the ranking's order, the time server's ``convert_time``
    (its description names Tokyo) came before ``get_current_time`` and the 0.5B model called it
    for "What time is it in Tokyo?", inventing the time to convert.
    """
    docs = [document(t) for t in tools]
    names = [str(t.get("function", t).get("name", "")) for t in tools]
    query = Counter(_query(messages))
    scores = bm25(docs, query)
    ranked = sorted(range(len(tools)), key=lambda i: -scores[i])
    best = scores[ranked[0]] if ranked else 0.0
    chosen = [i for i in ranked[:limit] if scores[i] > 0 and scores[i] >= ratio * best]
    kept = set(keep)
    chosen = sorted({*chosen, *(i for i, name in enumerate(names) if name in kept)})
    comparable = _script(query) is None or any(_script(Counter(d)) == _script(query) for d in docs)
    return Selection([tools[i] for i in chosen], dict(zip(names, scores, strict=True)), comparable)


def narrowed(
    request: ModelRequest, above: int | None, tokens: int | None, english: str | None = None
) -> ModelRequest:
    """The request with only the tools that can matter, when its menu is large (``is_large``).

    Tools already called in the conversation and a tool forced by ``tool_choice`` stay; when
    no tool shares a word with the request, no tool is shown and the model answers (unless a
    call is required). A request written in a script none of the tools is written in keeps
    the whole menu, unless ``english`` gives its words in English.
    """
    if above is None or request.tool_choice == "none" or not is_large(request.tools, above, tokens):
        return request
    keep = {c["function"]["name"] for m in request.messages for c in m.get("tool_calls") or []}
    if isinstance(request.tool_choice, dict):
        keep.add(request.tool_choice.get("function", {}).get("name", ""))
    said = request.messages if english is None else [{"role": "user", "content": english}]
    chosen = select_tools(request.tools, said, keep=keep)
    if not chosen.comparable or (not chosen.found and request.tool_choice != "auto"):
        return request
    if not chosen.found:
        return replace(request, tools=[], tool_choice="none")
    return replace(request, tools=chosen.tools)


def is_large(tools: Sequence[dict[str, Any]], above: int | None, tokens: int | None) -> bool:
    """More than ``above`` tools, or definitions of more than about ``tokens`` tokens."""
    if above is not None and len(tools) > above:
        return True
    return tokens is not None and menu_tokens(tools) > tokens


def menu_tokens(tools: Sequence[dict[str, Any]]) -> int:
    """About how many prompt tokens the tool definitions take: their JSON at ~4 characters a
    token, a non-ASCII character (a Chinese description) a token each."""
    text = json.dumps(list(tools), ensure_ascii=False)
    wide = sum(not c.isascii() for c in text)
    return round((len(text) - wide) / 4) + wide


def bm25(docs: Sequence[list[str]], query: Counter[str]) -> list[float]:
    """Okapi BM25 of each document for the query, with the menu itself as the collection."""
    n = len(docs)
    if not n:
        return []
    counts = [Counter(d) for d in docs]
    average = sum(len(d) for d in docs) / n or 1.0
    frequency = Counter(t for c in counts for t in c)
    scores = []
    for doc, tf in zip(docs, counts, strict=True):
        score = 0.0
        for term, q in query.items():
            f = tf.get(term, 0)
            if f:
                idf = math.log(1 + (n - frequency[term] + 0.5) / (frequency[term] + 0.5))
                score += q * idf * f * (K1 + 1) / (f + K1 * (1 - B + B * len(doc) / average))
        scores.append(score)
    return scores


def _script(words: Counter[str]) -> str | None:
    """'cjk' when the words are mostly CJK, 'latin' when mostly not, None when there are none."""
    if not words:
        return None
    cjk = sum(n for w, n in words.items() if _CJK.match(w))
    return "cjk" if cjk * 2 >= sum(words.values()) else "latin"
