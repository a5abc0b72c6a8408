"""``POST /v1/chat/completions``: any Chat Completions client talks to the served loop.

The client's messages are the run's transcript; the tools run on the server and the reply is the
loop's final answer (streamed as ``chat.completion.chunk`` events when ``"stream": true``). A run
that does not end with an answer (it paused for an approval, ran out of steps) answers with its
status and error as the text, ``finish_reason`` ``"stop"``, and the run id to follow it up.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ..exceptions import StoreError
from ..layers.streaming import RunEnd, TextDelta
from ..result import RunResult
from .bodies import BadRequest, ChatBody, read_body
from .errors import error
from .runs import tag_of

if TYPE_CHECKING:
    from .runs import Runs

__all__ = ["chat_completions"]

FAILED = "the run failed on the server; its log says why"

logger = logging.getLogger("minloop.serve")


async def chat_completions(request: Request, runs: Runs, token: str | None) -> Response:
    body = await read_body(request, ChatBody)
    problem = body.problem()
    if problem is not None:  # before a run starts, and before a stream's first byte
        raise BadRequest(422, f"the request body is not valid: {problem}")
    messages: list[Any] = [m.model_dump(exclude_none=True) for m in body.messages]
    loop = runs.loop_for(tag_of(token))
    if not body.stream:
        try:
            result = await loop.run(messages)
        except StoreError:
            raise  # a 503, as for every request the store fails
        except Exception:  # a broken configuration (a model or layer that raised): logged whole
            logger.exception("a chat completion's run failed")
            return error(500, FAILED)
        return JSONResponse(_completion(result, body.model))
    return StreamingResponse(_chunks(loop.stream(messages), body.model), media_type="text/event-stream")


def _answer(result: RunResult) -> str:
    if result.output is not None and result.status == "success":
        return result.output
    return f"[{result.status}] {result.error or result.output or ''}".strip()


def _completion(result: RunResult, model: str) -> dict[str, Any]:
    usage = result.usage
    return {
        "id": f"chatcmpl-{result.trace_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": _answer(result)},
            }
        ],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
        "minloop": {"run_id": result.trace_id, "status": result.status},
    }


async def _chunks(stream: Any, model: str) -> AsyncIterator[str]:
    head = {"object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    try:
        async for chunk in _deltas(stream, head):
            yield chunk
    except Exception:  # after the status went out: the stream's last event says so, as OpenAI's do
        logger.exception("a chat completion's run failed")
        yield f"data: {json.dumps({'error': {'message': FAILED, 'status': 500}})}\n\n"
        return
    yield "data: [DONE]\n\n"


async def _deltas(stream: Any, head: dict[str, Any]) -> AsyncIterator[str]:
    sent = ""
    async with stream as events:
        head["id"] = f"chatcmpl-{stream.trace_id}"
        yield _chunk(head, {"role": "assistant", "content": ""}, None)
        async for event in events:
            if isinstance(event, TextDelta) and event.text:
                sent += event.text
                yield _chunk(head, {"content": event.text}, None)
            elif isinstance(event, RunEnd):
                answer = _answer(event.result)
                if not answer.startswith(sent) or event.result.status != "success":
                    yield _chunk(head, {"content": ("\n\n" if sent else "") + answer}, None)
                elif answer != sent:
                    yield _chunk(head, {"content": answer[len(sent) :]}, None)
        yield _chunk(head, {}, "stop")


def _chunk(head: dict[str, Any], delta: dict[str, Any], finish: str | None) -> str:
    body = {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"
