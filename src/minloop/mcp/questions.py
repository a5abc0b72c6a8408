"""A server's questions (the 2026-07-28 protocol's "input required" result) as minloop's.

A ``tools/call`` may be answered with input requests (elicitations: a form with a schema, or a
page to visit) and an opaque ``requestState``. ``asked`` makes them an ``Asked`` failure (the
run pauses, or ``ask_user`` answers, or the model reads ``ERR_TOOL_INPUT_REQUIRED``); the next
round of the call sends ``responses`` of the answers with the state echoed byte for byte.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from ..questions import MAX_ROUNDS, Answered, Asked, Asking, Question, answered
from .convert import MCPToolError

__all__ = ["asked", "call_asking", "responses"]


async def call_asking(session: Any, tool: str, arguments: dict[str, Any], server: str, types: Any) -> Any:
    """The result of ``tool`` called through ``session``: the first round, or the next one with
    the answers of the call in progress (``answered()``) and the server's state echoed as it
    came. Questions raise ``Asked``; a result carrying only a state (the server is not done yet)
    is sent again at once, then after growing waits."""
    shape = _result_shape(types)

    async def send(state: str | None, responses: dict[str, Any] | None) -> Any:
        params = types.CallToolRequestParams(name=tool, arguments=arguments, request_state=state,
                                             input_responses=responses)  # fmt: skip
        return await session.send_request(types.CallToolRequest(params=params), shape)

    sent = answered()
    result = await send(None if sent is None else sent.state, responses(sent, types))
    wait = 0.0
    for _ in range(MAX_ROUNDS):
        if not isinstance(result, types.InputRequiredResult):
            return result
        if result.input_requests:
            raise asked(result, server, sent)
        await asyncio.sleep(wait)
        wait = min(max(wait * 2, 0.05), 0.25)
        result = await send(result.request_state, None)
    raise MCPToolError(f"server {server!r} asked to be called again more than {MAX_ROUNDS} times in a row")


@functools.cache
def _result_shape(types: Any) -> Any:
    """What a ``tools/call`` may answer, made once: building a ``TypeAdapter`` costs more than a call."""
    from pydantic import TypeAdapter

    return TypeAdapter(types.CallToolResult | types.InputRequiredResult)


def asked(result: Any, server: str, sent: Answered | None) -> Asked:
    """The ``Asked`` for an ``InputRequiredResult``; ``MCPToolError`` for a request no person
    answers (sampling a model, listing roots)."""
    questions = []
    for key, request in (result.input_requests or {}).items():
        params = request.params
        if request.method != "elicitation/create":
            raise MCPToolError(
                f"server {server!r} asked for {request.method!r} to finish the call, which minloop does not answer"
            )
        if params.mode == "url":
            questions.append(Question(server, key, "url", params.message, url=params.url))
        else:
            schema = params.requested_schema
            plain = (
                schema
                if isinstance(schema, dict)
                else schema.model_dump(mode="json", by_alias=True, exclude_none=True)
            )
            questions.append(Question(server, key, "form", params.message, plain))
    return Asked(Asking(tuple(questions), result.request_state, 1 if sent is None else sent.round))


def responses(sent: Answered | None, types: Any) -> dict[str, Any] | None:
    """What the next round sends as ``inputResponses``."""
    if sent is None:
        return None
    return {k: types.ElicitResult(action=a.action, content=a.content) for k, a in sent.answers.items()}
