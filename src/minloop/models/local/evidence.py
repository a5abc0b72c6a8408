"""Answers held to the evidence: facts in a final answer must come from the user or a tool.

``EvidenceCheck`` is a conclusion check for ``Controls(answer_check=...)``. It reads the facts an
answer states (numbers, quantities, dates and times, in digits or Chinese numerals, and
multi-word names such as "Joe Biden") and looks for each in the user's and the tools' messages.
An answer whose facts are all found passes. Otherwise the check rejects it with a note naming
what is unsupported, in the user's language (for a wrong time, the note quotes the tool's
reading), and the model answers once more (the embedded model with tools off and a short
answer, see ``is_note``); if that answer is still unsupported, the run ends with a plain
statement that it cannot answer reliably, quoting what the tools returned
(``notes.plain_statement``, a ``Replacement``), never with the invented facts.

An answer given after tools ran must also use them: when it states nothing that only a tool
result gave (a number, a word or a weekday no user message has) and neither says it cannot
answer nor asks something back, it is sent back the same way ("Yes, it will rain in Shanghai
tomorrow" after a clock reading), unless it gives back what the user stated (``restates_user``)
or rightly compares two results (``compare``: "warmer in Paris than in Berlin"; a comparison the
wrong way round is sent back once, then replaced). An answer given without any tool is held to
its facts only, so chit-chat passes.

Three rules read the results call by call (``.results``): when every call since the user spoke
failed or found nothing, an answer that does not say so is replaced at once; when the last call
computed a number or a tool was called for several things, an answer that leaves out that
number, or uses nothing of one result, is sent back once. A fourth (``asked.beyond``) replaces
an answer to a request for what no tool that ran gives ("the humidity"), a later day, or an
action no tool does ("Book me a table").

What counts as found, deliberately lenient so that honest answers pass:

* a time (05:02, 3 pm, 下午3点04分) when its hour and minute are those of a clock reading in the
  evidence (the hour also in 12-hour form: 3 for 15, but "3 am" and "上午3点" are not 15:00);
  a UTC offset (+09:00) is no reading; and a time given for a place ("in Tokyo", "东京") when a
  reading shows that hour and minute there (``times.placed``: one UTC reading of 10:27 supports
  "19:27 in Tokyo", not "10:27 in Tokyo");
* any other number equal to one in the evidence outside clock readings (so the "20" of a 20:03
  reading supports neither "20°C" nor "20%" nor "20 degrees"), or to it rounded (3.14 for 3.14159, 700万 for
  7006652 within 0.5%); a bare number may name a reading's hour; 0 and 1 written without decimals, and list markers ("1.");
* a name when most of its words appear in the evidence (or name the same time zone);
* an e-mail address or a link when the evidence has it as written (any case).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...decision import Replacement
from ...language import Language, numbers_in, user_language
from .arithmetic import written
from .asked import also_said, beyond, given, last_said
from .compare import ORDER, compared, order_note
from .declined import declines
from .drawn import LIST_MARKER, among, draws_on_tools, tool_values
from .grounding import Evidence
from .notes import (
    BETWEEN,
    COMPUTED,
    GIVEN,
    HONESTY,
    LEFT_OUT,
    NOTES,
    READING,
    SEPARATOR,
    UNUSED,
    plain_statement,
    plainly,
)
from .results import left_out, uncomputed, unserved
from .signs import TURNED, turned, way
from .stream import sentences
from .times import TIME, hour_in, placed, readings, said, shown, stated, time_of
from .weighed import VALUES_STARTS, kept, sent_for_values, unweighed

__all__ = [
    "HONESTY",
    "AnswerWatch",
    "EvidenceCheck",
    "asks_more",
    "declines",
    "draws_on_tools",
    "evidence_of",
    "is_note",
    "readings",
    "restates_user",
    "tool_values",
    "unsupported",
]

_FACT = re.compile(
    r"(?<![A-Za-z0-9_.])\d[\d,]*(?:\.\d+)?(?:\s?(?:°[CF]?|℃|%|％|[万亿千百]+|[a-zA-Z]{1,3}\b))?"
    r"|(?<![\d.])[零〇一二两三四五六七八九十百千万亿]{2,}(?:点[零〇一二三四五六七八九]+)?"
)
_ADDRESS = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|https?://[^\s，。、）)]+")
_UNIT = re.compile(
    r"\s?(?:(?:degrees?|percent|celsius|fahrenheit|dollars?|years?|people)\b|[度元岁米])", re.I
)
_TIMELY = re.compile(r"hour|time|clock|[时時点點]", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|[A-Z]\.))+")
_LEADING = frozenset({
    "The", "A", "An", "In", "On", "At", "It", "I", "This", "That", "These", "Those", "My", "Your", "Our", "Their",
    "Today", "Now", "Sorry",
})  # fmt: skip


def evidence_of(messages: Sequence[Mapping[str, Any]]) -> Evidence:
    """What an answer may draw on: the user's, system and tool messages (not the assistant's own)."""
    return Evidence.of(messages)


def unsupported(answer: str, evidence: Evidence) -> list[str]:
    """The facts ``answer`` states that ``evidence`` does not give, as written, without repeats.

    A time is compared as a time: its hour and minute with the clock readings in the evidence
    (a 12-hour "3 pm" for 15:00 too). Any other number is compared with the evidence's numbers
    outside clock readings, so the "20" of a 20:03 reading supports neither "20°C" nor "20%";
    a bare number may still name a reading's hour. A typed answer (a JSON object or list) is
    read value by value, and there a bare number names an hour only under a key that speaks of
    time ("hour", "time", "时"): the 12 of a 12:00 reading is no ``"temperature_c": 12.0``.
    """
    data = _typed(answer)
    if data is None:
        return _unsupported(answer, evidence, clock=True)
    found = (_unsupported(text, evidence, bool(_TIMELY.search(key))) for key, text in _leaves(data))
    return list(dict.fromkeys(fact for facts in found for fact in facts))


def _unsupported(answer: str, evidence: Evidence, clock: bool) -> list[str]:
    """``unsupported`` for a text; with ``clock`` off, a bare number never names a reading's hour."""
    hours, minutes = _readings(evidence.text)
    known = [abs(n) for n in numbers_in(TIME.sub(" ", evidence.text))]
    facts: dict[str, None] = {}
    verdicts = placed(answer, evidence.text) if clock else {}
    for match in stated(answer):
        hour, minute = time_of(match)
        place = verdicts.get(match.start(), "")  # None: right for the place it is given for
        if place is None:
            continue
        if hour is None or not (hour_in(hour, hours, said(match)) and minute in (None, *minutes)):
            facts.setdefault(match.group().strip())
        elif place:  # a reading's time, given for a place it was not read for
            facts.setdefault(place)
    rest = TIME.sub(lambda m: " " * len(m.group()), answer)  # positions kept for the list markers
    markers = {m.start(1) for m in LIST_MARKER.finditer(rest)}
    for match in _FACT.finditer(rest):
        values = [abs(v) for v in numbers_in(match.group())]
        if match.start() in markers or not values:
            continue
        unit = bool(re.search(r"\D\s*$", match.group().strip()) or _UNIT.match(rest, match.end()))
        value = max(values)
        hours_named = hours if clock and not unit else set()
        if not _supported(
            value, _tolerance(match.group(), value), known, hours_named, "." not in match.group()
        ):
            facts.setdefault(match.group().strip())
    for match in _NAME.finditer(answer):
        words = match.group().split()
        words = words[1:] if words[0] in _LEADING else words
        if len(words) >= 2 and not evidence.has(" ".join(words)):
            facts.setdefault(" ".join(words))
    for match in _ADDRESS.finditer(answer):  # an e-mail address or a link, as written
        if match.group().lower() not in evidence.text.lower():
            facts.setdefault(match.group())
    return list(facts)


def _typed(answer: str) -> dict[str, Any] | list[Any] | None:
    """The JSON object or list a typed answer is, else ``None``."""
    if not answer.lstrip().startswith(("{", "[")):
        return None
    try:
        data = json.loads(answer)
    except ValueError:
        return None
    return data if isinstance(data, dict | list) else None


def _leaves(data: Any, key: str = "") -> list[tuple[str, str]]:
    """The strings and numbers of a JSON value, each with the key it stands under (as written)."""
    if isinstance(data, dict):
        return [leaf for k, item in data.items() for leaf in _leaves(item, str(k))]
    if isinstance(data, list):
        return [leaf for item in data for leaf in _leaves(item, key)]
    if isinstance(data, bool) or data is None:
        return []
    return [(key, data if isinstance(data, str) else json.dumps(data))]


def _readings(text: str) -> tuple[set[int], set[int]]:
    times = [time_of(m) for m in TIME.finditer(text)]
    return {h for h, _ in times if h is not None}, {m for _, m in times if m is not None}


def _tolerance(written: str, value: float) -> float:
    """How far a number may be from the evidence: a rounded one ("700万", "3.14") within its precision."""
    digits = re.sub(r"[^\d.]", "", written.split("e")[0])
    whole, _, decimals = digits.partition(".")
    significant = len((whole + decimals).lstrip("0")) if decimals else len(whole.lstrip("0").rstrip("0"))
    unit = 0.5 * 10 ** -len(decimals) if decimals else 0.5
    return max(unit, 0.005 * value) if 0 < significant <= 3 or not digits else unit


def _supported(
    value: float, tolerance: float, known: list[float], hours: set[int], plain: bool = True
) -> bool:
    """A number found among ``known`` (within ``tolerance``), or naming one of the clock ``hours``;
    0 and 1 always, when ``plain`` (written without decimals: "1.0" is a rate, not "one")."""
    if (plain and value in (0.0, 1.0)) or any(abs(value - n) <= tolerance for n in known):
        return True
    return value.is_integer() and bool(hours) and hour_in(int(value), hours)


@dataclass(frozen=True, slots=True)
class EvidenceCheck:
    """The evidence check as an answer check: ``Controls(answer_check=EvidenceCheck())``.

    ``retries`` is how many times an unsupported answer is sent back before the run ends with
    the plain statement (``notes.plain_statement``). The note sent back is in the user's
    language unless ``note_language`` names one ("en" or "zh"). With ``resend_unused`` off, an
    answer that uses no tool result is not sent back but ends the run at once: a model that
    answers the note with tools off (as the embedded model does) has nothing new to go on.
    ``menu`` gives the tools a conversation was offered, so that a statement made when no tool
    ran names what they do; ``english`` gives a text's English translation: a Chinese request's,
    so that what it asks for is read (``asked.beyond``), and a Chinese answer's, which is read for
    the results' words before the answer is called unused ("已送达" for "delivered").
    """

    retries: int = 1
    note_language: Language | None = None
    resend_unused: bool = True
    menu: Callable[[Sequence[Mapping[str, Any]]], Sequence[Mapping[str, Any]] | None] | None = field(
        default=None, compare=False
    )  # the tools offered in a conversation, for a statement that names what they do
    english: Callable[[str], str | None] | None = field(default=None, compare=False)  # a translation made

    def __call__(self, answer: str, messages: Sequence[Mapping[str, Any]]) -> str | Replacement | None:
        language = user_language(messages)
        if unserved(messages) and not declines(answer):  # every call failed or found nothing
            return Replacement(plain_statement(messages, language))
        note, first_try = self.note_language or language, _rejected(messages) < self.retries
        menu = self.menu(messages) if self.menu is not None else None
        english = self.english(last_said(messages)) if self.english and language == "zh" else None
        if not declines(answer) and beyond(messages, menu, english, language, answer):  # "the humidity"
            return Replacement(plain_statement(messages, language, menu, english))
        if declines(answer) and first_try and given(messages, menu, english):
            return GIVEN[note]  # "I can't tell the temperature" beside it
        if (
            order := compared(answer, messages)
        ) is False and first_try:  # "东京比悉尼更暖和" beside 21 and 27
            return order_note(answer, messages, note)
        # "苏黎世的空气更干净。" beside 18 and 64: no value
        if first_try and not declines(answer) and (values := unweighed(answer, messages, note)):
            return values
        wrong = turned(answer, tool_values(messages) or "", last_said(messages))  # "rose 2.1%" for -2.1
        if wrong and first_try:
            return TURNED[note].format(fact=wrong[0][0], value=f"{wrong[0][1]:g}", way=way(wrong[0][1], note))
        evidence = evidence_of(messages)
        facts = unsupported(answer, evidence) + (["order"] if order is False else [])
        facts += [fact for fact, _ in wrong]
        drawn = True if order else draws_on_tools(answer, messages)  # a right comparison uses the results
        unused = not facts and drawn is False and not declines(answer) and not restates_user(answer, messages)
        if unused and language == "zh" and self.english is not None:  # "已送达" for "delivered"
            unused = not draws_on_tools(self.english(answer) or "", also_said(messages, english))
        if not facts and not unused:
            return None if order else self._left_out(answer, messages)  # a comparison uses both
        if not first_try or not (drawn or self.resend_unused):
            if first := kept(messages, lambda text: not unsupported(text, evidence)):
                return Replacement(first)  # the right comparison sent back for its values stands
            # no invented fact; after a comparison or a change, the results did answer
            unasked = not (_misordered(answer, messages) or wrong or sent_for_values(messages))
            return Replacement(plain_statement(messages, language, menu, english, unasked))
        if unused:
            return UNUSED[note]
        times = shown(tool_values(messages) or "")
        hint = (
            READING[note].format(times=", ".join(times[:3])) if times and any(map(TIME.search, facts)) else ""
        )
        return NOTES[note].format(facts=SEPARATOR[note].join(facts[:5])) + hint

    def _left_out(self, answer: str, messages: Sequence[Mapping[str, Any]]) -> str | None:
        """The note sending back an answer that leaves out the number the last call computed
        (``results.uncomputed``) or one of several results of a tool (``results.left_out``),
        once; the second answer is accepted as it is."""
        if _rejected(messages) >= self.retries:
            return None
        note = self.note_language or user_language(messages)
        if computed := uncomputed(answer, messages):  # the last call's product, left out
            return COMPUTED[note].format(tool=computed[0].tool, value=written(computed[1]))
        missing = left_out(answer, messages)
        if not missing:
            return None
        what = SEPARATOR[note].join(", ".join(map(str, o.arguments.values())) for o in missing)
        values = BETWEEN[note].join(plainly(o.result) for o in missing)
        return LEFT_OUT[note].format(tool=missing[0].tool, what=what, values=values)


class AnswerWatch:
    """Reads an answer as it is generated and says stop at the end of the first sentence that
    states a fact the evidence does not give (``tripped``). Only whole sentences are read, and
    the whitespace after them, so a number or a list marker is never judged half written."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.evidence = evidence_of(messages)
        self.text = ""
        self.read = 0
        self.tripped = False

    def __call__(self, piece: str) -> bool:
        self.text += piece
        ends = [m.end() for m in sentences(self.text, self.read)]
        if not ends:
            return False
        self.read = ends[-1]
        self.tripped = bool(unsupported(self.text[: self.read], self.evidence))
        return self.tripped


def is_note(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is the check's note sending an unsupported answer back."""
    starts = [note.split("{facts}")[0] for note in NOTES.values()] + list(UNUSED.values())
    return _starts(message, [*starts, *_FULLER])


def asks_more(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is a note asking for an answer with more in it (what a result gave, what
    was computed, a comparison set right or with its values), not a short one: it gets the usual
    length."""
    return _starts(message, _FULLER)


_FULLER = [  # the notes that ask for an answer with more in it, by how they begin
    *(note.split("{tool}")[0] for note in (*LEFT_OUT.values(), *COMPUTED.values())),
    *(note.split("{first}")[0] for note in ORDER.values()),
    *(note.split("{fact}")[0] for note in TURNED.values()),
    *VALUES_STARTS,
    *GIVEN.values(),
]


def _starts(message: Mapping[str, Any], starts: Sequence[str]) -> bool:
    content = message.get("content")
    return message.get("role") != "user" and isinstance(content, str) and content.startswith(tuple(starts))


def restates_user(answer: str, messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``answer`` gives back what the user stated (a typed answer whose every value the
    user's messages hold, a text stating a number the user gave other than 0 and 1): it needs no
    tool, so a call made on the way does not make it unused."""
    user = "\n".join(str(m.get("content")) for m in messages if m.get("role") == "user")
    said, lowered = numbers_in(user), user.casefold()
    data = _typed(answer)
    if data is None:
        stated = numbers_in(LIST_MARKER.sub(" ", answer))
        return any(v not in (0.0, 1.0) and among(v, said) for v in stated)
    values = [text for _, text in _leaves(data) if text.strip()]
    numbers = [numbers_in(text) for text in values]
    found = (
        text.casefold() in lowered or (n and all(among(v, said) for v in n))
        for text, n in zip(values, numbers)
    )
    return bool(values) and all(found)


def _misordered(answer: str, messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``answer``, or a reply sent back since the user last spoke, compared two results
    the wrong way round."""
    return any(compared(reply, messages) is False for reply in [answer, *_sent_back(messages)])


def _rejected(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many replies were not accepted since the user last spoke (``_sent_back``)."""
    return len(_sent_back(messages))


def _sent_back(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The replies without calls since the user last spoke: every one of them was not accepted."""
    replies = []
    for message in reversed(messages):
        if message.get("role") == "user":
            break
        if message.get("role") == "assistant" and not message.get("tool_calls"):
            replies.append(str(message.get("content")))
    return replies
