"""A run store from an address: a SQLite path, or ``postgresql://...``."""

from __future__ import annotations

from ..trace.sqlfile import check_path
from .records import SharedRunStore

__all__ = ["open_store"]


def open_store(where: str | None = None) -> SharedRunStore:
    """``postgresql://`` or ``postgres://`` addresses open a ``PostgresRunStore``; a path is a
    SQLite file (``None``: ``runs.db`` beside the trace database). Any other address
    (``mysql://...``, ``http://...``) raises ``StoreError``, as does a store that cannot be
    opened (named, with what to do)."""
    if where and where.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresRunStore

        return PostgresRunStore(where)
    if where:
        check_path("run store", where)
    from .sqlite import SQLiteRunStore

    return SQLiteRunStore(where)
