"""A call its tool rejected for its value ("unknown ticker symbol: NVIDIA") is made once more, with
a note saying what was not accepted (``rejected.retried`` through ``policy.follow_up``); an error
that quotes no value of the call is told as it is. A value written in Chinese that the tool
rejected or found nothing for is given in English first (``policy.in_english``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from minloop import Loop, tool
from minloop.models.base import ModelRequest
from minloop.models.local.policy import FollowUp, follow_up, in_english
from minloop.models.local.rejected import since_retried

from .conftest import content, conversation


@tool
def get_stock_quote(symbol: str) -> dict:
    """Get the latest share price of a company by its stock ticker symbol."""
    return {}


@tool
def calculator(expression: str) -> dict:
    """Evaluate an arithmetic expression."""
    return {}


SPECS = [get_stock_quote.spec(), calculator.spec()]


@tool(name="get_stock_quote")
def quote(symbol: str) -> dict:
    """Get the latest share price of a company by its stock ticker symbol.

    Args:
        symbol: The ticker symbol, e.g. "AAPL" for Apple.
    """
    prices = {"AAPL": 228.52, "NVDA": 131.88}
    if symbol.upper() not in prices:
        raise LookupError(f"unknown ticker symbol: {symbol}")
    return {"symbol": symbol.upper(), "price": prices[symbol.upper()], "currency": "USD"}


def failed(error: str) -> str:
    return json.dumps(
        {"error": error, "code": "ERR_TOOL_FAILED", "tool": "get_stock_quote", "trace_id": "trc_1"}
    )


def test_a_value_the_tool_rejected_is_asked_for_once_more() -> None:
    rejected = ("get_stock_quote", {"symbol": "NVIDIA"}, failed("LookupError: unknown ticker symbol: NVIDIA"))
    english = follow_up(conversation("How much do 10 shares of Nvidia cost?", rejected), SPECS, "en")
    assert english is not None and (english.tool, english.arguments) == ("get_stock_quote", None)
    assert english.note == (
        'get_stock_quote did not accept "NVIDIA" (unknown ticker symbol: NVIDIA). Call get_stock_quote again '
        "with the value it expects for what the user asked about, for example a code or a symbol instead of a name."
    )
    chinese = follow_up(conversation("买10股英伟达要多少钱？", rejected), SPECS, "zh")
    assert chinese is not None and chinese.note.startswith("get_stock_quote 不接受“NVIDIA”（unknown ticker")
    twice = conversation("How much do 10 shares of Nvidia cost?", rejected, rejected)
    assert follow_up(twice, SPECS, "en") is None  # once only: then the model says what happened


def test_an_error_that_quotes_no_value_is_told_as_it_is() -> None:
    down = (
        "get_stock_quote",
        {"symbol": "NVDA"},
        failed("RuntimeError: the quote service is not responding"),
    )
    assert follow_up(conversation("What is Nvidia's share price?", down), SPECS, "en") is None
    part = ("get_stock_quote", {"symbol": "A"}, failed("unknown ticker symbol: A1"))  # "A" is not quoted
    assert follow_up(conversation("What is A's share price?", part), SPECS, "en") is None


def test_after_a_call_made_good_the_request_goes_on() -> None:
    rejected = ("get_stock_quote", {"symbol": "NVIDIA"}, failed("unknown ticker symbol: NVIDIA"))
    quote = json.dumps({"symbol": "NVDA", "price": 131.88, "currency": "USD", "trace_id": "trc_1"})
    messages = conversation(
        "How much do 10 shares of Nvidia cost?", rejected, ("get_stock_quote", {"symbol": "NVDA"}, quote)
    )
    follow = follow_up(messages, SPECS, "en")
    assert follow is not None and (follow.tool, follow.arguments) == (
        "calculator",
        {"expression": "10 * 131.88"},
    )
    calls = [{"name": "get_stock_quote", "arguments": {"symbol": s}} for s in ("NVIDIA", "NVDA")]
    assert since_retried(calls, [failed("unknown ticker symbol: NVIDIA"), quote]) == ([calls[1]], [quote])


@pytest.mark.local_model
def test_the_embedded_model_gives_the_symbol_the_tool_expects(local: Any) -> None:
    """The 1.5B model wrote "NVIDIA" first; told what the tool did not accept, it writes "NVDA"."""
    from minloop.builtins import calculator as builtin_calculator

    result = Loop(local, [quote, builtin_calculator], max_steps=6).run_sync(
        "How much do 10 shares of Nvidia cost?"
    )
    calls = [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for m in result.messages
        for c in m.get("tool_calls") or []
    ]
    assert calls == [
        ("get_stock_quote", {"symbol": "NVIDIA"}),
        ("get_stock_quote", {"symbol": "NVDA"}),
        ("calculator", {"expression": "10 * 131.88"}),
    ]
    assert result.status == "success" and "1318.8" in (result.output or "")


@tool
def find_contact(name: str) -> dict:
    """Find a person in the address book by name; returns their email and phone number."""
    people = {"alan turing": {"name": "Alan Turing", "phone": "+44 161 496 0735"}}
    person = people.get(name.strip().lower())
    return {"found": True, **person} if person else {"found": False, "name": name}


def test_a_chinese_value_the_tool_rejected_is_given_in_english() -> None:
    coin = ("coin_price", {"coin": "比特币", "currency": "usd"}, failed("LookupError: unknown coin: 比特币"))
    follow = follow_up(conversation("1.5个比特币是多少人民币？", coin), SPECS, "zh")
    assert follow is not None and follow.translate == ({"coin": "比特币", "currency": "usd"}, "coin")
    assert follow.untranslated == "比特币" and follow.note.startswith("coin_price 不接受“比特币”")
    assert in_english(follow, "Bitcoin.") == FollowUp(
        "coin_price", "", {"coin": "Bitcoin", "currency": "usd"}
    )
    # no usable translation: the model is asked to call again, as for any rejected value
    assert in_english(follow, "") == FollowUp("coin_price", follow.note)
    assert in_english(follow, "这是比特币") == FollowUp("coin_price", follow.note)


def test_a_chinese_value_that_found_nothing_is_given_in_english_once() -> None:
    nothing = ("find_contact", {"name": "艾伦·图灵"}, content(found=False, name="艾伦·图灵"))
    follow = follow_up(conversation("艾伦·图灵的电话号码是多少？", nothing), SPECS, "zh")
    assert follow is not None and (follow.tool, follow.note, follow.untranslated) == (
        "find_contact",
        "",
        "艾伦·图灵",
    )
    assert in_english(follow, "Alan Turing") == FollowUp("find_contact", "", {"name": "Alan Turing"})
    assert in_english(follow, "") is None  # found nothing, and no translation: the model answers
    again = ("find_contact", {"name": "Alan Turing"}, content(found=False, name="Alan Turing"))
    assert follow_up(conversation("艾伦·图灵的电话号码是多少？", nothing, again), SPECS, "zh") is None
    english = ("find_contact", {"name": "Alan Turning"}, content(found=False, name="Alan Turning"))
    assert follow_up(conversation("What is Alan Turning's phone number?", english), SPECS, "en") is None


@pytest.mark.local_model
def test_the_embedded_model_gives_a_chinese_name_the_tool_did_not_find_in_english(local: Any) -> None:
    """The next call is the same tool with the model's own translation of the name."""
    nothing = ("find_contact", {"name": "艾伦·图灵"}, content(found=False, name="艾伦·图灵"))
    messages = conversation("艾伦·图灵的电话号码是多少？", nothing)
    response = asyncio.run(local.call(ModelRequest(messages, [find_contact.spec()], "auto")))
    calls = response.message.get("tool_calls") or []
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("find_contact", {"name": "Alan Turing"})
    ]
