"""Making a small local model's output a valid decision every time.

The embedded model sees the tools through its own chat template, plus one instruction naming
the reply format. Its output is constrained by a JSON schema derived from the registered
tools: ``{"name": <one of the tools>, "arguments": <that tool's argument schema>}`` for a
call, ``{"answer": "..."}`` for a direct reply (``{"answer": <the output schema>}`` for a typed
answer, see ``answer_schema``). ``parse_decision`` turns the text back into a
wire-format assistant message; when the output is not the constrained JSON (a runtime
without grammar support, a truncated reply) it falls back to the template's
``<tool_call>`` blocks, then to fenced JSON (``minloop.textcalls.json_payloads``, the reader
every model shares), then to plain text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ...decision import is_standard_control
from ...messages import Message, loads
from ...schemas import distributed
from ...textcalls import json_payloads
from ..base import ModelResponse, ToolChoice, Usage

__all__ = [
    "FORMAT_INSTRUCTION",
    "PARALLEL_INSTRUCTION",
    "answer_schema",
    "decision_schema",
    "parse_decision",
    "renderable",
    "response_of",
    "with_instruction",
]

FORMAT_INSTRUCTION = (
    "Reply with exactly one JSON object. To call a function: "
    '{"name": <function-name>, "arguments": <args-json-object>}. '
    'To reply to the user directly: {"answer": <your reply>}.'
)
PARALLEL_INSTRUCTION = (
    "Reply with exactly one JSON object. To call a function: "
    '{"name": <function-name>, "arguments": <args-json-object>}. '
    "To make several calls at once, when the request asks for several things: "
    '{"calls": [{"name": ..., "arguments": ...}, ...]}. '
    'To reply to the user directly: {"answer": <your reply>}.'
)
ANSWER = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def answer_schema(output_schema: dict[str, Any] | None) -> dict[str, Any]:
    """``{"answer": string}``, or ``{"answer": <output_schema>}`` for a typed answer (its
    ``$defs`` moved to the top, where its references point)."""
    if output_schema is None:
        return ANSWER
    output_schema = bounded(output_schema)
    inner = {k: v for k, v in output_schema.items() if k != "$defs"}
    schema = {**ANSWER, "properties": {"answer": inner}}
    return {**schema, "$defs": output_schema["$defs"]} if "$defs" in output_schema else schema


def decision_schema(
    tools: Sequence[dict[str, Any]],
    tool_choice: ToolChoice,
    *,
    parallel: bool = False,
    answer: dict[str, Any] = ANSWER,
) -> dict[str, Any]:
    """The JSON schema of every reply the model may give under ``tool_choice``.

    One object per tool (``{"name": <const>, "arguments": <its schema>}``), with ``parallel``
    also ``{"calls": [two or more of those]}``, and ``answer`` (``{"answer": ...}``) unless a
    call is required.
    """
    if tool_choice == "none" or not tools:
        return answer
    forced = tool_choice.get("function", {}).get("name") if isinstance(tool_choice, dict) else None
    options = [
        {
            "type": "object",
            "properties": {
                "name": {"const": fn["name"]},
                "arguments": _arguments(fn.get("parameters")),
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for fn in (t["function"] for t in tools)
        if forced is None or fn["name"] == forced
    ]
    if parallel and forced is None:
        item = options[0] if len(options) == 1 else {"anyOf": list(options)}
        several = {"type": "array", "items": item, "minItems": 2}
        options.append(
            {
                "type": "object",
                "properties": {"calls": several},
                "required": ["calls"],
                "additionalProperties": False,
            }
        )
    defs = answer.get("$defs")
    if tool_choice == "auto":
        options.append({k: v for k, v in answer.items() if k != "$defs"})
    schema = options[0] if len(options) == 1 else {"anyOf": options}
    return {**schema, "$defs": defs} if defs and tool_choice == "auto" else schema


def _arguments(parameters: dict[str, Any] | None) -> dict[str, Any]:
    schema = {"type": "object", **(parameters or {})}
    return bounded(schema if "allOf" in schema else {"properties": {}, **schema})  # closed: no other keys


def bounded(schema: Any, close: bool = True) -> Any:
    """``schema`` with every object that names its properties closed to others (not the parts of
    an ``allOf``; an ``anyOf`` part takes its parent's, ``distributed``), as llama.cpp's grammar
    reads it (llguidance let a model add keys), and every list of choices (enum members, a
    constant, booleans) limited to as many items as there are choices: the 0.5B model, asked for
    a hotel's amenities from four members, wrote "Breakfast" until the token limit (12 s)."""
    if not isinstance(schema, dict):
        return schema
    out = distributed(schema)
    for key, sub in list(out.items()):
        if key in ("items", "additionalProperties", "not") and isinstance(sub, dict):
            out[key] = bounded(sub)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(sub, list):
            out[key] = [bounded(s, key != "allOf") for s in sub]
        elif key in ("properties", "$defs", "definitions") and isinstance(sub, dict):
            out[key] = {name: bounded(s) for name, s in sub.items()}
    if choices := _choices(out.get("items")):
        limit = out.get("maxItems")
        out["maxItems"] = min(choices, limit) if isinstance(limit, int) else choices
    if close and "properties" in out and not {"patternProperties", "allOf"} & out.keys():
        out.setdefault("additionalProperties", False)
    return out


def _choices(items: Any) -> int:
    """How many different values a list item may take, when they are few and named (else 0)."""
    if not isinstance(items, dict):
        return 0
    if isinstance(items.get("enum"), list):
        return len(items["enum"])
    if "const" in items:
        return 1
    return 2 if items.get("type") == "boolean" else 0


def parse_decision(text: str, call_prefix: str = "call", *, truncated: bool = False) -> Message:
    """A wire-format assistant message from the model's text.

    A reply cut off by the token limit keeps what can be used: a call keeps its name and the
    broken arguments (the loop answers ``ERR_TOOL_ARGS_INVALID`` and the model can retry), an
    answer keeps its text so far.
    """
    payloads = json_payloads(text) or (_salvage(text) if truncated else [])
    payloads = [c for p in payloads for c in (p["calls"] if isinstance(p.get("calls"), list) else [p])]
    payloads = [p for p in payloads if isinstance(p, dict)]
    calls = [p for p in payloads if isinstance(p.get("name"), str)]
    if calls:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"{call_prefix}_{i}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": _dump_args(c.get("arguments"))},
                }
                for i, c in enumerate(calls, 1)
            ],
        }
    answers = [
        a if isinstance(a, str) else _dump_args(a) for p in payloads if (a := p.get("answer")) is not None
    ]
    return {"role": "assistant", "content": answers[0] if answers else text.strip()}


_PARTIAL_CALL = re.compile(r'^\s*\{\s*"name"\s*:\s*"([^"]+)"\s*,\s*"arguments"\s*:\s*(.*)$', re.DOTALL)
_PARTIAL_ANSWER = re.compile(r'^\s*\{\s*"answer"\s*:\s*"(.*)$', re.DOTALL)


def _salvage(text: str) -> list[dict[str, Any]]:
    if match := _PARTIAL_CALL.match(text):
        return [{"name": match.group(1), "arguments": match.group(2)}]
    if match := _PARTIAL_ANSWER.match(text):
        partial = match.group(1)
        for cut in range(len(partial), max(len(partial) - 8, -1), -1):  # drop a half escape
            decoded = _loads(f'"{partial[:cut]}"')
            if isinstance(decoded, str):
                return [{"answer": decoded.rstrip() + " ..."}]
    return []


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _dump_args(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


# How the embedded model reads the loop's control message after tool results: without the
# request it quotes. The embedded policy's own notes say what the request still needs, and its
# decisions were measured with this text (quoted, the development set scored the same).
READ_CONTROL = (
    "Use the tool results above. If they answer the question, give the user the final answer; "
    "if more information is needed, call another tool; if the request is unclear, ask the user "
    "to clarify."
)


def renderable(messages: Sequence[Message]) -> list[Message]:
    """The messages as the model reads them: a tool result without its ``trace_id`` (the loop's
    stamp, for the trace; the 0.5B model read it out in a third of its answers, "The trace ID is
    trc_..."), the loop's control message as ``READ_CONTROL``, and call arguments that are not
    JSON (a reply cut off mid-call) given to the runtime as a JSON string: its template parses
    every call's arguments and refuses the request otherwise."""
    out = []
    for message in messages:
        if message.get("role") in ("tool", "function"):
            message = _unstamped(message)
        elif message.get("role") != "assistant" and is_standard_control(message.get("content")):
            message = {**message, "content": READ_CONTROL}
        calls = message.get("tool_calls") or []
        if any(not _is_json(c.get("function", {}).get("arguments")) for c in calls):
            calls = [_quoted(c) for c in calls]
            message = {**message, "tool_calls": calls}
        out.append(message)
    return out


def _unstamped(message: Message) -> Message:
    """A tool message whose JSON object content has no ``trace_id``; any other as it is."""
    content = message.get("content")
    data = _loads(content) if isinstance(content, str) and '"trace_id"' in content else None
    if not isinstance(data, dict) or "trace_id" not in data:
        return message
    rest = {k: v for k, v in data.items() if k != "trace_id"}
    return {**message, "content": json.dumps(rest, ensure_ascii=False)}


def _quoted(call: dict[str, Any]) -> dict[str, Any]:
    fn = call.get("function", {})
    if _is_json(fn.get("arguments")):
        return call
    return {**call, "function": {**fn, "arguments": json.dumps(str(fn.get("arguments") or ""))}}


def _is_json(text: Any) -> bool:
    try:
        loads(text or "{}")
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def with_instruction(messages: list[Message], parallel: bool) -> list[Message]:
    instruction = PARALLEL_INSTRUCTION if parallel else FORMAT_INSTRUCTION
    if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{instruction}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]


def response_of(reply: dict[str, Any], prefix: str, *, constrained: bool, cut: bool = False) -> ModelResponse:
    choice = reply["choices"][0]
    text = choice["message"].get("content") or ""
    truncated = cut or choice.get("finish_reason") == "length"
    message = (
        parse_decision(text, prefix, truncated=truncated)
        if constrained
        else {"role": "assistant", "content": text}
    )
    usage = reply.get("usage") or {}
    timings = reply.get("timings") or {}
    return ModelResponse(
        message=message,
        usage=Usage(
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            evaluated_tokens=timings.get("prompt_n"),
        ),
    )
