"""Two things a request asks the same question about, and the follow-up calls they make due
(``minloop.models.local.pairs``, read by ``policy.follow_up``); counts written as words
(``arithmetic.amounts``)."""

from __future__ import annotations

from typing import Any

import pytest

from minloop import tool
from minloop.builtins import calculator
from minloop.models.local.arithmetic import amounts
from minloop.models.local.pairs import pairs, parallel
from minloop.models.local.policy import FollowUp, follow_up

from .conftest import content, conversation


@tool
def get_train_times(origin: str, destination: str, date: str) -> dict:
    """Get the train departures between two cities on a date, with fares."""
    return {}


@tool
def get_stock_quote(symbol: str) -> dict:
    """Get the latest share price of a company by its stock ticker symbol."""
    return {}


SPECS = [t.spec() for t in (get_train_times, get_stock_quote, calculator)]
ROUTES = "When does the first train leave on 2026-12-05 from Paris to Lyon, and from Paris to Marseille?"
LYON = {"origin": "Paris", "destination": "Lyon", "date": "2026-12-05"}
DEPARTURES = content(
    origin="Paris",
    destination="Lyon",
    departures=[
        {"departs": "07:04", "fare": 89.0, "currency": "EUR"},
        {"departs": "09:34", "fare": 65.0, "currency": "EUR"},
    ],
)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("What are the share prices of Apple and Amazon?", [("Apple", "Amazon")]),
        ("Is it warmer in Paris or in Berlin right now?", [("Paris", "Berlin")]),
        ("Which costs less right now, an Apple share or an Amazon share?", [("Apple", "Amazon")]),
        ("Is an Apple share dearer than an Amazon bond or a Tesla car?", []),  # no noun both have
        ("现在一股苹果和一股亚马逊，哪个更便宜？", [("苹果", "亚马逊")]),  # "一股" is a count, not a name
        ("股价和市值分别是多少？", [("股价", "市值")]),
        (ROUTES, []),
        # two numbers or codes after one plural noun, or before the same Chinese counter
        ("When do the next buses of lines 42 and 7 leave Central Station?", [("42", "7")]),
        ("中央车站42路和7路公交车的下一班分别是几点？", [("42", "7")]),
        ("地铁3号线和10号线哪个更挤？", [("3", "10")]),
        ("I have 3 apples and 2 pears.", []),
        # the place itself, not the words that lead to it
        ("2026年12月5日从巴黎到里昂和马赛的第一班火车分别几点出发？", [("里昂", "马赛")]),
        ("从巴黎到里昂和从巴黎到马赛的第一班火车", [("里昂", "马赛")]),
        ("在东京和在纽约现在几点？", [("东京", "纽约")]),
    ],
)
def test_two_things_joined_by_and_or_are_read_with_their_shared_noun(text: str, found: Any) -> None:
    assert pairs(text) == found


def test_a_value_written_after_the_same_word_as_a_calls_value_is_the_next_call() -> None:
    assert parallel([ROUTES], {"arguments": LYON}, []) == {**LYON, "destination": "Marseille"}
    buses = "When do the buses of line 42 and line 7 leave Central Station?"
    assert parallel([buses], {"arguments": {"stop": "Central Station", "line": "42"}}, []) == {
        "stop": "Central Station",
        "line": "7",
    }
    taken = [{"arguments": {**LYON, "destination": "Marseille"}}]
    assert parallel([ROUTES], {"arguments": LYON}, taken) is None  # Marseille was looked up
    unjoined = "Trains from Paris to Lyon on 2026-12-05 go on to Marseille."
    assert parallel([unjoined], {"arguments": LYON}, []) is None  # not two things asked about


def test_the_second_route_is_looked_up_also_when_the_translation_pairs_the_wrong_names() -> None:
    messages = conversation(
        "2026年12月5日从巴黎到里昂和从巴黎到马赛的第一班火车分别几点出发？",
        ("get_train_times", LYON, DEPARTURES),
    )
    english = "What are the departure times from Paris to Lyon and Paris to Marseille on 2026-12-05?"
    # "Lyon and Paris" are joined, but the call took both: Paris is not the other thing
    assert follow_up(messages, SPECS, "zh", english) == FollowUp(
        "get_train_times", "", {**LYON, "destination": "Marseille"}
    )
    assert follow_up(conversation(ROUTES, ("get_train_times", LYON, DEPARTURES)), SPECS, "en") == FollowUp(
        "get_train_times", "", {**LYON, "destination": "Marseille"}
    )


def test_a_share_named_beside_another_is_asked_for_by_name() -> None:
    request = "Which costs less right now, an Apple share or an Amazon share?"
    quote = content(symbol="AAPL", price=228.52, currency="USD")
    follow = follow_up(conversation(request, ("get_stock_quote", {"symbol": "AAPL"}, quote)), SPECS, "en")
    assert follow == FollowUp(
        "get_stock_quote",
        "The user asked about Apple and Amazon. You have the result for AAPL. Now call get_stock_quote for Amazon.",
    )


def test_counts_written_as_words_are_amounts() -> None:
    assert amounts("How much do two second-class tickets cost for 3 people?") == [3.0, 2.0]
    assert amounts("住三晚，两张票，二等座") == [3.0, 2.0]  # "二等" is a class, not a count
    assert amounts("Is it warmer in Paris?") == []


@pytest.mark.parametrize(
    "request_",
    [
        "How much do two second-class tickets on the 07:04 train from Paris to Lyon cost?",
        "2026年12月5日巴黎到里昂07:04那班火车，两张二等座票一共多少钱？",
        "What do two tickets on the 07:04 train from Paris to Lyon cost in EUR?",  # every fare is in EUR
    ],
)
def test_a_count_times_the_fare_of_the_entry_the_request_names_is_computed(request_: str) -> None:
    follow = follow_up(conversation(request_, ("get_train_times", LYON, DEPARTURES)), SPECS, "en")
    assert follow is not None and follow.tool == "calculator"
    assert follow.arguments == {"expression": "2 * 89"}  # the 07:04 train's fare, not the 09:34's


def test_an_amount_between_one_and_two_is_multiplied_too() -> None:
    quote = content(symbol="AAPL", price=228.52, currency="USD")
    messages = conversation("What do 1.5 Apple shares cost?", ("get_stock_quote", {"symbol": "AAPL"}, quote))
    assert follow_up(messages, SPECS, "en") == FollowUp(
        "calculator",
        "Now call calculator to compute the answer from the numbers of the request and of the results above "
        "(for example an amount times a price or a rate).",
        {"expression": "1.5 * 228.52"},
    )
    one = conversation("What does 1 Apple share cost?", ("get_stock_quote", {"symbol": "AAPL"}, quote))
    assert follow_up(one, SPECS, "en") is None  # one share: the price is the answer
