"""Tool calls written as text: the one place that reads them, for every model.

A small model behind an OpenAI-compatible server (llama.cpp, Ollama, LM Studio, vLLM) often
leaves ``tool_calls`` empty and writes its call in ``content`` instead. ``read_calls`` turns
such a reply into calls when, and only when, the whole reply is the call:

* the text is one JSON value, bare or in one ```` ``` ```` / ```` ```json ```` fence, optionally
  after one short line of lead-in ("Let me check:"), or it holds ``<tool_call>...</tool_call>``
  blocks (the text outside them is kept);
* the value is a call, or a list of calls, or ``{"calls": [...]}`` / ``{"tool_calls": [...]}``;
  doubled braces (``{{ ... }}``) are read as single ones;
* a call names a registered tool under ``name``, ``function``, ``tool`` or ``tool_name``, its
  arguments are an object (or a JSON string of one) under ``arguments``, ``parameters``,
  ``tool_input``, ``args`` or ``input``, and it has no other keys (``id`` and ``type`` aside);
  the OpenAI wire shape ``{"type": "function", "function": {"name": ..., "arguments": ...}}``
  is a call too;
* or the text is calls written as Python (``[get_weather(city="Paris")]``), in Llama's
  ``<|python_start|>`` / ``<|python_tag|>`` blocks, or as FunctionGemma writes them
  (``call:get_weather{city:<escape>Paris<escape>}``): see ``minloop.callshapes``.

Anything else stays an answer: JSON that names no registered tool, a typed answer, an object
with keys a call does not have, a code sample, a call inside a longer explanation, several
fences, or a lead-in that introduces an example. One value that is not a call makes the whole
reply an answer.

``written_call`` says whether a reply is *written as* calls even when it cannot be read as them:
a call followed by more JSON (more calls one per line, say, or a result the model made up), or
a call cut off before its end. Such a reply is neither run (it may hold calls the model made up
while it ran on) nor shown as the answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from .callshapes import BLOCKS, gemma_calls, python_calls
from .models.base import ModelRequest, ModelResponse

__all__ = [
    "TextCalls",
    "calls_written",
    "json_payloads",
    "json_values",
    "may_become_call",
    "read_calls",
    "recovered",
    "written_call",
]

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_MARKED = [_TOOL_CALL] + [
    re.compile(
        rf"{re.escape(start)}\s*(.*?)\s*(?:{re.escape(end) if end else '<[|]eo[mt]_id[|]>'}|$)", re.DOTALL
    )
    for start, end in BLOCKS
]
_FENCE = re.compile(r"^```[ \t]*(?:json|JSON|tool_call)?[ \t]*\n?(.*?)\n?[ \t]*```$", re.DOTALL)
_OPEN_FENCE = re.compile(r"^```[ \t]*(?:json|JSON|tool_call)?[ \t]*\n")
_CALL_START = re.compile(r'^\[?\s*\{\s*"(?:name|function|tool|tool_name)"\s*:\s*"([^"\\]+)("?)')
_SHAPE_START = re.compile(
    r"^(<\|python_start\|>|<start_function_call>|<\|python_tag\|>)?\s*(\[)?\s*(call:)?([A-Za-z_][\w.\-]*)?([({])?"
)
_WORD = re.compile(r"([A-Za-z_][\w.\-]*)([(:]?)")
_LEAD_IN_CHARS = 120
_EXAMPLE_WORDS = re.compile(
    r"example|e\.g\.|sample|format|schema|like this|such as|would look|here is how|示例|例如|比如|样例|格式|如下所示",
    re.IGNORECASE,
)
NAME_KEYS = ("name", "function", "tool", "tool_name")
ARGUMENT_KEYS = ("arguments", "parameters", "tool_input", "args", "input")
_SPARE_KEYS = {"id", "type"}
_CALL_MARKS = "{(<"  # every call shape read here holds one: JSON's brace, Python's parenthesis, a marker
_DECODER = json.JSONDecoder()  # made once: it keeps no state between calls


@dataclass(frozen=True, slots=True)
class TextCalls:
    """The calls a reply's text holds (wire-format ``function`` parts: ``name`` and ``arguments``
    as a JSON string), and the text around them, stripped."""

    calls: tuple[dict[str, str], ...]
    text: str

    def wire(self, prefix: str | None = None) -> list[dict[str, Any]]:
        """The calls as wire-format ``tool_calls``, with ids ``{prefix}_1``, ``{prefix}_2``, ... (none
        without ``prefix``: the loop gives each call an id unique in the run)."""
        ids = [None if prefix is None else f"{prefix}_{i}" for i in range(1, len(self.calls) + 1)]
        return [{"id": i, "type": "function", "function": c} for i, c in zip(ids, self.calls, strict=True)]


def read_calls(text: str, names: Collection[str]) -> TextCalls | None:
    """The calls to the tools ``names`` that ``text`` is made of, or ``None`` when it is an answer."""
    if not names or not text.strip():
        return None
    if "\\" not in text and not any(name in text for name in names):
        return None  # a call names its tool as it is (unless a JSON string escapes it: "\u0061dd")
    if (tagged := _tagged(text)) is not None:
        blocks, rest = tagged
        found = _calls_of([_shaped(b) for b in blocks], names)
        return TextCalls(found, rest) if found else None
    lead, body = _split_lead_in(text.strip())
    if lead is not None and (len(lead) > _LEAD_IN_CHARS or _EXAMPLE_WORDS.search(lead)):
        return None
    fence = _FENCE.match(body)
    body = fence.group(1).strip() if fence is not None else body
    if "```" in body:
        return None
    value = _loads(body)  # a code sample in a fence is not read as Python
    found = _calls_of([value if value is not None or fence else _shaped(body)], names)
    return TextCalls(found, lead or "") if found else None


def _tagged(text: str) -> tuple[list[str], str] | None:
    """The blocks between the first kind of call markers ``text`` holds (``<tool_call>``,
    ``<|python_start|>``, ...), and the text outside them; ``None`` when it holds none."""
    for pattern in _MARKED:
        if pattern.search(text):
            return pattern.findall(text), pattern.sub("", text).strip()
    return None


def _shaped(text: str) -> Any:
    """One piece of a reply as a value: JSON, else calls written as Python or as FunctionGemma
    writes them (``minloop.callshapes``), else ``None``."""
    value = _loads(text)
    if value is None:
        value = python_calls(text) or gemma_calls(text)
    return value


def written_call(text: str, names: Collection[str]) -> bool:
    """Whether ``text`` is written as calls to the tools ``names``, read or not: one call as
    ``read_calls`` reads it, or a call followed by more JSON (more calls, or a result the model
    made up), or a call cut off before its end."""
    if not names or not text.strip() or not any(mark in text for mark in _CALL_MARKS):
        return False
    if read_calls(text, names) is not None or _cut_off_shape(text.strip(), names):
        return True
    lead, body = _split_lead_in(text.strip())
    if lead is not None and (len(lead) > _LEAD_IN_CHARS or _EXAMPLE_WORDS.search(lead)):
        return False
    body = _OPEN_FENCE.sub("", body, count=1).removesuffix("```").strip()
    if body[:1] not in ("{", "["):  # a call in JSON, whole or cut off, is an object or a list
        return False
    values, rest = _values(body)
    if not values:
        return _cut_off_call(rest, names)
    if _calls_of(values[:1], names) == ():
        return False
    return rest[:1] in "{[" if rest else len(values) > 1


def json_values(text: str) -> list[Any]:
    """The JSON values ``text`` is made of (bare or in one fence, one after another), or ``[]``
    when it holds anything else."""
    body = text.strip()
    body = _OPEN_FENCE.sub("", body, count=1).removesuffix("```").strip() if body.startswith("```") else body
    if body[:1] not in "{[":
        return []
    values, rest = _values(body)
    return [] if rest else values


def _values(body: str) -> tuple[list[Any], str]:
    """The JSON values at the start of ``body`` (separated by spaces, lines or commas), and the
    rest that is not one."""
    at = 0
    values: list[Any] = []
    while at < len(body):
        try:
            value, at = _DECODER.raw_decode(body, at)
        except ValueError:
            return values, body[at:]
        values.append(value)
        while at < len(body) and body[at] in " \t\r\n,":
            at += 1
    return values, ""


def _cut_off_call(rest: str, names: Collection[str]) -> bool:
    start = _CALL_START.match(rest)
    if start is None:
        return False
    name, closed = start.groups()
    return name in names if closed else any(n.startswith(name) for n in names)


def _cut_off_shape(text: str, names: Collection[str]) -> bool:
    """Whether ``text`` begins a call to one of ``names`` in another shape than bare JSON (in call
    markers, Python's, FunctionGemma's) that could not be read: cut off, or run on into more."""
    start = _SHAPE_START.match(text)
    if start is None:
        return False
    marker, bracket, gemma, name, opened = start.groups()
    if marker and _cut_off_call(text[len(marker) :].lstrip(), names):
        return True
    if name not in names or (not marker and opened != ("{" if gemma else "(")):
        return False
    return bool(marker or bracket or gemma) or ")" not in text  # bare: only when cut off


def may_become_call(text: str, names: Collection[str] = ()) -> bool:
    """Whether a reply that begins with ``text`` may still turn out to be a call from here on: a
    stream holds such text back until the reply is whole (a lead-in line is not held). With the
    tools' ``names``, so is text that begins a call written as Python or as FunctionGemma does
    (``get_weather(``, ``call:``)."""
    stripped = text.lstrip()
    if not stripped or stripped[0] in "{[`<":
        return True
    if names and (word := _WORD.match(stripped)) is not None:
        name, after = word.groups()
        if after:
            return name in names if after == "(" else name == "call"
        if word.end() == len(stripped):  # the first word is still being written
            return any(n.startswith(name) for n in (*names, "call"))
    head, newline, rest = stripped.partition("\n")
    if not newline or len(head) > _LEAD_IN_CHARS or _EXAMPLE_WORDS.search(head):
        return False
    rest = rest.lstrip()
    return not rest or rest[0] in "{[`<"


def json_payloads(text: str) -> list[dict[str, Any]]:
    """The JSON objects a reply consists of: the whole text, else its ``<tool_call>`` blocks, else
    its fenced blocks (for a model that writes calls in its own format, see ``models.local``)."""
    fences = re.findall(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.DOTALL)
    for candidates in ([text], _TOOL_CALL.findall(text), fences):
        found = [v for v in map(_loads, candidates) if isinstance(v, dict)]
        if found:
            return found
    return []


def _split_lead_in(text: str) -> tuple[str | None, str]:
    """``(lead-in line, rest)`` when the text's first line is prose and the rest starts a value."""
    if text[:1] in "{[`":
        return None, text
    head, _, rest = text.partition("\n")
    rest = rest.strip()
    if rest and rest[0] in "{[`":
        return head.strip(), rest
    return None, text


def _calls_of(values: list[Any], names: Collection[str]) -> tuple[dict[str, str], ...]:
    """Every value as calls, or ``()`` if any value is not made of calls to ``names``."""
    out: list[dict[str, str]] = []
    for value in values:
        items = value
        if isinstance(value, dict) and len(value) == 1 and isinstance(v := next(iter(value.values())), list):
            items = v if next(iter(value)) in ("calls", "tool_calls") else None
        items = items if isinstance(items, list) else [items]
        calls = [_call(item, names) for item in items]
        if not calls or any(c is None for c in calls):
            return ()
        out.extend(c for c in calls if c is not None)
    return tuple(out)


def _call(item: Any, names: Collection[str]) -> dict[str, str] | None:
    if not isinstance(item, dict):
        return None
    if isinstance(fn := item.get("function"), dict) and set(item) <= {"function", *_SPARE_KEYS}:
        item = fn  # the OpenAI wire shape
    name_keys = [k for k in NAME_KEYS if isinstance(item.get(k), str)]
    arg_keys = [k for k in ARGUMENT_KEYS if k in item]
    if len(name_keys) != 1 or len(arg_keys) > 1 or set(item) - {*name_keys, *arg_keys, *_SPARE_KEYS}:
        return None
    name = item[name_keys[0]]
    arguments = item[arg_keys[0]] if arg_keys else {}
    if isinstance(arguments, str):
        arguments = _loads(arguments) if arguments.strip() else {}
    if name not in names or not isinstance(arguments, dict):
        return None
    return {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}


def _loads(text: str) -> Any:
    for candidate in (text, _single_braces(text)):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def _single_braces(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("{{") and stripped.endswith("}}"):
        return stripped.replace("{{", "{").replace("}}", "}")
    return text


def calls_written(response: ModelResponse, request: ModelRequest, read: bool = True) -> ModelResponse:
    """``response`` with a call to the request's tools written as text read as that call (unless
    not ``read``): the loop reads it so as the model replies, before any layer sees the reply
    (see ``minloop.decision``). A reply stopped at its length cap, or one that already calls, is
    left as it is."""
    message = response.message
    text = message.get("content")
    if not read or message.get("tool_calls") or response.stopped == "length" or not isinstance(text, str):
        return response
    found = recovered(text, request)
    return response if found is None else replace(response, message=found.message)


def recovered(text: str, request: ModelRequest) -> ModelResponse | None:
    """The reply ``text`` makes when it is calls to the request's tools, else ``None``."""
    names = [str(t.get("function", {}).get("name")) for t in request.tools if isinstance(t, dict)]
    found = read_calls(text, names) if request.tool_choice != "none" else None
    if found is None:
        return None
    return ModelResponse({"role": "assistant", "content": found.text or None, "tool_calls": found.wire()})
