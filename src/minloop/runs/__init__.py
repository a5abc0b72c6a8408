"""Runs that outlive their process: a run store, pause for approval, resume after a crash.

``Loop(model, tools, store=SQLiteRunStore())`` writes every run to the store as it goes
(``Durable``); ``loop.resume(run_id, decisions)`` goes on with a paused or interrupted run in
any process that shares the store, and never runs a recorded call again. ``PostgresRunStore``
shares runs between machines.
"""

import importlib

from .records import CallRecord, PendingCall, RunRow, RunStore, StoredRun, Verdict

__all__ = [
    "CallRecord",
    "Durable",
    "PendingCall",
    "PostgresRunStore",
    "RunRow",
    "RunStore",
    "SQLiteRunStore",
    "StoredRun",
    "Verdict",
    "open_store",
    "stalled",
]

_HOMES = {
    "Durable": "durable",
    "PostgresRunStore": "postgres",
    "SQLiteRunStore": "sqlite",
    "open_store": "open",
    "stalled": "owner",
}


def __getattr__(name: str) -> object:
    if name in _HOMES:
        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module 'minloop.runs' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
