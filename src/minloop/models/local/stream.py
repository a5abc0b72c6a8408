"""Streaming the embedded model's tokens.

While ``LocalModel.stream`` runs a call, ``TEXT_SINK`` holds a function that receives the
reply's visible text as it is generated (it returns True to stop generating). Under constrained
decisions the model writes ``{"answer": "..."}`` or a call; ``AnswerText`` decodes the answer's
string value as it grows, so a reader sees the answer's words, never the JSON around them, and
sees nothing of a call (the loop announces the finished calls).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ..runaway import Repetition, sentences  # one watch for every model, see ``..runaway``

if TYPE_CHECKING:
    from ..base import ModelRequest, ModelResponse, TextDelta

__all__ = ["TEXT_SINK", "AnswerText", "Repetition", "sentences", "streamed_call", "streamed_completion"]

TEXT_SINK: ContextVar[Callable[[str], bool] | None] = ContextVar("minloop_local_text_sink", default=None)
OPENING = '{"answer":"'
ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class AnswerText:
    """Incremental decoder of the answer in a growing ``{"answer": "..."}``: ``feed(piece)``
    returns the newly decoded characters ("" while the opening is incomplete, for a call, or
    after the closing quote). Escapes split across pieces wait for their end."""

    def __init__(self) -> None:
        self.buffer = ""
        self.at: int | None = None  # where the undecoded rest of the string value starts
        self.over = False  # a call, or the answer is complete

    def feed(self, piece: str) -> str:
        self.buffer += piece
        if self.over:
            return ""
        if self.at is None and not self._opened():
            return ""
        return self._decode()

    def _opened(self) -> bool:
        compact = "".join(self.buffer.split())
        if OPENING.startswith(compact):
            return False  # not enough yet
        if not compact.startswith(OPENING):
            self.over = True  # a call: nothing to show
            return False
        quotes = 0
        for i, c in enumerate(self.buffer):  # the third quote opens the value
            quotes += c == '"'
            if quotes == 3:
                self.at = i + 1
                return True
        return False  # pragma: no cover - compact holds three quotes

    def _decode(self) -> str:
        assert self.at is not None
        out: list[str] = []
        text, i = self.buffer, self.at
        while i < len(text):
            c = text[i]
            if c == '"':
                self.over = True
                break
            if c != "\\":
                out.append(c)
                i += 1
                continue
            size = _escape_size(text, i)
            if size is None:
                break  # incomplete escape: wait for the rest
            out.append(_unescape(text[i : i + size]))
            i += size
        self.at = i
        return "".join(out)


def _escape_size(text: str, i: int) -> int | None:
    if i + 1 >= len(text):
        return None
    if text[i + 1] != "u":
        return 2
    if i + 6 > len(text):
        return None
    if 0xD800 <= int(text[i + 2 : i + 6], 16) < 0xDC00:  # a surrogate pair takes two escapes
        return 12 if i + 12 <= len(text) else None
    return 6


def _unescape(escape: str) -> str:
    if escape[1] != "u":
        return ESCAPES.get(escape[1], escape[1])
    return str(json.loads(f'"{escape}"'))


def streamed_completion(
    server: Any,
    body: dict[str, Any],
    sink: Callable[[str], bool],
    raw: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """A chat completion run as a stream, each piece of visible text sent to ``sink`` and each
    piece as generated (a call's JSON too) to ``raw``; either returning True stops it. Returns
    the reply in the shape of a whole completion (or the runtime's error)."""
    decoder = AnswerText() if "json_schema" in body or "grammar" in body else None
    text: list[str] = []
    end: dict[str, Any] = {"finish_reason": None}
    failure: list[Any] = []

    def on_chunk(chunk: Any) -> bool:
        if not isinstance(chunk, dict) or "choices" not in chunk:
            failure.append(chunk)
            return True
        for key in ("usage", "timings", "prompt_progress"):
            if chunk.get(key):
                end[key] = chunk[key]
        stop = False
        for choice in chunk["choices"]:
            end["finish_reason"] = choice.get("finish_reason") or end["finish_reason"]
            piece = (choice.get("delta") or {}).get("content")
            if isinstance(piece, str) and piece:
                text.append(piece)
                stop = (raw is not None and raw(piece)) or stop
                visible = decoder.feed(piece) if decoder is not None else piece
                stop = (bool(visible) and sink(visible)) or stop
        return stop

    request = {**body, "stream": True, "stream_options": {"include_usage": True}, "return_progress": True}
    server.handle_chat_completions(request, on_chunk)
    if failure:
        return failure[0] if isinstance(failure[0], dict) else {"error": failure[0]}
    message = {"role": "assistant", "content": "".join(text)}
    reply = {"choices": [{"index": 0, "message": message, "finish_reason": end["finish_reason"]}]}
    if "usage" not in end:  # stopped early: no closing chunk, so count from what came
        progress = end.get("prompt_progress") or {}
        end["usage"] = {"prompt_tokens": progress.get("total", 0), "completion_tokens": len(text)}
        end["timings"] = {"prompt_n": progress.get("processed", 0) - progress.get("cache", 0)}
    return {**reply, "usage": end["usage"], "timings": end.get("timings") or {}}


async def streamed_call(
    call: Callable[[ModelRequest], Awaitable[ModelResponse]], request: ModelRequest
) -> AsyncIterator[TextDelta | ModelResponse]:
    """``call(request)`` run with ``TEXT_SINK`` set, the answer's text yielded as it is
    generated, then the response."""
    from ..base import TextDelta

    loop = asyncio.get_running_loop()
    pieces: asyncio.Queue[str | None] = asyncio.Queue()
    stop = threading.Event()

    def sink(piece: str) -> bool:
        loop.call_soon_threadsafe(pieces.put_nowait, piece)
        return stop.is_set()

    token = TEXT_SINK.set(sink)
    try:
        task = asyncio.ensure_future(call(request))  # the task keeps a copy of the context
    finally:
        TEXT_SINK.reset(token)
    task.add_done_callback(lambda _: pieces.put_nowait(None))
    try:
        while (piece := await pieces.get()) is not None:
            yield TextDelta(piece)
        yield task.result()
    finally:
        stop.set()  # a reader that left stops the generation at its next token
        task.cancel()
