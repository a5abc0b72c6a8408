"""The runs one worker serves: started or resumed here and driven here, read from the store.

Each run is tagged in the store with a digest of the token that started it, and only that
token sees it. The events of a run driven here are kept by the journal (``minloop.serve.journal``)
and readable from every worker sharing the store; a client leaving the stream does not stop the
run. Every worker also tends the shared runs: every ``CHECK`` seconds it cancels the runs it
drives that someone asked (on any worker) to cancel, and every ``lease_scan`` seconds it resumes
the runs that nobody drives any more, whose worker died or went away (exactly one worker takes
each). A worker that shuts down leaves its runs to the others.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import time
from dataclasses import replace
from typing import Any

from ..exceptions import MinloopError, RunConflictError, RunNotFoundError
from ..layers.streaming import LoopStream, RunEnd
from ..runs.cancel import cancel
from ..runs.owner import stalled, this_process
from ..runs.records import ENDED, SharedRunStore
from ..runs.resume import Decisions, durable_of
from ..runs.shared import KEPT_FOR
from ..standard import Loop
from .events import event_dict
from .journal import AHEAD, Journal, Log

__all__ = ["Runs", "tag_of"]

CHECK = 0.25  # seconds between looks for cancel requests
GAP = AHEAD + 2  # numbers skipped after a worker stopped (its readers may have seen that many unwritten)

logger = logging.getLogger("minloop.serve")


def tag_of(token: str | None) -> str:
    """What the store keeps of a token: a digest, never the token."""
    return "token:" + hashlib.sha256((token or "").encode()).hexdigest()[:24]


class Runs:
    """Start, resume, cancel, read and follow runs of one configured ``loop`` over ``store``."""

    def __init__(self, loop: Loop, store: SharedRunStore, *, lease_scan: float | None = 5.0,
                 kept_for: float = KEPT_FOR) -> None:  # fmt: skip
        self.store = store
        self.base = replace(loop, store=store)
        self.journal = Journal(store, loop.redact, durable_of(self.base).lease, kept_for)
        self.lease_scan, self.kept_for = lease_scan, kept_for
        self.loops: dict[str, Loop] = {}
        self.tasks: list[asyncio.Task[None]] = []
        self.warned: set[str] = set()

    def begin(self) -> None:
        """Start writing events and tending the shared runs (in the server's event loop)."""
        self.tasks = [asyncio.create_task(self.journal.run()), asyncio.create_task(self._tend())]

    def loop_for(self, tag: str) -> Loop:
        if tag not in self.loops:
            loop = replace(self.base)
            durable = durable_of(loop)
            durable.tag, durable.finish = tag, self.journal.finish
            self.loops[tag] = loop
        return self.loops[tag]

    def start(self, prompt: str, token: str | None) -> str:
        tag = tag_of(token)
        stream = self.loop_for(tag).stream(prompt)
        self._drive(stream, tag, 1)
        return stream.trace_id

    def resume(self, run_id: str, token: str | None, decisions: Decisions | None = None) -> None:
        self.check(run_id, token)
        self.take(run_id, tag_of(token), decisions or {}, "http")

    def take(self, run_id: str, tag: str, decisions: Decisions, by: str) -> None:
        """Resume the run here (``RunConflictError`` if it is going here or anywhere else)."""
        log = self.journal.logs.get(run_id)
        if log is not None and not log.done:
            raise RunConflictError(run_id, "the run is still going; wait for it to pause or end")
        before = self.store.row(run_id).status
        stream = self.loop_for(tag).stream_resume(run_id, dict(decisions), by=by)  # checks, then takes it
        first = self.store.last_event(run_id) + 1 + (GAP if before == "running" else 0)
        self._drive(stream, tag, first)

    def _drive(self, stream: LoopStream, tag: str, first: int) -> None:
        log = self.journal.open(stream.trace_id, tag, this_process(), first)
        log.task = asyncio.create_task(self._run(stream, log))

    async def _run(self, stream: LoopStream, log: Log) -> None:
        last: dict[str, Any] | None = None
        try:
            async with stream as events:
                async for event in events:
                    if isinstance(event, RunEnd):
                        last = event_dict(event)
                    else:
                        await self.journal.add(log, event_dict(event))
        except asyncio.CancelledError:  # cancelled on request, or the worker is going away
            pass
        except Exception as exc:  # a broken configuration: the reader sees why, the run ends
            stream.run.cancel()
            last = {"type": "RunFailed", "error": f"{type(exc).__name__}: {exc}"}
        if last is None and stream.result is not None:
            last = event_dict(RunEnd(stream.result, len(stream.result.steps)))
        await self.journal.close(log, last)

    def cancel(
        self, run_id: str, token: str | None, *, by: str | None = None, reason: str | None = None
    ) -> str:
        """Cancel the run (``minloop.runs.cancel``): at once if it goes here, at the driving
        worker's next check if it goes elsewhere, and a paused run ends ``cancelled``. Returns
        ``cancelling`` or ``cancelled``."""
        self.check(run_id, token)
        log = self.journal.logs.get(run_id)
        if log is not None and not log.done and not log.closing and log.task is not None:
            self.store.request_cancel(run_id, by, reason)  # who and why, for the run's result
            log.task.cancel()
            return "cancelling"
        return cancel(self.store, run_id, by=by, reason=reason, kept_for=self.kept_for)

    def check(self, run_id: str, token: str | None) -> None:
        """Raise ``RunNotFoundError`` unless ``token`` started ``run_id`` (someone else's run is
        reported as missing, not as forbidden)."""
        log = self.journal.logs.get(run_id)
        found = log.tag if log is not None else self.store.row(run_id).tag or ""
        if found != tag_of(token) and (
            found or token is not None
        ):  # untagged: started outside, open to no token
            raise RunNotFoundError(run_id, "no run with this id for this token")

    def state(self, run_id: str, token: str | None) -> dict[str, Any]:
        """The run's status, pending calls and result, as the store has them."""
        self.check(run_id, token)
        stored = self.store.load(run_id)
        status = stored.row.status
        pending = [{**p.to_dict(), "digest": p.digest} for p in stored.pending]
        return {"run_id": run_id, "status": status, "steps": stored.row.steps, "pending": pending,
                "result": stored.result if status in ENDED or status == "paused" else None}  # fmt: skip

    async def _tend(self) -> None:
        scan = time.monotonic() + (self.lease_scan or 0) * random.random()
        while True:
            await asyncio.sleep(CHECK)
            try:
                if any(not log.done for log in self.journal.logs.values()):
                    self._cancel_asked()
                if self.lease_scan and time.monotonic() >= scan:
                    scan = time.monotonic() + self.lease_scan * random.uniform(0.8, 1.2)
                    self._scan()
                    self.store.forget_events(time.time(), self.kept_for)
            except Exception:
                logger.exception("tending the shared runs failed; trying again")

    def _cancel_asked(self) -> None:
        for run_id in self.store.cancels(this_process()):
            log = self.journal.logs.get(run_id)
            if log is not None and not log.done and not log.closing and log.task is not None:
                log.task.cancel()

    def _scan(self) -> None:
        """Resume the served runs whose worker stopped: their owner exited or its lease ran out."""
        for row in self.store.running():
            log = self.journal.logs.get(row.run_id)
            if not (row.tag or "").startswith("token:") or not stalled(row) or (log and not log.done):
                continue
            try:
                self.take(row.run_id, row.tag or "", {}, "lease scan")
            except (RunConflictError, RunNotFoundError):
                continue  # another worker took it first
            except MinloopError as exc:
                if row.run_id not in self.warned:
                    self.warned.add(row.run_id)
                    logger.warning("run %s cannot be resumed by this worker: %s", row.run_id, exc)

    async def close(self) -> None:
        """Stop driving runs and leave them (their events written) for another worker to take."""
        self.journal.closing = True
        going = [log.task for log in self.journal.logs.values() if log.task is not None and not log.done]
        for task in going:
            task.cancel()
        await asyncio.gather(*going, return_exceptions=True)
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.journal.write()
        self.store.release(this_process())
