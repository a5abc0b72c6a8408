"""A run store from an address: a SQLite path, or ``postgresql://...``."""

from __future__ import annotations

from .records import SharedRunStore

__all__ = ["open_store"]


def open_store(where: str | None = None) -> SharedRunStore:
    """``postgresql://`` or ``postgres://`` addresses open a ``PostgresRunStore``; anything else
    is a SQLite file (``None``: ``runs.db`` beside the trace database)."""
    if where and where.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresRunStore

        return PostgresRunStore(where)
    from .sqlite import SQLiteRunStore

    return SQLiteRunStore(where)
