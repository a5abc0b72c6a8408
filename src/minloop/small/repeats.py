"""A call made again is answered from what is there: the same tool with the same arguments,
whose result the conversation already holds, is not sent; the model is asked again, tools off.

A small model that has its result often calls the same tool again with the same values (a
clock read twice before a record of the user's own values; a lookup repeated until the loop's
repeat limit refuses it). ``Repeats`` keys only on the transcript: a call's tool and arguments
against the calls answered since the user last spoke. A call made for an earlier message is
made again: what it reads may have changed since (a conversation that moves into a folder,
out of it and into it again).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..layer import CallModel, Layer
from ..models.base import ModelRequest
from ..state import Reply, RunState
from .results import call_arguments, since_user

__all__ = ["Repeats", "repeated"]


def _key(call: Mapping[str, Any]) -> tuple[str, str]:
    name, arguments = call_arguments(call)
    value = (call.get("function") or {}).get("arguments") if arguments is None else arguments
    return name, json.dumps(value, sort_keys=True, ensure_ascii=False)


def repeated(message: Mapping[str, Any], messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether every call of ``message`` is a call ``messages`` holds with its result since the
    user last spoke."""
    calls = message.get("tool_calls") or []
    messages = since_user(messages)
    answered = {m.get("tool_call_id") for m in messages if m.get("role") in ("tool", "function")}
    made = {
        _key(c)
        for m in messages
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
        if c.get("id") in answered
    }
    return bool(calls) and all(_key(c) in made for c in calls)


class Repeats(Layer):
    """A reply that only repeats calls already answered is asked for again with tools off."""

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        reply = await call(request)
        if request.tool_choice != "none" and repeated(reply.response.message, request.messages):
            again = await call(replace(request, tool_choice="none"))
            usage = reply.response.usage + again.response.usage
            return Reply(replace(again.response, usage=usage), reply.latency + again.latency)
        return reply
