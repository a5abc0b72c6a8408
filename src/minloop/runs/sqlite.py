"""The default run store: one SQLite file, beside the trace database unless told otherwise.

WAL mode with ``synchronous=NORMAL``: every write is committed on its own, so a process killed
mid-run (even by SIGKILL) leaves every write made so far, and several processes on one machine
can share the file (each write waits up to ``busy_timeout`` for another's).

Every statement goes through ``_run`` and every transaction through ``_transaction``: what
SQLite or the disk refuses (a damaged or foreign file, a read-only one, a full disk) raises a
``StoreError`` that names the file and says what to do, and a refused transaction is rolled
back whole.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ..trace.sqlfile import Rows, check_ours, check_path, sqlite_error
from ..trace.sqlite import default_path
from .shared import later_columns
from .sql import SQLRunStore, tables

__all__ = ["SQLiteRunStore", "default_runs_path"]

WHAT = "run store"


def default_runs_path() -> Path:
    """``runs.db`` beside the trace database (``minloop.trace.sqlite.default_path``)."""
    return default_path().with_name("runs.db")


class SQLiteRunStore(SQLRunStore):
    """Runs in one SQLite file: ``path``, else ``runs.db`` beside the trace database."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        if path is not None:
            check_path(WHAT, os.fspath(path))
        self.path = Path(path) if path is not None else default_runs_path()
        try:
            self._conn = _connect(self.path)
        except (sqlite3.Error, OSError) as exc:
            raise sqlite_error(WHAT, self.path, exc) from None
        super().__init__(self._run, self._transaction, str(self.path))

    def _run(self, sql: str, params: tuple[Any, ...]) -> Rows:
        try:
            cursor = self._conn.execute(sql, params)
            return Rows(cursor.fetchall(), cursor.rowcount)
        except sqlite3.Error as exc:
            raise sqlite_error(WHAT, self.path, exc) from None

    @contextmanager
    def _transaction(self, exclusive: bool) -> Iterator[Any]:
        self._run("BEGIN IMMEDIATE", ())  # the write lock at once: no upgrade that could fail
        try:
            yield self._conn
            self._run("COMMIT", ())
        except BaseException:
            if self._conn.in_transaction:  # a refused COMMIT may leave it open
                with suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SQLiteRunStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _connect(path: Path) -> sqlite3.Connection:
    """The store's connection, its tables made; a foreign or damaged file is refused before
    anything is written to it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=10000")
        check_ours(WHAT, path, conn, {"minloop_runs"})
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        for statement in tables("REAL"):
            conn.execute(statement)
        has = lambda table: {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        for statement in later_columns(has):  # a store an earlier version made
            conn.execute(statement)
    except BaseException:
        conn.close()
        raise
    return conn
