"""What the embedded model is steered to do with a user's own tools (``LocalModel(guide=True)``).

Measured on ``benchmarks/user_tools_dev.py`` (ten ordinary tools, 84 requests, half Chinese), the
0.5B model, left to itself, answered half the Chinese requests in English, stopped after the
first result of a request that needs two ("the weather in Tokyo and in Sydney"), and called the
weather tool for a Chinese request about a restaurant. These rules steer it:

* ``chinese.answer_in`` (a module of its own): a Chinese request's answer begins in Chinese;
* ``follow_up``: after the results of one call, the next call a request plainly still needs is
  made, by constraining the next decision to that tool, with a note saying what it is for:
  the same tool again when the request names two things joined by "and", "or", "和", "还是"
  and only one was looked up, or writes a second value after the same word as one the call
  took ("to Lyon, and ... to Marseille"; both in ``pairs.py``); a currency tool when the
  request names a currency that neither the calls nor the results have yet ("Microsoft's share
  price in euros"); the calculator for an amount times a price or a rate ("two tickets" too),
  its expression written by ``arithmetic.product`` when each number is plain to read.
  Grounding still checks the call's values, and each rule applies once per request;
* ``shaped.another`` (in ``shaped.py``): the same tool again for each other code the request
  writes in the shape of one a call took ("orders A1234 and C5502", two ISBNs);
* ``_elsewhere``: when the only call was to a tool the request does not name, with a value that
  names the one tool it does name, and it found nothing, that tool ("Find me a Japanese
  restaurant" looked up as a contact: then ``search_restaurants``);
* ``rejected.retried`` (in ``rejected.py``): a call its tool rejected for its value ("unknown
  ticker symbol: NVIDIA") is made once more, with a note saying what was not accepted; a value
  written in Chinese that the tool rejected or found nothing for is first given in English
  (``in_english``, the model's translation of the value: "比特币" as "Bitcoin");
* ``split``: a first call whose value holds both things the request joins with "and", "和"
  ("Ada Lovelace and Alan Turing's phone numbers") is made once for each of them;
* ``insist.insisted`` (a module of its own): a first answer made up, a decline or the request
  given back, decided again with a call required.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ...language import Language, code_names
from ..base import ModelResponse
from .arithmetic import AMOUNT, amounts, calculator, product
from .currencies import currencies_in, currency_tool
from .grounding import Evidence
from .pairs import pairs, parallel
from .rejected import in_chinese, retried, since_retried
from .results import Outcome, outcomes, served
from .select import named_by, terms
from .shaped import another

Spec = TypeVar("Spec", bound=Mapping[str, Any])

__all__ = [
    "FollowUp",
    "arguments_of",
    "called",
    "currencies_in",
    "follow_up",
    "in_english",
    "named_tools",
    "opening",
    "repeats",
    "results_note",
    "since_user",
    "split",
]

_CURRENCY_WORDS = re.compile(r"[A-Za-z]+(?:\s+[A-Za-z]+)?|[\u4e00-\u9fff]{1,4}")
NOTES: dict[Language, dict[str, str]] = {
    "en": {
        "both": "The user asked about {one} and {two}. You have the result for {done}. Now call {tool} for {other}.",
        "currency": (
            "The user wants the amount in {currency}. Now call {tool} to get the rate from the currency "
            "of the result to {currency}."
        ),
        "compute": (
            "Now call {tool} to compute the answer from the numbers of the request and of the results above "
            "(for example an amount times a price or a rate)."
        ),
        "elsewhere": "{done} found nothing for this request. Now call {tool}, the tool for what the user asked.",
    },
    "zh": {
        "both": "用户问的是{one}和{two}。你已经得到了 {done} 的结果。现在为{other}调用 {tool}。",
        "currency": "用户想要以{currency}表示的金额。现在调用 {tool}，查询从结果的货币到{currency}的汇率。",
        "compute": "现在调用 {tool}，用用户给出的数字和上面结果中的数字算出答案（例如数量乘以价格或汇率）。",
        "elsewhere": "{done} 没有找到这个请求的结果。现在调用 {tool}，它才是用户所问内容的工具。",
    },
}


@dataclass(frozen=True)
class FollowUp:
    """The next call a request still needs: ``tool``, and the note that says what it is for;
    ``arguments`` when the call can be made as it is, without asking the model."""

    tool: str
    note: str
    arguments: dict[str, Any] | None = None
    translate: tuple[dict[str, Any], str] | None = None  # a call, and its argument to give in English

    @property
    def untranslated(self) -> str:
        """The value written in Chinese that the call should give in English ("" when none)."""
        return str(self.translate[0][self.translate[1]]) if self.translate else ""


def in_english(follow: FollowUp, english: str) -> FollowUp | None:
    """``follow``'s call with its Chinese value given as ``english``, the model's translation of it,
    when that is a short name in Latin letters; else the model asked to call again (when the tool
    rejected the value), or nothing."""
    name = english.strip().strip(".!?\"'“”")
    if follow.translate is not None and name.isascii() and 0 < len(name.split()) <= 5:
        arguments, key = follow.translate
        return FollowUp(follow.tool, "", {**arguments, key: name})
    return replace(follow, translate=None) if follow.note else None


def since_user(messages: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]], list[str]]:
    """The last user message's text, the calls made since (name and arguments) and their results."""
    calls: list[dict[str, Any]] = []
    results: list[str] = []
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return (content if isinstance(content, str) else ""), calls[::-1], results[::-1]
        if message.get("role") in ("tool", "function"):
            results.append(str(message.get("content")))
        for call in reversed(message.get("tool_calls") or []):
            fn = call.get("function") or {}
            calls.append({"name": fn.get("name"), "arguments": arguments_of(fn.get("arguments"))})
    return "", calls[::-1], results[::-1]


def follow_up(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    language: Language,
    english: str | None = None,
) -> FollowUp | None:
    """The call the request still needs after the results so far (see the module), or ``None``.
    ``english`` is the request's English translation, when one was made."""
    if not messages or messages[-1].get("role") not in ("tool", "function", "system"):
        return None
    text, calls, results = since_user(messages)
    rejected = retried(calls, results, language)
    if chinese := in_chinese(calls, results):  # "比特币" for a coin the tool knows as "bitcoin"
        return FollowUp(
            calls[-1]["name"], rejected[1] if rejected else "", None, (calls[-1]["arguments"], chinese[0])
        )
    if rejected:  # "unknown ticker symbol: NVIDIA"
        return FollowUp(*rejected)
    if elsewhere := _elsewhere(english or text, messages, tools, language):  # a contact for a restaurant
        return elsewhere
    calls, results = since_retried(calls, results)
    if not calls or not results or any('"code": "ERR_' in r for r in results):
        return None  # nothing ran yet, or a call failed: the model says what happened
    names = {str(t.get("function", {}).get("name")) for t in tools}
    if len(calls) == 1 and calls[0]["name"] in names and (again := _again(text, english, calls[0], language)):
        return again
    if coded := another(text, calls, names):  # the next code of the same shape
        return FollowUp(coded[0], "", coded[1])
    return _converted(text, calls, results, tools, language) or _computed(
        text, calls, results, tools, language, served(messages)
    )


def _elsewhere(
    text: str, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], language: Language
) -> FollowUp | None:
    """The one tool the request names, when the only call so far was to a tool it does not name,
    with a value that names that one, and found nothing: "Find me a Japanese restaurant in
    Paris." looked up as a contact named "Japanese restaurant in Paris"."""
    done = outcomes(messages)
    if len(done) != 1 or done[0].kind != "empty" or len(named := named_tools(tools, text)) != 1:
        return None
    tool = str(named[0].get("function", {}).get("name"))
    value = set(terms(" ".join(str(v) for v in done[0].arguments.values())))
    if tool == done[0].tool or not value & named_by(named[0]):
        return None
    return FollowUp(tool, NOTES[language]["elsewhere"].format(done=done[0].tool, tool=tool))


def _again(text: str, english: str | None, call: dict[str, Any], language: Language) -> FollowUp | None:
    """The same tool for the other of two things the request joins with "and", "or", "和"...: the
    call itself when its value is one of them as written (in the request or its translation),
    else a note naming the other; without such two, the call with the value the request writes
    the way it writes one of the call's (``pairs.parallel``: "to Lyon, and ... to Marseille")."""
    found = pairs(text, english)
    tool, arguments = call["name"], call["arguments"]
    taken, clash = {str(v).casefold() for v in arguments.values()}, False
    for one, two in found:
        for key, value in arguments.items():
            if isinstance(value, str) and value.casefold() in (one.casefold(), two.casefold()):
                other = two if value.casefold() == one.casefold() else one
                if other.casefold() not in taken:
                    return FollowUp(tool, "", {**arguments, key: other})
                clash = True  # "to Lyon and Paris to ...": the call took both, they are not two things
    if clash or not found:
        written = parallel([text, english or ""], call, [call])
        return None if written is None else FollowUp(tool, "", written)
    one, two = found[0]
    values = [str(v) for v in arguments.values()]
    named_two = any(Evidence(two).has(v) for v in values) and not any(Evidence(one).has(v) for v in values)
    other = one if named_two else two
    done = ", ".join(values) or tool
    return FollowUp(tool, NOTES[language]["both"].format(one=one, two=two, done=done, tool=tool, other=other))


def split(
    response: ModelResponse, messages: Sequence[Mapping[str, Any]], english: str | None
) -> ModelResponse:
    """``response``, or its one call made twice when a value of it holds both things the request
    joins with "and", "和"... (the 0.5B model looked up "Ada Lovelace and Alan Turing's phone
    numbers" as one name): once with each of them, as the value. Only a first call is split."""
    calls = response.message.get("tool_calls") or []
    text, made, _ = since_user(messages)
    found = pairs(text, english)
    if made or len(calls) != 1 or not found:
        return response
    arguments = arguments_of(calls[0]["function"].get("arguments"))
    held = [(k, p) for p in found for k, v in arguments.items() if isinstance(v, str) and _holds(v, p)]
    if not held:
        return response
    key, pair = held[0]
    ids = [calls[0]["id"], re.sub(r"_\d+$", "_2", calls[0]["id"])]
    twice = [
        {
            **calls[0],
            "id": id_,
            "function": {
                **calls[0]["function"],
                "arguments": json.dumps({**arguments, key: v}, ensure_ascii=False),
            },
        }
        for id_, v in zip(ids, pair, strict=True)
    ]
    return replace(response, message={**response.message, "tool_calls": twice})


def _holds(value: str, pair: tuple[str, str]) -> bool:
    folded = value.casefold()
    return all(thing.casefold() in folded for thing in pair) and folded not in {p.casefold() for p in pair}


def _converted(
    text: str,
    calls: list[dict[str, Any]],
    results: list[str],
    tools: Sequence[Mapping[str, Any]],
    language: Language,
) -> FollowUp | None:
    """The currency tool, when the request names a currency the calls and results do not have yet
    and a result gives an amount in another."""
    tool = currency_tool(tools)
    if tool is None or any(c["name"] == tool for c in calls):
        return None
    seen = json.dumps([c["arguments"] for c in calls], ensure_ascii=False) + " ".join(results)
    wanted = [code for code in currencies_in(text) if code not in seen.upper()]
    keyed = re.sub(r"(?<=_)[a-z]{3}\b|\b[a-z]{3}(?=_)", lambda m: m[0].upper(), " ".join(results))
    if len(wanted) != 1 or not currencies_in(keyed.replace("_", " ")):  # "price_usd" too
        return None
    currency = _name(wanted[0], language)
    return FollowUp(tool, NOTES[language]["currency"].format(currency=currency, tool=tool))


def _computed(
    text: str,
    calls: list[dict[str, Any]],
    results: list[str],
    tools: Sequence[Mapping[str, Any]],
    language: Language,
    done: Sequence[Outcome],
) -> FollowUp | None:
    """The calculator, when a result needs arithmetic: the request states an amount that no call
    took ("10 shares", "250 US dollars"), or a rate was looked up for another result's amount."""
    tool = calculator(tools)
    if tool is None or any(c["name"] == tool for c in calls) or not any(AMOUNT.search(r) for r in results):
        return None
    taken = {float(n) for n in AMOUNT.findall(json.dumps([c["arguments"] for c in calls]))}
    untaken = [n for n in amounts(text) if n > 1 and n not in taken]
    chained = len({c["name"] for c in calls}) >= 2 and currency_tool(tools) in {c["name"] for c in calls}
    if not untaken and not chained:
        return None
    expression = product(text, untaken, done, currency_tool(tools))
    arguments = {"expression": expression} if expression else None
    return FollowUp(tool, NOTES[language]["compute"].format(tool=tool), arguments)


def named_tools(tools: Sequence[Spec], text: str) -> list[Spec]:
    """The tools ``text`` names (``select.named_by``), and the currency tool when it names two
    currencies: "How many Japanese yen are 250 US dollars?" has no word of "Get today's exchange
    rate between two currencies", and the 1.5B model answered it with a rate of its own."""
    words = set(terms(text))
    named = [t for t in tools if words & named_by(t)]
    currency = currency_tool(tools)
    if currency is not None and len(currencies_in(text)) >= 2:
        named += [t for t in tools if t.get("function", {}).get("name") == currency and t not in named]
    return named


def _name(code: str, language: Language) -> str:
    names = sorted(code_names(code), key=len)
    chinese = [n for n in names if not n.isascii() and len(n) > 1]
    english = [n for n in names if n.isascii() and len(n) > 3]
    if language == "zh" and chinese:
        return chinese[0]
    return english[0] if english else code


def arguments_of(raw: Any) -> dict[str, Any]:
    """A call's arguments from their JSON; ``{}`` when they are no object."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def repeats(message: Mapping[str, Any], messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every call of ``message`` was made before since the user spoke, with the same arguments."""
    _, before, _ = since_user(messages)
    made = [(c["name"], c["arguments"]) for c in before]
    calls = message.get("tool_calls") or []
    return bool(calls) and all(
        ((c.get("function") or {}).get("name"), arguments_of((c.get("function") or {}).get("arguments")))
        in made
        for c in calls
    )


ALL_RESULTS: dict[Language, str] = {
    "en": "Answer with every result above, for each thing the user asked about.",
    "zh": "现在根据上面的每一项结果，用中文回答用户。",
}


def results_note(messages: Sequence[Mapping[str, Any]], language: Language) -> str | None:
    """The reminder before answering from two results or more: the 0.5B model, given the weather in
    Tokyo and in Sydney, told only Sydney's."""
    _, calls, results = since_user(messages)
    fine = [r for r in results if '"code": "ERR_' not in r]
    return ALL_RESULTS[language] if len(calls) >= 2 and len(fine) >= 2 else None


def called(follow: FollowUp, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The assistant message making ``follow``'s ready call, its id numbered after the replies so far."""
    step = sum(m.get("role") == "assistant" for m in messages) + 1
    arguments = json.dumps(follow.arguments or {}, ensure_ascii=False)
    call = {
        "id": f"call_{step}_1",
        "type": "function",
        "function": {"name": follow.tool, "arguments": arguments},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def opening(messages: Sequence[Mapping[str, Any]]) -> str:
    """The first user message's text: what a conversation's offered tools are kept by."""
    return next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
