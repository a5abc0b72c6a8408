"""A transcript's tool calls and results written as text, for a call made with tools off.

The loop calls the model with tools off to ask for the answer (at a limit, after decay, after a
call written as text that cannot run). Sent without tools but with its calls and results as
they are, the transcript still shows the model turns that are calls: the 0.5B and 1.5B models
behind llama.cpp's server, which renders them as its chat template's call blocks, wrote the
same call again, or copied a result, until the run ran out of steps (``benchmarks/text_calls.py``).
Written as text, each assistant turn that made calls reads ``name({arguments}) -> result`` for
each of them, in no language, and the model answers from it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..messages import Message

__all__ = ["calls_as_text"]


def calls_as_text(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every assistant message that makes calls, and the tool messages that
    answer them, turned into one assistant message of text (its own text first)."""
    out: list[Message] = []
    pending: dict[str, str] = {}  # call id -> "name(arguments)", until its result is written
    for message in messages:
        role, calls = message.get("role"), message.get("tool_calls")
        if role == "assistant" and calls:
            text = message.get("content")
            out.append({"role": "assistant", "content": text if isinstance(text, str) else ""})
            for call in calls:
                fn = call.get("function") or {}
                pending[str(call.get("id"))] = f"{fn.get('name')}({fn.get('arguments') or '{}'})"
            continue
        if role in ("tool", "function") and out and out[-1].get("role") == "assistant":
            said = pending.pop(str(message.get("tool_call_id")), str(message.get("name") or "tool"))
            line = f"{said} -> {_text(message.get('content'))}"
            before = out[-1]["content"]
            out[-1] = {"role": "assistant", "content": f"{before}\n{line}" if before else line}
            continue
        out.append(message)
    return out


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
