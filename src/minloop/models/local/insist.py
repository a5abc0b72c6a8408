"""A first decision decided again with a call required (``insisted``).

A first decision that answered with a fact nobody gave (the answer check rejects it), that
declined, that only gave back the request's own numbers, or that answered a request about now or
about the user's own things ("现在", "today", "my", "我的") without a call, is made again with a
call required, among the tools that the request names (``named_by``): a word of the request (in
English, for a Chinese request) is in the tool's name ("file" and ``list_files``) or in the first
sentence of its description ("share price" and ``get_stock_quote``, "Get the latest share price
of a company"), or it converts currencies and the request names two. The words that say what a
tool does ("find", "list") or which one ("current", "city") do not count. Grounding checks that
call as any other. The 0.5B model answered "Which Python file here is the biggest?" with a
made-up file, beside a tool that lists files largest first, declined "帮我在巴黎找一家日本餐厅。"
beside ``search_restaurants``, and answered "What is Microsoft's share price?" with Apple's,
made up, beside ``get_stock_quote``.

A call so required that rests on values nobody gave is decided once more among the other tools
(``others``): asked "What time is it in Tokyo?", the 1.5B model chose ``convert_time`` with a
time of its own making, then ``get_current_time`` for Tokyo once ``convert_time`` was not offered.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from ..base import ModelRequest, ModelResponse
from .evidence import declines, restates_user
from .policy import named_tools, since_user
from .select import select_tools

__all__ = ["insisted", "others"]

_LIVE = re.compile(
    r"\b(?:now|today|tonight|currently|at the moment|my|mine|our)\b|现在|目前|此刻|今天|今晚|我的|我们的|^我",
    re.IGNORECASE,
)
_ASKS = re.compile(  # a question or a request, not a statement ("My file is called notes.md.")
    r"[?？]|^\s*(?:what|when|where|which|who|how|is|are|do|does|did|can|could|will|tell|show|list|find|give)\b"
    r"|什么|几|多少|吗|哪|谁|怎么|告诉|查",
    re.IGNORECASE,
)
Decide = Callable[[ModelRequest, bool, Any], Awaitable[ModelResponse]]  # LocalModel._call


async def insisted(
    request: ModelRequest, response: ModelResponse, decide: Decide, check: Any, english: str | None
) -> ModelResponse:
    """``response``, or the decision made again with a call required when it is a first answer
    that ``check`` rejects, or a decline, and the request names tools (see the module). ``decide(request,
    grounded, grounds_in)`` makes a decision; ``english`` is the request in English, if translated."""
    text, calls, _ = since_user(request.messages)
    content = response.message.get("content")
    if calls or request.tool_choice != "auto" or not request.tools or response.message.get("tool_calls"):
        return response
    if check is None or not isinstance(content, str):
        return response
    said = declines(content) or restates_user(content, request.messages)  # nothing but what was asked
    live = _live(text, english)
    if check(content, request.messages) is None and not said and not live:
        return response
    chosen = select_tools(request.tools, [{"role": "user", "content": english or text}]).tools
    # "files" names list_files; a question about now or the user's own things may go to any tool
    named = named_tools(chosen, english or text) or (list(request.tools) if live else [])
    if not named:
        return response
    again = await decide(replace(request, tools=named, tool_choice="required"), True, request.messages)
    return again if again.message.get("tool_calls") else response


def _live(text: str, english: str | None) -> bool:
    """Whether a request asks about now or about the user's own things, which no model knows
    without a tool: "伦敦现在在下雨吗？" was answered "雨", and "我2026年12月25日有什么安排？"
    with a plan of the model's own, each without a call."""
    return any(_LIVE.search(t) and _ASKS.search(t) for t in (text, english or ""))


def others(request: ModelRequest, missing: Mapping[str, Any]) -> ModelRequest | None:
    """The same required decision among the tools other than those whose call rested on values
    nobody gave (``missing``, by tool name); ``None`` when no call is required or none is left."""
    if request.tool_choice != "required":
        return None
    rest = [t for t in request.tools if t.get("function", {}).get("name") not in missing]
    return replace(request, tools=rest) if rest else None
