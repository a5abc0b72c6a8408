"""Tool calls written in shapes other than JSON, as models are trained to write them.

``minloop.textcalls`` reads a reply; these read one piece of it as calls, each a
``{"name": ..., "arguments": {...}}`` dict (``None`` when the piece is anything else):

* ``python_calls``: Python-style calls, one or a bracketed list, keyword arguments only, each
  a literal (JSON's or Python's: ``"Paris"``, ``3``, ``true``/``True``, ``null``/``None``,
  lists, objects): ``[get_weather(city="Paris"), add(a=1, b=2)]``, as Llama 3.2 and 4 write them
  (Llama 4 inside ``<|python_start|>...<|python_end|>``);
* ``gemma_calls``: FunctionGemma's ``call:name{key:value,...}``, strings between ``<escape>``
  markers (``<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>``),
  or bare when a server dropped the markers (``call:get_weather{city:Paris}``).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

__all__ = ["BLOCKS", "gemma_calls", "python_calls"]

# The markers a model writes around its calls: (opening, closing or None when it runs to the end)
BLOCKS = (
    ("<|python_start|>", "<|python_end|>"),
    ("<start_function_call>", "<end_function_call>"),
    ("<|python_tag|>", None),
)
_WORDS = {"true": True, "false": False, "null": None, "none": None}
_ESCAPE = "<escape>"
_GEMMA = re.compile(r"call:([A-Za-z_][\w.\-]*)\{")
_NOT_LITERAL = object()


def python_calls(text: str) -> list[dict[str, Any]] | None:
    """The calls ``text`` is made of, written as Python (see the module), or ``None``."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    items = tree.elts if isinstance(tree, ast.List) else [tree]
    calls = [_python_call(item) for item in items]
    return None if not calls or any(c is None for c in calls) else [c for c in calls if c is not None]


def _python_call(node: ast.expr) -> dict[str, Any] | None:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        return None
    arguments = {k.arg: _literal(k.value) for k in node.keywords}
    if any(k is None for k in arguments) or _NOT_LITERAL in arguments.values():
        return None
    return {"name": node.func.id, "arguments": arguments}


def _literal(node: ast.expr) -> Any:
    """A JSON value written as a Python literal (or with JSON's words), else ``_NOT_LITERAL``."""
    if isinstance(node, ast.Name):
        return _WORDS.get(node.id.lower(), _NOT_LITERAL)
    if isinstance(node, ast.List | ast.Tuple):
        items = [_literal(n) for n in node.elts]
        return _NOT_LITERAL if _NOT_LITERAL in items else items
    if isinstance(node, ast.Dict):
        keys = [_literal(k) if k is not None else _NOT_LITERAL for k in node.keys]
        values = [_literal(v) for v in node.values]
        if any(not isinstance(k, str) for k in keys) or _NOT_LITERAL in values:
            return _NOT_LITERAL
        return dict(zip(keys, values, strict=True))
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return _NOT_LITERAL
    return value if value is None or isinstance(value, str | int | float | bool) else _NOT_LITERAL


def gemma_calls(text: str) -> list[dict[str, Any]] | None:
    """The calls ``text`` is made of, written as FunctionGemma writes them, or ``None``."""
    calls, at, body = [], 0, text.strip()
    while at < len(body):
        head = _GEMMA.match(body, at)
        if head is None:
            return None
        reader = _Gemma(body, head.end() - 1)
        arguments = reader.value()
        if not isinstance(arguments, dict):
            return None
        calls.append({"name": head.group(1), "arguments": arguments})
        at = reader.at
        while at < len(body) and body[at] in " \t\r\n,":
            at += 1
    return calls or None


class _Gemma:
    """Reads one value of FunctionGemma's notation from ``text`` at ``at``."""

    def __init__(self, text: str, at: int) -> None:
        self.text, self.at = text, at

    def value(self) -> Any:
        text = self.text
        while self.at < len(text) and text[self.at] in " \t\r\n":
            self.at += 1
        if text.startswith(_ESCAPE, self.at):
            end = text.find(_ESCAPE, self.at + len(_ESCAPE))
            if end < 0:
                return _NOT_LITERAL
            start, self.at = self.at + len(_ESCAPE), end + len(_ESCAPE)
            return text[start:end]
        if text.startswith("{", self.at):
            return self._members()
        if text.startswith("[", self.at):
            return self._items()
        end = self.at
        while end < len(text) and text[end] not in ",}]":
            end += 1
        word, self.at = text[self.at : end].strip(), end
        try:
            return json.loads(word)
        except ValueError:
            return _WORDS.get(word.lower(), word) if word else _NOT_LITERAL

    def _members(self) -> Any:
        out: dict[str, Any] = {}
        self.at += 1
        while self.at < len(self.text) and self.text[self.at] != "}":
            colon = self.text.find(":", self.at)
            if colon < 0:
                return _NOT_LITERAL
            key, self.at = self.text[self.at : colon].strip().strip("'\""), colon + 1
            out[key.removeprefix(_ESCAPE).removesuffix(_ESCAPE)] = value = self.value()
            if value is _NOT_LITERAL or not key:
                return _NOT_LITERAL
            self.at += self.text.startswith(",", self.at)
        if self.at >= len(self.text):
            return _NOT_LITERAL
        self.at += 1
        return out

    def _items(self) -> Any:
        out: list[Any] = []
        self.at += 1
        while self.at < len(self.text) and self.text[self.at] != "]":
            out.append(value := self.value())
            if value is _NOT_LITERAL:
                return _NOT_LITERAL
            self.at += self.text.startswith(",", self.at)
        if self.at >= len(self.text):
            return _NOT_LITERAL
        self.at += 1
        return out
