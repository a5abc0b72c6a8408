"""From MCP's tool listings and call results to minloop's tools and tool results."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from ..exceptions import ToolDefinitionError
from ..execute import ToolFailure
from ..tools import Tool, tool_from_schema

__all__ = [
    "MCPLoginError",
    "MCPToolError",
    "block_text",
    "exposed_name",
    "needs_approval",
    "payload",
    "to_tool",
]

_BAD_CHARS = re.compile(r"[^a-zA-Z0-9_-]+")
_LEGAL = re.compile(r"[a-zA-Z0-9_-]{1,64}")


class MCPToolError(Exception):
    """The server answered a call with ``isError``; the message is the server's own text."""


class MCPLoginError(ToolFailure):
    """The server refused the credentials of a call (HTTP 401 or 403): the model reads
    ``ERR_TOOL_UNAUTHORIZED``, and the run goes on."""

    kept = True

    def __init__(self, server: str, refused: str) -> None:
        super().__init__("ERR_TOOL_UNAUTHORIZED", f"MCP server {server!r} refused the credentials ({refused}): "
                         "its tools cannot be used until the login is fixed", server=server)  # fmt: skip


def exposed_name(name: str, prefix: str | None) -> str:
    """The name the model sees: ``prefix_name`` when a prefix is given. A name the Chat Completions
    format allows (ASCII letters, digits, ``_`` and ``-``, at most 64) is kept as it is; any other
    keeps its allowed part and ends with ``_`` and 8 hex digits of the SHA-256 of the server's own
    name, so that two names never become one: ``查询天气`` becomes ``tool_<8 hex>``,
    ``weather.today`` ``weather_today_<8 hex>``, and a name past 64 characters its first 55 and
    the suffix. The server is always called with its own name."""
    full = f"{prefix}_{name}" if prefix else name
    if _LEGAL.fullmatch(full):
        return full
    kept = _BAD_CHARS.sub("_", full).strip("_")[:55].rstrip("_") or "tool"
    return f"{kept}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def needs_approval(listed: Any, policy: bool | None) -> bool:
    """``policy`` when given; otherwise a tool needs approval when its annotations say it is
    destructive and not read-only (a tool without annotations does not)."""
    if policy is not None:
        return policy
    notes = listed.annotations
    if notes is None:
        return False
    return bool(notes.destructive_hint) and not notes.read_only_hint


def safe_to_repeat(listed: Any) -> bool:
    """Whether a call may run again after a crash left it in doubt: the server marks the tool
    idempotent or read-only."""
    notes = listed.annotations
    return notes is not None and bool(notes.idempotent_hint or notes.read_only_hint)


def to_tool(
    listed: Any,
    call: Callable[[str, dict[str, Any]], Awaitable[Any]],
    *,
    server: str,
    prefix: str | None,
    timeout: float,
    approval: bool | None,
) -> Tool:
    """A minloop tool for one listed MCP tool; ``call(original_name, arguments)`` reaches the server."""
    name = exposed_name(listed.name, prefix)
    original = listed.name

    async def call_server(**arguments: Any) -> Any:
        return await call(original, arguments)

    call_server.__name__ = name
    parameters = listed.input_schema or {"type": "object"}
    try:
        return tool_from_schema(
            name,
            listed.description or listed.title or original,
            parameters,
            call_server,
            output_schema=listed.output_schema,
            timeout=timeout,
            needs_approval=needs_approval(listed, approval),
            idempotent=safe_to_repeat(listed),
            read_only=bool(listed.annotations is not None and listed.annotations.read_only_hint),
            server=server,
        )
    except ToolDefinitionError as exc:
        raise ToolDefinitionError(f"MCP server {server!r}, tool {original!r}: {exc}") from None


def payload(result: Any, server: str) -> Any:
    """What the model reads for a ``CallToolResult``: its structured content when there is some,
    else its text (one block) or its blocks; ``MCPToolError`` when the server flagged an error."""
    if result.is_error:
        text = " ".join(block_text(b) for b in result.content) or "(no message)"
        raise MCPToolError(f"server {server!r} reported an error: {text}")
    if result.structured_content is not None:
        return result.structured_content
    blocks = [block_text(b) for b in result.content]
    return blocks[0] if len(blocks) == 1 else blocks


def block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource link {block.uri}: {block.name}]"
    if kind == "resource":
        inner = block.resource
        text = getattr(inner, "text", None)
        return (
            text
            if isinstance(text, str)
            else f"[resource {inner.uri}, {inner.mime_type or 'binary'}, not shown]"
        )
    return f"[{kind or 'unknown'} content, not shown]"
