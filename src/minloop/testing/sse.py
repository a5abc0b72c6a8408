"""What ``ChatServer`` sends for a streamed request: Chat Completion chunks as server-sent events."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..models.base import ArgumentsDelta, TextDelta, ToolCallStarted, deltas_of

__all__ = ["chunk", "event", "sse_chunks", "write_events"]


def chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """One ``chat.completion.chunk``; ``delta=None`` makes a chunk without choices (the usage chunk)."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "loopback",
        "choices": choices,
        **extra,
    }


def sse_chunks(
    message: dict[str, Any], size: int = 4, *, prompt_tokens: int = 10, completion_tokens: int = 5
) -> list[dict[str, Any]]:
    """The chunks of one assistant message as a server streams it: the role, the text in pieces of
    ``size`` characters, each call's id and name then its arguments in pieces, the finish reason,
    and the usage."""
    out = [chunk({"role": "assistant", "content": ""})]
    for d in deltas_of({"role": "assistant", **message}, size):
        if isinstance(d, TextDelta):
            out.append(chunk({"content": d.text}))
        elif isinstance(d, ToolCallStarted):
            call = {"index": d.index, "id": d.id, "type": "function", "function": {"name": d.name}}
            out.append(chunk({"tool_calls": [call]}))
        elif isinstance(d, ArgumentsDelta):
            out.append(chunk({"tool_calls": [{"index": d.index, "function": {"arguments": d.text}}]}))
    out.append(chunk({}, "tool_calls" if message.get("tool_calls") else "stop"))
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    out.append(chunk(None, usage=usage))
    return out


def event(data: dict[str, Any] | str) -> bytes:
    """One ``data:`` event."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n".encode()


def write_events(
    handler: BaseHTTPRequestHandler,
    chunks: list[dict[str, Any]],
    *,
    broken: str | None = None,
    after: int = 0,
    delay: float = 0.0,
) -> None:
    """Send ``chunks`` then ``[DONE]`` as a chunked ``text/event-stream`` body. ``broken`` breaks it
    at event ``after``: ``"malformed"`` sends a line that is not an event instead, ``"cut"``
    closes the connection mid-body, ``"stall"`` waits ``delay`` seconds first."""
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for i, item in enumerate([*map(event, chunks), b"data: [DONE]\n\n"]):
            if broken and i == after:
                if broken == "malformed":
                    _write_chunk(handler, b"this line is not an event\n\n")
                    continue
                time.sleep(delay if broken == "stall" else 0.0)
                handler.close_connection = True  # no end of the chunked body: the stream is cut
                return
            _write_chunk(handler, item)
        handler.wfile.write(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (stall tests)


def _write_chunk(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    handler.wfile.flush()
