"""Cancelling a stored run: ``cancel(store, run_id, by=..., reason=...)``.

A run that has not ended is cancelled wherever it is. Nobody drives a paused run (or a running
one whose process has gone): it ends ``cancelled`` at once, its waiting calls never run. A run
that a live process drives (this one or another, on this machine or elsewhere) is asked to
stop: the process driving it ends it ``cancelled`` at its next step boundary. Either way the
run's result says who cancelled it and why, and a cancelled run cannot be resumed. A run that
has ended raises ``RunConflictError`` ("the run has already ended (success)").
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

from ..exceptions import RunConflictError
from ..layers.tracing import Event, TraceSink
from .owner import stalled
from .records import ENDED, SharedRunStore
from .shared import KEPT_FOR

__all__ = ["cancel", "cancelled_text", "trace_cancel"]

TRIES = 3  # reads of the run, when it changes between the read and the write


def cancelled_text(by: str | None, reason: str | None) -> str:
    """The error of a cancelled run: who cancelled it and why."""
    return "the run was cancelled" + (f" by {by}" if by else "") + (f": {reason}" if reason else "")


def cancel(store: SharedRunStore, run_id: str, *, by: str | None = None, reason: str | None = None,
           kept_for: float = KEPT_FOR) -> Literal["cancelled", "cancelling"]:  # fmt: skip
    """Cancel the run: ``"cancelled"`` when it ended now, ``"cancelling"`` when the process that
    drives it will end it at its next step boundary."""
    for _ in range(TRIES):
        stored = store.load(run_id)
        row = stored.row
        if row.status in ENDED:
            raise RunConflictError(
                run_id, f"the run has already ended ({row.status}); there is nothing to cancel"
            )
        try:
            if row.status == "running" and not stalled(row):
                store.request_cancel(run_id, by, reason)
                return "cancelling"
            result = _result(run_id, stored.result, stored.state, by, reason)
            event = {"type": "RunEnd", "step": len(result.get("steps") or ()), "result": result}
            store.cancel_paused(run_id, stored.version, result, event, kept_for)
            return "cancelled"
        except RunConflictError:
            continue  # it paused, ended or changed meanwhile: read it again
    raise RunConflictError(run_id, "the run kept changing while it was being cancelled; try again")


def _result(run_id: str, result: dict[str, Any] | None, state: dict[str, Any], by: str | None,
            reason: str | None) -> dict[str, Any]:  # fmt: skip
    """The result of a run cancelled where it stopped (paused, or where its process left it)."""
    base = result or {
        "trace_id": run_id,
        "final_message": None,
        "messages": state.get("messages", []),
        "steps": [],
    }
    return {**base, "status": "cancelled", "error": cancelled_text(by, reason), "pending": [],
            "cancelled_by": by, "reason": reason}  # fmt: skip


def trace_cancel(
    sinks: Sequence[TraceSink], run_id: str, steps: int, by: str | None, reason: str | None
) -> None:
    """The end of a run cancelled where it stopped, in its trace (``sinks``)."""
    data = {"status": "cancelled", "error": cancelled_text(by, reason), "steps": steps, "pending": [],
            "cancelled_by": by, "reason": reason}  # fmt: skip
    for sink in sinks:
        sink.emit(Event("run_end", run_id, steps, time.time(), data))
