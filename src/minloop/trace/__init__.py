"""Trace events of a run, the sink protocol, and the stores and views built on them."""

from .events import Event, EventKind, TraceSink, Tracer

__all__ = ["Event", "EventKind", "TraceSink", "Tracer"]
