"""Test doubles that ship with the package: a scripted model and a function-backed model.

``ScriptedModel`` plays a fixed list of assistant turns and fails loudly if it is called more
often than scripted (at the call) or if its script is not used up (``assert_done()``, or on
leaving its ``with`` block). Tool-call ids are filled in deterministically (``call_1``,
``call_2``, ...) so whole transcripts can be asserted.

Both can stream (``stream``): each reply is cut into pieces of ``chunk_size`` characters, text
first, then each call's name and arguments, so stream consumers can be tested offline.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..exceptions import ScriptError
from ..guard import ensure_not_in_tool
from ..messages import Message
from .base import ModelRequest, ModelResponse

if TYPE_CHECKING:
    from .base import ModelDelta

__all__ = ["FunctionModel", "ScriptedModel", "call", "reply"]


def call(
    name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None
) -> dict[str, Any]:
    """One wire-format tool call; ``arguments`` may be a dict or a raw (possibly broken) string."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return {"id": id, "type": "function", "function": {"name": name, "arguments": args}}


def reply(content: str | None = None, *calls: dict[str, Any]) -> Message:
    """An assistant turn: text, tool calls, or both."""
    msg: Message = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


class ScriptedModel:
    """Replays ``turns`` (assistant messages or plain strings) one per call."""

    def __init__(
        self, turns: Sequence[Message | str], *, name: str = "scripted", chunk_size: int = 8
    ) -> None:
        self.name = name
        self.chunk_size = chunk_size
        self.turns = [_assign_ids(_as_message(t), i) for i, t in enumerate(turns)]
        self.requests: list[ModelRequest] = []

    async def call(self, request: ModelRequest) -> ModelResponse:
        ensure_not_in_tool(self.name)
        if len(self.requests) >= len(self.turns):
            raise ScriptError(
                f"{self.name}: called {len(self.requests) + 1} times but only "
                f"{len(self.turns)} turn(s) were scripted"
            )
        turn = self.turns[len(self.requests)]
        self.requests.append(request)
        return ModelResponse(message=json.loads(json.dumps(turn)))

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        return _chunked(self.call, request, self.chunk_size)

    @property
    def remaining(self) -> int:
        return len(self.turns) - len(self.requests)

    def assert_done(self) -> None:
        if self.remaining:
            raise ScriptError(f"{self.name}: {self.remaining} scripted turn(s) were never used")

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is None:
            self.assert_done()


ModelFunction = Callable[
    [ModelRequest], "Message | str | ModelResponse | Awaitable[Message | str | ModelResponse]"
]


class FunctionModel:
    """A model backed by a function of the request (sync or async), for tests and adapters.

    ``fn(request)`` returns (or, if async, resolves to) a ``str`` (the answer text), an assistant
    message ``dict`` (tool calls without ids get ``call_<n>_<k>``, ``n`` counting the assistant
    turns of the request, so a run resumed in another process numbers on), or a whole ``ModelResponse``
    (to report ``usage``). Anything else raises ``ScriptError``.
    """

    def __init__(self, fn: ModelFunction, *, name: str | None = None, chunk_size: int = 8) -> None:
        self.fn = fn
        self.chunk_size = chunk_size
        self.name: str = name or str(getattr(fn, "__name__", "function"))
        self.requests: list[ModelRequest] = []

    async def call(self, request: ModelRequest) -> ModelResponse:
        ensure_not_in_tool(self.name)
        self.requests.append(request)
        out = self.fn(request)
        if inspect.isawaitable(out):
            out = await out
        if isinstance(out, ModelResponse):
            return out
        turn = sum(1 for m in request.messages if m.get("role") == "assistant")
        return ModelResponse(message=_assign_ids(_as_message(out), turn))

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        return _chunked(self.call, request, self.chunk_size)


async def _chunked(
    call: Callable[[ModelRequest], Awaitable[ModelResponse]], request: ModelRequest, size: int
) -> AsyncIterator[ModelDelta | ModelResponse]:
    """The reply in pieces of ``size`` characters, each after a turn of the event loop."""
    from .base import deltas_of

    response = await call(request)
    for delta in deltas_of(response.message, size):
        await asyncio.sleep(0)
        yield delta
    yield response


def _as_message(turn: Message | str) -> Message:
    if isinstance(turn, str):
        return {"role": "assistant", "content": turn}
    if not isinstance(turn, dict):
        raise ScriptError(f"a scripted turn must be a str or a message dict, got {type(turn).__name__}")
    return {"role": "assistant", **turn}


def _assign_ids(msg: Message, turn_index: int) -> Message:
    calls = msg.get("tool_calls")
    if isinstance(calls, list):
        msg["tool_calls"] = [
            {**c, "id": c.get("id") or f"call_{turn_index + 1}_{j + 1}"} if isinstance(c, dict) else c
            for j, c in enumerate(calls)
        ]
    return msg
