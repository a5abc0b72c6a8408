"""Are a call's argument values in the conversation, or did the model make them up? (For the
grounding layer, ``minloop.small.grounding``.)

A small model asked to decide between a tool and an answer almost always picks a tool, and
fills the arguments it was not given with plausible inventions (a date for "when was the
Declaration signed"), values that appear nowhere in what the user or a tool said.
``Evidence`` holds the words and numbers of a conversation's user, system and tool messages;
``ungrounded`` names the required arguments of a call whose values are not among them;
``prune`` drops optional arguments that are not, so the function's own default applies. Before
that, ``resolve_values`` maps values onto a parameter's vocabulary: a time zone parameter gets
the IANA zone of the place the user named ("Asia/Shanghai" for "现在东京几点了？" becomes
"Asia/Tokyo"), an enum member in another case or cut short becomes the member, and a date is
written in the format the description names ("2022-08-16" becomes "08-16-2022" for "mm-dd-yyyy").

What counts as found, deliberately lenient so that real calls pass:

* numbers: as written (``1e-9`` too), with thousands separators, a scale word ("100 million"),
  a number word ("five"), Chinese numerals or units (一千二百三十四, 1.2万), a percentage (5% or
  百分之五 for 0.05), an item of a list written without spaces ("[200,300,400]"), a number a
  word of time implies (7 for "next week"), a negative number whose digits are found; 0 and 1
  like any other, written ("one", "once") or implied (1 by "each", "per", 0 by "at rest"),
  since a small model fills a value it lacks with 1 (``minloop.language.numerals``);
* places: a value naming the same time zone as a place in the text ("Asia/Tokyo", "Tokyo" and
  "东京"), and UTC always; Chinese words: as written;
* codes: a currency, language or country code whose name the text gives ("GBP" for "British
  pounds" or "英镑", "fr" for "French"), and the user's own language ("en", "zh", "中文");
* strings: every number in them above 12 is found, and at least half of their content words
  appear in the text, a word matching when one is a prefix of the other ("py", "python"), when
  they share their first five letters, when a plural's stem begins the other ("carbs" for
  "carbohydrates"), or as an abbreviation ("md" for "markdown", "ny" for "New York");
* booleans, ``null``, enum members and empty values: always (the schema is their source); lists
  and objects: when every item is. A list some of whose items are found keeps only those
  (``trim``): a small model pads a list with every option it can think of.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..language import (
    Language,
    code_names,
    date_format,
    implied_numbers,
    in_format,
    is_zone_parameter,
    language_of,
    numbers_in,
    resolve_zone,
    user_language,
    zones_in,
)
from ..messages import Message
from ..models.base import ModelRequest
from ..state import RunState
from .derived import derived
from .results import call_arguments

__all__ = [
    "Evidence",
    "Grounds",
    "conversation",
    "ground_calls",
    "named_zones",
    "prune",
    "resolve_values",
    "trim",
    "ungrounded",
]

_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_DECIMAL = re.compile(r"\d+(?:\.\d+)?")
_LIST_COMMA = re.compile(r"(?<=\d),(?=\d)")  # "[200,300,400]": a list, or thousands
_NAME = re.compile(r"[a-z0-9 '.-]+")  # a name in words ("british pound"), no symbol
_DOTTED = re.compile(r"\b(?:[a-z]\.)+[a-z]?\b")  # "u.s.", "u.s.a"
_TRACE_ID = re.compile(r"trc_\d{12}_[0-9a-f]{6}")  # the loop's own stamp in every tool result, not a fact
_STOP = frozenset(  # words that say nothing of a value
    "a an the of to in on at by for and or with from as is are be it its this that these those my your our "  # noqa: SIM905
    "their me i you we they what which who how us".split()
)


def conversation(run: RunState, request: ModelRequest) -> list[Message]:
    """The messages of ``request`` a value may come from: not the loop's control message, which
    may quote what an answer sent back stated ("Your answer states 64, which no tool result ...")."""
    control = run.prompt.control_text if run.prompt is not None else None
    return [m for m in request.messages if control is None or m.get("content") != control]


class Evidence:
    """The words and numbers a conversation gives a call to draw on (never the assistant's own)."""

    __slots__ = ("derived", "initials", "numbers", "spoken", "stems", "text", "words", "zones")

    def __init__(self, text: str, language: Language | None = None) -> None:
        lowered = text.lower()
        self.spoken = code_names(language or language_of(text))  # what the user's language is called
        sequence = _WORD.findall(lowered)
        self.text = lowered
        dotted = {m.group().replace(".", "") for m in _DOTTED.finditer(lowered)}  # "u.s." is "us"
        self.words = frozenset(sequence) | dotted
        self.stems = (self.words - _STOP) | dotted  # words that may begin a longer one
        self.numbers = numbers_in(text) + implied_numbers(text)
        if _LIST_COMMA.search(text):  # read again as a list: "[200,300]" is not 200300
            self.numbers += numbers_in(_LIST_COMMA.sub(", ", text))
        self.zones = frozenset(zones_in(text))
        self.derived: list[float] = []  # what an answer may work out from them (``Evidence.of``)
        self.initials = frozenset(
            "".join(w[0] for w in sequence[i : i + n])
            for n in (2, 3, 4)
            for i in range(len(sequence) - n + 1)
        )

    @classmethod
    def of(cls, messages: Sequence[Mapping[str, Any]]) -> Evidence:
        parts = []
        for message in messages:
            if message.get("role") == "assistant":
                continue
            content = message.get("content")
            parts.append(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
        evidence = cls(_TRACE_ID.sub("trc", "\n".join(parts)), user_language(messages))
        evidence.derived = derived(messages)
        return evidence

    def has(self, value: Any) -> bool:
        """Whether ``value`` is found in the conversation (the rules are in the module docstring)."""
        if value is None or isinstance(value, bool):
            return True
        if isinstance(value, int | float):
            return self._has_number(float(value))
        if isinstance(value, str):
            return self._has_text(value)
        if isinstance(value, list):
            return all(self.has(v) for v in value)
        if isinstance(value, dict):
            return all(self.has(v) for v in value.values())
        return True

    def _has_number(self, x: float) -> bool:
        if x < 0 and self._has_number(-x):
            return True
        return any(_close(x, n) or _close(x * 100, n) or _close(x, n * 100) for n in self.numbers)

    def _has_text(self, text: str) -> bool:
        zone = resolve_zone(text)
        if zone == "UTC" or (zone is not None and zone in self.zones):
            return True  # "Tokyo", "东京" and "Asia/Tokyo" name one place; UTC is no invention
        if text.strip().lower() in self.spoken or self._names_code(text):
            return True  # the user's language by its name, or a code whose name the text gives
        if (runs := _CJK.findall(text)) and not all(run in self.text for run in runs):
            return False
        numbers = [float(n) for n in _DECIMAL.findall(text)]
        if any((n > 12 or not n.is_integer()) and not self._has_number(n) for n in numbers):
            return False  # a number inside a value ("23.5 * 3") comes from the conversation, small ones aside
        tokens = [t for t in _WORD.findall(text.lower()) if t not in _STOP]
        if not tokens:
            return True
        found = sum(self._has_word(t) for t in tokens)
        return 2 * found >= len(tokens)

    def _names_code(self, code: str) -> bool:
        """Whether the conversation names the currency, language or country ``code`` stands for:
        every word of one of its names, a Chinese name, or its symbol (no code has no names); a
        language code also when it is the language the user writes in."""
        names = code_names(code)
        if names & self.spoken:
            return True
        for name in names:
            if _NAME.fullmatch(name):
                tokens = [t for t in _WORD.findall(name) if t not in _STOP]
                if tokens and all(self._has_word(t) for t in tokens):
                    return True
            elif name in self.text:  # a symbol ("£", "US$") or a Chinese name ("英镑")
                return True
        return False

    def _has_word(self, token: str) -> bool:
        if token in self.words:
            return True
        if token.replace(".", "").isdigit():
            return self._has_number(float(token))
        for w in self.stems:  # "to" does not begin "tomato"
            if min(len(w), len(token)) >= 2 and (w.startswith(token) or token.startswith(w)):
                return True
            if len(token) >= 5 and w[:5] == token[:5]:
                return True
            if len(w) >= 5 and w.endswith("s") and token.startswith(w[:-1]):
                return True  # "carbs" for "carbohydrates"
            if 2 <= len(token) <= 4 and w[:1] == token[:1] and _subsequence(_squeezed(token), w):
                return True  # an abbreviation: "md" for "markdown", "js" for "javascript", "aapl" for "apple"
        return 2 <= len(token) <= 4 and token in self.initials  # "ny" for "new york"


def ungrounded(arguments: Mapping[str, Any], parameters: Mapping[str, Any], evidence: Evidence) -> list[str]:
    """The required arguments whose values are not found in ``evidence``, in schema order; a
    value that repeats its parameter's description is not found either."""
    props = parameters.get("properties") or {}
    return [
        name
        for name in parameters.get("required") or []
        if name in arguments
        and not _free(props.get(name))
        and (not evidence.has(arguments[name]) or _copied(arguments[name], props.get(name)))
    ]


def _copied(value: Any, schema: Any) -> bool:
    """Whether ``value`` is its parameter's description, as the model read it in the schema
    ("The name of the holy book." for ``book``): words of the request, but not a value."""
    description = schema.get("description") if isinstance(schema, Mapping) else None
    if not isinstance(value, str) or not isinstance(description, str):
        return False
    return _WORD.findall(value.lower()) == _WORD.findall(description.lower()) != []


def trim(arguments: Mapping[str, Any], evidence: Evidence) -> dict[str, Any]:
    """``arguments`` with the items of a list of plain values dropped when they are not found in
    ``evidence`` and some others are: ``["Annual", "Perennial", "Shrub"]`` for "annual plants"
    becomes ``["Annual"]``."""
    trimmed = dict(arguments)
    for name, value in arguments.items():
        if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            kept = [v for v in value if evidence.has(v)]
            if any(v not in (0, 1) for v in kept) and len(kept) < len(
                value
            ):  # only 0s and 1s: too little to cut by
                trimmed[name] = kept
    return trimmed


def prune(arguments: Mapping[str, Any], parameters: Mapping[str, Any], evidence: Evidence) -> dict[str, Any]:
    """``arguments`` without the optional ones whose values are not found in ``evidence``, or
    that repeat their parameter's description."""
    required = set(parameters.get("required") or [])
    props = parameters.get("properties") or {}

    def kept(name: str, value: Any) -> bool:
        if name in required:
            return True
        return not _copied(value, props.get(name)) and (_free(props.get(name)) or evidence.has(value))

    return {k: v for k, v in arguments.items() if kept(k, v)}


def _free(schema: Any) -> bool:
    """Values the schema itself offers (enums, booleans): not expected in the text."""
    if not isinstance(schema, Mapping):
        return False
    return "enum" in schema or "const" in schema or schema.get("type") == "boolean"


def _squeezed(token: str) -> str:
    """``token`` with each run of one letter written once: "aapl" is "apl"."""
    return "".join(ch for i, ch in enumerate(token) if i == 0 or ch != token[i - 1])


def _subsequence(short: str, word: str) -> bool:
    letters = iter(word)
    return all(ch in letters for ch in short)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def ground_calls(
    message: Mapping[str, Any],
    tools: Sequence[Mapping[str, Any]],
    messages: Sequence[Mapping[str, Any]],
    *,
    resolve: bool = True,
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """An assistant message's calls with ungrounded optional arguments pruned, and, per tool name,
    the required arguments that are not grounded (empty when every call stands on the conversation).

    With ``resolve``, values are first mapped onto their parameter's vocabulary (``resolve_values``).
    Calls to unknown tools and arguments that are not a JSON object are left as they are: the
    loop's own contract checks answer those."""
    grounds = Grounds(tools, messages, resolve=resolve)
    calls, missing = [], {}
    for call in message.get("tool_calls") or []:
        name, args = call_arguments(call)
        params = grounds.specs.get(name)
        if params is None or args is None:
            calls.append(call)
            continue
        args, lost = grounds.check(name, args)
        if lost:
            missing[name] = lost
        kept = json.dumps(prune(args, params, grounds.evidence), ensure_ascii=False)
        calls.append({**call, "function": {**call["function"], "arguments": kept}})
    return {**message, "tool_calls": calls} if calls else dict(message), missing


class Grounds:
    """What one conversation grounds, for checking the calls of one decision: the tools'
    parameters by name, the ``Evidence`` and the zones the user named (read once)."""

    def __init__(
        self, tools: Sequence[Mapping[str, Any]], messages: Sequence[Mapping[str, Any]], *, resolve: bool
    ) -> None:
        self.specs = {
            t["function"]["name"]: t["function"].get("parameters") or {} for t in tools if "function" in t
        }
        self.evidence = Evidence.of(messages)
        self.zones = named_zones(messages) if resolve else []
        self.resolve = resolve

    def check(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The arguments of a call to the known tool ``name``, resolved (with ``resolve``) and
        trimmed, and its required arguments that are not grounded."""
        params = self.specs[name]
        args = resolve_values(arguments, params, self.zones) if self.resolve else arguments
        args = trim(args, self.evidence)
        return args, ungrounded(args, params, self.evidence)


def resolve_values(
    arguments: Mapping[str, Any], parameters: Mapping[str, Any], zones: Sequence[str]
) -> dict[str, Any]:
    """``arguments`` with values mapped onto their parameter's vocabulary (see the module docstring).

    ``zones`` are the time zones the user named. A time zone parameter the model left out or
    filled with another place gets the user's zone when the user named exactly one; a place
    name becomes its IANA id ("东京" -> "Asia/Tokyo")."""
    resolved = dict(arguments)
    for name, schema in (parameters.get("properties") or {}).items():
        value = resolved.get(name)
        members = schema.get("enum") if isinstance(schema, Mapping) else None
        if isinstance(value, str) and members and value not in members:
            prefix = value.strip().lower()
            matches = [m for m in members if isinstance(m, str) and m.lower().startswith(prefix)]
            if len(matches) == 1:
                resolved[name] = matches[0]
        elif isinstance(value, str) and isinstance(schema, Mapping) and (form := _date_form(schema)):
            resolved[name] = in_format(value, form)
        elif is_zone_parameter(name, schema) and (value is None or isinstance(value, str)):
            zone = resolve_zone(value) if value else None
            if len(zones) == 1 and zone != zones[0]:
                resolved[name] = zones[0]
            elif zone is not None:
                resolved[name] = zone
    return resolved


def _date_form(schema: Mapping[str, Any]) -> tuple[str, str] | None:
    description = schema.get("description")
    return date_format(description) if isinstance(description, str) else None


def named_zones(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The zones the latest user message names (or, when it names none, an earlier one)."""
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and (zones := zones_in(content)):
            return zones
    return []
