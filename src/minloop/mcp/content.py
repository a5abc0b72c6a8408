"""A server's resources and prompts: listed, read and got over the server's connection, in the
shapes minloop uses (plain dicts, text, and Chat Completions messages a run takes as its input)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from ..exceptions import MinloopError
from ..messages import Message
from .convert import block_text

__all__ = ["ServerContent", "attach"]

T = TypeVar("T")


class ServerContent:
    """What ``MCPServer`` offers beside tools (``_run`` runs a request in the connection's task)."""

    name: str
    client: Any
    _run: Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]

    async def resources(self) -> list[dict[str, Any]]:
        """The server's resources: ``uri``, ``name``, ``description`` and ``mime_type`` of each,
        then its resource templates (``uri_template`` instead of ``uri``)."""
        listed = await self._ask(
            "list its resources", lambda: _pages(self.client.list_resources, "resources")
        )
        templates = await self._ask(
            "list its resource templates",
            lambda: _pages(self.client.list_resource_templates, "resource_templates"),
        )
        described = [
            {"uri": r.uri, "name": r.name, "description": r.description, "mime_type": r.mime_type}
            for r in listed
        ]
        return described + [
            {"uri_template": t.uri_template, "name": t.name, "description": t.description,
             "mime_type": t.mime_type}
            for t in templates
        ]  # fmt: skip

    async def read(self, uri: str) -> str:
        """The text of the resource at ``uri`` (its parts one after the other; a binary part is
        named, with its type and size, not shown)."""
        result = await self._ask(f"read {uri!r}", lambda: self.client.read_resource(uri))
        parts = []
        for item in result.contents:
            text = getattr(item, "text", None)
            parts.append(
                text
                if isinstance(text, str)
                else f"[{item.mime_type or 'binary'}, {len(item.blob) * 3 // 4} bytes]"
            )
        return "\n".join(parts)

    async def prompts(self) -> list[dict[str, Any]]:
        """The server's prompts: ``name``, ``description`` and ``arguments`` (``name``,
        ``description``, ``required``) of each."""
        listed = await self._ask("list its prompts", lambda: _pages(self.client.list_prompts, "prompts"))
        return [
            {"name": p.name, "description": p.description,
             "arguments": [{"name": a.name, "description": a.description, "required": bool(a.required)}
                           for a in p.arguments or ()]}
            for p in listed
        ]  # fmt: skip

    async def prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> list[Message]:
        """The prompt ``name`` filled with ``arguments``, as messages a run takes as its input:
        ``await loop.run(await server.prompt("review", {"code": "..."}))``."""
        got = await self._ask(
            f"give its prompt {name!r}", lambda: self.client.get_prompt(name, dict(arguments or {}))
        )
        return [{"role": m.role, "content": block_text(m.content)} for m in got.messages]

    async def _ask(self, what: str, request: Callable[[], Awaitable[T]]) -> T:
        from mcp.shared.exceptions import MCPError

        try:
            return await self._run(request)  # type: ignore[no-any-return]
        except MCPError as exc:
            raise MinloopError(f"MCP server {self.name!r} could not {what}: {exc.message}") from None


async def _pages(fetch: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = await fetch(cursor=cursor)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            return items


def attach(prompt: str, resources: Mapping[str, str]) -> str:
    """``prompt`` followed by each resource's text, marked with its URI: a run's input with the
    resources it is about (``minloop run --mcp-resource URI`` does this)."""
    marked = [f'<resource uri="{uri}">\n{text}\n</resource>' for uri, text in resources.items()]
    return "\n\n".join([prompt, *marked])
