"""Decisions decoded as compact JSON, under a grammar with no whitespace between tokens.

Under ``json_schema`` the runtime lets the model put spaces and line breaks between the JSON's
tokens, and the 0.5B model does. A grammar can forbid them: llguidance (the prebuilt runtime's
engine) has options for it, and the grammar llama.cpp's own engine writes for the schema has one
rule for that whitespace, which is left empty. ``LocalModel`` uses it on a menu of more than
``COMPACT_ABOVE`` tools: at 50 tools (``benchmarks/menu_sizes.py``) the compact decision was
20-24% fewer generated tokens and 0.83-0.87x the time; on whole 5-tool menus it lost 3 of 40.
llguidance's first grammar in a process costs ~1.6 s (it indexes the vocabulary), so with it a
process decodes compact JSON only after ``COMPACT_AFTER`` decisions. Only a decision before any
tool result is compact (copying a result written with spaces, the model lost its way), and a
reply that can only be an answer is written as before.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

__all__ = [
    "COMPACT_AFTER",
    "GUIDANCE",
    "Compaction",
    "Unguided",
    "guidance",
    "guided",
    "guided_gbnf",
    "guided_llguidance",
]

GUIDANCE = "%llguidance {}\nstart: %json "  # a grammar for llguidance: one JSON schema
COMPACT_AFTER = 4
_SPACE = re.compile(r"^space ::= .*$", re.MULTILINE)  # GBNF's whitespace between JSON tokens


@functools.cache
def guidance() -> bool:
    """Whether the runtime's grammars are llguidance's (the prebuilt wheel's); a runtime built
    here without it has llama.cpp's own grammar engine only."""
    import xllamacpp

    return str(xllamacpp.json_schema_to_grammar({})).startswith(GUIDANCE)


def guided(schema: dict[str, Any]) -> str | None:
    """The runtime's grammar of ``schema`` with nothing between the JSON's tokens: no spaces
    after ``,`` and ``:``, no line breaks (``None``: the runtime cannot write one)."""
    return guided_llguidance(schema) if guidance() else guided_gbnf(schema)


def guided_llguidance(schema: dict[str, Any]) -> str:
    """``schema`` as an llguidance grammar. ``lenient``: a keyword llguidance does not support
    (``not``, ``uniqueItems``, an unknown ``format``) is not enforced, as under ``json_schema``;
    a schema it still cannot compile leaves the reply unconstrained, without an error, which
    ``Unguided`` notices."""
    options = {"whitespace_flexible": False, "item_separator": ",", "key_separator": ":", "lenient": True}
    return GUIDANCE + json.dumps({**schema, "x-guidance": options}, ensure_ascii=False)


def guided_gbnf(schema: dict[str, Any]) -> str | None:
    """``schema`` as llama.cpp's own grammar (GBNF), the one the runtime writes for
    ``json_schema``, with its rule for the whitespace between tokens left empty."""
    import xllamacpp

    try:
        gbnf = str(xllamacpp.json_schema_to_grammar(schema))
    except Exception:  # a schema llama.cpp cannot convert is decoded under json_schema, as before
        return None
    compact, n = _SPACE.subn('space ::= ""', gbnf)
    return compact if n == 1 else None


class Unguided:
    """Reads a reply decoded under ``guided`` as it is generated, and says stop at the first
    whitespace between JSON tokens: the grammar forbids it, so the runtime did not apply the
    grammar (llguidance rejects a schema by leaving the reply unconstrained; llama.cpp's own
    engine answers with an error)."""

    def __init__(self) -> None:
        self.tripped = False
        self._quoted = self._escaped = False

    def __call__(self, piece: str) -> bool:
        for ch in piece:
            if self._quoted:
                self._escaped, self._quoted = (False, True) if self._escaped else (ch == "\\", ch != '"')
            elif ch == '"':
                self._quoted = True
            elif ch.isspace() or ch == "`":
                self.tripped = True
        return self.tripped


class Compaction:
    """When a loaded model's decisions are compact: counts its decisions and remembers the
    grammars the runtime left unapplied."""

    def __init__(self) -> None:
        self.decisions = 0
        self.unapplied: set[str] = set()

    def wire(self, body: dict[str, Any], after: int = COMPACT_AFTER) -> dict[str, Any]:
        """``body`` with its ``json_schema`` as a compact grammar, when the tools are written in
        the messages (the runtime takes no grammar with ``tools``), the reply may be a call, no
        tool result is in the conversation and, with llguidance, ``after`` decisions were made
        (see the module)."""
        if "json_schema" not in body or "tools" in body or (self.decisions < after and guidance()):
            return body
        answer_only = "answer" in body["json_schema"].get("properties", {})
        if answer_only or any(m.get("role") == "tool" for m in body["messages"]):
            return body
        grammar = guided(body["json_schema"])
        if grammar is None or grammar in self.unapplied:  # the runtime cannot compile it
            return body
        return {**{k: v for k, v in body.items() if k != "json_schema"}, "grammar": grammar}

    def decided(self, wired: dict[str, Any], guard: Unguided | None) -> None:
        """Count a decision made under ``wired``; a grammar ``guard`` saw unapplied is not used again."""
        self.decisions += "json_schema" in wired or "grammar" in wired
        if guard is not None and guard.tripped:
            self.refused(wired["grammar"])

    def refused(self, grammar: str) -> None:
        """Not to send ``grammar`` again: the runtime did not apply it."""
        self.unapplied = set() if len(self.unapplied) >= 256 else self.unapplied
        self.unapplied.add(grammar)
