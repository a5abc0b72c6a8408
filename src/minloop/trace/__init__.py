"""Trace events of a run, the sink protocol, and the stores and views built on them.

``SQLiteSink``, ``TraceStore`` and ``Trace`` (``minloop.trace.sqlite``) and ``OTelSink``
(``minloop.trace.otel``) are imported on first use, so ``import minloop`` stays light.
"""

from importlib import import_module
from typing import Any

from .events import Event, EventKind, Tracer, TraceSink

__all__ = ["Event", "EventKind", "OTelSink", "SQLiteSink", "Trace", "TraceSink", "TraceStore", "Tracer"]

_LAZY = {"OTelSink": "otel", "SQLiteSink": "sqlite", "Trace": "sqlite", "TraceStore": "sqlite"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
