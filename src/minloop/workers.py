"""Running tools under their timeouts: sync tools off the event loop, on reused daemon threads
(``call_in_thread``), async tools on it (``call_awaiting``).

Python cannot kill a thread, so a sync tool that hangs past its timeout is abandoned: its result
is discarded, it keeps its own thread (the next call gets another one) and, being a daemon, it
never keeps the process alive at exit. A thread idle for ``LINGER`` seconds exits.

Handing a call to a thread and its result back through the event loop costs two wake-ups of
the loop. A tool whose last call was done within ``INLINE_WAIT`` of being handed over (the
thread's wake-up included) is instead waited for right there, for at most that long (the loop
pauses that briefly); if it is not done by then, the wait goes on through the event loop as
for any other tool.

An async tool's call runs at once up to its first wait; only a call that waits gets a timer (a
timer costs more than a call that computes its result and returns, as many tools do).
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import time
import weakref
from collections.abc import Callable, Coroutine, Generator
from typing import Any

__all__ = ["INLINE_WAIT", "LINGER", "Overdue", "call_awaiting", "call_in_thread"]

INLINE_WAIT = 0.0005  # seconds
LINGER = 30.0  # seconds


class Overdue(Exception):
    """The call did not finish within its timeout (the thread is abandoned)."""


_fast: weakref.WeakKeyDictionary[Callable[..., Any], bool] = weakref.WeakKeyDictionary()


class _Job:
    """One call: run in a worker thread, its outcome handed back inline or through a future."""

    __slots__ = (
        "args",
        "context",
        "done",
        "finished",
        "fn",
        "future",
        "lock",
        "loop",
        "ok",
        "seconds",
        "submitted",
        "value",
    )

    def __init__(self, fn: Callable[..., Any], args: dict[str, Any]) -> None:
        self.fn, self.args, self.context = fn, args, contextvars.copy_context()
        self.done = threading.Lock()  # held until the call has finished
        self.done.acquire()
        self.finished = False
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.future: asyncio.Future[Any] | None = None
        self.ok, self.seconds = False, 0.0  # seconds from submission to the end of the call
        self.value: Any = None
        self.submitted = time.perf_counter()

    def run(self) -> None:  # in the worker thread
        try:
            self.ok, self.value = True, self.context.run(self.fn, **self.args)
        except BaseException as exc:  # delivered to the awaiting task, not lost in the thread
            self.ok, self.value = False, exc
        self.seconds = time.perf_counter() - self.submitted
        with self.lock:
            self.finished = True
            self.done.release()
            if self.future is not None and self.loop is not None:
                try:
                    self.loop.call_soon_threadsafe(self._settle)
                except RuntimeError:
                    pass  # abandoned after a timeout and its event loop is gone: nothing to report to

    def attach(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[Any] | None:
        """A future for the outcome, or None if the job finished meanwhile."""
        with self.lock:
            if self.finished:
                return None
            self.loop, self.future = loop, loop.create_future()
            return self.future

    def _settle(self) -> None:
        if self.future is not None and not self.future.done():
            if self.ok:
                self.future.set_result(self.value)
            else:
                self.future.set_exception(self.value)

    def outcome(self) -> Any:
        _remember(self.fn, self.seconds <= INLINE_WAIT)
        if not self.ok:
            raise self.value
        return self.value


async def call_awaiting(call: Coroutine[Any, Any, Any], timeout: float) -> Any:
    """Await ``call`` (an async tool's coroutine) within ``timeout`` seconds of its start, or raise
    ``Overdue``. It runs at once to its first wait, and a timer is armed only then."""
    started = asyncio.get_running_loop().time()
    try:
        waiting = call.send(None)
    except StopIteration as done:
        return done.value  # finished without waiting: no timer needed
    deadline = asyncio.timeout_at(started + timeout)
    try:
        async with deadline:
            return await _Resumed(call, waiting)
    except TimeoutError:
        if deadline.expired():
            raise Overdue from None
        raise


class _Resumed:
    """A coroutine already run to its first wait (``waiting``, what it handed its task), awaited
    for the rest: what the task sends or throws in goes on to the coroutine."""

    __slots__ = ("call", "waiting")

    def __init__(self, call: Coroutine[Any, Any, Any], waiting: Any) -> None:
        self.call, self.waiting = call, waiting

    def __await__(self) -> Generator[Any, Any, Any]:
        waiting = self.waiting
        while True:
            try:
                sent = yield waiting
            except BaseException as exc:  # a cancellation, thrown in by the task
                try:
                    waiting = self.call.throw(exc)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    waiting = self.call.send(sent)
                except StopIteration as done:
                    return done.value


async def call_in_thread(fn: Callable[..., Any], args: dict[str, Any], timeout: float | None = None) -> Any:
    """``fn(**args)`` in a worker thread, with the caller's context variables; ``Overdue`` if it
    has not finished within ``timeout`` seconds."""
    job = _Job(fn, args)
    _WORKERS.submit(job.run)
    inline = _fast.get(fn, True) if _weakrefable(fn) else False
    if inline and job.done.acquire(timeout=INLINE_WAIT):
        return job.outcome()
    future = job.attach(asyncio.get_running_loop())
    if future is not None:
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                await future
        except TimeoutError:
            if deadline.expired():
                raise Overdue from None
            raise
    return job.outcome()


def _weakrefable(fn: Any) -> bool:
    try:
        weakref.ref(fn)
    except TypeError:
        return False
    return True


def _remember(fn: Callable[..., Any], fast: bool) -> None:
    try:
        _fast[fn] = fast
    except TypeError:
        pass


class _Workers:
    """Daemon threads, reused from call to call; see the module docstring."""

    def __init__(self, linger: float = LINGER) -> None:
        self.linger = linger
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0  # waiting threads not yet promised a job
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._idle:
                self._idle -= 1
                self._jobs.put(job)
                return
        threading.Thread(target=self._work, args=(job,), name="minloop-tool", daemon=True).start()

    def _work(self, job: Callable[[], None]) -> None:
        while True:
            job()
            with self._lock:
                self._idle += 1
            try:
                job = self._jobs.get(timeout=self.linger)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():  # nobody promised this thread a job: leave
                        self._idle -= 1
                        return
                    job = self._jobs.get_nowait()


_WORKERS = _Workers()
