"""The small-model checks on a user's own tools that need no model (``minloop.small.evidence``,
``.notes``), and how the embedded model decodes the answer's language."""

from __future__ import annotations

import json
from typing import Any

import pytest

from minloop import Loop, ModelRequest, tool
from minloop.builtins import calculator
from minloop.decision import Replacement
from minloop.models.base import WhileDecoding
from minloop.models.local import LocalModel
from minloop.models.local.chinese import CHINESE, WORDS, latin_names
from minloop.models.local.decoding import renderable
from minloop.small.evidence import EvidenceCheck
from minloop.small.notes import plain_statement


@tool
def get_weather(city: str) -> dict:
    """Get the current weather in a city: temperature and sky condition."""
    return {}


@tool
def get_stock_quote(symbol: str) -> dict:
    """Get the latest share price of a company by its stock ticker symbol.

    Args:
        symbol: The ticker symbol, e.g. "AAPL" for Apple.
    """
    return {}


@tool
def get_exchange_rate(base: str, target: str) -> dict:
    """Get today's exchange rate between two currencies.

    Args:
        base: The currency converted from, as an ISO 4217 code such as "USD".
        target: The currency converted to, as an ISO 4217 code such as "EUR".
    """
    return {}


SPECS = [t.spec() for t in (get_weather, get_stock_quote, get_exchange_rate, calculator)]


def ran(request: str, name: str, arguments: dict[str, Any], result: dict[str, Any]) -> list[dict[str, Any]]:
    """A conversation after one call and its result, with the loop's control message."""
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return [
        {"role": "user", "content": request},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({**result, "trace_id": "trc_1"})},
        {"role": "system", "content": "Use the tool results above."},
    ]


def test_the_model_reads_tool_results_without_the_trace_id() -> None:
    messages = ran("Weather in Paris?", "get_weather", {"city": "Paris"}, {"temperature": 18})
    assert renderable(messages)[2] == {"role": "tool", "tool_call_id": "c1", "content": '{"temperature": 18}'}
    assert "trc_1" in messages[2]["content"]  # the transcript keeps it


def in_language(messages: list[dict[str, Any]], language: str | None = None) -> ModelRequest:
    """A request on the weather tool, with the answer's language asked as ``UserLanguage`` asks it."""
    from minloop.language import user_language

    return ModelRequest(
        messages, SPECS[:1], decoding=WhileDecoding(language=language or user_language(messages))
    )


def test_a_chinese_request_is_answered_under_a_pattern_that_begins_in_chinese() -> None:
    chinese = in_language([{"role": "user", "content": "巴黎天气怎么样？"}])
    schema = LocalModel().body(chinese)["json_schema"]["anyOf"][-1]
    assert schema["properties"]["answer"] == {"type": "string", "pattern": CHINESE}
    english = in_language([{"role": "user", "content": "Weather in Paris?"}])
    assert LocalModel().body(english)["json_schema"]["anyOf"][-1]["properties"]["answer"] == {
        "type": "string",
        "pattern": WORDS,  # in words: not a tool result copied as JSON
    }
    asked = in_language([{"role": "user", "content": "Weather in Paris, as JSON?"}])
    assert LocalModel().body(asked)["json_schema"]["anyOf"][-1]["properties"]["answer"] == {"type": "string"}
    unasked = LocalModel().body(ModelRequest(chinese.messages, SPECS[:1]))["json_schema"]["anyOf"][-1]
    assert unasked["properties"]["answer"] == {"type": "string"}  # no language asked: any answer


def test_the_plain_statement_says_what_happened_in_words() -> None:
    failed = ran("Is BA117 on time?", "get_flight", {"flight": "BA117"}, {})
    envelope = {"error": "ConnectionError: the service is not responding", "code": "ERR_TOOL_FAILED"}
    failed[2]["content"] = json.dumps({**envelope, "tool": "get_flight", "trace_id": "trc_1"})
    assert plain_statement(failed[:3], "en") == (
        "I can't answer that reliably from what the tools returned: get_flight did not answer "
        "(the service is not responding)."
    )
    nothing = ran("订单 Z9 到哪了？", "get_order", {"order_id": "Z9"}, {"order_id": "Z9", "found": False})
    assert (
        plain_statement(nothing[:3], "zh")
        == "我无法根据工具返回的结果可靠地回答这个问题：get_order 没有找到 order id Z9 的结果。"
    )
    asked = [{"role": "user", "content": "What's the news?"}]
    assert plain_statement(asked, "en", SPECS[:2]) == (
        "I can't answer that reliably: none of my tools provides it. They can get the current weather in a "
        "city; get the latest share price of a company by its stock ticker symbol."
    )
    assert plain_statement([{"role": "user", "content": "新闻？"}], "zh", SPECS[:2]) == (
        "我无法可靠地回答这个问题：我的工具都不提供这项信息。现有工具：get_weather、get_stock_quote。"
    )


def test_a_chinese_answer_may_begin_with_a_name_the_user_wrote_in_latin_letters() -> None:
    request = in_language([{"role": "user", "content": "Ada Lovelace 的邮箱地址是什么？"}])
    pattern = LocalModel().body(request)["json_schema"]["anyOf"][-1]["properties"]["answer"]["pattern"]
    assert pattern == "^(?:(?:Ada Lovelace|Lovelace|Ada) ?){0,3}" + CHINESE[1:]
    assert latin_names("我的订单 A1234 和 B7781 到哪了？") == ["A1234", "B7781"]
    assert latin_names("2026年12月5日巴黎到里昂07:04那班 TGV 火车") == ["TGV"]  # numbers are no names


def test_an_answer_that_is_no_decline_after_every_call_failed_is_replaced() -> None:
    failed = ran("BA117 航班准点吗？", "get_flight_status", {"flight_number": "BA117"}, {})
    envelope = {"error": "ConnectionError: the service is not responding", "code": "ERR_TOOL_FAILED"}
    failed[2]["content"] = json.dumps({**envelope, "tool": "get_flight_status", "trace_id": "trc_1"})
    check = EvidenceCheck()
    assert check("航班 BA117 延误了。", failed) == Replacement(
        "我无法根据工具返回的结果可靠地回答这个问题：get_flight_status 没有给出结果（the service is not responding）。"
    )
    assert check("抱歉，航班状态服务没有响应，无法查询 BA117。", failed) is None  # it says so itself
    nothing = ran(
        "Where is order Z9?", "get_order_status", {"order_id": "Z9"}, {"order_id": "Z9", "found": False}
    )
    assert isinstance(check("Order Z9 is on its way.", nothing), Replacement)
    assert check("Order Z9 was not found.", nothing) is None


def test_why_the_loop_refused_a_call_is_told_in_the_users_language() -> None:
    refused = {"error": "arguments do not match the tool's schema", "code": "ERR_TOOL_ARGS_INVALID"}
    for request, answer, told in [
        (
            "电影《卧虎藏龙》是哪一年的？",
            "是1937年的。",
            "find_item 没有给出结果（调用的参数不符合工具的要求）",
        ),
        ("When was the book 4411 published?", "In 1937.", "find_item did not answer (arguments do not match"),
    ]:
        messages = ran(request, "find_item", {"item_id": 1}, {**refused, "tool": "find_item"})
        replaced = EvidenceCheck()(answer, messages)
        assert isinstance(replaced, Replacement) and told in replaced.text, replaced


@tool(timeout=2.0)
def get_flight_status(flight_number: str, date: str) -> dict:
    """Get the status of a flight (on time, delayed, cancelled) on a date.

    Args:
        flight_number: The flight number, e.g. "BA117".
        date: The date of the flight, as YYYY-MM-DD.
    """
    raise ConnectionError("the flight status service is not responding")


@pytest.mark.local_model
@pytest.mark.parametrize(
    ("request_text", "answer"),
    [
        (
            "Is flight LH401 on time on 2026-12-10?",
            "I can't answer that reliably from what the tools returned: get_flight_status did not answer "
            "(the flight status service is not responding).",
        ),
    ],
)
def test_a_service_that_is_down_is_called_and_told_as_such(request_text: str, answer: str) -> None:
    result = Loop(LocalModel(), [get_flight_status], max_steps=4).run_sync(request_text)
    arguments = '{"flight_number": "LH401", "date": "2026-12-10"}'
    call = {
        "id": "call_1_1",
        "type": "function",
        "function": {"name": "get_flight_status", "arguments": arguments},
    }
    error = {
        "error": "ConnectionError: the flight status service is not responding",
        "code": "ERR_TOOL_FAILED",
        "tool": "get_flight_status",
        "trace_id": result.trace_id,
    }
    assert result.messages == [
        {"role": "user", "content": request_text},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "call_1_1",
            "name": "get_flight_status",
            "content": json.dumps(error),
        },
        {"role": "assistant", "content": answer},
    ]


@tool
def find_contact(name: str) -> dict:
    """Find a person in the address book by name; returns their email and phone number."""
    return {}


@tool
def search_restaurants(city: str, cuisine: str = "") -> dict:
    """Search restaurants in a city, optionally by cuisine."""
    return {}
