"""An answer comparing two results ("warmer in Paris than in Berlin") is held to their order
(``minloop.models.local.compare``, read by the evidence check)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from minloop import Replacement
from minloop.models.local.compare import compared
from minloop.models.local.evidence import EvidenceCheck


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


def test_a_right_comparison_passes_without_quoting_a_value() -> None:
    # it quotes nothing only a tool gave, but it could not be written without both results
    assert EvidenceCheck()("It is warmer in Paris than in Berlin right now.", EN) is None


def test_a_comparison_the_wrong_way_round_is_sent_back_once_then_replaced() -> None:
    check, wrong = EvidenceCheck(), "东京比悉尼更暖和。"
    note = "你的回答把 Tokyo 和 Sydney 比反了：工具结果中 Tokyo 是 21，Sydney 是 27。请根据这些数值重新回答。"
    assert check(wrong, ZH) == note
    again = [*ZH, {"role": "assistant", "content": wrong}, {"role": "system", "content": note}]
    assert check(wrong, again) == Replacement(  # the results did answer: no "not what you asked for"
        "我无法根据工具返回的结果可靠地回答这个问题：get_weather 给出了 city Tokyo, temperature 21, "
        "condition sunny；get_weather 给出了 city Sydney, temperature 27, condition sunny。"
    )


def test_two_results_differing_in_more_than_one_number_are_not_read_as_compared() -> None:
    messages = [dict(m) for m in EN]
    messages[4] = {
        **messages[4],
        "content": json.dumps({"city": "Berlin", "temperature": 12, "humidity": 80}),
    }
    messages[2] = {**messages[2], "content": json.dumps({"city": "Paris", "temperature": 18, "humidity": 60})}
    assert compared("It is warmer in Berlin than in Paris.", messages) is None
