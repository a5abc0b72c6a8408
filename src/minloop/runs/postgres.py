"""Runs in PostgreSQL, for several processes or machines sharing them (psycopg 3).

``PostgresRunStore("postgresql://user@host/db")``. The tables are the SQLite store's; every
process opens its own connection. A run is driven by one process at a time: a resume takes it
only if nobody alive holds it, and exactly one of two processes resuming it at once does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..exceptions import MissingDependencyError
from .sql import SQLRunStore, tables

__all__ = ["PostgresRunStore"]


class PostgresRunStore(SQLRunStore):
    """Runs in the PostgreSQL database at ``dsn`` (tables made if missing)."""

    def __init__(self, dsn: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise MissingDependencyError(
                "psycopg (for a PostgreSQL run store)", "pip install 'minloop[postgres]'"
            ) from None
        self._conn = psycopg.connect(dsn, autocommit=True)
        with self._conn.transaction():
            self._conn.execute("SELECT pg_advisory_xact_lock(7426511)")  # one process makes the tables
            for statement in tables("DOUBLE PRECISION"):
                self._conn.execute(statement)
        super().__init__(self._run, self._transaction, _safe(dsn))

    def _run(self, sql: str, params: tuple[Any, ...]) -> Any:
        return self._conn.execute(sql.replace("?", "%s"), params)

    @contextmanager
    def _transaction(self, exclusive: bool) -> Iterator[Any]:
        with self._conn.transaction():
            yield self._conn

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> PostgresRunStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _safe(dsn: str) -> str:
    """The address without its password, to name the store in messages."""
    head, at, tail = dsn.rpartition("@")
    if not at or "://" not in head:
        return dsn.split("password=")[0].strip() or "PostgreSQL"
    scheme, _, user = head.partition("://")
    return f"{scheme}://{user.split(':')[0]}@{tail}"
