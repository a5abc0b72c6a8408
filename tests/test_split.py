"""A first call whose value holds both things the request joins with "and", "和"... is made once
for each of them (``policy.split``)."""

from __future__ import annotations

import json
from typing import Any

from minloop import ModelResponse
from minloop.models.local.policy import split


def first(name: str, arguments: dict[str, Any]) -> ModelResponse:
    call = {
        "id": "call_1_1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return ModelResponse(message={"role": "assistant", "content": None, "tool_calls": [call]})


def calls(response: ModelResponse) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in response.message["tool_calls"]
    ]


def test_a_value_holding_both_things_is_looked_up_for_each() -> None:
    asked = [{"role": "user", "content": "Ada Lovelace 和 Alan Turing 的电话号码分别是多少？"}]
    both = first("find_contact", {"name": "Ada Lovelace and Alan Turing's phone numbers"})
    assert calls(split(both, asked, None)) == [
        ("call_1_1", "find_contact", {"name": "Ada Lovelace"}),
        ("call_1_2", "find_contact", {"name": "Alan Turing"}),
    ]
    cities = first("get_weather", {"city": "Tokyo and Sydney", "unit": "celsius"})
    chinese = [{"role": "user", "content": "东京和悉尼的天气怎么样？"}]
    english = "What is the weather in Tokyo and Sydney?"  # the Chinese names are read in the translation
    assert calls(split(cities, chinese, english)) == [
        ("call_1_1", "get_weather", {"city": "Tokyo", "unit": "celsius"}),
        ("call_1_2", "get_weather", {"city": "Sydney", "unit": "celsius"}),
    ]


def test_a_value_holding_two_numbered_lines_is_looked_up_for_each() -> None:
    asked = [{"role": "user", "content": "中央车站42路和7路公交车的下一班分别是几点？"}]
    both = first("next_buses", {"stop": "Central Station", "line": "42nd and 7th"})
    assert calls(split(both, asked, None)) == [
        ("call_1_1", "next_buses", {"stop": "Central Station", "line": "42"}),
        ("call_1_2", "next_buses", {"stop": "Central Station", "line": "7"}),
    ]


def test_a_call_for_one_of_them_or_a_later_call_stays() -> None:
    asked = [{"role": "user", "content": "What's the weather in Tokyo and in Sydney?"}]
    one = first("get_weather", {"city": "Tokyo"})
    assert split(one, asked, None) is one
    done = [*asked, *[{"role": "tool", "tool_call_id": "c0", "content": "{}"}]]
    done.insert(
        1,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c0", "function": {"name": "get_weather", "arguments": "{}"}}],
        },
    )
    both = first("get_weather", {"city": "Tokyo and Sydney"})
    assert split(both, done, None) is both
    assert split(both, [{"role": "user", "content": "What's the weather in Tokyo?"}], None) is both
