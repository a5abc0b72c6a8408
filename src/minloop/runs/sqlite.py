"""The default run store: one SQLite file, beside the trace database unless told otherwise.

WAL mode with ``synchronous=NORMAL``: every write is committed on its own, so a process killed
mid-run (even by SIGKILL) leaves every write made so far, and several processes on one machine
can share the file (each write waits up to ``busy_timeout`` for another's).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..trace.sqlite import default_path
from .sql import SQLRunStore, tables

__all__ = ["SQLiteRunStore", "default_runs_path"]


def default_runs_path() -> Path:
    """``runs.db`` beside the trace database (``minloop.trace.sqlite.default_path``)."""
    return default_path().with_name("runs.db")


class SQLiteRunStore(SQLRunStore):
    """Runs in one SQLite file: ``path``, else ``runs.db`` beside the trace database."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_runs_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        for statement in tables("REAL"):
            conn.execute(statement)
        self._conn = conn
        super().__init__(conn.execute, self._transaction, str(self.path))

    @contextmanager
    def _transaction(self, exclusive: bool) -> Iterator[Any]:
        self._conn.execute("BEGIN IMMEDIATE")  # the write lock at once: no upgrade that could fail
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SQLiteRunStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
