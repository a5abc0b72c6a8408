"""The typed events of ``loop.stream`` as JSON documents: ``{"type": "TextDelta", ...}``."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from pydantic_core import to_jsonable_python

from ..layers.streaming import RunEnd, StepEnd, StreamEvent
from ..result import step_dict

__all__ = ["event_dict"]


def event_dict(event: StreamEvent) -> dict[str, Any]:
    """One event as JSON: its class name as ``type``, then its fields (a step or a whole result
    in the same shape as ``RunResult.to_dict``)."""
    if isinstance(event, RunEnd):
        return {"type": "RunEnd", "step": event.step, "result": event.result.to_dict()}
    if isinstance(event, StepEnd):
        return {"type": "StepEnd", "step": event.step, "record": step_dict(event.record)}
    body = {f.name: to_jsonable_python(getattr(event, f.name), fallback=str) for f in fields(event)}
    return {"type": type(event).__name__, **body}
