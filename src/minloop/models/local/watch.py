"""Stopping a call at its first refused value, while it is decoded.

A layer may refuse a call for one of its values (``WhileDecoding.refuse``: the grounding layer
refuses a required value nobody said), and then the rest of the call would be thrown away.
``CallWatch`` reads a decision as it is generated and, each time one more argument of a call is
complete, asks ``refuse``; it stops the decision at the first refusal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["CallWatch"]

_HEAD = re.compile(r'\s*\{\s*"name"\s*:\s*"([^"\\]*)"\s*,\s*"arguments"\s*:\s*\{')
_OTHER = re.compile(r'\s*\{\s*"(?!n)')  # {"answer": ...} or {"calls": [...]}: not watched
_OPEN, _CLOSE = "{[", "}]"


class CallWatch:
    """Reads a decision's text as it grows (call it with each piece; it returns True to stop)
    and, for a single call to one of ``tools``, gives ``refuse`` the arguments each time one more
    is complete. ``refused`` then names the call, and ``arguments`` holds what was read."""

    def __init__(
        self, tools: Sequence[Mapping[str, Any]], refuse: Callable[[str, dict[str, Any]], bool]
    ) -> None:
        self.specs = {t["function"]["name"] for t in tools if "function" in t}
        self.refuse = refuse
        self.reset()

    def reset(self) -> None:
        """Forget the reply read so far: it is generated again."""
        self.refused: str | None = None
        self.arguments: dict[str, Any] = {}  # the call's arguments read so far
        self.text = ""
        self._name: str | None = None
        self._start = self._at = 0  # where the arguments' members begin; how far they are read
        self._depth, self._quoted, self._escaped, self._over = 0, False, False, False

    def __call__(self, piece: str) -> bool:
        if self._over:
            return False
        self.text += piece
        if self._name is None and not self._opened():
            return False
        return self._read()

    def _opened(self) -> bool:
        head = _HEAD.match(self.text)
        if head is None:
            self._over = bool(_OTHER.match(self.text)) or len(self.text) > 300
            return False
        self._name, self._start = head.group(1), head.end()
        self._at = self._start
        self._over = self._name not in self.specs
        return not self._over

    def _read(self) -> bool:
        for i in range(self._at, len(self.text)):
            ch = self.text[i]
            if self._quoted:
                self._escaped, self._quoted = (False, True) if self._escaped else (ch == "\\", ch != '"')
            elif ch == '"':
                self._quoted = True
            elif ch in _OPEN:
                self._depth += 1
            elif ch in _CLOSE and self._depth > 0:
                self._depth -= 1
            elif ch in ",}" and self._depth == 0:
                self._at, self._over = i + 1, ch == "}"
                return self._rejects(self.text[self._start : i])
        self._at = len(self.text)
        return False

    def _rejects(self, members: str) -> bool:
        try:
            arguments = json.loads("{" + members + "}")
        except ValueError:
            self._over = True
            return False
        assert self._name is not None
        self.arguments = arguments
        if self.refuse(self._name, arguments):
            self.refused, self._over = self._name, True
        return self.refused is not None
