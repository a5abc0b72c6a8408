"""Whether the tool results hold what the user asked for at all.

A small model asked for what no tool returns (the author of a book, from a tool that counts its
copies) calls the nearest tool and answers with a field of its result: "Moby-Dick has 3 pages",
"The credit limit of account CH-3301 is 4210.55 CHF". Every value is a tool's, so the evidence
check lets it pass. ``AskedField`` asks the same model one question after such an answer, with
its reply held to a choice: which field of the results holds what the user asked for, or
``none``. When it says none, or names a field that only gives back the call (named like one of
its parameters, or holding one of its values: the title looked up, the account's id), the
answer is replaced by the plain statement of what the tools returned and that it is not what
was asked.

It acts on answers written after a tool result with named fields, in any language (the fields
are the tools' own names, the question quotes the user), and never on an answer that declines
or asks back, or on a typed answer. The question is asked without the tools in the prompt: with
them, the 1.5B named a field (calories for a dish's cost) for three answers where without them
it said none or gave back the call.

It is not one of ``small_model_layers()``. On the test split of ``benchmarks/agent_set.py``
(``benchmarks/ablation.py --split test --arms all,+asked``) it declined 26 of 32 requests for
what no tool returns against 19, but answered 6 fewer requests the tools serve (16
over-refusals of 96 against 10), and took 8.1 s a request against 6.0 (median): 104 of 160
right against 103. Add it where a wrong value costs more than a declined request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..decision import reply_text
from ..language import last_said, user_language
from ..layer import CallModel, Layer
from ..models.base import ModelRequest
from ..state import Reply, RunState
from .declined import declines
from .notes import plain_statement
from .results import Outcome, outcomes

__all__ = ["QUESTION", "AskedField", "fields"]

QUESTION = (
    'Which field of the tool results above holds what the user asked for: "{request}"? '
    'Answer with the field\'s name, or "none" if no field holds it.'
)
NONE = "none"
FIELDS = 40


class AskedField(Layer):
    """An answer whose results hold no field the user asked for is replaced (see the module)."""

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        reply = await call(request)
        message = reply.response.message
        text = reply_text(message) or ""
        if message.get("tool_calls") or request.output_schema is not None or not text.strip():
            return reply
        done = [o for o in outcomes(request.messages) if o.kind == "served"]
        names, echoes = fields(done)
        if not names or declines(text):
            return reply
        ask = [
            *request.messages,
            {"role": "user", "content": QUESTION.format(request=last_said(request.messages))},
        ]
        schema = {
            "type": "object",
            "properties": {"field": {"type": "string", "enum": [*names, NONE]}},
            "required": ["field"],
        }
        # asked without the tools: see the module
        again = await call(ModelRequest(ask, tool_choice="none", output_schema=schema))
        picked = _picked(reply_text(again.response.message))
        usage = reply.response.usage + again.response.usage
        if picked is None or (picked != NONE and picked not in echoes):
            return Reply(replace(reply.response, usage=usage), reply.latency + again.latency)
        statement = plain_statement(request.messages, user_language(request.messages))
        answer = {"role": "assistant", "content": statement}
        return Reply(replace(reply.response, message=answer, usage=usage), reply.latency + again.latency)


def fields(done: Sequence[Outcome]) -> tuple[list[str], set[str]]:
    """The names of the fields the results hold (a list's own name too: its count may be the
    answer), first seen first, and those that only give back the call: named like one of its
    parameters, or every value one of its arguments (the title looked up, the account's id)."""
    names: list[str] = []
    own: set[str] = set()  # fields with a value of their own somewhere
    for outcome in done:
        given = {str(v).casefold() for v in outcome.arguments.values()}
        for key, value in _fields(outcome.result):
            names.append(key)
            if key not in outcome.arguments and str(value).casefold() not in given:
                own.add(key)
    kept = list(dict.fromkeys(names))[:FIELDS]
    return kept, set(kept) - own


def _fields(data: Any) -> list[tuple[str, Any]]:
    """``(name, value)`` of every named field in ``data``, nested ones too."""
    found: list[tuple[str, Any]] = []
    if isinstance(data, Mapping):
        for key, value in data.items():
            if key in ("found", "trace_id"):
                continue
            if not isinstance(value, Mapping):
                found.append((str(key), value))
            if isinstance(value, Mapping | list):
                found += _fields(value)
    elif isinstance(data, list):
        for item in data:
            found += _fields(item)
    return found


def _picked(text: str | None) -> str | None:
    try:
        data = json.loads(text or "")
    except ValueError:
        return None
    field = data.get("field") if isinstance(data, dict) else None
    return field if isinstance(field, str) else None
