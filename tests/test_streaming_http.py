"""Streamed Chat Completions over HTTP against a real SSE server on 127.0.0.1: fragments put back
together, usage at the end, and every way a stream can break ending in a defined status."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from minloop import Loop, ModelError, ModelRequest, ModelResponse, RunResult, tool
from minloop.layers.streaming import ArgumentsDelta, ModelDelta, StreamEvent, TextDelta, ToolCallStarted
from minloop.models.openai import OpenAIClientModel, OpenAIModel
from minloop.models.sse import ChatStream
from minloop.testing import ChatServer, Fault, RecordingSink, call, reply
from minloop.testing.sse import chunk

from .conftest import content, masked


@tool
def get_weather(city: str) -> dict[str, object]:
    """Get current weather for a city."""
    return {"city": city, "temperature": 25}


def model_for(server: ChatServer, **kwargs: Any) -> OpenAIModel:
    return OpenAIModel("m", base_url=server.base_url, api_key="sk-test", backoff=0.01, **kwargs)


async def stream_once(model: Any) -> list[ModelDelta | ModelResponse]:
    return [part async for part in model.stream(ModelRequest([{"role": "user", "content": "hi"}]))]


def fragment(index: int, id: str | None = None, name: str | None = None, args: str | None = None) -> dict:
    fn = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    frag: dict[str, Any] = {"index": index, "function": fn}
    if id is not None:
        frag["id"] = id
    return chunk({"tool_calls": [frag]})


SPLIT = [
    chunk({"role": "assistant", "content": None}),
    fragment(0, id="call_", name="get_"),
    fragment(0, id="Xy9", name="weather", args=""),
    fragment(0, args='{"ci'),
    fragment(0, args='ty": "Pa'),
    fragment(0, args='ris"}'),
    chunk({}, "tool_calls"),
    chunk(None, usage={"prompt_tokens": 31, "completion_tokens": 9, "total_tokens": 40}),
]


def test_split_id_name_and_argument_fragments_make_one_call_with_the_usage_of_the_last_chunk() -> None:
    with ChatServer([SPLIT]) as server:
        parts = asyncio.run(stream_once(model_for(server)))
    assert parts == [
        ToolCallStarted(0, "call_Xy9", "get_weather"),
        ArgumentsDelta(0, '{"ci'),
        ArgumentsDelta(0, 'ty": "Pa'),
        ArgumentsDelta(0, 'ris"}'),
        ModelResponse(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_Xy9",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            usage=parts[-1].usage,  # type: ignore[union-attr]
        ),
    ]
    assert parts[-1].usage.prompt_tokens == 31 and parts[-1].usage.completion_tokens == 9  # type: ignore[union-attr]
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["stream_options"] == {"include_usage": True}


INTERLEAVED = [
    chunk({"role": "assistant", "content": "Checking both."}),
    fragment(0, id="call_a", name="get_weather", args=""),
    fragment(1, id="call_b", name="get_weather", args='{"city": '),
    fragment(0, args='{"city": "北'),
    fragment(1, args='"Oslo"}'),
    fragment(0, args='京"}'),
    chunk({}, "tool_calls"),
    chunk(None, usage={"prompt_tokens": 12, "completion_tokens": 20, "total_tokens": 32}),
]


def run_streamed(loop: Loop, prompt: str = "Weather?") -> tuple[list[StreamEvent], RunResult]:
    async def main() -> tuple[list[StreamEvent], RunResult]:
        async with loop.stream(prompt) as events:
            seen = [e async for e in events]
        assert events.result is not None
        return seen, events.result

    return asyncio.run(main())


def test_two_interleaved_calls_are_told_apart_by_index_and_run_in_order() -> None:
    with ChatServer([INTERLEAVED, {"content": "北京 25, Oslo 25."}]) as server:
        events, result = run_streamed(Loop(model_for(server), [get_weather]))
    deltas = [e for e in events if isinstance(e, TextDelta | ToolCallStarted | ArgumentsDelta)]
    assert deltas[:7] == [
        TextDelta("Checking both.", 1),
        ToolCallStarted(0, "call_a", "get_weather", 1),
        ToolCallStarted(1, "call_b", "get_weather", 1),
        ArgumentsDelta(1, '{"city": ', 1),
        ArgumentsDelta(0, '{"city": "北', 1),
        ArgumentsDelta(1, '"Oslo"}', 1),
        ArgumentsDelta(0, '京"}', 1),
    ]
    assert result.status == "success"
    assert result.steps[0].usage.total_tokens == 32
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "北京"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                },
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_a",
            "name": "get_weather",
            "content": content(city="北京", temperature=25),
        },
        {
            "role": "tool",
            "tool_call_id": "call_b",
            "name": "get_weather",
            "content": content(city="Oslo", temperature=25),
        },
        {"role": "assistant", "content": "北京 25, Oslo 25."},
    ]


def test_a_streamed_run_records_the_same_trace_as_a_plain_one() -> None:
    script = [reply(None, call("get_weather", {"city": "Paris"}, id="c1")), {"content": "Paris: 25."}]
    sinks = RecordingSink(), RecordingSink()
    with ChatServer(script) as a, ChatServer(script) as b:
        plain = Loop(model_for(a), [get_weather], sinks=[sinks[0]]).run_sync("Paris?")
        _, streamed = run_streamed(Loop(model_for(b), [get_weather], sinks=[sinks[1]]), "Paris?")
    assert masked(streamed.messages, streamed.trace_id) == masked(plain.messages, plain.trace_id)
    kinds = [[(e.kind, e.step) for e in s.events] for s in sinks]
    assert kinds[0] == kinds[1]
    responses = [[e.data["message"] for e in s.events if e.kind == "model_response"] for s in sinks]
    assert responses[0] == responses[1]
    assert [e.data["usage"] for e in sinks[1].events if e.kind == "model_response"] == [
        e.data["usage"] for e in sinks[0].events if e.kind == "model_response"
    ]


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        (Fault(stream="malformed"), "ModelError: malformed stream line from .*: 'this line is not an event'"),
        (Fault(stream="cut"), "ModelError: the stream from .* was cut after 8 characters and 0 call"),
        (Fault(stream="stall", delay=2.0), r"ModelError: the stream from .* stalled: no data for 0.3s"),
    ],
    ids=["malformed", "cut", "stall"],
)
def test_a_stream_broken_after_text_was_delivered_ends_in_model_error_without_a_retry(
    fault: Fault, cause: str
) -> None:
    sink = RecordingSink()
    with ChatServer([fault, {"content": "never asked"}]) as server:
        events, result = run_streamed(Loop(model_for(server, timeout=0.3), sinks=[sink]))
        assert len(server.requests) == 1  # text was delivered: no retry
    assert [type(e).__name__ for e in events] == ["TextDelta", "TextDelta", "RunEnd"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "This ans"
    assert result.status == "model_error" and result.steps == ()
    assert result.error is not None
    assert re.fullmatch(cause + ".*", result.error, re.DOTALL), result.error
    assert result.messages == [{"role": "user", "content": "Weather?"}]
    errors = [e.data.get("error") for e in sink.events if e.kind == "model_response"]
    assert len(errors) == 1 and errors[0] == result.error
    assert [k for k, _ in sink.kinds()][-1] == "run_end"


def test_a_stream_that_breaks_before_anything_was_delivered_is_retried() -> None:
    script = [Fault(stream="stall", delay=2.0, after=0), Fault(503), {"content": "Fine."}]
    with ChatServer(script) as server:
        events, result = run_streamed(Loop(model_for(server, timeout=0.3)))
        assert len(server.requests) == 3
    assert result.status == "success" and result.output == "Fine."
    assert [type(e).__name__ for e in events] == ["TextDelta", "TextDelta", "StepEnd", "RunEnd"]


def test_a_stream_that_ends_unfinished_or_sends_an_error_is_a_model_error() -> None:
    chat = ChatStream("srv")
    assert chat.feed(chunk({"content": "Half"})) == [TextDelta("Half")]
    with pytest.raises(ModelError, match="ended before the reply was complete"):
        chat.response()  # no finish_reason and no [DONE]
    with pytest.raises(ModelError, match="srv sent an error mid-stream: overloaded"):
        ChatStream("srv").feed(chunk(None, error={"message": "overloaded"}))
    with pytest.raises(ModelError, match="malformed tool-call fragment"):
        ChatStream("srv").feed(chunk({"tool_calls": [{"function": {"name": "x"}}]}))
    ignored = ChatStream("srv")
    assert [ignored.feed_line(line) for line in (": keep-alive", "event: message", "", "id: 4")] == [[]] * 4


def test_the_official_sdk_streams_through_the_same_reassembly() -> None:
    import openai  # installed by the dev extra: a missing one fails, not skips

    with ChatServer([INTERLEAVED, {"content": "Both 25."}]) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        events, result = run_streamed(Loop(OpenAIClientModel(client, "m"), [get_weather]))
        assert server.requests[0]["stream"] is True
    assert result.status == "success" and result.output == "Both 25."
    assert [(c.id, c.arguments) for c in result.steps[0].tool_calls] == [
        ("call_a", '{"city": "北京"}'),
        ("call_b", '{"city": "Oslo"}'),
    ]
    assert ToolCallStarted(1, "call_b", "get_weather", 1) in events
    assert result.steps[0].usage.total_tokens == 32


def test_the_cli_live_view_shows_the_answer_as_it_streams() -> None:
    from typer.testing import CliRunner

    from minloop.cli.app import app

    script = [
        reply("Let me compute.", call("calculator", {"expression": "6*7"}, id="c1")),
        {"content": "It is 42."},
    ]
    with ChatServer(script) as server:
        done = CliRunner().invoke(
            app, ["run", "6*7?", "--model", "gpt-x", "--base-url", server.base_url, "--no-trace"]
        )
        assert [r.get("stream") for r in server.requests] == [True, True]
    lines = done.output.splitlines()
    assert done.exit_code == 0
    assert lines[lines.index("  Let me compute.") + 1].startswith("step 1 tool_calls")
    assert "  It is 42." in lines and lines[lines.index("  It is 42.") + 1].startswith("step 2 answer")


def test_a_server_that_answers_a_streamed_request_with_plain_json_still_gives_its_reply() -> None:
    """Some servers ignore ``stream: true``: their whole JSON completion is the reply."""
    import json

    from minloop.testing import completion

    body = json.dumps(completion(reply("Plain and whole."), prompt_tokens=7, completion_tokens=3))
    with ChatServer([Fault(200, body=body)]) as server:
        model = OpenAIModel("m", base_url=server.base_url, max_retries=0)

        async def main() -> tuple[list[Any], RunResult | None]:
            async with Loop(model).stream("Hi") as events:
                kinds = [type(e).__name__ async for e in events]
            return kinds, events.result

        kinds, result = asyncio.run(main())
        assert server.requests[0]["stream"] is True
    assert result is not None and result.status == "success" and result.output == "Plain and whole."
    assert kinds == ["TextDelta", "StepEnd", "RunEnd"]
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (7, 3)
