"""Tool calls written as Python, in Llama's call markers and as FunctionGemma writes them: read
as calls to registered tools, and what only looks like them left an answer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from minloop import Loop, TextDelta, tool
from minloop.models.openai import OpenAIModel
from minloop.testing import ChatServer
from minloop.textcalls import may_become_call, read_calls, written_call

NAMES = ["get_weather", "add", "search"]


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The current weather in a city."""
    return {"city": city, "sky": "cloudy"}


def calls(text: str) -> list[tuple[str, dict[str, Any]]] | None:
    found = read_calls(text, NAMES)
    return None if found is None else [(c["name"], json.loads(c["arguments"])) for c in found.calls]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[get_weather(city="Paris")]', [("get_weather", {"city": "Paris"})]),
        ("get_weather(city='Paris')", [("get_weather", {"city": "Paris"})]),
        (
            '[get_weather(city="Paris"), add(a=1, b=2.5)]',
            [("get_weather", {"city": "Paris"}), ("add", {"a": 1, "b": 2.5})],
        ),
        (  # keyword arguments of every literal type, JSON's words or Python's
            "search(q='巴黎', n=-3, exact=True, lang=None, tags=['a', 2], where={'x': null, 'y': false})",
            [
                (
                    "search",
                    {
                        "q": "巴黎",
                        "n": -3,
                        "exact": True,
                        "lang": None,
                        "tags": ["a", 2],
                        "where": {"x": None, "y": False},
                    },
                )
            ],
        ),
        ("add()", [("add", {})]),
        ('<|python_start|>[get_weather(city="Paris")]<|python_end|>', [("get_weather", {"city": "Paris"})]),
        (
            '<|python_tag|>{"name": "add", "parameters": {"a": 1, "b": 2}}<|eom_id|>',
            [("add", {"a": 1, "b": 2})],
        ),
        (
            "<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>",
            [("get_weather", {"city": "Paris"})],
        ),
        (
            "<start_function_call>call:add{a:1,b:2}<end_function_call>"
            "<start_function_call>call:get_weather{city:<escape>Lyon, France<escape>}<end_function_call>",
            [("add", {"a": 1, "b": 2}), ("get_weather", {"city": "Lyon, France"})],
        ),
        (  # the markers dropped by the server, nested values
            "call:search{q:{terms:[<escape>a<escape>,<escape>b<escape>]},n:3,exact:true}",
            [("search", {"q": {"terms": ["a", "b"]}, "n": 3, "exact": True})],
        ),
        ("call:get_weather{city:Paris}", [("get_weather", {"city": "Paris"})]),
    ],
)
def test_each_shape_is_read_as_its_calls(text: str, expected: list[tuple[str, dict[str, Any]]]) -> None:
    assert calls(text) == expected
    assert written_call(text, NAMES)


def test_text_outside_the_markers_is_kept_as_the_calls_content() -> None:
    found = read_calls('Let me look.\n<|python_start|>[get_weather(city="Paris")]<|python_end|>', NAMES)
    assert found is not None and found.text == "Let me look."
    found = read_calls('我来查一下：\n[get_weather(city="巴黎")]', NAMES)
    assert (
        found is not None
        and found.text == "我来查一下："
        and json.loads(found.calls[0]["arguments"]) == {"city": "巴黎"}
    )


@pytest.mark.parametrize(
    "text",
    [
        '```python\nget_weather(city="Paris")\n```',  # a code sample
        '```\n[get_weather(city="Paris")]\n```',
        'You can call get_weather(city="Paris") to find out.',  # prose mentioning a call
        'get_weather(city="Paris") returns the weather in Paris.',
        "用 get_weather(city='巴黎') 可以查天气。",
        'For example:\n[get_weather(city="Paris")]',  # a lead-in that introduces an example
        '[unknown(city="Paris")]',  # a call to an unknown name
        "call:unknown{city:<escape>Paris<escape>}",
        "<|python_start|>print(1)<|python_end|>",
        'print(get_weather(city="Paris"))',  # code, not a call
        'get_weather("Paris")',  # a positional argument: not read
        "[1, 2, 3]",
        "add",
        "search results are below",
    ],
)
def test_near_misses_stay_answers(text: str) -> None:
    assert calls(text) is None
    assert not written_call(text, NAMES)


@pytest.mark.parametrize(
    "text",
    [
        '[get_weather(city="Par',
        'get_weather(city="Par',
        '<|python_start|>[get_weather(city="Paris"',
        "<start_function_call>call:get_weather{city:<escape>Par",
        '<|python_tag|>{"name": "get_weather", "param',
        "call:add{a:1",
        '[get_weather(city="Paris")]\n[add(a=1, b=2)]',  # a call, then more calls one per line
        "[get_weather(city=city)]",  # a name, not a literal
        '[get_weather(city="Paris"), "done"]',  # one item that is not a call
    ],
)
def test_a_call_in_these_shapes_cut_off_or_run_on_is_written_but_not_run(text: str) -> None:
    assert calls(text) is None and written_call(text, NAMES)


def test_a_stream_holds_back_text_that_may_become_a_call_in_these_shapes() -> None:
    held = ["get", "get_weather(", 'get_weather(city="Pa', "call", "call:get_weather{", "<|python_start|>"]
    assert all(may_become_call(text, NAMES) for text in held)
    shown = ["Getting", "get me", "The weather", "calling", "search results", "add 2 and 3"]
    assert not any(may_become_call(text, NAMES) for text in shown)


def test_a_python_call_from_a_server_runs_streamed_and_not() -> None:
    """Against a real HTTP server on 127.0.0.1: the call is run, never shown as text."""
    script = [{"content": '[get_weather(city="Paris")]'}, {"content": "Cloudy in Paris."}] * 2

    async def run() -> tuple[Any, Any, str]:
        with ChatServer(script) as server:
            model = OpenAIModel("m", base_url=server.base_url, api_key="k")
            whole = await Loop(model, [get_weather]).run("Weather in Paris?")
            async with Loop(model, [get_weather]).stream("Weather in Paris?") as events:
                shown = "".join([e.text async for e in events if isinstance(e, TextDelta)])
            return whole, events.result, shown

    whole, streamed, shown = asyncio.run(run())
    for result in (whole, streamed):
        assert result.status == "success" and result.output == "Cloudy in Paris."
        assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
        assert result.messages[1] == {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": result.messages[1]["tool_calls"][0]["id"],
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        }
    assert shown == "Cloudy in Paris."
