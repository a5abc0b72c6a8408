"""A call whose value is its tool's own example ("AAPL" from 'e.g. "AAPL" for Apple', asked
about Microsoft; "BA117" asked about LH401), for ``LocalModel(guide=True)``.

A value written in the example's form with a number of the example that the conversation does
not have is the example too (``grounded_calls``): asked "What is 17 * 23? Use the calculator.",
the 1.5B model called it with "(17 + 23) * 3", after the description's "(17 + 5) * 3".

``asked_again`` takes the request's one value of the example's shape when it has one
(``reshaped``: "LH401" for "BA117"), else asks for the call once more, forced to the same tool,
with a note saying the value was only the example; ``banning`` bans the example's first token
for that decision: told that "AAPL" was only the example, the 0.5B model wrote "AAPL" again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...language import Language, user_language
from ..base import ModelRequest
from .grounding import Evidence, ground_calls
from .policy import arguments_of, since_user
from .shaped import shape

__all__ = [
    "COPIED",
    "asked_again",
    "banning",
    "borrows",
    "copied_example",
    "grounded_calls",
    "reshaped",
    "shape",
]

COPIED: dict[Language, str] = {
    "en": '"{value}" is only the example in the description of {tool}, not what the user asked for. '
    "Call {tool} with the {argument} of what the user asked about.",
    "zh": "“{value}”只是 {tool} 说明中的示例，不是用户问的内容。请用用户所问对象的 {argument} 调用 {tool}。",
}

_COPIED_MARK = re.compile(r"is only the example in the description of|只是 \S+ 说明中的示例")

_COPIED_VALUE = re.compile(r'^["“](?P<value>[^"”]+)["”](?: is only the example| ?只是 )')


def banning(
    body: dict[str, Any], messages: Sequence[Mapping[str, Any]], tokens: Callable[[str], list[int]]
) -> dict[str, Any]:
    """``body`` with the first token of a copied example banned, when the request ends with the
    note asking for the call once more (``asked_again``): told that "AAPL" was only the example,
    the 0.5B model wrote "AAPL" again for Microsoft. ``tokens`` gives a text's tokens."""
    last = messages[-1] if messages else {}
    found = _COPIED_VALUE.match(str(last.get("content"))) if last.get("role") == "system" else None
    if found is None:
        return body
    banned = {ids[0] for ids in (tokens(found["value"]), tokens(" " + found["value"])) if ids}
    return {**body, "logit_bias": [[token, False] for token in sorted(banned)]}


def copied_example(
    spec: Mapping[str, Any], arguments: Mapping[str, Any], lost: Sequence[str], language: Language
) -> str | None:
    """A note for a call whose ungrounded value is the example its tool's description gives
    ("AAPL" from 'the ticker symbol, e.g. "AAPL" for Apple', asked about Microsoft), else ``None``."""
    fn = spec.get("function") or {}
    props = (fn.get("parameters") or {}).get("properties") or {}
    for name in lost:
        value = arguments.get(name)
        texts = [str(fn.get("description") or ""), str((props.get(name) or {}).get("description") or "")]
        if (
            isinstance(value, str)
            and value.strip()
            and (any(f'"{value}"' in t or f"'{value}'" in t for t in texts) or borrows(value, spec))
        ):
            return COPIED[language].format(value=value, tool=fn.get("name"), argument=name.replace("_", " "))
    return None


def asked_again(
    request: ModelRequest,
    message: Mapping[str, Any],
    missing: Mapping[str, list[str]],
    arguments: Mapping[str, Any] | None = None,
) -> ModelRequest | dict[str, Any] | None:
    """When its one call's ungrounded value is the example of the tool's description
    (``copied_example``): the call with the request's one value of the example's shape instead
    ("LH401" for "BA117", see ``reshaped``), else the request again, forced to the same tool with
    a note. ``arguments`` are the call's as read when it was stopped, else they are read from
    ``message``. Once: not again when the request already has that note."""
    calls, whole = message.get("tool_calls") or [], arguments is None  # not stopped half written
    if any(_COPIED_MARK.search(str(m.get("content"))) for m in request.messages if m.get("role") == "system"):
        return None
    name = next(iter(missing)) if len(missing) == 1 else None
    spec = next((t for t in request.tools if t["function"]["name"] == name), None)
    if not arguments and len(calls) == 1:
        arguments = arguments_of(calls[0]["function"].get("arguments"))
    if spec is None or name is None or not arguments:
        return None
    note = copied_example(spec, arguments, missing[name], user_language(request.messages))
    if note is None:
        return None
    if whole and len(calls) == 1 and (fixed := reshaped(calls[0], missing[name], request.messages)):
        return {**message, "tool_calls": [fixed]}
    forced = {"type": "function", "function": {"name": name}}
    return replace(
        request, messages=[*request.messages, {"role": "system", "content": note}], tool_choice=forced
    )


def reshaped(
    call: Mapping[str, Any], lost: Sequence[str], messages: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """``call`` with each of its ``lost`` values, a code copied from the tool's description
    ("BA117"), replaced by the one word of the user's last message that has the code's shape
    ("LH401"); ``None`` when a value is no code (it has no digit, or small letters) or the
    message has no such word, or several."""
    arguments = arguments_of((call.get("function") or {}).get("arguments"))
    words = set(re.findall(r"[A-Za-z0-9][A-Za-z0-9_-]*", since_user(messages)[0]))
    for name in lost:
        value = arguments.get(name)
        code = isinstance(value, str) and re.fullmatch(r"(?=.*\d)[A-Z0-9_-]+|[A-Z]{2,}", value)
        same = [w for w in words if code and shape(w) == shape(str(value)) and w != value]
        if len(same) != 1:
            return None
        arguments[name] = same[0]
    fn = {**call["function"], "arguments": json.dumps(arguments, ensure_ascii=False)}
    return {**call, "function": fn}


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[:/]\d{1,2}")  # dates and times: their own rules
_QUOTED = re.compile(r'"([^"]+)"|\'([^\']+)\'')


def grounded_calls(
    message: Mapping[str, Any],
    tools: Sequence[Mapping[str, Any]],
    messages: Sequence[Mapping[str, Any]],
    **options: Any,
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """``grounding.ground_calls``, with a value that takes a number from its tool's own example
    also counted as not grounded (``borrows``)."""
    message, missing = ground_calls(message, tools, messages, **options)
    specs = {t["function"]["name"]: t for t in tools if "function" in t}
    evidence = None
    for call in message.get("tool_calls") or []:
        name = (call.get("function") or {}).get("name")
        if not isinstance(name, str) or name not in specs:
            continue
        evidence = evidence or Evidence.of(messages)
        for argument, value in arguments_of(call["function"].get("arguments")).items():
            if isinstance(value, str) and borrows(value, specs[name], evidence.has):
                lost = missing.setdefault(name, [])
                lost.extend([argument] if argument not in lost else [])
    return message, missing


def borrows(value: str, spec: Mapping[str, Any], given: Callable[[float], bool] = lambda n: False) -> bool:
    """Whether ``value`` is written in the form of an example quoted in its tool's description,
    with a number of that example which ``given`` (the conversation) does not have: "(17 + 23) * 3"
    after "(17 + 5) * 3", asked about 17 and 23. Examples of dates and times are left to their
    own rules ("2026-12-11" for "December 11" after "2026-12-10" keeps the example's month)."""
    fn = spec.get("function") or {}
    props = (fn.get("parameters") or {}).get("properties") or {}
    texts = [str(fn.get("description") or "")] + [str(p.get("description") or "") for p in props.values()]
    written = re.sub(r"\s+", "", value)
    for found in (m.group(1) or m.group(2) for t in texts for m in _QUOTED.finditer(t)):
        example = re.sub(r"\s+", "", found)
        numbers = _NUMBER.findall(example)
        if not numbers or _DATE.search(example):
            continue
        form = r"(\d+(?:\.\d+)?)".join(re.escape(piece) for piece in _NUMBER.split(example))
        matched = re.fullmatch(form, written)
        if matched and any(
            kept == number and not given(float(kept)) for kept, number in zip(matched.groups(), numbers)
        ):
            return True
    return False
