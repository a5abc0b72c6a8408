"""Read-only file tools confined to one directory.

Every path is resolved (symlinks included) and must stay inside the root; ``..`` and symlinks
that lead out are refused. Hidden entries (``.git``, ``.venv``...), ``__pycache__`` and
``node_modules`` are skipped when listing or searching, as ``ripgrep`` skips them by default
(the last two through the ``.gitignore`` files that nearly always name them).

Patterns follow ripgrep's globs (and ``.gitignore``'s): a pattern without ``/`` matches a
file's name in any folder (``*.py`` finds every Python file); a pattern with ``/`` matches the
path from the root, where ``*`` and ``?`` stay inside one folder and ``**/`` matches zero or
more folders (``**/*.txt`` finds ``a.txt`` and ``sub/b.txt``; ``src/*.md`` only files directly
in ``src``; ``src/**`` everything under it).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..tools import Tool, tool

# list_files shows the 5 largest: with 25 the 0.5B model named a file further down as the largest,
# with 10 it once left out which file is the largest.
MAX_LISTED = 5
MAX_READ = 20_000
SKIPPED = frozenset({"__pycache__", "node_modules"})  # besides hidden folders
# search_files names up to 10 files (most matching lines first) and quotes 5 lines: with 50 lines
# quoted, "Find the files that mention tool_choice." in this repository gave the model 2,300
# tokens to read (18 s on two cores) and it answered "Here is my answer.".
MAX_FILES = 10
MAX_MATCHES = 5
MAX_LINE = 120


def file_tools(root: str | os.PathLike[str] = ".") -> list[Tool]:
    """``list_files``, ``read_file`` and ``search_files`` over ``root`` (default: the cwd)."""
    base = Path(root).resolve(strict=True)
    if not base.is_dir():
        raise NotADirectoryError(f"{base} is not a directory")
    folder = Folder(base)
    return [
        tool(timeout=10.0, idempotent=True)(f)
        for f in (folder.list_files, folder.read_file, folder.search_files)
    ]


@dataclass(frozen=True)
class Folder:
    base: Path

    def inside(self, path: str) -> Path:
        target = (self.base / path).resolve()
        if target != self.base and not target.is_relative_to(self.base):
            raise PermissionError(f"{path!r} is outside the allowed directory")
        return target

    def walk(self, pattern: str) -> list[Path]:
        match = glob_matcher(pattern)
        found = []
        for dirpath, dirnames, filenames in os.walk(self.base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED)
            for name in sorted(filenames):
                path = Path(dirpath, name)
                rel = path.relative_to(self.base).as_posix()
                if match(rel) and not name.startswith(".") and path.resolve().is_relative_to(self.base):
                    found.append(path)
        return found

    def list_files(self, pattern: str | None = None) -> dict[str, Any]:
        """Count and list (largest first) the files in the working folder that match a glob pattern.

        Args:
            pattern: Glob on the file name in any folder, e.g. "*.py", or on the path with a
                "/": "src/*.md", "**/*.txt"; none for every file.
        """
        found = [(p.relative_to(self.base).as_posix(), p.stat().st_size) for p in self.walk(pattern or "*")]
        sizes = sorted(found, key=lambda s: (-s[1], s[0]))  # largest first, like `ls -S`
        largest = sizes[0] if sizes else None
        # The largest after the list: placed before it, the 0.5B model named the list's second file
        # (22,682 bytes beside 22,702) as the largest, in English and in Chinese.
        return {
            "count": len(sizes),
            "total_bytes": sum(s for _, s in sizes),
            "files": [{"path": p, "bytes": s} for p, s in sizes[:MAX_LISTED]],
            "largest": {"path": largest[0], "bytes": largest[1]} if largest else None,
            "truncated": len(sizes) > MAX_LISTED,
        }

    def read_file(self, path: str, max_chars: int = 4000) -> dict[str, Any]:
        """Read a text file.

        Args:
            path: File path relative to the working directory, e.g. "notes.md" or "src/app.py".
            max_chars: Maximum number of characters to return.
        """
        text = self.inside(path).read_text(encoding="utf-8", errors="replace")
        limit = max(1, min(max_chars, MAX_READ))
        return {"path": path, "chars": len(text), "content": text[:limit], "truncated": len(text) > limit}

    def search_files(self, query: str, pattern: str = "*") -> dict[str, Any]:
        """Find the files and lines containing a text (case-insensitive), in files matching a glob.

        Args:
            query: Text to look for.
            pattern: Glob on the file name, e.g. "*.md", as in list_files.
        """
        needle, matches = query.lower(), []
        for path in self.walk(pattern):
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            rel = path.relative_to(self.base).as_posix()
            matches += [
                {"path": rel, "line": n, "text": line.strip()[:MAX_LINE]}
                for n, line in enumerate(lines, 1)
                if needle in line.lower()
            ]
        per_file = Counter(m["path"] for m in matches)
        ranked = sorted(per_file.items(), key=lambda f: -f[1])  # most matching lines first
        return {
            "query": query,
            "count": len(matches),
            "file_count": len(per_file),
            "files": [{"path": p, "lines": n} for p, n in ranked[:MAX_FILES]],
            "matches": matches[:MAX_MATCHES],
            "truncated": len(matches) > MAX_MATCHES or len(per_file) > MAX_FILES,
        }


def glob_matcher(pattern: str) -> Any:
    """``match(relative_path)`` for ``pattern`` under the rules in the module docstring."""
    pattern = pattern.strip().lstrip("/") if "/" in pattern.strip() else pattern.strip()
    if "/" not in pattern:
        name = re.compile(_segment(pattern), re.DOTALL)
        return lambda rel: name.fullmatch(rel.rsplit("/", 1)[-1]) is not None
    parts = [p for p in pattern.split("/") if p]
    regex = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
        else:
            regex += _segment(part) + ("" if last else "/")
    whole = re.compile(regex, re.DOTALL)
    return lambda rel: whole.fullmatch(rel) is not None


def _segment(part: str) -> str:
    """One folder's or name's glob as a regex: ``*`` and ``?`` do not cross ``/``."""
    out, i = [], 0
    while i < len(part):
        c = part[i]
        end = part.find("]", i + 2) if c == "[" else -1
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif end != -1:
            body = part[i + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
