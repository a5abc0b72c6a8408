"""The runs one worker serves: started or resumed here and watched from here, read from the store.

Each run is tagged in the store with a digest of the token that started it, and only that
token sees it. The events of a run driven by this worker are kept in order while it runs and for
a while after, so a client that reconnects with ``Last-Event-ID`` gets exactly what it missed; a
client leaving the stream does not stop the run.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..exceptions import RunConflictError, RunNotFoundError
from ..layers.streaming import LoopStream
from ..runs.records import ENDED, RunStore, Verdict
from ..runs.resume import durable_of
from ..standard import Loop
from .events import event_dict

__all__ = ["Runs", "Watch", "tag_of"]

KEEP = 1000  # finished runs whose events stay in memory for late readers


def tag_of(token: str | None) -> str:
    """What the store keeps of a token: a digest, never the token."""
    return "token:" + hashlib.sha256((token or "").encode()).hexdigest()[:24]


@dataclass
class Watch:
    """A run driven by this worker: its events so far, and whether it has ended."""

    tag: str
    events: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    def add(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        self.changed.set()
        self.changed = asyncio.Event()


class Runs:
    """Start, resume, cancel, read and follow runs of one configured ``loop`` over ``store``."""

    def __init__(self, loop: Loop, store: RunStore) -> None:
        self.store = store
        self.base = replace(loop, store=store)
        self.loops: dict[str, Loop] = {}
        self.watches: dict[str, Watch] = {}

    def loop_for(self, tag: str) -> Loop:
        if tag not in self.loops:
            loop = replace(self.base)
            durable_of(loop).tag = tag
            self.loops[tag] = loop
        return self.loops[tag]

    def start(self, prompt: str, token: str | None) -> str:
        tag = tag_of(token)
        stream = self.loop_for(tag).stream(prompt)
        return self._watch(stream, tag)

    def resume(self, run_id: str, token: str | None, decisions: Mapping[str, Verdict] | None = None) -> None:
        self.check(run_id, token)
        watch = self.watches.get(run_id)
        if watch is not None and not watch.done:
            raise RunConflictError(run_id, "the run is still going; wait for it to pause or end")
        loop = self.loop_for(tag_of(token))
        stream = loop.stream_resume(run_id, dict(decisions or {}), by="http")  # checks, then takes the run
        self._watch(stream, tag_of(token), run_id)

    def _watch(self, stream: LoopStream, tag: str, run_id: str | None = None) -> str:
        run_id = run_id or stream.trace_id
        watch = Watch(tag)
        self.watches[run_id] = watch
        watch.task = asyncio.create_task(self._drive(stream, watch))
        self._forget()
        return run_id

    async def _drive(self, stream: LoopStream, watch: Watch) -> None:
        try:
            async with stream as events:
                async for event in events:
                    watch.add(event_dict(event))
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # a broken configuration: the reader sees why
            watch.add({"type": "RunFailed", "error": f"{type(exc).__name__}: {exc}"})
        finally:
            watch.done = True
            watch.changed.set()

    def cancel(self, run_id: str, token: str | None) -> None:
        self.check(run_id, token)
        watch = self.watches.get(run_id)
        if watch is None or watch.done or watch.task is None:
            raise RunConflictError(
                run_id, "the run is not going in this worker; only a going run can be cancelled"
            )
        watch.task.cancel()

    def check(self, run_id: str, token: str | None) -> None:
        """Raise ``RunNotFoundError`` unless ``token`` started ``run_id`` (someone else's run is
        reported as missing, not as forbidden)."""
        watch = self.watches.get(run_id)
        found = watch.tag if watch is not None else self.store.load(run_id).row.tag or ""
        if found != tag_of(token):
            raise RunNotFoundError(run_id, "no run with this id for this token")

    def state(self, run_id: str, token: str | None) -> dict[str, Any]:
        """The run's status, pending calls and result, as the store has them."""
        self.check(run_id, token)
        try:
            stored = self.store.load(run_id)
        except RunNotFoundError:  # started here a moment ago, not written yet
            return {"run_id": run_id, "status": "running", "pending": [], "result": None}
        status = stored.row.status
        pending = [{"call_id": p.call_id, "name": p.name, "arguments": p.arguments, "why": p.why}
                   for p in stored.pending]  # fmt: skip
        return {"run_id": run_id, "status": status, "steps": stored.row.steps, "pending": pending,
                "result": stored.result if status in ENDED or status == "paused" else None}  # fmt: skip

    async def follow(
        self, run_id: str, token: str | None, after: int
    ) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """The run's events after number ``after`` (numbered from 1), then each new one until it ends."""
        self.check(run_id, token)
        watch = self.watches.get(run_id)
        if watch is None:
            raise RunConflictError(run_id, "the run's events are kept by the worker that drives it; "
                                           f"read its state at /runs/{run_id}")  # fmt: skip
        seen = after
        while True:
            while seen < len(watch.events):
                seen += 1
                yield seen, watch.events[seen - 1]
            if watch.done:
                return
            await watch.changed.wait()

    def _forget(self) -> None:
        ended = [k for k, w in self.watches.items() if w.done]
        for key in ended[: max(0, len(ended) - KEEP)]:
            del self.watches[key]

    async def close(self) -> None:
        for watch in self.watches.values():
            if watch.task is not None and not watch.done:
                watch.task.cancel()
        await asyncio.gather(*(w.task for w in self.watches.values() if w.task), return_exceptions=True)
