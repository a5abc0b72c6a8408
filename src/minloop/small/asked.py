"""Values the request names that no call looked up, for the evidence check.

"What is the total balance of CH-8812 and CH-3301?" answered after one call, for CH-8812, is
answered from half the data. ``unasked`` finds, for each value a call since the user spoke
took, the other values of the user's last message of the same kind that no call took: an id of
the same shape ("CH-3301" beside "CH-8812": letters, digits and marks in the same places),
another member of the parameter's enum ("legal" beside "sales"), another name of as many
capitalised words ("Kenji Sato" beside "Zhang Wei").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .notes import last_said
from .results import outcomes

__all__ = ["unasked"]

_NAME = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*")


def unasked(
    messages: Sequence[Mapping[str, Any]], menu: Sequence[Mapping[str, Any]] = ()
) -> dict[str, list[str]]:
    """By tool, the values of the user's last message no call since then took (see the module)."""
    said, done = last_said(messages), outcomes(messages)
    taken = {str(v) for o in done for v in o.arguments.values()}
    spans = [m.span() for v in taken if v for m in re.finditer(re.escape(v), said)]
    found: dict[str, list[str]] = {}
    for outcome in done:
        for name, value in outcome.arguments.items():
            if not isinstance(value, str) or not value.strip():
                continue
            for start, end, text in _alike(value, said, _enum(menu, outcome.tool, name)):
                if text not in taken and not any(s < end and start < e for s, e in spans):
                    found.setdefault(outcome.tool, [])
                    found[outcome.tool] += [text] if text not in found[outcome.tool] else []
    return found


def _alike(value: str, said: str, enum: list[str]) -> list[tuple[int, int, str]]:
    """Where ``said`` names a value of the same kind as ``value``."""
    if enum:
        pattern = "|".join(re.escape(m) for m in enum if m != value and len(m) >= 3)
    elif any(ch.isdigit() for ch in value):
        shape = {"a": "[A-Za-z]", "9": r"\d"}
        pattern = "".join(shape.get(_kind(ch), re.escape(ch)) for ch in value)
    elif _NAME.fullmatch(value):
        words = value.count(" ") + 1
        pattern = r"[A-Z][a-z]+" + r" [A-Z][a-z]+" * (words - 1)
    else:
        return []
    if not pattern:
        return []
    found = re.finditer(rf"(?<![\w-])(?=({pattern})(?![\w-]))", said, re.IGNORECASE if enum else 0)
    return [(m.start(1), m.end(1), m.group(1)) for m in found]


def _kind(ch: str) -> str:
    return "9" if ch.isdigit() else "a" if ch.isascii() and ch.isalpha() else ch


def _enum(menu: Sequence[Mapping[str, Any]], tool: str, name: str) -> list[str]:
    for spec in menu:
        fn = spec.get("function") or {}
        if fn.get("name") == tool:
            enum = ((fn.get("parameters") or {}).get("properties") or {}).get(name, {}).get("enum") or []
            return [str(m) for m in enum]
    return []
