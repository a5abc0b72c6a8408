"""Keeping secrets out of every sink: API keys, Authorization headers and user-listed fields.

``Redactor`` walks an event's data: values under secret-looking keys (and the caller's own
``fields``) become ``"[REDACTED]"``; strings are scrubbed of ``sk-...`` keys and
``Bearer ...`` tokens; JSON held in strings (tool arguments and results) is redacted inside.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["REDACTED", "Redactor"]

REDACTED = "[REDACTED]"
SECRET_KEYS = frozenset(
    {
        "api_key",
        "apikey",
        "api-key",
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "password",
        "passwd",
        "secret",
        "client_secret",
        "access_token",
        "refresh_token",
        "token",
    }
)
PATTERNS = (
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]+=*"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
)


TOKEN_STARTS = ("sk-", "pk-", "rk-", "bearer", "ghp_", "gho_", "ghr_", "ghs_", "ghu_", "akia", "\\u")
"""How the patterns' tokens begin (``[spr]k-``, ``gh[pousr]_``), and a ``\\u`` escape that could spell them."""


def _any_of(words: Iterable[str]) -> re.Pattern[str]:
    """A pattern found wherever one of ``words`` is, the words grouped by their first character:
    at each position a search tries only the words that begin there (``re`` tries the branches
    of an alternation of every word one by one, three times slower)."""
    groups = itertools.groupby(sorted(set(words)), key=lambda word: word[:1])
    branches = [
        re.escape(first) + f"(?:{'|'.join(re.escape(w[1:]) for w in same)})" for first, same in groups
    ]
    return re.compile("|".join(branches))


class Redactor:
    def __init__(self, fields: Iterable[str] = ()) -> None:
        self.keys = SECRET_KEYS | {f.lower() for f in fields}
        keys = [re.escape(k) for k in sorted(self.keys)]
        tokens = [
            r"[spr]k-",
            "bearer",
            r"gh[pousr]_",
            "akia",
            r"\\u",
        ]  # and a \u escape that could spell them
        # Fast path: text with none of these is clean. Searching the lower-cased text is ten times
        # faster than a case-insensitive pattern.
        search = _any_of([*self.keys, *TOKEN_STARTS]).search
        self._suspect = lambda text: search(text.lower())
        # In a JSON document a key is a quoted name before a colon; in JSON held in strings the
        # quotes are escaped and so is the white space between name and colon (``\\n``).
        key = rf'\\*"(?:{"|".join(keys)})\\*"(?:\s|\\+[nrt])*:'
        in_json = re.compile("|".join([key, *tokens])).search
        self._suspect_json = lambda text: in_json(text.lower())

    def is_clean(self, text: str) -> bool:
        """True when ``text`` holds nothing this redactor would change (a quick check)."""
        return self._suspect(text) is None

    def is_clean_json(self, text: str) -> bool:
        """True when the JSON document ``text`` holds nothing this redactor would change: no
        secret-looking key at any depth (in JSON held in its strings too) and nothing that looks
        like a key or a token. Unlike ``is_clean``, a key such as ``prompt_tokens`` does not count."""
        return self._suspect_json(text) is None

    def __call__(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: REDACTED if str(k).lower() in self.keys else self(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        if isinstance(value, str):
            return self._text(value)
        return value

    def _text(self, text: str) -> str:
        if self._suspect(text) is None:
            return text
        stripped = text.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                parsed = json.loads(text)
            except (ValueError, RecursionError):
                pass
            else:
                cleaned = self(parsed)  # keep the original text unless something was removed
                return text if cleaned == parsed else json.dumps(cleaned, ensure_ascii=False)
        for pattern in PATTERNS:
            text = pattern.sub(REDACTED, text)
        return text
