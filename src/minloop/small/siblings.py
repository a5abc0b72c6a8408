"""A call made for one of several values the request names is asked for each of them.

Asked "What is the total balance of accounts CH-8812 and CH-3301?", a small model calls the
balance tool for the first account and answers from that one result. ``Siblings`` reads the
user's last message for the values of the same kind as each argument the model took from it:
codes of the same shape ("CH-3301" beside "CH-8812"), months and days ("2026年11月" beside
"2026-09"), the other members of the parameter's enum, the other titles or quotations
("《小王子》" beside "《战争与和平》"), and the name a conjunction joins to it ("St. Anton or
Zermatt", "圣安东和采尔马特"). When one of them has no call yet since the user spoke, the
decision is made once more, told to call the tool for each; the new decision stands when it
leaves fewer of them without a call, else the first one does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..language import user_language
from ..layer import CallModel, Layer
from ..messages import Message
from ..models.base import ModelRequest
from ..state import Reply, RunState

__all__ = ["Siblings", "siblings"]

_CODE = re.compile(r"(?<![\w-])[A-Za-z0-9][\w-]*(?![\w-])")
_MONTHS = "january february march april may june july august september october november december".split()
_EN_DATE = re.compile(rf"\b({'|'.join(_MONTHS)})(?:\s+(\d{{1,2}})(?!\d))?(?:,?\s+(\d{{4}}))?", re.I)
_ZH_DATE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?")
_ISO = re.compile(r"(\d{4})-(\d{1,2})(?:-(\d{1,2}))?")
_QUOTED = re.compile(r"《([^》]+)》|「([^」]+)」|“([^”]+)”|\"([^\"]+)\"")
_EN_JOIN = re.compile(r"\s*(?:,|,? and|,? or|&|vs\.?|versus)\s+((?:[A-Z][\w.'-]*\s?)+)")
_ZH_JOIN = re.compile(r"(?:和|与|跟|及|、|或|还是|加|对比)(?:[一二两三四五六七八九十\d]+[\u4e00-\u9fff])?([\u4e00-\u9fff·]+)")
_ZH_STOP = re.compile(r"[的在哪是有一今现谁多比这那呢吗各分都共总]")
NOTE = {
    "en": "The request names more than one {param}: {values}. Call {tool} for each of them, all in this reply.",
    "zh": "用户的请求提到了不止一个 {param}：{values}。请对其中每一个都调用 {tool}，在这次回复中一起调用。",
}


def siblings(value: str, schema: Mapping[str, Any], text: str) -> list[str]:
    """The other values of ``value``'s kind that ``text`` names (see the module), written as
    ``value`` is; none when ``text`` does not name ``value`` itself."""
    members = [m for m in schema.get("enum") or () if isinstance(m, str)]
    if value in members:
        named = [m for m in members if re.search(rf"\b{re.escape(m)}\b", text, re.I)]
        return [m for m in named if m != value] if value in named else []
    for found in (_dates(value, text), _quoted(text), _codes(value, text)):
        if value in found:
            return [v for v in dict.fromkeys(found) if v != value]
    return _joined(value, text)


def _codes(value: str, text: str) -> list[str]:
    if not any(ch.isdigit() for ch in value) or not _CODE.fullmatch(value):
        return []
    return [m.group() for m in _CODE.finditer(text) if _shape(m.group()) == _shape(value)]


def _shape(text: str) -> str:
    return re.sub(r"[A-Za-z]", "a", re.sub(r"\d", "9", text))


def _quoted(text: str) -> list[str]:
    return [next(g for g in m.groups() if g).strip() for m in _QUOTED.finditer(text)]


def _dates(value: str, text: str) -> list[str]:
    """The months or days ``text`` names, written as the ISO ``value`` is ("2026-09")."""
    if not (iso := _ISO.fullmatch(value)):
        return []
    found = [(m.start(), m.group(3), _MONTHS.index(m.group(1).lower()) + 1, m.group(2)) for m in _EN_DATE.finditer(text)]
    found += [(m.start(), m.group(1), int(m.group(2)), m.group(3)) for m in (*_ZH_DATE.finditer(text), *_ISO.finditer(text))]
    found.sort(key=lambda f: f[0])
    years = [f[1] for f in found]
    out = []
    for i, (_, year, month, day) in enumerate(found):  # a year left out is the nearest one given
        year = year or next((y for y in years[i:] + years[:i][::-1] if y), iso.group(1))
        if iso.group(3) is None:
            out.append(f"{year}-{month:02d}")
        elif day:
            out.append(f"{year}-{month:02d}-{int(day):02d}")
    return out


def _joined(value: str, text: str) -> list[str]:
    """The name a conjunction joins to ``value`` in ``text``: "Zermatt" in "St. Anton or Zermatt"."""
    at = text.find(value)
    if at < 0 or not value.strip():
        return []
    rest = text[at + len(value) :]
    if (m := _EN_JOIN.match(rest)) and value[:1].isupper():
        return [m.group(1).strip()]
    if (m := _ZH_JOIN.match(rest)) and len(word := _ZH_STOP.split(m.group(1))[0]) >= 2:
        return [word]
    return []


def missing(
    message: Message, tools: Sequence[Mapping[str, Any]], messages: Sequence[Message]
) -> dict[tuple[str, str], list[str]]:
    """Per tool and parameter of the calls in ``message``, the value called and those named beside
    it that no call since the user last spoke has."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users or not isinstance(text := messages[users[-1]].get("content"), str):
        return {}
    specs = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools if "function" in t}
    made = [*(m for m in messages[users[-1] :] if m.get("role") == "assistant"), message]
    called = [_args(c) for m in made for c in m.get("tool_calls") or []]
    out: dict[tuple[str, str], list[str]] = {}
    for name, args in (_args(c) for c in message.get("tool_calls") or []):
        props = (specs.get(name) or {}).get("properties") or {}
        for param, value in args.items():
            if isinstance(value, str) and isinstance(props.get(param), Mapping):
                have = {v for n, a in called if n == name for v in a.values() if isinstance(v, str)}
                if left := [v for v in siblings(value, props[param], text) if v not in have]:
                    out[(name, param)] = [value, *left]
    return out


def _args(call: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    fn = call.get("function") or {}
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except (TypeError, ValueError):
        args = {}
    return str(fn.get("name")), args if isinstance(args, dict) else {}


class Siblings(Layer):
    """A call for one of several values of a kind the request names is asked for each (see the module)."""

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        reply = await call(request)
        left = missing(reply.response.message, request.tools, request.messages)
        if request.tool_choice == "none" or not left:
            return reply
        language = user_language(request.messages)
        notes = [NOTE[language].format(param=p, tool=t, values=", ".join(v)) for (t, p), v in left.items()]
        note: Message = {"role": "system", "content": " ".join(notes)}
        again = await call(replace(request, messages=[*request.messages, note]))
        still = missing(again.response.message, request.tools, request.messages)
        calls = again.response.message.get("tool_calls")
        if not calls or sum(map(len, still.values())) >= sum(map(len, left.values())):
            return reply
        usage = reply.response.usage + again.response.usage
        return Reply(replace(again.response, usage=usage), reply.latency + again.latency)
