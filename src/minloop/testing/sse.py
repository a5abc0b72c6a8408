"""What ``ChatServer`` sends for a streamed request: Chat Completion chunks as server-sent events."""

from __future__ import annotations

import json
import time
from typing import Any

from ..streaming import ArgumentsDelta, TextDelta, ToolCallStarted, deltas_of

__all__ = ["chunk", "event", "sse_chunks"]


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
