"""Trace ids and log records keyed by them.

Every run gets a ``trace_id`` of the form ``trc_<yymmddHHMMSS>_<6 hex>``, never the same one
twice in a process (a run store or trace database also refuses an id it already holds: the
loop draws again). It is put in every tool result's JSON and in every log record the run emits
on the ``minloop`` logger (as the record attribute ``trace_id`` and as a ``[trc_...]`` prefix).
``current_trace_id`` holds it while the run executes, so a tool's own logging can carry it
through ``TraceIdFilter``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, MutableMapping
from contextvars import ContextVar
from datetime import datetime
from typing import Any, Final

from .exceptions import MinloopError

__all__ = [
    "TraceIdFilter",
    "current_trace_id",
    "log_run_end",
    "log_run_start",
    "log_step_end",
    "log_step_start",
    "new_trace_id",
    "run_logger",
]

logger = logging.getLogger("minloop")
logger.addHandler(logging.NullHandler())  # a library does not decide where records go
current_trace_id: Final[ContextVar[str | None]] = ContextVar("minloop_trace_id", default=None)
_given: dict[str, set[str]] = {}  # the ids given in the last few seconds, by second
_given_lock = threading.Lock()
SECONDS_KEPT = 4
STAMP = "%y%m%d%H%M%S"


def new_trace_id(now: datetime | None = None) -> str:
    """``trc_<yymmddHHMMSS>_<6 hex>``: 24 random bits, drawn again while this process has already
    given the id (up to 16,777,216 ids a second)."""
    stamp = _stamp(now or datetime.now())
    with _given_lock:
        given = _given.get(stamp)
        if given is None:
            given = _given[stamp] = set()
            for old in list(_given)[:-SECONDS_KEPT]:
                del _given[old]
        if len(given) >= 1 << 24:
            raise MinloopError(f"every trace id of the second {stamp} has been given")
        while (suffix := os.urandom(3).hex()) in given:
            pass
        given.add(suffix)
    return f"trc_{stamp}_{suffix}"


_last_stamp: tuple[tuple[int, ...], str] = ((), "")  # one strftime a second, not one a run


def _stamp(now: datetime) -> str:
    """``now.strftime(STAMP)``, kept from the last call while the second is the same."""
    global _last_stamp
    second = (now.second, now.minute, now.hour, now.day, now.month, now.year)
    last, stamp = _last_stamp
    if second != last:
        stamp = now.strftime(STAMP)
        _last_stamp = (second, stamp)
    return stamp


class _RunLogger(logging.LoggerAdapter):  # type: ignore[type-arg]
    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        trace_id = self.extra["trace_id"] if self.extra else "-"
        kwargs["extra"] = {**(kwargs.get("extra") or {}), "trace_id": trace_id}
        return f"[{trace_id}] {msg}", kwargs


def run_logger(trace_id: str) -> logging.LoggerAdapter:  # type: ignore[type-arg]
    return _RunLogger(logger, {"trace_id": trace_id})


class TraceIdFilter(logging.Filter):
    """Stamps ``record.trace_id`` with the running trace id (``"-"`` outside a run)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "trace_id"):
            record.trace_id = current_trace_id.get() or "-"
        return True


def log_run_start(log: logging.LoggerAdapter, model: str, tools: Iterable[str], max_steps: int) -> None:  # type: ignore[type-arg]
    """A run's first log line: its model, its tools by name and its step limit."""
    if log.isEnabledFor(logging.INFO):
        log.info("run start: model=%s tools=%s max_steps=%d", model, sorted(tools), max_steps)


def log_run_end(log: logging.LoggerAdapter, status: str, steps: int, error: str | None) -> None:  # type: ignore[type-arg]
    """A run's last log line: how it ended, after how many steps, and why when it failed."""
    if log.isEnabledFor(logging.INFO):
        log.info("run end: %s after %d steps%s", status, steps, f" ({error})" if error else "")


def log_step_start(log: logging.LoggerAdapter, step: int, request: Any, scrub: Any) -> None:  # type: ignore[type-arg]
    """The step's first log line, and its input (truncated) at debug level."""
    if not log.isEnabledFor(logging.INFO):  # nor, then, at debug level
        return
    messages = request.messages
    log.info("step %d start: %d messages, tool_choice=%s", step, len(messages), request.tool_choice)
    if log.isEnabledFor(logging.DEBUG):
        text = messages[-1].get("content")
        log.debug("step %d input: %.300s", step, scrub(text) if scrub is not None else text)


def log_step_end(log: logging.LoggerAdapter, step: Any) -> None:  # type: ignore[type-arg]
    """The step's last log line: its decision, the tools called and their errors."""
    if log.isEnabledFor(logging.INFO):
        errors = f" {[c.name for c in step.tool_calls]} errors={step.errors}" if step.results else ""
        log.info(
            "step %d end: %s%s, %.1fms model", step.index, step.decision, errors, step.model_latency * 1000
        )
