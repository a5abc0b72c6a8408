"""Streamed Chat Completions: server-sent event lines in, deltas and the whole reply out.

A streamed completion arrives as ``data: {chunk}`` lines, ending with ``data: [DONE]``. Each
chunk's ``choices[0].delta`` carries a piece of the text or fragments of tool calls; a call's
``id``, ``function.name`` and ``function.arguments`` may each be split across chunks, and the
fragments of several calls interleave, told apart by ``index``. With
``stream_options.include_usage`` a last chunk with no choices carries the token usage.
``ChatStream`` reassembles all of it into the same assistant message a plain call returns,
reasoning included (``delta.reasoning_content`` or ``delta.reasoning``, as vLLM- and
DeepSeek-style servers send it, becomes the message's ``reasoning_content`` or ``reasoning``).

Anything else ends in ``ModelError``: a line that is not an event, a chunk that is not JSON, an
error sent mid-stream, a stream that ends before the reply is complete.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from ..exceptions import ModelError
from .base import ArgumentsDelta, ModelDelta, ModelResponse, Stopped, TextDelta, ToolCallStarted, Usage
from .runaway import Runaway
from .unparsed import unparsed_text

__all__ = ["ChatStream", "stream_body", "stream_failure"]

IGNORED_FIELDS = frozenset({"event", "id", "retry"})
REASONING = ("reasoning_content", "reasoning")  # the names servers give the model's reasoning


def stream_body(body: dict[str, Any]) -> dict[str, Any]:
    """A Chat Completions request body asking for a stream with the usage at its end."""
    return {**body, "stream": True, "stream_options": {"include_usage": True}}


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""
    started: bool = False


class ChatStream:
    """One streamed Chat Completion being reassembled: ``feed_line`` (or ``feed`` for a parsed
    chunk) returns the deltas it carried; ``response()`` is the whole reply once it is complete.
    ``delivered`` tells whether any delta was handed out yet (then a retry would repeat them)."""

    def __init__(self, source: str = "model", max_tokens: int | None = None) -> None:
        self.source = source
        self.watch = Runaway(max_tokens)
        self.stopped: Stopped | None = None  # the reply ran away: read no further
        self.unparsed: str | None = None  # the server sent that it could not parse a call: its text
        self.text: list[str] = []
        self.reasoning: dict[str, list[str]] = {}  # "reasoning_content" or "reasoning": its pieces
        self.calls: dict[int, _Call] = {}
        self.usage = Usage()
        self.finished = False  # a finish_reason arrived
        self.done = False  # the [DONE] line arrived
        self.delivered = False

    def feed_line(self, line: str) -> list[ModelDelta]:
        if not line or line.startswith(":"):  # event separator, comment (keep-alive)
            return []
        field, colon, value = line.partition(":")
        if field in IGNORED_FIELDS and colon:
            return []
        if field != "data" or not colon:
            raise ModelError(f"malformed stream line from {self.source}: {line[:200]!r}")
        value = value.removeprefix(" ")
        if value.strip() == "[DONE]":
            self.done = True
            return []
        try:
            chunk = json.loads(value)
        except ValueError:
            raise ModelError(f"malformed stream chunk from {self.source}: {value[:200]!r}") from None
        return self.feed(chunk)

    def feed(self, chunk: Any) -> list[ModelDelta]:
        if not isinstance(chunk, dict):
            raise ModelError(f"malformed stream chunk from {self.source}: {str(chunk)[:200]!r}")
        if chunk.get("error") and (raw := unparsed_text(chunk)) is not None:
            self.unparsed = raw
            return []
        if chunk.get("error"):
            error = chunk["error"]
            detail = error.get("message", error) if isinstance(error, dict) else error
            raise ModelError(f"{self.source} sent an error mid-stream: {str(detail)[:300]}")
        if isinstance(chunk.get("usage"), dict):
            usage = chunk["usage"]
            self.usage = Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
        out: list[ModelDelta] = []
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                self.text.append(text)
                out.append(TextDelta(text))
                self._watched(text, self.watch.text(text))
            for key in REASONING:
                if isinstance(delta.get(key), str) and delta[key]:
                    self.reasoning.setdefault(key, []).append(delta[key])
                    self._watched(delta[key])
            for fragment in delta.get("tool_calls") or ():
                out.extend(self._fragment(fragment))
            if choice.get("finish_reason"):
                self.finished = True
                self.stopped = self.stopped or ("length" if choice["finish_reason"] == "length" else None)
                out.extend(self._start(i) for i in sorted(self.calls) if not self.calls[i].started)
        self.delivered = self.delivered or bool(out)
        return out

    def _fragment(self, fragment: Any) -> list[ModelDelta]:
        index = fragment.get("index") if isinstance(fragment, dict) else None
        if not isinstance(index, int) or isinstance(index, bool):
            raise ModelError(f"malformed tool-call fragment from {self.source}: {str(fragment)[:200]!r}")
        # a fragment of another call means the earlier ones have their id and name complete
        out: list[ModelDelta] = [
            self._start(i) for i in sorted(self.calls) if i != index and not self.calls[i].started
        ]
        call = self.calls.setdefault(index, _Call())
        fn = fragment.get("function") or {}
        call.id += fragment.get("id") or ""
        call.name += fn.get("name") or ""
        arguments = fn.get("arguments")
        if isinstance(arguments, str) and arguments:
            if not call.started:
                out.append(self._start(index))
            call.arguments += arguments
            self._watched(arguments)
            out.append(ArgumentsDelta(index, arguments))
        return out

    @property
    def runaway(self) -> bool:
        """Whether the reply ran away before the server ended it: read no further."""
        return self.stopped is not None and not self.finished

    def _watched(self, piece: str, repeated: Stopped | None = None) -> None:
        """Count a piece's tokens (about four characters each, at least one a chunk)."""
        self.stopped = self.stopped or repeated or self.watch.tokens(max(1, len(piece) // 4))

    def _start(self, index: int) -> ToolCallStarted:
        call = self.calls[index]
        call.started = True
        return ToolCallStarted(index, call.id or None, call.name)

    def response(self) -> ModelResponse:
        """The whole reply (when it ran away: as far as it was read, its text cut where it began
        to repeat itself); ``ModelError`` if the stream ended before it was complete."""
        if not (self.done or self.finished or self.stopped):
            raise ModelError(
                f"the stream from {self.source} ended before the reply was complete "
                f"({len(''.join(self.text))} characters, {len(self.calls)} call(s) so far)"
            )
        text = self.watch.kept if self.stopped == "repeated" else "".join(self.text)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        message.update({key: "".join(parts) for key, parts in self.reasoning.items()})
        if self.calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for _, c in sorted(self.calls.items())
            ]
        usage = (
            self.usage
            if self.usage.completion_tokens
            else Usage(self.usage.prompt_tokens, self.watch.written)
        )
        return ModelResponse(message=message, usage=usage, stopped=self.stopped)


def stream_failure(exc: httpx.TransportError, chat: ChatStream, timeout: float) -> str:
    """Why a stream broke off, in words: it stalled, or the connection was cut."""
    so_far = f"after {len(''.join(chat.text))} characters and {len(chat.calls)} call(s)"
    if isinstance(exc, httpx.ReadTimeout):
        return f"the stream from {chat.source} stalled: no data for {timeout:g}s ({so_far})"
    return f"the stream from {chat.source} was cut {so_far}: {type(exc).__name__}: {exc}"
