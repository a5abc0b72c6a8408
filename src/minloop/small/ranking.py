"""Ranking a menu's tools against a request, for the menu layer (``minloop.small.menu``).

Every tool definition shown to a small model costs prompt evaluation (~100 tokens/s on two
CPU cores), and every tool that cannot serve the request is one more distractor. Above a menu
size, ``ToolMenu`` shows only the tools chosen here: a BM25 ranking of the tools against the
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
caller keeps the whole menu (see ``Selection.comparable``). A request that asks for several things
("... Also find ...", "..., and what is ...", "...，然后...") gets the best tool of each of its
parts as well: ranked as a whole, the longest part's tools crowd out the others'.
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

from ..language import unit_names
from ..models.base import ModelRequest

__all__ = [
    "Selection",
    "is_large",
    "menu_tokens",
    "narrowed",
    "narrowing",
    "select_tools",
    "terms",
]

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
    r"(?<=[\d)])(?:\s*(?P<sign>\*\*|[*×÷^+])\s*|\s+(?P<spaced>[-/])\s+|,?\s+(?P<word>times)\s+)(?=[\d(])"
)
_OPERATIONS = {"+": "add", "-": "subtract", "*": "multiply", "×": "multiply", "times": "multiply"}
_OPERATIONS |= {"/": "divide", "÷": "divide", "^": "power", "**": "power"}
_OPERATION_TERMS = {"add", "subtract", "multipli", "divid", "power"}  # their stems
# Where a request moves on to its next ask: the end of a sentence or clause, "then", "also",
# "and" before a new question or command; in Chinese 然后, 还有, 另外 and the like.
_PART = re.compile(
    r"(?<=[.?!;])\s+|(?<=[。？！；，])"
    r"|\s+(?:and then|then|also|after that|finally|lastly|second|first)\b[, ]*"
    r"|,?\s+and\s+(?=(?:what|how|who|when|where|which|tell|give|find|get|show|check|calculate)\b)"
    r"|然后|接着|之后|还有|另外|并且|同时|最后",
    re.IGNORECASE,
)
K1, B = 1.2, 0.75
NAME_WEIGHT = 3  # a word of the tool's name counts as often as this in its document
# A menu of more tools, or whose definitions take more tokens (estimated), is narrowed to the
# tools that match the request (select.py); a smaller one is shown whole. On the built-in tools
# plus MCP servers, the same menu for every request as an agent has (benchmarks/large_menu.py),
# narrowed menus got the right call as often as whole ones, 35 vs 36 of 44 at 7 tools (~850
# tokens) and 35 vs 34 at 19 (~2,200), in 0.97x and 0.77x the time; a menu the model has not read
# before (each BFCL item's) costs a fraction. The built-in tools (~550 tokens) stay whole: a word
# match misses requests that name no word of their tool ("What weekday is it in Berlin?").
SELECT_ABOVE = 32
SELECT_TOKENS = 600
LIMIT = 5  # tools shown at most
RANKED = 3  # of them, at most this many from ranking the request as a whole
PART_TERMS = 2  # a part of the request with fewer terms than this adds no tool
# A tool is shown when it scores at least RATIO of the best score; below ALIKE of it, only if at
# least NEW of its score comes from words of the request no tool ranked above it matched, or it
# misses at most BEHIND of the words they match (near-alike distractors stay out: on 50-tool BFCL
# menus, benchmarks/menu_sizes.py, 56 right against 49 of the 73 requests where it matters).
RATIO, ALIKE, NEW, BEHIND = 0.5, 0.7, 0.5, 1


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
    words += terms(str(fn.get("description") or "")) + _unit_terms(str(fn.get("description") or ""))
    words += terms(" ".join(_schema_text(fn.get("parameters") or {})))
    return words


def _unit_terms(text: str) -> list[str]:
    """The terms of the names of the units whose symbols ``text`` writes ("mile" for "mi")."""
    symbols = dict.fromkeys(re.findall(r"\b[a-z]{1,3}\b", text.lower()))
    return terms(" ".join(n for s in symbols if s != "in" for n in sorted(unit_names(s))))  # "in" is a word


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


def _said(messages: Sequence[dict[str, Any]]) -> list[str]:
    return [
        str(m["content"]) for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)
    ]


def _query(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The user's words; the last user message counts twice."""
    said = _said(messages)
    return [*terms(" ".join(said)), *(terms(said[-1]) if said else [])]


def _best_of_parts(collection: Collection, messages: Sequence[dict[str, Any]]) -> list[int]:
    """The best-scoring tool of each part of the last user message, when it has several parts."""
    said = _said(messages)
    parts = [p for p in _PART.split(said[-1]) if p and p.strip()] if said else []
    best = []
    for part in parts if len(parts) > 1 and collection.counts else []:
        query = Counter(terms(part))
        if len(query) >= PART_TERMS:
            scores = [sum(w.values(), 0.0) for w in collection.weights(query)]
            top = max(range(len(scores)), key=scores.__getitem__)
            best += [top] if scores[top] > 0 else []
    return best


def _best_ranked(weights: list[dict[str, float]], scores: list[float], limit: int, ratio: float) -> list[int]:
    """The best tools by score: near the best; further below it, with words of their own or at
    most a word behind the tools above them."""
    ranked = sorted(range(len(scores)), key=lambda i: -scores[i])[:limit]
    best = scores[ranked[0]] if ranked else 0.0
    chosen: list[int] = []
    matched: set[str] = set()  # the request's terms matched by the tools chosen so far
    for i in ranked:
        if scores[i] <= 0 or scores[i] < ratio * best:
            break
        new = sum(v for term, v in weights[i].items() if term not in matched)
        behind = len(matched - weights[i].keys())  # request terms the tools above match and it does not
        if not chosen or scores[i] >= ALIKE * best or new >= NEW * scores[i] or behind <= BEHIND:
            chosen.append(i)
            matched |= weights[i].keys()
    return chosen


def select_tools(
    tools: Sequence[dict[str, Any]],
    messages: Sequence[dict[str, Any]],
    *,
    limit: int = LIMIT,
    ratio: float = RATIO,
    keep: Iterable[str] = (),
) -> Selection:
    """The tools (at most ``limit``) that can matter for the conversation, in the menu's order.

    A tool is chosen when it shares words with the user's messages, ranks among the three best
    and scores at least ``ratio`` times the best tool's score (below 0.7 of it, only when it
    matches words of its own or misses at most one of those the tools ranked above it match: a
    tool that matches fewer of the same words is a near-alike distractor), or when it is the
    best match of one part of a request that asks for several things. Tools named in ``keep``
    (for example, already called in this conversation) are always shown. The chosen tools keep
    the order they have in the menu: with the ranking's order, the time server's ``convert_time``
    (its description names Tokyo) came before ``get_current_time`` and the 0.5B model called it
    for "What time is it in Tokyo?", inventing the time to convert.
    """
    docs = [document(t) for t in tools]
    names = [str(t.get("function", t).get("name", "")) for t in tools]
    query = Counter(_query(messages))
    collection = Collection(docs)
    weights = collection.weights(query)
    scores = [sum(w.values(), 0.0) for w in weights]
    chosen = _best_ranked(weights, scores, min(limit, RANKED), ratio)
    for i in _best_of_parts(collection, messages):
        if i not in chosen and len(chosen) < limit:
            chosen.append(i)
    kept = set(keep)
    chosen = sorted({*chosen, *(i for i, name in enumerate(names) if name in kept)})
    comparable = _script(query) is None or any(_script(Counter(d)) == _script(query) for d in docs)
    return Selection([tools[i] for i in chosen], dict(zip(names, scores, strict=True)), comparable)


def narrowed(request: ModelRequest, above: int | None, tokens: int | None) -> ModelRequest:
    """The request with only the tools that can matter, when its menu is large (``is_large``).

    Tools already called in the conversation and a tool forced by ``tool_choice`` stay; when
    no tool shares a word with the request, no tool is shown and the model answers (unless a
    call is required). A request written in a script none of the tools is written in keeps
    the whole menu.
    """
    return narrowing(request, above, tokens)[0]


def narrowing(request: ModelRequest, above: int | None, tokens: int | None) -> tuple[ModelRequest, bool]:
    """``narrowed``, and whether the menu was large but could not be ranked: the request shares
    no writing system with the tools."""
    if above is None or request.tool_choice == "none" or not is_large(request.tools, above, tokens):
        return request, False
    keep = {c["function"]["name"] for m in request.messages for c in m.get("tool_calls") or []}
    if isinstance(request.tool_choice, dict):
        keep.add(request.tool_choice.get("function", {}).get("name", ""))
    chosen = select_tools(request.tools, request.messages, keep=keep)
    if not chosen.comparable:
        return request, True
    if not chosen.found and request.tool_choice == "auto":
        return replace(request, tools=[], tool_choice="none"), False
    return (replace(request, tools=chosen.tools) if chosen.found else request), False


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


class Collection:
    """The menu's documents counted once, to score any number of queries against them."""

    def __init__(self, docs: Sequence[list[str]]) -> None:
        self.lengths = [len(d) for d in docs]
        self.counts = [Counter(d) for d in docs]
        self.average = (sum(self.lengths) / len(docs) if docs else 0.0) or 1.0
        self.frequency = Counter(t for c in self.counts for t in c)

    def weights(self, query: Counter[str]) -> list[dict[str, float]]:
        """Each document's BM25 score for the query, term by term (the terms it matches)."""
        n = len(self.counts)
        out = []
        for length, tf in zip(self.lengths, self.counts, strict=True):
            weight = {}
            for term, q in query.items():
                if f := tf.get(term, 0):
                    idf = math.log(1 + (n - self.frequency[term] + 0.5) / (self.frequency[term] + 0.5))
                    weight[term] = q * idf * f * (K1 + 1) / (f + K1 * (1 - B + B * length / self.average))
            out.append(weight)
        return out


def _script(words: Counter[str]) -> str | None:
    """'cjk' when the words are mostly CJK, 'latin' when mostly not, None when there are none."""
    if not words:
        return None
    cjk = sum(n for w, n in words.items() if _CJK.match(w))
    return "cjk" if cjk * 2 >= sum(words.values()) else "latin"
