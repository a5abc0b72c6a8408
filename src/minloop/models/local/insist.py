"""A first decision decided again with a call required (``insisted``).

A first decision that answered with a fact nobody gave (the answer check rejects
it), that declined, or that only gave back the request's own numbers, is made again with a
call required, among the tools that the request names (``named_by``): a word of the request (in
English, for a Chinese request) is in the tool's name ("file" and ``list_files``) or in the first
sentence of its description ("share price" and ``get_stock_quote``, "Get the latest share price of
a company"), or it converts currencies and the request names two. The words that say what a tool does ("find", "list") or which one ("current",
"city") do not count. Grounding checks that call as any other. The 0.5B model answered
"Which Python file here is the biggest?" with a made-up file, beside a tool that lists files
largest first, declined "帮我在巴黎找一家日本餐厅。" beside ``search_restaurants``, and
answered "What is Microsoft's share price?" with Apple's, made up, beside ``get_stock_quote``.

A call so required that rests on values nobody gave is decided once more among the other tools
(``others``): asked "What time is it in Tokyo?", the 1.5B model chose ``convert_time`` with a
time of its own making, then ``get_current_time`` for Tokyo once ``convert_time`` was not offered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from ..base import ModelRequest, ModelResponse
from .evidence import declines, restates_user
from .policy import named_tools, since_user
from .select import select_tools

__all__ = ["insisted", "others"]

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
    if check(content, request.messages) is None and not said:
        return response
    chosen = select_tools(request.tools, [{"role": "user", "content": english or text}]).tools
    named = named_tools(chosen, english or text)  # "files": list_files
    if not named:
        return response
    again = await decide(replace(request, tools=named, tool_choice="required"), True, request.messages)
    return again if again.message.get("tool_calls") else response


def others(request: ModelRequest, missing: Mapping[str, Any]) -> ModelRequest | None:
    """The same required decision among the tools other than those whose call rested on values
    nobody gave (``missing``, by tool name); ``None`` when no call is required or none is left."""
    if request.tool_choice != "required":
        return None
    rest = [t for t in request.tools if t.get("function", {}).get("name") not in missing]
    return replace(request, tools=rest) if rest else None
