"""Runs in PostgreSQL, for several processes or machines sharing them (psycopg 3).

``PostgresRunStore("postgresql://user@host/db")``. The tables are the SQLite store's; every
process opens its own connection. A run is driven by one process at a time: a resume takes it
only if nobody alive holds it, and exactly one of two processes resuming it at once does.

Every statement goes through ``_run`` and every transaction through ``_transaction``: a server
that cannot be reached, refuses the user or drops the connection raises a ``StoreError`` that
names the address without its password and says what to do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..exceptions import MissingDependencyError, StoreError
from .shared import later_columns
from .sql import SQLRunStore, tables

__all__ = ["PostgresRunStore"]

CONNECT = "check that the server runs at this address and that its user, password and database are right"
LOST = "check the server and the network, then try again (what was recorded is kept)"
# what the server said (the first characters of its SQLSTATE), in plain words, and what to do
STATES = {
    "42501": ("the user may not make or change the minloop_ tables",
              "grant it those rights (or make the tables as the database's owner), or give another user"),
    "25006": ("the server takes no writes (read-only)", "give the address of a server that takes writes"),
    "53100": ("the server's disk is full", "free some space on it, then try again (what was recorded is kept)"),
    "08": ("the connection to the server was lost", LOST),
    "57P": ("the server ended the connection (it is stopping, or an administrator ended it)", LOST),
}  # fmt: skip


class PostgresRunStore(SQLRunStore):
    """Runs in the PostgreSQL database at ``dsn`` (tables made if missing)."""

    writes_in_with = True

    def __init__(self, dsn: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise MissingDependencyError(
                "psycopg (for a PostgreSQL run store)", "pip install 'minloop[postgres]'"
            ) from None
        self._error, self._secret = psycopg.Error, _password(dsn)
        where = _safe(dsn)
        try:
            self._conn = psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as exc:
            raise StoreError(f"run store {where}", f"cannot connect ({self._said(exc)}); {CONNECT}") from None
        super().__init__(self._run, self._transaction, where)
        with self._transaction(True):
            self._run("SELECT pg_advisory_xact_lock(7426511)", ())  # one process makes the tables
            for statement in [*tables("DOUBLE PRECISION"), *later_columns()]:
                self._run(statement, ())

    def _said(self, exc: BaseException) -> str:
        """What psycopg said, its first line (not the statement it quotes), without the password."""
        text = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        return text.replace(self._secret, "***") if self._secret else text

    def _failed(self, exc: BaseException) -> StoreError:
        state = str(getattr(exc, "sqlstate", None) or "")
        problem, todo = next((words for prefix, words in STATES.items() if state.startswith(prefix)),
                             ("the database failed", LOST))  # fmt: skip
        return StoreError(f"run store {self.where}", f"{problem} ({self._said(exc)}); {todo}")

    def _run(self, sql: str, params: tuple[Any, ...]) -> Any:
        try:
            return self._conn.execute(sql.replace("?", "%s"), params)
        except self._error as exc:
            raise self._failed(exc) from None

    @contextmanager
    def _transaction(self, exclusive: bool) -> Iterator[Any]:
        try:
            with self._conn.transaction():
                yield self._conn
        except self._error as exc:  # the COMMIT or ROLLBACK itself failed
            raise self._failed(exc) from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PostgresRunStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _password(dsn: str) -> str:
    """The password the address holds ("" if none), to keep it out of every message."""
    found = re.search(r"://[^/@:]*:([^@/]*)@", dsn) or re.search(r"password\s*=\s*'?([^&\s']+)", dsn)
    return found.group(1) if found else ""


def _safe(dsn: str) -> str:
    """The address without its password, to name the store in messages."""
    secret = _password(dsn)
    head, at, tail = dsn.rpartition("@")
    if at and "://" in head:
        scheme, _, user = head.partition("://")
        dsn = f"{scheme}://{user.split(':')[0]}@{tail}"
    dsn = re.sub(r"(password\s*=\s*)('[^']*'|[^&\s]*)", r"\1***", dsn)
    return dsn.replace(secret, "***") if secret else dsn
