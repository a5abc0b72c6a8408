"""A call resting on values nobody said is not made.

A small model asked to decide between a tool and an answer almost always picks a tool, and
fills the arguments it was not given with plausible inventions: a date for "when was the
Declaration signed", a city for "what's the weather". ``Grounding`` checks each call of a
decision against the conversation (``values``: the user's, system and tool messages, not the
loop's control message, which may quote what an answer sent back stated): values
are first mapped onto their parameter's vocabulary (a time zone, an enum member, a date
format), optional arguments whose values are not found are dropped (the function's default
applies), and when a *required* value is not found, or the arguments are cut off (no JSON
object: a runaway at the length limit), the call is not made. The decision is made once more
without that tool; when no call stands, the model is asked once more, tools off, told which
values are missing, for a short answer (it says what it needs, or asks the user).

A model that reads its reply as it writes it stops the call at the first such value
(``WhileDecoding.refuse``), so the rest of the invention is never written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..language import user_language
from ..layer import CallModel, Layer
from ..messages import Message
from ..models.base import ModelRequest, WhileDecoding
from ..state import Reply, RunState
from .notes import ungrounded_note
from .results import call_arguments
from .values import Grounds, conversation, ground_calls

__all__ = ["Grounding"]


class Grounding(Layer):
    """Calls checked against the conversation (see the module); ``resolve`` maps values onto
    their parameter's vocabulary first."""

    def __init__(self, resolve: bool = True) -> None:
        self.resolve = resolve

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        if request.tool_choice == "none" or not request.tools:
            return await call(request)
        evidence = conversation(run, request)
        refuse = _Refusal(request.tools, evidence, self.resolve)
        reply = await call(request.asking(WhileDecoding(refuse=refuse)))
        if not reply.response.message.get("tool_calls"):
            return reply
        message, missing = ground_calls(reply.response.message, request.tools, evidence, resolve=self.resolve)
        missing |= _cut_off(message)
        if not missing:
            return replace(reply, response=replace(reply.response, message=message))
        if (other := await self._others(request, call, missing, evidence)) is not None:
            return other
        note: Message = {
            "role": "system",
            "content": ungrounded_note(missing, user_language(request.messages)),
        }
        retry = replace(request, messages=[*request.messages, note], tool_choice="none")
        answer = await call(retry.asking(WhileDecoding(stop=brief)))
        usage = reply.response.usage + answer.response.usage
        return Reply(replace(answer.response, usage=usage), reply.latency + answer.latency)

    async def _others(
        self, request: ModelRequest, call: CallModel, missing: dict[str, list[str]], evidence: list[Message]
    ) -> Reply | None:
        """The decision made once more without the tools whose call rested on values nobody gave:
        asked "What time is it in Tokyo?", the 1.5B model called ``convert_time`` with a time of its
        own, beside ``get_current_time``. ``None`` when no tool is left or no call stands."""
        rest = [t for t in request.tools if t.get("function", {}).get("name") not in missing]
        if not rest or len(rest) == len(request.tools) or request.tool_choice not in ("auto", "required"):
            return None
        refuse = _Refusal(rest, evidence, self.resolve)
        reply = await call(replace(request, tools=rest).asking(WhileDecoding(refuse=refuse)))
        message, still = ground_calls(reply.response.message, rest, evidence, resolve=self.resolve)
        if not message.get("tool_calls") or still or _cut_off(message):
            return None
        return replace(reply, response=replace(reply.response, message=message))


def _cut_off(message: Message) -> dict[str, list[str]]:
    """The calls whose arguments are no JSON object: cut off at the length limit, a runaway."""
    cut: dict[str, list[str]] = {}
    for called in message.get("tool_calls") or []:
        name, arguments = call_arguments(called)
        if arguments is None:
            cut[name] = ["arguments"]
    return cut


class _Refusal:
    """Whether a call's arguments read so far hold a required value the conversation does not give."""

    def __init__(
        self, tools: Sequence[Mapping[str, Any]], evidence: Sequence[Message], resolve: bool
    ) -> None:
        self.tools, self.evidence, self.resolve = tools, evidence, resolve
        self.grounds: Grounds | None = None  # read at the first complete argument

    def __call__(self, tool: str, arguments: dict[str, Any]) -> bool:
        self.grounds = self.grounds or Grounds(self.tools, self.evidence, resolve=self.resolve)
        return tool in self.grounds.specs and bool(self.grounds.check(tool, arguments)[1])


BRIEF_CHARS = 160  # about the 64 tokens of a short answer


def brief(text: str) -> bool:
    """Stop an answer at the end of the first sentence past ``BRIEF_CHARS`` characters."""
    return len(text) > BRIEF_CHARS and text.rstrip()[-1:] in ".!?。！？"
