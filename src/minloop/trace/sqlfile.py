"""What goes wrong with a SQLite file (a run store or the trace database), in plain words.

``sqlite_error`` turns the ``sqlite3`` or ``OSError`` exception of a store into a
``StoreError`` that names the file and says what to do; ``check_path`` refuses an address
that is not a file path, and ``check_ours`` a SQLite file that holds some other program's
tables, before anything is written to either.
"""

from __future__ import annotations

import errno
import re
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from ..exceptions import StoreError

__all__ = ["Rows", "check_ours", "check_path", "sqlite_error"]

SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
ELSEWHERE = "give another file, or move this one aside (nothing was written to it)"
# the first words of a SQLite error name: what went wrong, and what to do about it
PROBLEMS = {
    "SQLITE_NOTADB": ("is not a SQLite database (damaged, or another program's file)", ELSEWHERE),
    "SQLITE_CORRUPT": ("is damaged", "restore it from a backup, or " + ELSEWHERE),
    "SQLITE_READONLY": (
        "cannot be written (read-only)",
        "give this user write access to the file and its folder (SQLite writes the -wal and -shm "
        "files beside it), or give another file",
    ),
    "SQLITE_FULL": ("cannot be written: the disk is full", "free some space, then try again (what was recorded is kept)"),
    "SQLITE_CANTOPEN": ("cannot be opened", "check that its folder exists and that this user may write to it"),
    "SQLITE_PERM": ("cannot be opened: permission denied", "give this user access to the file and its folder"),
    "SQLITE_AUTH": ("cannot be opened: permission denied", "give this user access to the file and its folder"),
    "SQLITE_BUSY": ("is locked by another process that holds it too long", "try again in a moment"),
    "SQLITE_LOCKED": ("is locked by another process that holds it too long", "try again in a moment"),
    "SQLITE_IOERR": ("cannot be read or written: the disk failed", "check the disk and the free space, then try again"),
    "SQLITE_NOMEM": ("cannot be used: out of memory", "free some memory, then try again"),
}  # fmt: skip
OS_PROBLEMS = {
    errno.ENOSPC: ("cannot be made: the disk is full", "free some space, then try again"),
    errno.EACCES: ("cannot be made: permission denied", "give this user write access to the folder above it, or give another path"),
    errno.EPERM: ("cannot be made: permission denied", "give this user write access to the folder above it, or give another path"),
    errno.EROFS: ("cannot be made: the file system is read-only", "give a path on a writable disk"),
    errno.ENOTDIR: ("cannot be made: a part of its path is a file, not a folder", "give another path"),
    errno.EEXIST: ("cannot be made: a part of its path is a file, not a folder", "give another path"),
}  # fmt: skip


def sqlite_error(what: str, path: object, exc: BaseException) -> StoreError:
    """``exc`` (a ``sqlite3.Error`` or an ``OSError``) as a ``StoreError`` for the ``what`` (``"run
    store"``, ``"trace database"``) at ``path``."""
    store = f"{what} {path}"
    if isinstance(exc, OSError):
        problem, todo = OS_PROBLEMS.get(
            exc.errno or 0, (f"cannot be made: {exc.strerror or exc}", "give another path")
        )
        return StoreError(store, f"its folder {problem}; {todo}")
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    said = str(exc) or name or type(exc).__name__
    problem, todo = next(
        (words for prefix, words in PROBLEMS.items() if name == prefix or name.startswith(prefix + "_")),
        (f"cannot be used ({type(exc).__name__})", "check the file, or give another one"),
    )  # fmt: skip
    return StoreError(store, f"the file {problem} ({said}); {todo}")


def check_path(what: str, path: object, *, postgres: bool = True) -> None:
    """Refuse an address with a scheme (``mysql://...``, ``http://...``): it is no file path
    (``postgres``: the store also takes a postgresql:// address)."""
    found = SCHEME.match(str(path))
    if found:
        other = " or a postgresql:// address" if postgres else ""
        raise StoreError(
            f"{what} {path}",
            f"an address of an unknown kind ({found.group(1)}://): give a SQLite file path{other}",
        )


def check_ours(what: str, path: object, conn: sqlite3.Connection, ours: Collection[str]) -> None:
    """Refuse a SQLite file that has tables and none of ``ours`` (read before anything is written:
    a damaged or foreign file raises here, untouched)."""
    tables = sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    if tables and not set(ours) & set(tables):
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreError(
            f"{what} {path}",
            f"the file is a SQLite database of something else (tables: {shown}); {ELSEWHERE}",
        )


class Rows:
    """A statement's rows, all read (so that a damaged page fails inside the store's guard)."""

    __slots__ = ("rowcount", "rows")

    def __init__(self, rows: Sequence[Any], rowcount: int) -> None:
        self.rows, self.rowcount = rows, rowcount

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> Sequence[Any]:
        return self.rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)
