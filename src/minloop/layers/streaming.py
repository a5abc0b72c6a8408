"""Watching a run as it happens: ``loop.stream(prompt)`` yields typed events from the first token.

A model may offer ``stream(request)``, an async iterator of deltas (``TextDelta``,
``ToolCallStarted``, ``ArgumentsDelta``) ending with the whole ``ModelResponse``. While someone
listens, the run's model calls consume that stream and pass each delta on, numbered with its
step; a model without ``stream`` is called as usual and its reply passed on whole. Either way
the loop builds the same ``ModelResponse``, so the step, the transcript and the trace are the
same whether or not a run was streamed. ``Streaming`` is the layer that does this for one run.

Events, in order within a step: text and call deltas while the model writes,
``ToolCallFinished`` for each complete call, ``ToolCallResult`` for each result, ``StepEnd``;
after the last step ``RunEnd`` with the ``RunResult``. Leaving the ``async with`` block (or
cancelling the task that reads the events) before ``RunEnd`` cancels the run: its status is
``cancelled`` and the trace keeps every completed step.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..decision import CallTools, Decision, not_an_answer
from ..driver import LoopRun
from ..exceptions import MinloopError, ModelError
from ..execute import ToolResult
from ..layer import Layer
from ..loop import BaseLoop
from ..messages import Message, ToolCall
from ..models.base import (
    ArgumentsDelta,
    Model,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    TextDelta,
    ToolCallStarted,
    deltas_of,
)
from ..result import RunResult, Step
from ..state import Outcome, Reply, RunState
from ..textcalls import may_become_call, read_calls

__all__ = [
    "ArgumentsDelta",
    "Listener",
    "LoopStream",
    "ModelDelta",
    "RunEnd",
    "StepEnd",
    "StreamEvent",
    "Streaming",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallResult",
    "ToolCallStarted",
    "deltas_of",
    "stream_reply",
]


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A complete call, as the loop is about to execute it."""

    call: ToolCall
    step: int = 0


@dataclass(frozen=True, slots=True)
class ToolCallResult:
    """The result of one call, as the model will read it."""

    result: ToolResult
    step: int = 0


@dataclass(frozen=True, slots=True)
class StepEnd:
    """A step was recorded (``record`` is the same ``Step`` that ``RunResult.steps`` holds)."""

    record: Step
    step: int = 0


@dataclass(frozen=True, slots=True)
class RunEnd:
    """The run ended; the last event of a stream."""

    result: RunResult
    step: int = 0


StreamEvent: TypeAlias = (
    TextDelta | ToolCallStarted | ArgumentsDelta | ToolCallFinished | ToolCallResult | StepEnd | RunEnd
)
Listener: TypeAlias = Callable[[StreamEvent], Awaitable[None]]


async def stream_reply(
    model: Model, request: ModelRequest, publish: Listener, step: int, text_calls: bool = True
) -> ModelResponse:
    """One model call while someone listens: its deltas go to ``publish`` as they arrive.

    A model without ``stream`` is called as usual and its reply published whole; text or calls a
    stream did not announce (an embedded model's calls, say) are published from the reply. With
    ``text_calls``, text that may still be a tool call written as text (``minloop.textcalls``) is
    held back until the reply is whole: a call is then published as a call, never as text, and
    text that is neither a call to run nor an answer (``decision.not_an_answer``) is not published.
    """
    names = _names(request) if text_calls else set()
    stream = getattr(model, "stream", None)
    if stream is None:
        response, announced, wrote = await model.call(request), frozenset[int](), ""
    else:
        response, announced, wrote = await _consume(stream(request), publish, step, model.name, names)
    message = response.message
    text = message.get("content")
    if names and not message.get("tool_calls") and isinstance(text, str):
        found = read_calls(text, names) if request.tool_choice != "none" else None
        if found is not None:
            message = {"role": "assistant", "content": found.text, "tool_calls": found.wire(f"call_s{step}")}
        elif not_an_answer(text, names, request.messages):  # not run, not the answer: not shown
            message = {**message, "content": None}
    for delta in deltas_of(
        {**message, "content": _unpublished(message.get("content"), wrote)}, skip=announced
    ):
        await publish(_numbered(delta, step))
    return response


def _unpublished(content: Any, wrote: str) -> str | None:
    if not wrote or not isinstance(content, str):
        return content if isinstance(content, str) else None
    for published in (wrote, wrote.rstrip()):
        if content.startswith(published):
            return content[len(published) :]
    return None


def _names(request: ModelRequest) -> set[str]:
    return {str(t.get("function", {}).get("name")) for t in request.tools or () if isinstance(t, dict)}


def _numbered(delta: ModelDelta, step: int) -> ModelDelta:
    if isinstance(delta, TextDelta):
        return TextDelta(delta.text, step)
    if isinstance(delta, ArgumentsDelta):
        return ArgumentsDelta(delta.index, delta.text, step)
    return ToolCallStarted(delta.index, delta.id, delta.name, step)


async def _consume(
    parts: AsyncIterator[ModelDelta | ModelResponse], publish: Listener, step: int, name: str, names: set[str]
) -> tuple[ModelResponse, frozenset[int], str]:
    """Pass the stream on; returns the reply, the calls announced and the text published."""
    response: ModelResponse | None = None
    announced: set[int] = set()
    text, wrote = "", ""
    try:
        async for part in parts:
            if isinstance(part, ModelResponse):
                response = part
                continue
            if isinstance(part, TextDelta):
                text += part.text
                if names and may_become_call(text, names):
                    continue
                part, wrote = TextDelta(text[len(wrote) :]), text
            elif isinstance(part, ToolCallStarted):
                announced.add(part.index)
                if len(text) > len(wrote):  # text held back is not a call: the model calls
                    await publish(TextDelta(text[len(wrote) :], step))
                    wrote = text
            await publish(_numbered(part, step))
    finally:
        close = getattr(parts, "aclose", None)
        if close is not None:
            await close()
    if response is None:
        raise ModelError(f"{name}: the stream ended without a complete reply")
    return response, frozenset(announced), wrote


class StreamedModel:
    """A run's model while someone listens: each call is streamed to ``publish``."""

    def __init__(self, model: Model, publish: Listener, run: RunState) -> None:
        self.model = model
        self.publish = publish
        self.run = run
        self.name = model.name

    async def call(self, request: ModelRequest) -> ModelResponse:
        run = self.run
        return await stream_reply(self.model, request, self.publish, run.index, run.controls.text_calls)

    def __getattr__(self, name: str) -> Any:  # count_tokens, context_window, ... of the model
        return getattr(self.model, name)


class Streaming(Layer):
    """Publishes one run's events to ``publish`` as they happen (made per run by ``LoopStream``)."""

    def __init__(self, publish: Listener) -> None:
        self.publish = publish

    def start(self, run: RunState) -> None:
        run.model = StreamedModel(run.model, self.publish, run)  # type: ignore[assignment]

    async def after_model(self, run: RunState, reply: Reply, decision: Decision) -> Decision:
        if isinstance(decision, CallTools):
            for c in decision.calls:
                await self.publish(ToolCallFinished(c, run.index))
        return decision

    async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
        for r in step.results:
            await self.publish(ToolCallResult(r, step.index))
        return outcome


BUFFER = 64  # events a run may get ahead of its reader


@dataclass(frozen=True, slots=True)
class _Failed:
    error: BaseException


class _Channel:
    """Events handed from the run's task to its reader, at most ``size`` waiting."""

    def __init__(self, size: int) -> None:
        self.items: deque[StreamEvent | _Failed] = deque()
        self.size = size
        self.reader: asyncio.Future[None] | None = None
        self.writer: asyncio.Future[None] | None = None

    async def put(self, item: StreamEvent | _Failed) -> None:
        while len(self.items) >= self.size:
            self.writer = asyncio.get_running_loop().create_future()
            await self.writer
        self.items.append(item)
        if self.reader is not None and not self.reader.done():
            self.reader.set_result(None)

    async def get(self) -> StreamEvent | _Failed:
        while not self.items:
            self.reader = asyncio.get_running_loop().create_future()
            await self.reader
        if self.writer is not None and not self.writer.done():
            self.writer.set_result(None)
        return self.items.popleft()


class LoopStream:
    """What ``loop.stream(prompt)`` returns: ``async with loop.stream(...) as events:
    async for event in events: ...``.

    The run is driven by a task of its own, at most ``BUFFER`` events ahead of the reader.
    Leaving the ``async with`` block, ``aclose()``, or cancelling the reading task before
    ``RunEnd`` cancels the run. ``result`` holds the ``RunResult`` once the run ended; ``run`` is the
    underlying ``LoopRun`` (its ``messages`` are the live transcript).
    """

    def __init__(
        self, start: BaseLoop | Callable[[list[Layer]], LoopRun], prompt: str | Sequence[Message] = ""
    ) -> None:
        self._queue = _Channel(BUFFER)
        self._task: asyncio.Task[None] | None = None
        layers: list[Layer] = [Streaming(self._queue.put)]
        self.run: LoopRun = (
            start.iter(prompt, layers=layers) if isinstance(start, BaseLoop) else start(layers)
        )

    @property
    def trace_id(self) -> str:
        return self.run.trace_id

    @property
    def result(self) -> RunResult | None:
        return self.run.result

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        if self._task is not None:
            raise MinloopError("a LoopStream can be read only once")
        self._task = asyncio.create_task(self._drive())
        return self._events()

    async def _events(self) -> AsyncIterator[StreamEvent]:
        try:
            while True:
                event = await self._queue.get()
                if isinstance(event, _Failed):
                    raise event.error
                yield event
                if isinstance(event, RunEnd):
                    return
        finally:
            self._stop()

    async def _drive(self) -> None:
        try:
            async for step in self.run:
                await self._queue.put(StepEnd(step, step.index))
            assert self.run.result is not None
            await self._queue.put(RunEnd(self.run.result, len(self.run.state.steps)))
        except asyncio.CancelledError:
            self.run.cancel()  # cancelled between steps: the run has not ended yet
            raise
        except Exception as exc:  # a developer's error: the reader raises it
            await self._queue.put(_Failed(exc))

    def _stop(self) -> None:
        # Once only: a second cancel would interrupt the first one's clean-up (closing the
        # model's HTTP stream), and leaving the block also closes the event iterator.
        if self._task is not None and not self._task.done() and not self._task.cancelling():
            self._task.cancel()

    async def aclose(self) -> None:
        """Cancel the run if it is still going, and wait until it has ended."""
        self._stop()
        if self._task is not None:
            await asyncio.wait([self._task])
        else:  # never read: end the run that was started
            self.run.cancel()

    async def __aenter__(self) -> LoopStream:
        return self

    async def __aexit__(self, *_: Any) -> None:
        await self.aclose()
