"""An answer comparing two results ("warmer in Paris than in Berlin") is held to their order
(``minloop.models.local.compare``, read by the evidence check)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from minloop import Replacement
from minloop.models.local.compare import compared
from minloop.models.local.evidence import EvidenceCheck, asks_more, is_note
from minloop.models.local.weighed import unweighed

from .conftest import content, conversation


def ran(user: str, first: tuple[str, int], second: tuple[str, int]) -> list[dict[str, Any]]:
    """The user's message and two weather calls with their results."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
    for i, (city, temperature) in enumerate((first, second), 1):
        fn = {"name": "get_weather", "arguments": json.dumps({"city": city})}
        call = {"id": f"c{i}", "type": "function", "function": fn}
        result = {"city": city, "temperature": temperature, "condition": "sunny", "trace_id": "trc_1"}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps(result)},
        ]
    return messages


EN = ran("Is it warmer in Paris or in Berlin right now?", ("Paris", 18), ("Berlin", 12))
ZH = ran("东京和悉尼哪个更暖和？", ("Tokyo", 21), ("Sydney", 27))


@pytest.mark.parametrize(
    ("messages", "answer", "order"),
    [
        (EN, "It is warmer in Paris than in Berlin right now.", True),
        (EN, "Berlin is colder than Paris.", True),
        (EN, "Paris is 18 and Berlin 12, so Paris is warmer than Berlin.", True),
        (EN, "It is warmer in Berlin than in Paris.", False),
        (EN, "Paris is 18 °C and Berlin 12 °C.", None),  # no comparison
        (ZH, "悉尼比东京更暖和。", True),  # 悉尼 and 东京 are the places called as Sydney and Tokyo
        (ZH, "东京比悉尼冷。", True),
        (ZH, "东京的温度是21摄氏度，悉尼的温度是27摄氏度。东京比悉尼更暖和。", False),
    ],
)
def test_a_comparison_is_read_against_the_two_results(messages: Any, answer: str, order: bool | None) -> None:
    assert compared(answer, messages) is order


def test_a_right_comparison_without_its_values_is_asked_for_them_once_and_stands() -> None:
    check, right = EvidenceCheck(), "It is warmer in Paris than in Berlin right now."
    note = (
        "Your answer does not give the values it rests on: the results give temperature 18 for Paris, "
        "and temperature 12 for Berlin. Answer again, with these values."
    )
    assert check(right, EN) == note
    assert check("Paris is warmer, at 18 °C against Berlin's 12 °C.", EN) is None  # its values given
    assert check("Paris is warmer than Berlin, at 18 °C.", EN) is None  # one value: not sent back
    # the loop's transcript has the answer sent back, not the note (the model got that)
    again = [*EN, {"role": "assistant", "content": right}]
    assert check("Paris is warmer than Berlin: 18 °C against 12 °C.", again) is None
    # the answer given to the note fails (the wrong way round, or a number nobody gave): the first stands
    assert check("It is warmer in Berlin than in Paris.", again) == Replacement(right)
    assert check("Paris is 25 °C, warmer than Berlin.", again) == Replacement(right)
    assert check(right, again) is None  # the same answer again passes, as a right comparison
    # a comparison the check cannot read ("cleaner", no "than") is asked for its values too
    zurich = ran("苏黎世和首尔现在哪里的空气更干净？", ("Zurich", 18), ("Seoul", 64))
    asked = EvidenceCheck()("苏黎世的空气更干净。", zurich)
    assert (
        asked
        == "你的回答没有给出所依据的数值：工具结果中 苏黎世 是 temperature 18，首尔 是 temperature 64。请带上这些数值重新回答。"
    )
    repeated = [*zurich, {"role": "assistant", "content": "苏黎世的空气更干净。"}]
    assert EvidenceCheck()("苏黎世的空气更干净。", repeated) == Replacement(  # the results did serve it
        "我无法根据工具返回的结果可靠地回答这个问题：get_weather 给出了 city Zurich, temperature 18, "
        "condition sunny；get_weather 给出了 city Seoul, temperature 64, condition sunny。"
    )
    # a question that compares nothing is not asked for values
    both = ran("What's the weather in Paris or Berlin?", ("Paris", 18), ("Berlin", 12))
    assert unweighed("Paris is sunny, and so is Berlin.", both, "en") is None
    assert is_note({"role": "system", "content": note}) and asks_more({"role": "system", "content": asked})


def test_a_comparison_the_wrong_way_round_is_sent_back_once_then_replaced() -> None:
    check, wrong = EvidenceCheck(), "东京比悉尼更暖和。"
    note = (
        "你的回答把 东京 和 悉尼 比反了：工具结果中 东京 是 21，悉尼 是 27，所以 悉尼 更高，东京 更低。"
        "请根据这些数值重新回答。"
    )
    assert check(wrong, ZH) == note
    again = [*ZH, {"role": "assistant", "content": wrong}, {"role": "system", "content": note}]
    replaced = Replacement(  # the results did answer: no "not what you asked for"
        "我无法根据工具返回的结果可靠地回答这个问题：get_weather 给出了 city Tokyo, temperature 21, "
        "condition sunny；get_weather 给出了 city Sydney, temperature 27, condition sunny。"
    )
    assert check(wrong, again) == replaced
    assert check("悉尼比悉尼更暖和。", again) == replaced  # a second answer that compares nothing


def test_of_two_numbers_that_differ_the_comparative_reads_its_own_and_else_none() -> None:
    messages = [dict(m) for m in EN]
    messages[4] = {
        **messages[4],
        "content": json.dumps({"city": "Berlin", "temperature": 12, "humidity": 80}),
    }
    messages[2] = {**messages[2], "content": json.dumps({"city": "Paris", "temperature": 18, "humidity": 60})}
    assert compared("It is warmer in Berlin than in Paris.", messages) is False  # the temperatures
    assert compared("Berlin is higher than Paris.", messages) is None  # the temperature or the humidity


def quotes(request: str) -> list[dict[str, Any]]:
    """Two share quotes that differ in their price and in their change today."""
    apple = content(symbol="AAPL", price=228.52, currency="USD", change_percent=1.2)
    amazon = content(symbol="AMZN", price=197.12, currency="USD", change_percent=0.9)
    return conversation(
        request,
        ("get_stock_quote", {"symbol": "AAPL"}, apple),
        ("get_stock_quote", {"symbol": "AMZN"}, amazon),
    )


@pytest.mark.parametrize(
    ("request_", "answer", "order"),
    [
        ("Which costs less, an Apple share or an Amazon share?", "Amazon is cheaper than Apple.", True),
        (
            "Which costs less, an Apple share or an Amazon share?",
            "An Apple share is cheaper than an Amazon share.",
            False,
        ),
        ("Which costs less, an Apple share or an Amazon share?", "AAPL is more expensive than AMZN.", True),
        ("现在一股苹果和一股亚马逊，哪个更便宜？", "亚马逊比苹果便宜。", True),  # the names the request gave
        ("现在一股苹果和一股亚马逊，哪个更便宜？", "苹果的价格比亚马逊便宜。", False),
        (
            "Which costs less, an Apple share or an Amazon share?",
            "Apple is bigger than Amazon.",
            None,
        ),  # not a price
        # a rise or a fall compares the change, and "fell more" is the lower change
        ("Which share rose more today, Apple or Amazon?", "Apple rose more than Amazon today.", True),
        ("Which share rose more today, Apple or Amazon?", "Amazon rose more than Apple today.", False),
        ("Which share rose more today, Apple or Amazon?", "Amazon fell more than Apple.", True),
        ("苹果和亚马逊今天哪个涨得多？", "亚马逊比苹果涨得多。", False),
        # "compared to" joins the two as "than" does, and a number's decimal point ends no clause
        (
            "Which share rose more today, Apple or Amazon?",
            "Amazon rose more today with a price of $197.12 compared to Apple's $228.52.",
            False,
        ),
    ],
)
def test_a_comparative_reads_the_key_it_compares_and_the_names_the_request_gave(
    request_: str, answer: str, order: bool | None
) -> None:
    assert compared(answer, quotes(request_)) is order


def test_the_note_for_a_wrong_comparison_gives_the_compared_values_under_the_requests_names() -> None:
    note = EvidenceCheck()("苹果的价格比亚马逊便宜。", quotes("现在一股苹果和一股亚马逊，哪个更便宜？"))
    assert (
        note
        == "你的回答把 苹果 和 亚马逊 比反了：工具结果中 苹果 是 228.52，亚马逊 是 197.12，所以 苹果 更高，亚马逊 更低。请根据这些数值重新回答。"
    )
