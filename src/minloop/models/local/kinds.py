"""The kind of file a request names, for a glob the model left out.

Asked "How many Python files are in this folder and which is the largest?", the 0.5B model
calls ``list_files`` with no pattern more often than not, then reads the count of every file as
the count of Python files. When the user names exactly one kind of file ("Python files",
"Markdown 文件", "the .json files") and a call leaves its glob parameter out (or writes "*"),
the glob becomes that kind's ("*.py"), as a time zone the model left out becomes the zone of
the place the user named.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["named_kinds", "with_kind"]

KINDS = {
    "python": "*.py", "markdown": "*.md", "json": "*.json", "yaml": "*.yml", "toml": "*.toml",
    "javascript": "*.js", "typescript": "*.ts", "html": "*.html", "css": "*.css", "csv": "*.csv",
    "rust": "*.rs", "java": "*.java", "shell": "*.sh", "text": "*.txt", "文本": "*.txt",
}  # fmt: skip
_KIND = re.compile(
    r"(?<![\w.])(?:\.(?P<ext>[a-z0-9]{1,5})|(?P<name>"
    + "|".join(KINDS)
    + r"))\s*(?:files?|文件|脚本|scripts?)",
    re.IGNORECASE,
)
_WORD = re.compile(r"(?<![\w.])(?:" + "|".join(KINDS) + r")(?![a-z])", re.IGNORECASE)
_GLOB = re.compile(r"\bglob\b", re.IGNORECASE)


def named_kinds(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The globs of the kinds of file the latest user message names ("Python files"), without
    repeats; none when it also names another kind on its own ("Python and Markdown files")."""
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            named = [
                f"*.{m['ext'].lower()}" if m["ext"] else KINDS[m["name"].lower()]
                for m in _KIND.finditer(content)
            ]
            mentioned = {KINDS[w.lower()] for w in _WORD.findall(content)}
            return list(dict.fromkeys(named)) if mentioned <= set(named) else []
    return []


def with_kind(
    arguments: Mapping[str, Any],
    parameters: Mapping[str, Any],
    kinds: Sequence[str],
    found: Callable[[Any], bool],
) -> dict[str, Any]:
    """``arguments`` with a glob parameter set to the one kind the user named when the model left
    it out, wrote "*", or wrote a glob or a folder the conversation does not ground (``found``), such as the
    description's own example ("src/*.md")."""
    resolved = dict(arguments)
    if len(kinds) != 1:
        return resolved
    for name, schema in (parameters.get("properties") or {}).items():
        description = schema.get("description") if isinstance(schema, Mapping) else None
        if not (isinstance(description, str) and _GLOB.search(description)):
            continue
        value = resolved.get(name)
        folder = value.rsplit("/", 1)[0].strip("*/") if isinstance(value, str) and "/" in value else ""
        if value in (None, "", "*", "**") or not found(value) or not found(folder):
            resolved[name] = kinds[0]
    return resolved
