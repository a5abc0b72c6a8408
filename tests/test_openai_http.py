"""The OpenAI-compatible model against a real Chat Completions server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import pytest

from minloop import Loop, ModelHTTPError, tool
from minloop.decision import CONTROL_TEXT, quoting
from minloop.models.openai import OpenAIClientModel, OpenAIModel
from minloop.testing import ChatServer, Fault, call, reply

from .conftest import content, masked


@tool
def get_weather(city: str) -> dict[str, object]:
    """Get current weather for a city."""
    return {"city": city, "condition": "Sunny", "temperature": 25}


def model_for(server: ChatServer, **kwargs: object) -> OpenAIModel:
    return OpenAIModel("loopback-model", base_url=server.base_url, api_key="sk-test", backoff=0.01, **kwargs)  # type: ignore[arg-type]


def test_wire_format_round_trip() -> None:
    script = [
        reply(None, call("get_weather", {"city": "Beijing"}, id="call_abc")),
        reply("Sunny in Beijing."),
    ]
    with ChatServer(script) as server:
        result = Loop(model_for(server), [get_weather]).run_sync("Weather in Beijing?")
    assert result.status == "success"
    first, second = server.requests
    assert first == {
        "model": "loopback-model",
        "messages": [{"role": "user", "content": "Weather in Beijing?"}],
        "tools": [get_weather.spec()],
        "tool_choice": "auto",
        "max_tokens": 4096,  # the default cap of one reply
    }
    assert masked(second["messages"], result.trace_id) == [
        {"role": "user", "content": "Weather in Beijing?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_abc",
            "name": "get_weather",
            "content": content(city="Beijing", condition="Sunny", temperature=25),
        },
        {
            "role": "system",
            "content": quoting(CONTROL_TEXT, [{"role": "user", "content": "Weather in Beijing?"}]),
        },
    ]
    assert server.headers[0]["Authorization"] == "Bearer sk-test"
    assert [s.usage.total_tokens for s in result.steps] == [15, 15]


def test_s8_server_returning_empty_tool_calls_list() -> None:
    with ChatServer([{"content": "Hello!", "tool_calls": []}]) as server:
        result = Loop(model_for(server), [get_weather]).run_sync("Hi")
    assert (result.status, result.output) == ("success", "Hello!")


def test_s2_server_returning_text_plus_tool_calls() -> None:
    script = [
        reply("Checking the weather...", call("get_weather", {"city": "Paris"}, id="c1")),
        reply("Sunny."),
    ]
    with ChatServer(script) as server:
        result = Loop(model_for(server), [get_weather]).run_sync("Paris?")
    assert [s.decision for s in result.steps] == ["tool_calls", "answer"]
    assert result.messages[1]["content"] == "Checking the weather..."


def test_malformed_arguments_go_back_to_the_model() -> None:
    script = [
        reply(None, call("get_weather", '{"city": Beij', id="c1")),
        reply(
            None,
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
            },
        ),
        reply("Sunny in Oslo."),
    ]
    with ChatServer(script) as server:
        result = Loop(model_for(server), [get_weather]).run_sync("Oslo?")
    assert result.status == "success"
    codes = [json.loads(m["content"]).get("code") for m in result.messages if m["role"] == "tool"]
    assert codes == ["ERR_TOOL_ARGS_INVALID", None]  # an object instead of a string is normalised
    assert result.messages[3]["tool_calls"][0]["function"]["arguments"] == '{"city": "Oslo"}'


def test_transient_errors_are_retried_honouring_retry_after() -> None:
    script = [Fault(429, headers={"Retry-After": "0"}), Fault(503), reply("ok")]
    with ChatServer(script) as server:
        result = Loop(model_for(server, max_retries=2), []).run_sync("hi")
    assert (result.status, result.output, len(server.requests)) == ("success", "ok", 3)


def test_errors_that_remain_end_the_run_with_model_error() -> None:
    with ChatServer([Fault(401, body='{"error": "bad key"}')]) as server:
        result = Loop(model_for(server), []).run_sync("hi")
    assert result.status == "model_error"
    assert result.error is not None and result.error.startswith("ModelHTTPError: HTTP 401")
    with ChatServer([Fault(200, body="{not json")]) as server:
        result = Loop(model_for(server, max_retries=0), []).run_sync("hi")
    assert result.status == "model_error" and "malformed Chat Completion" in (result.error or "")


def test_direct_call_raises_http_error() -> None:
    from minloop import ModelRequest

    with ChatServer([Fault(500), Fault(500)]) as server, pytest.raises(ModelHTTPError) as info:
        asyncio.run(model_for(server, max_retries=1).call(ModelRequest([{"role": "user", "content": "x"}])))
    assert info.value.status_code == 500


def test_key_comes_from_the_environment_and_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-secret-123")
    with ChatServer([reply("ok")]) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key_env="MY_KEY")
        Loop(model, []).run_sync("hi")
    assert server.headers[0]["Authorization"] == "Bearer sk-secret-123"
    assert "sk-secret" not in repr(model)


def test_openai_sdk_adapter() -> None:
    import openai  # installed by the dev extra: a missing one fails, not skips

    script = [reply(None, call("get_weather", {"city": "Rome"}, id="c1")), reply("Sunny in Rome.")]
    with ChatServer(script) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        result = Loop(OpenAIClientModel(client, "loopback-model"), [get_weather]).run_sync("Rome?")
    assert (result.status, result.output) == ("success", "Sunny in Rome.")
    assert server.requests[1]["messages"][2]["tool_call_id"] == "c1"
