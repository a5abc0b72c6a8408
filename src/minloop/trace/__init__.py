"""Stores and views built on a run's trace events, above the loop: the SQLite store
(``minloop.trace.sqlite``), the HTML report (``html``), offline replay (``replay``) and
OpenTelemetry spans (``otel``). The events themselves are ``minloop.layers.tracing``.

``SQLiteSink``, ``TraceStore``, ``Trace`` and ``OTelSink`` are imported on first use.
"""

from importlib import import_module
from typing import Any

__all__ = ["OTelSink", "SQLiteSink", "Trace", "TraceStore"]

_LAZY = {"OTelSink": "otel", "SQLiteSink": "sqlite", "Trace": "sqlite", "TraceStore": "sqlite"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
