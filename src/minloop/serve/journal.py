"""A served run's events: numbered, kept in memory by the worker that drives the run, and
written to the run store in batches, so that any worker sharing the store can read them.

The driving worker's own readers read from memory as the events come; text and arguments
deltas that come within ``JOIN`` seconds of each other go out as one event. At most every ``FLUSH``
seconds one write puts the new events of all the runs this worker drives into the store (and
renews their leases). A run's end or pause goes in the same write as its last events, and its
``RunEnd`` reaches readers only once written: a client that saw ``RunEnd`` finds the run ended
on every worker. A worker keeps at most ``KEEP`` events of a run in memory, and the runs that
ended lately (``LINGER``); older events are read from the store. Events pass through the loop's
redactor first, as everything in the store does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

from ..runs.records import EventBatch, SharedRunStore

__all__ = ["AHEAD", "TERMINAL", "Journal", "Log", "follow"]

FLUSH = 0.05  # seconds new events may wait before they are written
KEEP = 2000  # events of one run kept in memory while it goes
KEEP_ENDED = 500  # and after it ended or paused
LINGER = 256  # runs that ended here whose events stay in memory
AHEAD = 1000  # events a run may be ahead of the store: the driver waits beyond that
POLL = 0.05, 0.5  # seconds between reads of the store for a run driven elsewhere: first, at most
TERMINAL = frozenset({"RunEnd", "RunFailed"})
JOIN = 0.02  # seconds a text or arguments delta waits for the next ones, to go out as one event
SEND = 0.01  # seconds events wait for others, to go out to a reader in one write
DELTAS = frozenset({"TextDelta", "ArgumentsDelta"})

logger = logging.getLogger("minloop.serve")


@dataclass(eq=False)
class Log:
    """One run's events on the worker that drives it. ``items[i]`` is event number ``first + i``
    as (type, JSON); readers see the first ``shown`` of them; numbers up to ``stored`` are in
    the store. ``end``: the run's status and result, written with its last event."""

    run_id: str
    tag: str
    owner: str
    first: int
    items: list[tuple[str, str]] = field(default_factory=list)
    shown: int = 0
    stored: int = 0
    end: tuple[str, dict[str, Any]] | None = None
    closing: bool = False
    done: bool = False
    lost: bool = False
    task: asyncio.Task[None] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    held: dict[str, Any] | None = None  # a delta that the next ones may join
    timer: asyncio.TimerHandle | None = None
    waiting: int = 0  # readers waiting for the next events
    wakeup: asyncio.TimerHandle | None = None

    def __post_init__(self) -> None:
        self.stored = self.first - 1

    @property
    def last(self) -> int:
        return self.first + len(self.items) - 1

    def since(self, seen: int) -> list[tuple[int, str, str]]:
        """The shown events numbered after ``seen``: (number, type, JSON)."""
        start = max(seen + 1, self.first)
        return [(n, *self.items[n - self.first]) for n in range(start, self.first + self.shown)]

    def covers(self, seen: int) -> bool:
        return seen >= self.first - 1

    def show(self, now: bool = False) -> None:
        """Let readers see every event so far; those waiting are woken within ``SEND`` seconds
        (``now``: at once), so events that come close together go out in one write."""
        self.shown = len(self.items)
        if now or self.waiting == 0:
            self.wake()
        elif self.wakeup is None:
            self.wakeup = asyncio.get_running_loop().call_later(SEND, self.wake)

    def wake(self) -> None:
        if self.wakeup is not None:
            self.wakeup.cancel()
            self.wakeup = None
        self.changed.set()
        self.changed.clear()

    async def wait(self) -> None:
        self.waiting += 1
        try:
            await self.changed.wait()
        finally:
            self.waiting -= 1


class Journal:
    """The logs of the runs this worker drives, and the task that writes them to ``store``."""

    def __init__(self, store: SharedRunStore, redact: Callable[[Any], Any] | None, lease: float,
                 kept_for: float) -> None:  # fmt: skip
        self.store, self.redact, self.lease, self.kept_for = store, redact, lease, kept_for
        self.logs: dict[str, Log] = {}
        self.ended: OrderedDict[str, Log] = OrderedDict()
        self.dirty: dict[str, Log] = {}
        self.wake = asyncio.Event()
        self.urgent = asyncio.Event()
        self.written = asyncio.Event()
        self.closing = False

    def open(self, run_id: str, tag: str, owner: str, first: int) -> Log:
        self.ended.pop(run_id, None)
        log = self.logs[run_id] = Log(run_id, tag, owner, first)
        return log

    def text(self, event: dict[str, Any]) -> str:
        """The event as JSON, after the redactor."""
        text = json.dumps(event, ensure_ascii=False)
        clean = getattr(self.redact, "is_clean_json", None)
        if self.redact is None or (clean is not None and clean(text)):
            return text
        return json.dumps(self.redact(event), ensure_ascii=False)

    async def add(self, log: Log, event: dict[str, Any]) -> None:
        """Show ``event`` to the run's readers now (a text or arguments delta within ``JOIN``
        seconds, joined with the next ones), and write it soon."""
        held = log.held
        if held is not None and _joins(held, event):
            held["text"] += event["text"]
            return
        self._release(log)
        if event["type"] in DELTAS:
            log.held = dict(event)
            log.timer = asyncio.get_running_loop().call_later(JOIN, self._release, log)
            return
        self._append(log, event)
        while log.last - log.stored > AHEAD and not log.lost:  # the store is behind: wait for it
            self.urgent.set()
            await self.written.wait()

    def _append(self, log: Log, event: dict[str, Any]) -> None:
        log.items.append((event["type"], self.text(event)))
        log.show()
        self._dirty(log)

    def _release(self, log: Log) -> None:
        """Show the delta held back, if there is one."""
        if log.timer is not None:
            log.timer.cancel()
            log.timer = None
        if log.held is not None:
            held, log.held = log.held, None
            self._append(log, held)

    async def close(self, log: Log, event: dict[str, Any] | None) -> None:
        """The run's last event (if any): written with the run's end, then shown. A run another
        worker took over, or that a worker going away leaves to the others, shows no end: its
        readers read on from the store."""
        self._release(log)
        if event is not None and not self.closing and not log.lost:
            log.items.append((event["type"], self.text(event)))
        log.closing = True
        self._dirty(log)
        self.urgent.set()
        while (log.stored < log.last or log.end is not None) and not log.lost and not self.closing:
            await self.written.wait()
        if log.lost or self.closing:
            del log.items[log.shown :]
        log.show(now=True)
        log.done = True
        _trim(log, KEEP_ENDED)
        self.ended[log.run_id] = log
        while len(self.ended) > LINGER:
            old, gone = self.ended.popitem(last=False)
            if self.logs.get(old) is gone:
                del self.logs[old]

    def finish(self, run_id: str, owner: str, status: str, result: dict[str, Any]) -> None:
        """Where the durable layer writes a run's end: a run driven here ends with its last events."""
        log = self.logs.get(run_id)
        if log is None or log.done or log.owner != owner:
            self.store.finish(run_id, owner, status, result)
        elif not self.closing:  # a worker going away leaves its runs to the others
            log.end = (status, result)

    def _dirty(self, log: Log) -> None:
        self.dirty[log.run_id] = log
        self.wake.set()

    async def run(self) -> None:
        """Write what is new, at most every ``FLUSH`` seconds, at once for a run that ends."""
        while True:
            await self.wake.wait()
            self.wake.clear()
            try:
                async with asyncio.timeout(FLUSH):  # more may come meanwhile, unless a run ends
                    await self.urgent.wait()
            except TimeoutError:
                pass
            self.urgent.clear()
            if not self.write():
                await asyncio.sleep(1.0)  # the store failed: try again in a moment

    def write(self) -> bool:
        """Write the new events of every log that has some; False when the store failed."""
        logs, self.dirty = list(self.dirty.values()), {}
        logs = [log for log in logs if not log.lost]
        until = time.time() + self.lease
        batches = [EventBatch(log.run_id, log.owner, until, log.stored + 1,
                              [text for _, text in log.items[log.stored + 1 - log.first :]],
                              log.end if log.closing else None) for log in logs]  # fmt: skip
        if not batches:
            return True
        try:
            lost = set(self.store.write_events(batches, self.kept_for))
        except Exception:
            logger.exception("could not write the events of %d run(s); trying again", len(batches))
            for log in logs:
                self._dirty(log)
            return False
        for log, batch in zip(logs, batches, strict=True):
            if log.run_id in lost:
                log.lost = True
                if log.task is not None and not log.closing:
                    log.task.cancel()  # another worker took the run over
                continue
            log.stored = batch.first + len(batch.events) - 1
            if batch.end is not None:
                log.end = None
            _trim(log, KEEP)
        self.written.set()
        self.written.clear()
        return True


def _joins(held: dict[str, Any], event: dict[str, Any]) -> bool:
    """Whether ``event`` goes on the delta held back: the same kind, step and call."""
    return (
        held["type"] == event["type"]
        and held["step"] == event["step"]
        and held.get("index") == event.get("index")
    )


def _trim(log: Log, keep: int) -> None:
    """Forget the oldest written events beyond ``keep``; readers read those from the store."""
    drop = min(len(log.items) - keep, log.stored - log.first + 1, log.shown)
    if drop > 0:
        del log.items[:drop]
        log.first += drop
        log.shown -= drop


async def follow(
    journal: Journal, run_id: str, after: int
) -> AsyncGenerator[list[tuple[int, str, str]], None]:
    """The run's events numbered after ``after``, in batches of (number, type, JSON), up to its
    next ``RunEnd``: from memory while this worker drives the run, else from the store (read
    again and again while the run is running elsewhere)."""
    seen, delay = after, POLL[0]
    while True:
        log = journal.logs.get(run_id)
        batch: list[tuple[int, str, str]] = []
        if log is not None and log.covers(seen):
            batch = log.since(seen)
            if not batch and not log.done:
                await log.wait()
                continue
        if not batch:
            status, found = journal.store.read_events(run_id, seen)
            batch = [(n, str(e.get("type")), json.dumps(e, ensure_ascii=False)) for n, e in found]
            if not batch:
                if status != "running":
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, POLL[1])
                continue
            delay = POLL[0]
        end = next((i for i, item in enumerate(batch) if item[1] in TERMINAL), None)
        yield batch if end is None else batch[: end + 1]
        if end is not None:
            return
        seen = batch[-1][0]
