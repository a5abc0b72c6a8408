"""The typed events of ``loop.stream`` as JSON documents (``{"type": "TextDelta", ...}``), and
``EventStream``, the response that sends them as server-sent events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping
from dataclasses import fields
from typing import Any

from pydantic_core import to_jsonable_python
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..layers.streaming import RunEnd, StepEnd, StreamEvent
from ..result import step_dict

__all__ = ["EventStream", "event_dict"]


def event_dict(event: StreamEvent) -> dict[str, Any]:
    """One event as JSON: its class name as ``type``, then its fields (a step or a whole result
    in the same shape as ``RunResult.to_dict``)."""
    if isinstance(event, RunEnd):
        return {"type": "RunEnd", "step": event.step, "result": event.result.to_dict()}
    if isinstance(event, StepEnd):
        return {"type": "StepEnd", "step": event.step, "record": step_dict(event.record)}
    body = {f.name: to_jsonable_python(getattr(event, f.name), fallback=str) for f in fields(event)}
    return {"type": type(event).__name__, **body}


class EventStream(Response):
    """Server-sent events from ``batches`` of (number, type, JSON): one write a batch, the body
    ending with the batch that holds ``last`` (the run's ``RunEnd``). A client that leaves
    stops the stream."""

    media_type = "text/event-stream"

    def __init__(self, batches: AsyncGenerator[list[tuple[int, str, str]], None], last: frozenset[str],
                 headers: Mapping[str, str]) -> None:  # fmt: skip
        self.batches, self.last, self.status_code, self.background = batches, last, 200, None
        self.init_headers({"Cache-Control": "no-store", **headers})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        here = asyncio.current_task()
        assert here is not None

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            here.cancel()

        watcher = asyncio.create_task(watch())
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            more = True
            async for batch in self.batches:
                text = "".join(f"id: {n}\nevent: {kind}\ndata: {data}\n\n" for n, kind, data in batch)
                more = batch[-1][1] not in self.last
                await send({"type": "http.response.body", "body": text.encode(), "more_body": more})
            if more:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            if not watcher.done():
                raise  # cancelled from elsewhere, not by the client leaving
            here.uncancel()
        finally:
            watcher.cancel()
            await self.batches.aclose()
