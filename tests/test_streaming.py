"""Watching a run as a stream of events: the same loop, the same transcript, the same trace."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop, RunResult, tool
from minloop.layers.streaming import (
    ArgumentsDelta,
    RunEnd,
    StepEnd,
    StreamEvent,
    TextDelta,
    ToolCallFinished,
    ToolCallResult,
    ToolCallStarted,
)
from minloop.testing import FunctionModel, RecordingSink, ScriptedModel, call, failing_model, reply
from minloop.trace.sqlite import SQLiteSink, TraceStore

from .conftest import content, masked


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def script(chunk_size: int = 4) -> ScriptedModel:
    return ScriptedModel(
        [reply("Adding.", call("add", {"a": 2, "b": 3})), "2 + 3 = 5, 先生。"], chunk_size=chunk_size
    )


async def collect(loop: Loop, prompt: str = "What is 2 + 3?") -> tuple[list[StreamEvent], RunResult]:
    async with loop.stream(prompt) as events:
        seen = [e async for e in events]
    assert events.result is not None
    return seen, events.result


def shown(events: list[StreamEvent]) -> list[tuple[Any, ...]]:
    """Events with their payloads, minus what varies between runs (latencies, trace ids)."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        match e:
            case TextDelta(text, step):
                out.append(("text", step, text))
            case ToolCallStarted(index, id, name, step):
                out.append(("start", step, index, id, name))
            case ArgumentsDelta(index, text, step):
                out.append(("args", step, index, text))
            case ToolCallFinished(c, step):
                out.append(("call", step, c.id, c.name, c.arguments))
            case ToolCallResult(r, step):
                out.append(("result", step, r.call_id, json.loads(r.content).get("result")))
            case StepEnd(record, step):
                out.append(("step", step, record.decision))
            case RunEnd(result, step):
                out.append(("end", step, result.status))
    return out


def test_a_streamed_run_yields_every_event_in_order_and_the_same_transcript() -> None:
    events, result = asyncio.run(collect(Loop(script(), [add])))
    assert shown(events) == [
        ("text", 1, "Addi"),
        ("text", 1, "ng."),
        ("start", 1, 0, "call_1_1", "add"),
        ("args", 1, 0, '{"a"'),
        ("args", 1, 0, ": 2,"),
        ("args", 1, 0, ' "b"'),
        ("args", 1, 0, ": 3}"),
        ("call", 1, "call_1_1", "add", '{"a": 2, "b": 3}'),
        ("result", 1, "call_1_1", 5),
        ("step", 1, "tool_calls"),
        ("text", 2, "2 + "),
        ("text", 2, "3 = "),
        ("text", 2, "5, 先"),
        ("text", 2, "生。"),
        ("step", 2, "answer"),
        ("end", 2, "success"),
    ]
    assert isinstance(events[-1], RunEnd) and events[-1].result is result
    assert [e.record for e in events if isinstance(e, StepEnd)] == list(result.steps)
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "What is 2 + 3?"},
        {
            "role": "assistant",
            "content": "Adding.",
            "tool_calls": [
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_1", "name": "add", "content": content(result=5)},
        {"role": "assistant", "content": "2 + 3 = 5, 先生。"},
    ]


def trace_of(sink: RecordingSink) -> list[tuple[str, int, dict[str, Any]]]:
    varying = {"latency", "model_latency", "tool_latency", "duration", "time"}
    out = []
    for e in sink.events:
        data = {k: v for k, v in e.data.items() if k not in varying}
        out.append((e.kind, e.step, json.loads(json.dumps(data, default=str).replace(e.trace_id, "<tid>"))))
    return out


def test_the_trace_is_the_same_whether_or_not_the_run_was_streamed() -> None:
    plain, streamed = RecordingSink(), RecordingSink()
    ran = Loop(script(), [add], sinks=[plain]).run_sync("What is 2 + 3?")
    _, watched = asyncio.run(collect(Loop(script(), [add], sinks=[streamed])))
    assert trace_of(streamed) == trace_of(plain)
    assert masked(watched.messages, watched.trace_id) == masked(ran.messages, ran.trace_id)


def test_a_model_that_cannot_stream_is_passed_on_whole() -> None:
    class Plain:
        name = "plain"

        def __init__(self) -> None:
            self.inner = script()

        async def call(self, request: Any) -> Any:
            return await self.inner.call(request)

    events, result = asyncio.run(collect(Loop(Plain(), [add])))
    assert shown(events)[:4] == [
        ("text", 1, "Adding."),
        ("start", 1, 0, "call_1_1", "add"),
        ("args", 1, 0, '{"a": 2, "b": 3}'),
        ("call", 1, "call_1_1", "add", '{"a": 2, "b": 3}'),
    ]
    assert shown(events)[-3:] == [
        ("text", 2, "2 + 3 = 5, 先生。"),
        ("step", 2, "answer"),
        ("end", 2, "success"),
    ]
    assert result.status == "success"


def test_a_function_model_streams_in_chunks_and_a_failing_model_ends_the_stream() -> None:
    events, _ = asyncio.run(collect(Loop(FunctionModel(lambda r: "Bonjour !", chunk_size=3))))
    assert shown(events) == [
        ("text", 1, "Bon"),
        ("text", 1, "jou"),
        ("text", 1, "r !"),
        ("step", 1, "answer"),
        ("end", 1, "success"),
    ]
    events, result = asyncio.run(collect(Loop(failing_model())))
    assert shown(events) == [("end", 0, "model_error")]
    assert result.error == "ModelError: upstream down"


def leave_mid_answer(loop: Loop, how: str) -> tuple[RunResult | None, list[StreamEvent]]:
    """Stream "1 + 1?" and leave at the first piece of the answer: ``break`` out of the reading, or
    ``cancel`` the reader while the model is still writing."""
    seen: list[StreamEvent] = []
    writing = asyncio.Event()

    async def read(stream: Any) -> None:
        async for event in stream:
            seen.append(event)
            if isinstance(event, TextDelta) and how == "break":
                break
            if isinstance(event, TextDelta):
                writing.set()
                await asyncio.Event().wait()  # the reader waits until it is cancelled

    async def main() -> RunResult | None:
        async with loop.stream("1 + 1?") as stream:
            reader = asyncio.create_task(read(stream))
            if how == "cancel":
                await writing.wait()  # the model is still writing its answer
                reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        return stream.result

    return asyncio.run(main()), seen


@pytest.mark.parametrize("how", ["break", "cancel"])
def test_a_reader_that_leaves_mid_answer_cancels_the_run_and_the_trace_is_kept(
    how: str, tmp_path: Path
) -> None:
    sink, store = RecordingSink(), SQLiteSink(tmp_path / "t.db")
    loop = Loop(
        ScriptedModel(
            [reply(None, call("add", {"a": 1, "b": 1})), "One and one make two, as the tool said."],
            chunk_size=2,
        ),
        [add],
        sinks=[sink, store],
    )
    result, seen = leave_mid_answer(loop, how)
    store.close()
    assert result is not None and result.status == "cancelled"
    assert seen[-1] == TextDelta("On", 2)
    assert [s.decision for s in result.steps] == ["tool_calls"]  # the step in progress is not recorded
    assert masked(result.messages, result.trace_id)[1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 1}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_1", "name": "add", "content": content(result=2)},
    ]
    assert [k for k in sink.kinds() if k[0] in ("step_end", "run_end")] == [("step_end", 1), ("run_end", 1)]
    assert sink.events[-1].data["status"] == "cancelled"
    trace = TraceStore(tmp_path / "t.db").trace(result.trace_id)
    assert trace.end is not None and trace.end["status"] == "cancelled"
    # the step in progress shows as started, with no reply and not complete
    assert [(s.index, s.complete, s.response) for s in trace.steps] == [
        (1, True, result.steps[0].message),
        (2, False, None),
    ]


def test_a_developer_error_in_the_run_reaches_the_reader() -> None:
    def broken(request: Any) -> Any:
        raise RuntimeError("bug in the model adapter")

    async def main() -> None:
        async with Loop(FunctionModel(broken)).stream("hi") as events:
            async for _ in events:
                pass

    with pytest.raises(RuntimeError, match="bug in the model adapter"):
        asyncio.run(main())


def test_a_stream_left_unread_ends_the_run_as_cancelled() -> None:
    sink = RecordingSink()

    async def main() -> RunResult | None:
        async with Loop(script(), [add], sinks=[sink]).stream("What is 2 + 3?") as events:
            pass
        return events.result

    result = asyncio.run(main())
    assert result is not None and (result.status, result.steps) == ("cancelled", ())
    assert sink.kinds() == [("run_start", 0), ("run_end", 0)]


def test_a_run_cancelled_while_it_waits_to_hand_over_a_step_still_ends_as_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import minloop.layers.streaming

    monkeypatch.setattr(minloop.layers.streaming, "BUFFER", 1)
    sink = RecordingSink()
    blank = FunctionModel(lambda r: {"content": None})  # no deltas: a step hands over only its StepEnd

    async def main() -> RunResult | None:
        async with Loop(blank, sinks=[sink], max_steps=5).stream("hi") as stream:
            events = stream.__aiter__()  # starts the run; nothing is read
            await asyncio.sleep(0.05)  # step 1's StepEnd fills the buffer, step 2's waits
            assert len(stream.run.steps) == 2 and stream.result is None
            await events.aclose()
        return stream.result

    result = asyncio.run(main())
    assert result is not None and result.status == "cancelled"
    assert [s.decision for s in result.steps] == ["blank", "blank"]
    assert sink.kinds()[-2:] == [("step_end", 2), ("run_end", 2)]
