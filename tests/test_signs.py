"""A change told the wrong way round ("rose 2.1%" beside a result's -2.1) is not supported
(``minloop.models.local.signs``, read by the evidence check)."""

from __future__ import annotations

import pytest

from minloop import Replacement
from minloop.models.local.evidence import EvidenceCheck, asks_more, is_note
from minloop.models.local.signs import turned

from .conftest import content, conversation

RESULTS = (
    '{"symbol": "TSLA", "price": 251.44, "change_percent": -2.1}\n{"symbol": "NVDA", "change_percent": 3.5}'
)


@pytest.mark.parametrize(
    ("answer", "wrong"),
    [
        ("特斯拉的股价上涨了2.1%，英伟达上涨了3.5%。", [("上涨了2.1%", -2.1)]),
        ("Tesla rose 2.1 percent today.", [("rose 2.1 percent", -2.1)]),
        ("英伟达下跌了3.5%。", [("下跌了3.5%", 3.5)]),
        ("Tesla is down 2.1% and Nvidia is up 3.5%.", []),
        ("特斯拉跌了2.1%，英伟达涨了3.5%。", []),
        ("Nvidia gained by 3.5%.", []),
        ("The price fell to 251.44 dollars.", []),  # a level, not a change
        ("Tesla's price is 251.44 and its change is -2.1%.", []),  # no direction stated
    ],
)
def test_a_change_is_read_with_its_direction(answer: str, wrong: list[tuple[str, float]]) -> None:
    assert turned(answer, RESULTS) == wrong


def test_a_number_the_user_gave_may_be_told_either_way() -> None:
    assert turned("If it fell 3.5%, you would lose money.", RESULTS, "What if Nvidia fell 3.5%?") == []


def test_the_evidence_check_sends_back_a_rise_that_was_a_fall() -> None:
    quote = content(symbol="TSLA", price=251.44, currency="USD", change_percent=-2.1)
    messages = conversation("特斯拉今天涨了还是跌了？", ("get_stock_quote", {"symbol": "TSLA"}, quote))
    check = EvidenceCheck()
    note = check("特斯拉今天上涨了2.1%。", messages)
    assert note == "你的回答说“上涨了2.1%”，但工具结果中的数值是 -2.1，是下跌。请根据工具结果重新回答。"
    assert check("特斯拉今天下跌了2.1%，现价251.44美元。", messages) is None
    assert check("特斯拉的股价今天是跌了。", messages) is None  # no number, but the fall the results give
    again = [
        *messages,
        {"role": "assistant", "content": "特斯拉今天上涨了2.1%。"},
        {"role": "system", "content": note},
    ]
    assert check("特斯拉今天上涨了2.1%。", again) == Replacement(  # the results did answer
        "我无法根据工具返回的结果可靠地回答这个问题：get_stock_quote 给出了 symbol TSLA, price 251.44, currency USD, "
        "change percent -2.1。"
    )
    english = conversation(
        "Did Tesla's share go up or down today?", ("get_stock_quote", {"symbol": "TSLA"}, quote)
    )
    assert EvidenceCheck()("Tesla rose 2.1% today.", english) == (
        'Your answer says "rose 2.1%", but the tool result gives -2.1: a fall. Answer again from the results.'
    )
    assert EvidenceCheck()("It went down today by 2.1%.", english) is None


def test_the_note_is_a_note_that_asks_for_a_whole_answer() -> None:
    note = {
        "role": "system",
        "content": "你的回答说“上涨了2.1%”，但工具结果中的数值是 -2.1，是下跌。请根据工具结果重新回答。",
    }
    assert is_note(note) and asks_more(note)
