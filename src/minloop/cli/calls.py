"""The options of ``minloop run`` and ``minloop serve`` for the layers around tool calls: a cap on
concurrent calls, retries, and the result cache (``minloop.layers``)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

__all__ = ["CacheDbOpt", "CacheOpt", "ConcurrencyOpt", "RetryOpt", "call_keywords"]

ConcurrencyOpt = Annotated[
    int | None, typer.Option(min=1, help="Run at most N tool calls of a run at once (default: all at once).")
]
RetryOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Try a call up to N times when it timed out or failed for a passing reason, if its tool is safe to repeat.",
    ),
]
CacheOpt = Annotated[
    bool,
    typer.Option("--cache", help="Answer a read-only tool's repeated call in a run from its first result."),
]
CacheDbOpt = Annotated[
    str | None,  # as typed: a Path would make mysql://x a folder mysql:/x
    typer.Option(help="Share read-only tools' results across runs in this SQLite file, each for an hour."),
]


def call_keywords(
    concurrency: int | None, retry: int | None, cache: bool, cache_db: str | None
) -> dict[str, Any]:
    """The ``Loop`` keywords the options ask for (a cache file is opened here)."""
    from ..layers.cache import SQLiteResultCache

    shared = SQLiteResultCache(cache_db) if cache_db is not None else None
    return {"tool_concurrency": concurrency, "retry": retry, "cache": shared or cache}
