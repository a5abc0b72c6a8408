"""Tool definitions written as the model's chat template writes them, without the spaces.

Qwen2.5's template puts the tools in the system message, one JSON object per line, written with
``", "`` and ``": "`` between items and keys: on the built-in tools and 60 BFCL functions that
is 155 tokens per tool, 19% of them for those spaces. Every token of the menu is prompt
evaluation (~130 tokens/s on two CPU cores), so ``LocalModel`` writes the same lines itself
without the spaces, into the system message, and gives the runtime no ``tools``: the prompt is
the template's own, character for character, but for the separators.

It does so only for a template whose rendering it has checked: ``Layout.of`` renders two probe
tools through the runtime and finds the text the template puts around them. A template that
writes tools any other way (or escapes non-ASCII text) gives ``None``, and the tools are passed
to the runtime as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...messages import Message

__all__ = ["Layout"]

Write = Callable[[dict[str, Any]], str]

_MARK = "⟦system⟧"
_PROBES = [
    {
        "type": "function",
        "function": {
            "name": "probe_one",
            "description": "Probe: 东京, ünïcode.",
            "parameters": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        },
    },
    {
        "type": "function",
        "function": {"name": "probe_two", "description": "", "parameters": {"type": "object"}},
    },
]


def compact(tool: dict[str, Any]) -> str:
    return json.dumps(tool, ensure_ascii=False, separators=(",", ":"))


def spaced(tool: dict[str, Any]) -> str:
    return json.dumps(tool, ensure_ascii=False)


@dataclass(frozen=True)
class Layout:
    """The text a template writes before and after the tool lines, in the system message."""

    head: str
    tail: str

    @classmethod
    def of(cls, render: Callable[[list[Message], list[dict[str, Any]] | None], str]) -> Layout | None:
        """The layout of the template behind ``render(messages, tools) -> prompt``, when it writes
        each tool as one line of spaced JSON after the system message's text; else ``None``."""
        messages: list[Message] = [{"role": "system", "content": _MARK}, {"role": "user", "content": "hi"}]
        try:
            plain, with_tools = render(messages, None), render(messages, _PROBES)
        except Exception:  # a template that cannot render tools at all
            return None
        lines = "".join("\n" + spaced(t) for t in _PROBES)
        start, at = with_tools.find(_MARK), with_tools.find(lines)
        if plain.count(_MARK) != 1 or start < 0 or at < start:
            return None
        head = with_tools[start + len(_MARK) : at]
        after = plain[plain.index(_MARK) + len(_MARK) :]
        rest = with_tools[at + len(lines) :]
        if not rest.endswith(after):
            return None
        layout = cls(head, rest[: len(rest) - len(after)])
        expected = plain.replace(_MARK, _MARK + layout.block(_PROBES, spaced))
        return layout if expected == with_tools else None

    def block(self, tools: Sequence[dict[str, Any]], write: Write = compact) -> str:
        return self.head + "".join("\n" + write(t) for t in tools) + self.tail

    def inline(
        self, messages: list[Message], tools: Sequence[dict[str, Any]], write: Write = compact
    ) -> list[Message] | None:
        """``messages`` with the tools written into their first (system) message, each by ``write``;
        ``None`` when they do not start with a system message of text."""
        first = messages[0] if messages else {}
        if first.get("role") != "system" or not isinstance(first.get("content"), str):
            return None
        return [{**first, "content": first["content"] + self.block(tools, write)}, *messages[1:]]
