"""A cache of read-only tools' results: ``Loop(..., cache=True)``.

A call to a tool marked ``read_only`` (``@tool(read_only=True)``, an MCP tool's
``readOnlyHint``) is answered from the cache when the same tool was called with the same
arguments (in any key order) before: within the run by default (``cache=True``), or across runs
through a store (``cache=SQLiteResultCache("cache.db", lifetime=600)``), for as long as its
lifetime says. A tool that is not read-only, or that needs approval, is never cached, and a
failed call is not stored. A hit is marked in the trace (``tool_cache_hit``) and never changes
what the model reads: it gets the value the call gave, checked and sealed as a new call's.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..exceptions import MinloopError, StoreError
from ..execute import check_output, json_arguments
from ..layer import Execute, Layer
from ..messages import ToolCall
from ..state import RunState
from ..tools import Tool
from ..trace.sqlfile import check_ours, check_path, sqlite_error
from .tracing import report

__all__ = ["Caching", "ResultCache", "SQLiteResultCache"]

WHAT = "result cache"


@runtime_checkable
class ResultCache(Protocol):
    """Where results are kept between runs: ``get`` returns a stored value's JSON text, or
    ``None`` when there is none (or it has expired); ``put`` stores one."""

    def get(self, tool: str, arguments: str) -> str | None: ...

    def put(self, tool: str, arguments: str, value: str) -> None: ...


class _RunResults(dict[tuple[str, str], str]):
    """One run's results (the default: nothing is kept after the run)."""

    def get(self, tool: str, arguments: str) -> str | None:  # type: ignore[override]
        return super().get((tool, arguments))

    def put(self, tool: str, arguments: str, value: str) -> None:
        self[tool, arguments] = value


class Caching(Layer):
    """Answers a read-only tool's call from ``store`` (a ``ResultCache``), or from the run's own
    results when ``store`` is ``None``."""

    def __init__(self, store: ResultCache | None = None) -> None:
        if store is not None and not isinstance(store, ResultCache):
            raise MinloopError(
                f"cache= takes True or a result cache (SQLiteResultCache(path, lifetime=...)), "
                f"got {type(store).__name__}"
            )
        self.store = store

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        if not tool.read_only or tool.needs_approval:
            return await execute()
        store = self.store if self.store is not None else run.local(self, _RunResults)
        arguments = canonical(call.arguments)
        hit = store.get(tool.name, arguments)
        if hit is not None:
            report(run, "tool_cache_hit", id=call.id, name=call.name, shared=self.store is not None)
            return json.loads(hit)
        payload = check_output(tool, await execute())
        store.put(tool.name, arguments, json.dumps(payload, ensure_ascii=False))
        return payload


def canonical(arguments: str) -> str:
    """A call's arguments as one text whatever their key order and spacing."""
    return json.dumps(json_arguments(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class SQLiteResultCache:
    """Results shared across runs and processes, in a SQLite file; each is served for
    ``lifetime`` seconds after it was stored."""

    def __init__(self, path: str | Path, *, lifetime: float = 3600.0) -> None:
        import sqlite3

        if lifetime <= 0:
            raise MinloopError(f"SQLiteResultCache: lifetime must be > 0 seconds, got {lifetime!r}")
        check_path(WHAT, os.fspath(path), postgres=False)
        self.path, self.lifetime = str(path), lifetime
        self._lock = threading.Lock()
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            raise sqlite_error(WHAT, self.path, exc) from None
        try:
            check_ours(WHAT, self.path, self._db, {"results"})
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS results (tool TEXT, arguments TEXT, value TEXT, "
                "stored REAL, PRIMARY KEY (tool, arguments))"
            )
        except sqlite3.Error as exc:
            self._db.close()
            raise sqlite_error(WHAT, self.path, exc) from None
        except StoreError:
            self._db.close()
            raise

    def get(self, tool: str, arguments: str) -> str | None:
        row = self._run("SELECT value, stored FROM results WHERE tool = ? AND arguments = ?", tool, arguments)
        if row is None or time.time() - row[1] >= self.lifetime:
            return None
        return str(row[0])

    def put(self, tool: str, arguments: str, value: str) -> None:
        self._run("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?)", tool, arguments, value, time.time())

    def clear(self) -> None:
        """Drop every stored result."""
        self._run("DELETE FROM results")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _run(self, sql: str, *params: Any) -> Any:
        import sqlite3

        try:
            with self._lock:
                return self._db.execute(sql, params).fetchone()
        except sqlite3.Error as exc:
            raise sqlite_error(WHAT, self.path, exc) from None
