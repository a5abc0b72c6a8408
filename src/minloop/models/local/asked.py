"""What an English request asks for by name, and whether the tools that ran give anything of it.

``not_given`` reads the thing a request names after "what is" ("What's the humidity in Paris?",
"What is Apple's market capitalisation?", "What's the name of the driver delivering my order?")
and looks for each of its words in what the tools that ran since the user spoke have: their
results (keys and values), their names, and the descriptions of the tools offered under those
names. A word found nowhere is a thing no tool gave. Measured on ``benchmarks/user_tools_dev.py``,
the 0.5B model answered such requests from the nearest field: "The humidity in Paris is 18
degrees Celsius" from a weather result that holds the temperature and the sky; the evidence
check let it through, because 18 is in the result.

Words are compared by their stems (``select.terms``), so "prices" finds "price", and the words
for an amount of money stand for each other ("price", "cost", "fare", "fee"...). A Chinese
request is read in its English translation, when the model made one (``translate``): its words
cannot be looked for in English results.

A request for a count or a measure is read the same way: "How many copies were sold?" looks for
"copies"; "How heavy is the parcel?", "How much does it weigh?", "How tall", "How old", "How
far" look for any of the words a result names that measure by ("weight", "kg"...). A count of
days, hours or times is left alone (it is worked out from dates), and so is a count of units
("How many euros do I get for one dollar?"): a result's number is in them.

Two more rules read what a request asks for:

* ``later``: a request about a later day ("next week", "tomorrow", "下周", "明天") that the tools
  served without a date: no call was given a date and no result has one. The 0.5B model answered
  "What will the weather be in Berlin next week?" with today's weather, stated as next week's.
* ``unoffered``: a request to do something ("Book me a table", "帮我预订...") whose verb no
  offered tool has in its name or as the first word of its description (the verb of what it
  does: "Find a person in the address book" does not book). The 0.5B model answered it with
  the weather.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .policy import since_user
from .results import served, text_of
from .select import terms

__all__ = ["also_said", "beyond", "given", "last_said", "later", "not_given", "unoffered"]

_OWNER = r"(?:the\s+|my\s+|your\s+|(?:[A-Z][\w.-]*\s+)*[A-Z][\w.-]*(?:'s|’s)\s+)?"
_ASKED = re.compile(
    rf"\bwhat(?:'s|’s|\s+is|\s+are|\s+was|\s+were)\s+{_OWNER}"
    r"(?P<what>[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}?)"
    r"(?=\s+(?:of|in|for|on|at|from|between|to|like|today|now|right|with)\b|\s*[?.!]|\s*$)",
    re.IGNORECASE,
)
_HOW_MANY = re.compile(
    r"\bhow\s+many\s+(?P<what>[a-z][a-z-]*)(?=\s+(?:are|were|is|was|did|do|does|have|has|had|will|can|of|in|on|at|"
    r"for|left|remain|remaining|does)\b|\s*[?.!]|\s*$)",
    re.IGNORECASE,
)
# A measure asked by its adjective or verb, and the words that name it in a result.
_MEASURES = {
    "heavy": "weight weigh mass kg kilogram gram pound lb",
    "weigh": "weight weigh mass kg kilogram gram pound lb",
    "tall": "height tall elevation altitude",
    "old": "age old born founded established built year",
    "far": "distance far km kilometre kilometer mile",
    "deep": "depth deep",
    "wide": "width wide",
}
# Words that name the same thing in results: "the price of two seats" is given by a "fare".
_MONEY = frozenset(terms("price cost fare fee charge amount total"))
_ALIKE = {word: set(_MONEY) for word in _MONEY}
_HOW_MEASURE = re.compile(
    r"\bhow\s+(?P<what>heavy|tall|old|far|deep|wide)\b"
    r"|\bhow\s+much\s+(?:does|do|did|will|would)\s+.{1,40}?\s+(?P<verb>weigh)\b",
    re.IGNORECASE,
)
# Counts that are worked out from dates, and units a result's number is in rather than things counted.
_SPANS = frozenset(
    terms(
        "seconds minutes hours days weeks months years times degrees percent points dollars euros pounds yen "
        "yuan rmb francs pesos rupees won kilometres kilometers miles metres meters feet grams kilograms "
        "litres liters calories steps units"
    )
)
_NAMED_BY = {"people": "people population resident inhabitant person"}
# Words that say when, which one or how exactly, not what.
_VAGUE = frozenset(
    terms("current currently latest today exact actual real now right present live first last next one worth")
)


def not_given(
    messages: Sequence[Mapping[str, Any]],
    menu: Sequence[Mapping[str, Any]] | None = None,
    english: str | None = None,
) -> str | None:
    """The thing the user's last message (or its translation, ``english``) names after "what is"
    when a word of it is in none of the results of the tools that served since then, their names
    or their descriptions in ``menu``; ``None`` when it is there, nothing is named, or no tool
    served."""
    read = _read(messages, menu, english)
    return read[0] if read is not None and not read[1] else None


def given(
    messages: Sequence[Mapping[str, Any]],
    menu: Sequence[Mapping[str, Any]] | None = None,
    english: str | None = None,
) -> bool:
    """Whether every word of the thing the request names after "what is" is in what the tools
    that served gave (as ``not_given`` reads it): then a decline contradicts the results."""
    read = _read(messages, menu, english)
    return read is not None and read[1]


def _read(
    messages: Sequence[Mapping[str, Any]], menu: Sequence[Mapping[str, Any]] | None, english: str | None
) -> tuple[str, bool] | None:
    """The thing named after "what is", and whether the tools that served gave all its words."""
    said = english or last_said(messages)
    found = _ASKED.search(said) or _HOW_MANY.search(said)
    measure = None if found else _HOW_MEASURE.search(said)
    done = served(messages)
    what = found["what"] if found else (measure["what"] or measure["verb"]).lower() if measure else ""
    wanted = [t for t in terms(what) if t not in _VAGUE and t not in _SPANS]
    if not done or not wanted:
        return None
    names = {o.tool for o in done}
    described = [
        f"{spec.get('name', '')} {spec.get('description', '')}"
        for spec in (tool.get("function") or {} for tool in menu or ())
        if spec.get("name") in names
    ]
    text = " ".join([*names, *described, *(json.dumps(o.result, ensure_ascii=False) for o in done)])
    given = set(terms(text.replace("_", " ")))
    if measure is not None or what.lower() in _NAMED_BY:  # any word of the measure's names will do
        return what, bool(given & set(terms(_MEASURES.get(what, "") or _NAMED_BY[what.lower()])))
    return what, all(word in given or given & _ALIKE.get(word, set()) for word in wanted)


_LATER = re.compile(
    r"\b(?:tomorrow|next\s+(?:week|month|year|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|in\s+(?:a|two|three|\d+)\s+(?:days?|weeks?|months?))\b|明天|明日|后天|下周|下星期|下礼拜|下个?月|明年",
    re.IGNORECASE,
)
_DATED = re.compile(
    r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}|forecast|tomorrow|day|week", re.IGNORECASE
)


def later(messages: Sequence[Mapping[str, Any]], english: str | None = None) -> str | None:
    """The later day the user's last message asks about ("next week", "明天") when tools served
    since then and none was given a date nor returned one (see the module), else ``None``."""
    found = _LATER.search(last_said(messages)) or (_LATER.search(english) if english else None)
    done = served(messages)
    if found is None or not done:
        return None
    dated = any(_DATED.search(f"{json.dumps(o.arguments)} {json.dumps(o.result)}") for o in done)
    return None if dated else found[0]


_ACTION_ZH_AT = re.compile(
    r"^(?:请|帮我|帮忙|给我|替我|麻烦你?|我要|我想|能不能|可以)*\s*(?P<verb>预订|预定|订购|购买|取消|发送|支付|转账|删除)"
)
_ACTION_EN = re.compile(
    r"^(?:(?:please|can you|could you|would you|help me|i want to|i'd like to)\s+)*"
    r"(?P<verb>book|reserve|buy|purchase|order|cancel|send|schedule|pay|transfer|delete|call)\b",
    re.IGNORECASE,
)
_ACTION_ZH = {
    "预订": "book",
    "预定": "book",
    "订购": "order",
    "购买": "buy",
    "取消": "cancel",
    "发送": "send",
    "支付": "pay",
    "转账": "transfer",
    "删除": "delete",
}
# The words a tool that does it may be named by ("create_reservation" books).
_DOES = {
    "book": "book booking reserve reservation",
    "reserve": "book booking reserve reservation",
    "buy": "buy purchase order",
    "purchase": "buy purchase order",
    "order": "buy purchase order",
    "send": "send email mail message post",
    "schedule": "schedule create add event",
    "call": "call phone dial",
    "pay": "pay payment transfer",
    "transfer": "pay payment transfer",
    "delete": "delete remove",
    "cancel": "cancel",
}


def unoffered(messages: Sequence[Mapping[str, Any]], menu: Sequence[Mapping[str, Any]] | None) -> str | None:
    """The verb of a request to do something ("Book me a table", "帮我预订") when no tool of
    ``menu`` has it in its name or as the first word of its description, else ``None``."""
    text = last_said(messages).strip()
    found = _ACTION_EN.match(text)
    found = found or _ACTION_ZH_AT.match(text)
    verb = found["verb"] if found else None
    if verb is None or not menu:
        return None
    verb = _ACTION_ZH.get(verb, verb.lower())
    wanted = set(terms(_DOES.get(verb, verb)))
    specs = [t.get("function") or {} for t in menu]
    # what a tool does is in its name ("book_table") or its description's first word ("Book a table")
    does = [f"{s.get('name', '')} {str(s.get('description', '')).strip().partition(' ')[0]}" for s in specs]
    return None if wanted & set(terms(" ".join(does).replace("_", " "))) else verb


def last_said(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of the user's last message (``policy.since_user``)."""
    return since_user(messages)[0]


def beyond(
    messages: Sequence[Mapping[str, Any]],
    menu: Sequence[Mapping[str, Any]] | None,
    english: str | None,
    language: str,
    answer: str = "",
) -> str | None:
    """What the user's last message asks for that the tools did not give or cannot do (the three
    rules above), else ``None``. A Chinese request's "what is" is read in ``english``, its
    translation, and not at all without one; nor when the ``answer`` quotes a word of the results
    (the translation may name the thing otherwise: "schedule" for a calendar's events)."""
    if language == "en":
        asked = not_given(messages, menu)
    else:  # a measure keeps its name in translation ("有多重": "how heavy"); a thing may not
        asked = not_given(messages, menu, english) if english else None
        asked = None if asked not in _MEASURES and _quotes(answer, messages) else asked
    return asked or later(messages, english) or unoffered(messages, menu)


_ADDRESSES = re.compile(r"\S+@\S+|\b(?:https?://|www\.)\S+", re.IGNORECASE)


def _quotes(answer: str, messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``answer`` has a Latin word of three letters or more that a value of a result served
    since the user spoke has and the user's message has not ("Dentist appointment"). A key is no
    such word: asked how many seats were left, the 1.5B model wrote "在 departures 中 ... 剩余座位数为
    78.4个", a fare. An email or web address is a value, not words: asked for a home address, the
    1.5B model gave the email's "example"."""
    results = " ".join(text_of(o.result) for o in served(messages)).casefold()
    said = last_said(messages).casefold()
    words = {w.casefold() for w in re.findall(r"[A-Za-z]{3,}", _ADDRESSES.sub(" ", answer))}
    return any(re.search(rf"\b{w}\b", results) and w not in said for w in words)


def also_said(messages: Sequence[Mapping[str, Any]], english: str | None) -> list[Mapping[str, Any]]:
    """``messages`` with the user's last message followed by its translation (in the same message)."""
    at = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    if at < 0 or not english:
        return list(messages)
    said = {**messages[at], "content": f"{messages[at].get('content')} {english}"}
    return [*messages[:at], said, *messages[at + 1 :]]
