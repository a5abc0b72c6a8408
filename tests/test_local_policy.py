"""The embedded model's guide for a user's own tools: rules that need no model (see policy.py and
results.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from minloop import Loop, ModelRequest, tool
from minloop.builtins import calculator
from minloop.decision import Replacement
from minloop.models.local import LocalModel
from minloop.models.local.chinese import CHINESE, WORDS, in_english, latin_names
from minloop.models.local.copied import asked_again
from minloop.models.local.decoding import renderable
from minloop.models.local.evidence import EvidenceCheck, asks_more
from minloop.models.local.grounding import Evidence
from minloop.models.local.notes import plain_statement
from minloop.models.local.policy import follow_up

from .conftest import conversation


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


def test_a_chinese_request_is_answered_under_a_pattern_that_begins_in_chinese() -> None:
    chinese = ModelRequest([{"role": "user", "content": "巴黎天气怎么样？"}], SPECS[:1])
    schema = LocalModel().body(chinese)["json_schema"]["anyOf"][-1]
    assert schema["properties"]["answer"] == {"type": "string", "pattern": CHINESE}
    english = ModelRequest([{"role": "user", "content": "Weather in Paris?"}], SPECS[:1])
    assert LocalModel().body(english)["json_schema"]["anyOf"][-1]["properties"]["answer"] == {
        "type": "string",
        "pattern": WORDS,  # in words: not a tool result copied as JSON
    }
    asked = ModelRequest([{"role": "user", "content": "Weather in Paris, as JSON?"}], SPECS[:1])
    assert LocalModel().body(asked)["json_schema"]["anyOf"][-1]["properties"]["answer"] == {"type": "string"}
    unguided = LocalModel(guide=False).body(chinese)["json_schema"]["anyOf"][-1]
    assert unguided["properties"]["answer"] == {"type": "string"}


def test_the_other_of_two_named_places_is_looked_up_as_the_request_writes_it() -> None:
    english = ran("What's the weather in Tokyo and in Sydney?", "get_weather", {"city": "Tokyo"}, {"t": 21})
    follow = follow_up(english, SPECS, "en")
    assert follow is not None and (follow.tool, follow.arguments) == ("get_weather", {"city": "Sydney"})
    chinese = ran("东京和悉尼的天气怎么样？", "get_weather", {"city": "Tokyo"}, {"t": 21})
    translated = follow_up(chinese, SPECS, "zh", "What is the weather in Tokyo and Sydney?")
    assert translated is not None and translated.arguments == {"city": "Sydney"}
    asked = follow_up(chinese, SPECS, "zh")  # no translation: the model is asked, told which one
    assert asked is not None and asked.arguments is None and asked.tool == "get_weather"
    assert asked.note == "用户问的是东京和悉尼。你已经得到了 Tokyo 的结果。现在为悉尼调用 get_weather。"


def test_a_company_named_beside_another_is_asked_for_by_name() -> None:
    messages = ran(
        "What are the share prices of Apple and Amazon?", "get_stock_quote", {"symbol": "AAPL"}, {}
    )
    follow = follow_up(messages, SPECS, "en")
    assert follow is not None and follow.arguments is None
    assert follow.note.endswith("Now call get_stock_quote for Amazon.")


def test_a_price_wanted_in_another_currency_calls_the_rate_then_the_calculator() -> None:
    quote = {"symbol": "MSFT", "price": 415.1, "currency": "USD"}
    messages = ran("What is Microsoft's share price in euros?", "get_stock_quote", {"symbol": "MSFT"}, quote)
    follow = follow_up(messages, SPECS, "en")
    assert follow is not None and follow.tool == "get_exchange_rate" and "euro" in follow.note
    rate = ran("250美元是多少日元？", "get_exchange_rate", {"base": "USD", "target": "JPY"}, {"rate": 151.2})
    computed = follow_up(rate, SPECS, "zh")  # 250 is an amount no call took
    assert computed is not None and computed.tool == "calculator"
    assert computed.arguments == {"expression": "250 * 151.2"}  # written from the numbers, not by the model
    backwards = ran(
        "250美元是多少日元？", "get_exchange_rate", {"base": "JPY", "target": "USD"}, {"rate": 0.0066}
    )
    turned = follow_up(backwards, SPECS, "zh")  # a rate the other way round: the model is asked
    assert turned is not None and turned.tool == "calculator" and turned.arguments is None
    coin = ran(
        "What is one bitcoin worth in euros?", "get_stock_quote", {"symbol": "BTC"}, {"price_usd": 97000}
    )
    follow = follow_up(coin, SPECS, "en")  # the result's currency is in its key
    assert follow is not None and follow.tool == "get_exchange_rate"
    one = ran("1美元能换多少欧元？", "get_exchange_rate", {"base": "USD", "target": "EUR"}, {"rate": 0.92})
    assert follow_up(one, SPECS, "zh") is None  # one dollar: the rate is the answer


def test_a_price_and_a_rate_are_multiplied_only_when_each_is_plain_to_read() -> None:
    quote = {"symbol": "MSFT", "price": 415.1, "currency": "USD"}
    messages = ran("What is Microsoft's share price in euros?", "get_stock_quote", {"symbol": "MSFT"}, quote)
    rate_call = {
        "id": "c2",
        "type": "function",
        "function": {"name": "get_exchange_rate", "arguments": '{"base": "USD", "target": "EUR"}'},
    }
    messages[3:] = [
        {"role": "assistant", "content": None, "tool_calls": [rate_call]},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": json.dumps({"base": "USD", "target": "EUR", "rate": 0.92}),
        },
    ]
    follow = follow_up(messages, SPECS, "en")
    assert follow is not None and (follow.tool, follow.arguments) == (
        "calculator",
        {"expression": "415.1 * 0.92"},
    )
    messages[2]["content"] = json.dumps({**quote, "open_price": 410.0})  # which price: the model is asked
    asked = follow_up(messages, SPECS, "en")
    assert asked is not None and asked.tool == "calculator" and asked.arguments is None
    messages[2]["content"] = json.dumps({**quote, "currency": "EUR"})  # a rate from another currency
    other = follow_up(messages, SPECS, "en")
    assert other is not None and other.tool == "calculator" and other.arguments is None


def test_no_follow_up_after_a_failure_or_for_a_request_of_one_thing() -> None:
    failed = ran(
        "Weather in Paris and Berlin?", "get_weather", {"city": "Paris"}, {"code": "ERR_TOOL_FAILED"}
    )
    failed[2]["content"] = json.dumps({"error": "down", "code": "ERR_TOOL_FAILED", "tool": "get_weather"})
    assert follow_up(failed, SPECS, "en") is None
    assert (
        follow_up(ran("Weather in Paris?", "get_weather", {"city": "Paris"}, {"t": 18}), SPECS, "en") is None
    )
    assert follow_up([{"role": "user", "content": "Paris and Berlin?"}], SPECS, "en") is None  # nothing ran


def test_a_call_that_copies_its_tools_example_is_asked_for_again() -> None:
    request = ModelRequest([{"role": "user", "content": "What is Microsoft's share price?"}], SPECS)
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "get_stock_quote", "arguments": '{"symbol": "AAPL"}'},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    again = asked_again(request, message, {"get_stock_quote": ["symbol"]})
    assert again is not None and again.tool_choice == {
        "type": "function",
        "function": {"name": "get_stock_quote"},
    }
    assert again.messages[-1]["content"].startswith(
        '"AAPL" is only the example in the description of get_stock_quote'
    )
    other = {**call, "function": {**call["function"], "arguments": '{"symbol": "ZZZ"}'}}
    assert asked_again(request, {**message, "tool_calls": [other]}, {"get_stock_quote": ["symbol"]}) is None


def test_a_ticker_is_grounded_by_the_company_it_abbreviates() -> None:
    assert Evidence("What is Apple's share price?").has("AAPL")
    assert Evidence("What is Microsoft's share price?").has("MSFT")
    assert not Evidence("What is Microsoft's share price?").has("AAPL")


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
    shares = [{"role": "user", "content": "What is Microsoft's share price?"}]  # a tool it names, not called
    assert plain_statement(shares, "en", SPECS[:2]) == (
        "I can't answer that reliably: I could not call get_stock_quote with what your request gives."
    )
    english = "What is the share price of Microsoft?"
    assert plain_statement([{"role": "user", "content": "微软的股价是多少？"}], "zh", SPECS[:2], english) == (
        "我无法可靠地回答这个问题：无法用你的请求中给出的信息调用 get_stock_quote。"
    )
    yen = [{"role": "user", "content": "250美元是多少日元？"}]  # two currencies name the exchange rate
    assert (
        plain_statement(yen, "zh", SPECS)
        == "我无法可靠地回答这个问题：无法用你的请求中给出的信息调用 get_exchange_rate。"
    )


def test_a_chinese_answer_may_begin_with_a_name_the_user_wrote_in_latin_letters() -> None:
    request = ModelRequest([{"role": "user", "content": "Ada Lovelace 的邮箱地址是什么？"}], SPECS[:1])
    pattern = LocalModel().body(request)["json_schema"]["anyOf"][-1]["properties"]["answer"]["pattern"]
    assert pattern == "^(?:(?:Ada Lovelace|Lovelace|Ada) ?){0,3}" + CHINESE[1:]
    assert latin_names("我的订单 A1234 和 B7781 到哪了？") == ["A1234", "B7781"]
    assert latin_names("2026年12月5日巴黎到里昂07:04那班 TGV 火车") == ["TGV"]  # numbers are no names


def test_a_chinese_request_is_shown_with_its_english_translation_before_the_first_decision() -> None:
    assert in_english("What is the weather in Paris?") == (
        'The user\'s message in English: "What is the weather in Paris?"'
    )


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


def test_an_answer_that_leaves_out_one_of_two_lookups_is_sent_back_once() -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps(a)}}
        for i, a in enumerate(({"city": "Tokyo"}, {"city": "Sydney"}))
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "东京和悉尼的天气怎么样？"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {
            "role": "tool",
            "tool_call_id": "c0",
            "content": '{"city": "Tokyo", "temperature": 21, "condition": "clear"}',
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": '{"city": "Sydney", "temperature": 27, "condition": "sunny"}',
        },
    ]
    check = EvidenceCheck()
    note = check("东京现在21°C，天气晴朗。", messages)
    assert (
        note
        == "你的回答漏掉了 get_weather 对 Sydney 返回的结果：city Sydney, temperature 27, condition sunny。"
        "请根据上面每一次调用的结果重新回答，用户问到的每一项都要回答。"
    )
    assert check("东京21°C，晴；悉尼27°C，晴。", messages) is None
    again = [
        *messages,
        {"role": "assistant", "content": "东京现在21°C。"},
        {"role": "system", "content": note},
    ]
    assert check("东京现在21°C，天气晴朗。", again) is None  # sent back once; the second answer stands
    # the answer asked for has more in it: it is not cut to the short length of a decline
    assert asks_more({"role": "system", "content": note})
    unsupported = check("东京现在25°C。", messages)
    assert isinstance(unsupported, str) and not asks_more({"role": "system", "content": unsupported})


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
        (
            "2026年12月10日的 LH401 航班准点吗？",  # answered "待确认" without a call before the translation was shown
            "无法获取航班信息，请稍后再试。",  # says it could not get it: kept
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


def test_an_answer_that_leaves_out_the_computed_number_is_sent_back_once() -> None:
    calls = [
        ("get_stock_quote", {"symbol": "MSFT"}, {"symbol": "MSFT", "price": 415.1, "currency": "USD"}),
        (
            "get_exchange_rate",
            {"base": "USD", "target": "EUR"},
            {"base": "USD", "target": "EUR", "rate": 0.92},
        ),
        ("calculator", {"expression": "415.1 * 0.92"}, {"expression": "415.1 * 0.92", "result": 381.892}),
    ]
    steps = [(name, arguments, json.dumps(result)) for name, arguments, result in calls]
    messages = conversation("微软的股价换算成欧元是多少？", *steps, first=0)
    check = EvidenceCheck()
    assert check("微软的股价换算成欧元是415.1欧元。", messages) == (
        "你的回答漏掉了 calculator 算出的结果：381.892。请用这个数字重新回答。"
    )
    assert check("微软的股价约合381.89欧元。", messages) is None
    whole = [*messages[:-1], {"role": "tool", "tool_call_id": "c2", "content": '{"result": 7006652}'}]
    assert (
        check("结果是415.1。", whole)
        == "你的回答漏掉了 calculator 算出的结果：7006652。请用这个数字重新回答。"
    )
    sent_back = [
        *messages,
        {"role": "assistant", "content": "415.1欧元。"},
        {"role": "system", "content": "..."},
    ]
    assert check("微软的股价换算成欧元是415.1欧元。", sent_back) is None  # once: the second answer stays


@tool
def find_contact(name: str) -> dict:
    """Find a person in the address book by name; returns their email and phone number."""
    return {}


@tool
def search_restaurants(city: str, cuisine: str = "") -> dict:
    """Search restaurants in a city, optionally by cuisine."""
    return {}


def test_nothing_found_by_a_tool_the_request_does_not_name_calls_the_one_it_names() -> None:
    specs = [find_contact.spec(), search_restaurants.spec(), *SPECS[:1]]
    asked = "Find me a Japanese restaurant in Paris."
    contact = ran(asked, "find_contact", {"name": "Japanese restaurant in Paris"}, {"found": False})
    follow = follow_up(contact, specs, "en")
    assert follow is not None and (follow.tool, follow.arguments) == ("search_restaurants", None)
    assert follow.note == (
        "find_contact found nothing for this request. Now call search_restaurants, the tool for what the user asked."
    )
    named = ran(
        "What is Grace Hopper's email address?", "find_contact", {"name": "Grace Hopper"}, {"found": False}
    )
    assert follow_up(named, specs, "en") is None  # the tool it names found nothing: that is the answer
    courier = ran(
        "Which restaurant delivers order A1234?", "find_contact", {"name": "A1234"}, {"found": False}
    )
    assert follow_up(courier, specs, "en") is None  # "A1234" does not name the restaurant search
    served = ran(
        asked, "find_contact", {"name": "Japanese restaurant in Paris"}, {"found": True, "email": "x@y"}
    )
    assert follow_up(served, specs, "en") is None
