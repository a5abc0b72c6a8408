"""A reply that runs away is stopped, over HTTP (a real server on 127.0.0.1) streamed and not:
one that repeats itself is cut where the repeat began, one past the length cap is a blank step
the model is told about; and a call the server could not parse (Ollama's HTTP 500) is
recovered from the error's text, or asked for once more."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from minloop import Loop, RunResult, TextDelta, tool
from minloop.decision import DECAY_TEXT, TOO_LONG, TOO_LONG_NOTE
from minloop.models.base import ModelRequest, ModelResponse
from minloop.models.openai import OpenAIModel
from minloop.models.runaway import Repetition, Runaway
from minloop.testing import ChatServer, Fault, completion
from minloop.testing.sse import sse_chunks

SENTENCE = "The sea is calm and blue today. "
LONG = " ".join(f"word{i}" for i in range(400))  # ~600 tokens by the client's count, no repeat


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The current weather in a city."""
    return {"city": city, "sky": "cloudy"}


def model_for(server: ChatServer, **options: Any) -> OpenAIModel:
    return OpenAIModel("m", base_url=server.base_url, api_key="k", backoff=0.01, **options)


def ollama_500(raw: str) -> Fault:
    """Ollama's answer on its OpenAI-compatible endpoint when it cannot parse the model's call."""
    message = f"error parsing tool call: raw='{raw}', err=invalid character 'x' after top-level value"
    error = {"error": {"message": message, "type": "api_error", "param": None, "code": None}}
    return Fault(500, json.dumps(error))


def stopped_by(pieces: list[str]) -> str | None:
    watch = Repetition()
    return watch.kept if any(watch(p) for p in pieces) else None


def test_the_watch_stops_a_sentence_or_a_run_of_sentences_written_again_right_after_itself() -> None:
    assert stopped_by(["Hello. ", SENTENCE, SENTENCE, "The"]) == "Hello. The sea is calm and blue today."
    block = "It is 18 degrees. The sky is cloudy today. "
    assert stopped_by([block, block, block]) == block.strip()
    calls = '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    assert stopped_by([calls, calls]) == calls.strip()
    assert (
        stopped_by(["今天的海面非常平静，天空也是一片湛蓝的颜色。"] * 2)
        == "今天的海面非常平静，天空也是一片湛蓝的颜色。"
    )
    # a sentence written again further on (the same line in two functions), a refrain: no loop
    code = (
        "class A:\n    def __init__(self) -> None:\n        pass\nclass B:\n    def __init__(self) -> None:\n"
    )
    assert stopped_by([code, "        pass\n"]) is None
    assert stopped_by(["Row, row. ", "Row, row. ", "Row, row. "]) is None


def test_the_watch_stops_a_reply_past_its_cap_counting_every_part() -> None:
    watch = Runaway(max_tokens=3)
    assert [watch.tokens() for _ in range(4)] == [None, None, None, "length"]
    assert Runaway(None).tokens(10**6) is None


def run(server: ChatServer, prompt: str, *, stream: bool, **options: Any) -> tuple[RunResult, str]:
    async def go() -> tuple[RunResult, str]:
        loop = Loop(model_for(server, **options), [get_weather])
        if not stream:
            return await loop.run(prompt), ""
        async with loop.stream(prompt) as events:
            shown = "".join([e.text async for e in events if isinstance(e, TextDelta)])
        assert events.result is not None
        return events.result, shown

    return asyncio.run(go())


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_that_repeats_itself_is_cut_where_the_repeat_began(stream: bool) -> None:
    with ChatServer([{"content": "Calm seas. " + SENTENCE * 40}]) as server:
        result, _ = run(server, "How is the sea?", stream=stream)
    assert (result.status, result.output) == ("success", "Calm seas. The sea is calm and blue today.")
    assert result.messages[-1] == {
        "role": "assistant",
        "content": "Calm seas. The sea is calm and blue today.",
    }


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_past_the_cap_is_a_blank_step_and_the_model_is_told(stream: bool) -> None:
    # the server ignores the cap it is sent: the client holds it (a stream is closed; a whole
    # reply is measured by the tokens the server counted)
    long = completion({"content": LONG}, completion_tokens=600)
    with ChatServer([long, {"content": "Short answer."}], chunk_size=8) as server:
        result, shown = run(server, "Tell me everything.", stream=stream, max_tokens=100)
        first, second = server.requests
    assert first["max_tokens"] == 100
    assert (result.status, result.output) == ("success", "Short answer.")
    assert [(s.decision, s.valid) for s in result.steps] == [("blank", False), ("answer", True)]
    used = result.steps[0].usage.completion_tokens
    assert 100 < used < 110 if stream else used == 600  # a stream was stopped just past the cap
    if stream:
        assert len(result.steps[0].message["content"]) < len(LONG) / 2
        assert shown.startswith("word0 word1") and shown.endswith("Short answer.")
    # not kept in the transcript; the next call, tools off, says why
    assert result.messages == [
        {"role": "user", "content": "Tell me everything."},
        {"role": "assistant", "content": "Short answer."},
    ]
    assert "tools" not in second
    assert second["messages"][-1] == {"role": "system", "content": f"{TOO_LONG_NOTE}\n\n{DECAY_TEXT}"}


def test_a_reply_the_server_cut_at_its_limit_is_stopped_too() -> None:
    cut = completion({"content": "Once upon a time"})
    cut["choices"][0]["finish_reason"] = "length"
    with ChatServer([cut, {"content": "The end."}]) as server:
        result, _ = run(server, "Tell me a story.", stream=False)
    assert result.output == "The end." and [s.decision for s in result.steps] == ["blank", "answer"]
    request = ModelRequest([{"role": "user", "content": "hi"}])
    chunks = sse_chunks({"content": "Once upon a time"})
    chunks[-2]["choices"][0]["finish_reason"] = "length"
    with ChatServer([cut, chunks]) as server:
        model = model_for(server)
        assert asyncio.run(model.call(request)).stopped == "length"
        streamed = asyncio.run(_last(model.stream(request)))
    assert streamed.stopped == "length" and streamed.message["content"] == "Once upon a time"
    assert TOO_LONG == "a reply stopped at the length cap"


async def _last(parts: Any) -> ModelResponse:
    items = [p async for p in parts]
    assert isinstance(items[-1], ModelResponse)
    return items[-1]


def test_the_cap_is_sent_under_the_name_the_endpoint_takes_or_the_callers_own() -> None:
    request = ModelRequest([{"role": "user", "content": "hi"}])
    assert OpenAIModel("m", base_url="http://127.0.0.1:8080/v1").payload(request)["max_tokens"] == 4096
    assert OpenAIModel("gpt-5").payload(request)["max_completion_tokens"] == 4096
    own = OpenAIModel("m", base_url="http://127.0.0.1:8080/v1", extra_body={"max_tokens": 200})
    assert own.payload(request)["max_tokens"] == 200
    none = OpenAIModel("m", base_url="http://127.0.0.1:8080/v1", max_tokens=None).payload(request)
    assert not {"max_tokens", "max_completion_tokens"} & set(none)


@pytest.mark.parametrize("stream", [False, True])
def test_a_call_the_server_could_not_parse_is_recovered_from_its_error(stream: bool) -> None:
    script = [ollama_500('[get_weather(city="Paris")]'), {"content": "Cloudy in Paris."}]
    with ChatServer(script) as server:
        result, _ = run(server, "Weather in Paris?", stream=stream)
        assert len(server.requests) == 2  # not asked again: the call was in the error
    assert (result.status, result.output) == ("success", "Cloudy in Paris.")
    assert [(s.decision, [c.name for c in s.tool_calls]) for s in result.steps] == [
        ("tool_calls", ["get_weather"]),
        ("answer", []),
    ]
    assert json.loads(result.messages[2]["content"]) == {
        "city": "Paris",
        "sky": "cloudy",
        "trace_id": result.trace_id,
    }


@pytest.mark.parametrize("stream", [False, True])
def test_a_call_that_cannot_be_recovered_is_asked_for_once_more(stream: bool) -> None:
    arguments_only = ollama_500('{"city": "Paris"}x')  # what gpt-oss gives: no tool's name in it
    with ChatServer([arguments_only, {"content": "Cloudy in Paris."}]) as server:
        result, _ = run(server, "Weather in Paris?", stream=stream)
        assert len(server.requests) == 2
    assert result.output == "Cloudy in Paris."
    with ChatServer([arguments_only, arguments_only]) as server:
        result, _ = run(server, "Weather in Paris?", stream=stream)
        assert len(server.requests) == 2  # once more, not max_retries times
    assert result.status == "model_error"
    assert (
        result.error is not None
        and "the server could not parse the model's tool call, asked twice" in result.error
    )


def test_a_parse_failure_sent_mid_stream_is_recovered_too() -> None:
    error = {
        "error": {"message": "error parsing tool call: raw='call:get_weather{city:<escape>Paris<escape>}'"}
    }
    chunks = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}, error]
    with ChatServer([chunks, {"content": "Cloudy in Paris."}]) as server:
        result, _ = run(server, "Weather in Paris?", stream=True)
    assert result.output == "Cloudy in Paris." and [c.name for c in result.steps[0].tool_calls] == [
        "get_weather"
    ]


def test_a_call_the_server_could_not_parse_is_recovered_through_the_openai_sdk_too() -> None:
    import openai

    from minloop.models.openai import OpenAIClientModel

    script = [ollama_500("<|python_start|>[get_weather(city='Paris')]<|python_end|>"), {"content": "Cloudy."}]
    with ChatServer(script) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        result = Loop(OpenAIClientModel(client, "m"), [get_weather]).run_sync("Weather in Paris?")
    assert (result.status, result.output) == ("success", "Cloudy.")
    assert [c.name for c in result.steps[0].tool_calls] == ["get_weather"]
