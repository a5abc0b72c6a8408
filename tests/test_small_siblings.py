"""A call for one of several values of a kind the request names is asked for each of them
(``minloop.small.Siblings``)."""

from __future__ import annotations

import pytest

from minloop import Loop, tool
from minloop.small import Siblings, small_model_layers
from minloop.small.siblings import siblings
from minloop.testing import ScriptedModel, call, reply
from tests.conftest import content, masked

BALANCES = {"CH-8812": 980.2, "CH-3301": 1520.0}


@tool
def account_balance(account_id: str) -> dict[str, object]:
    """The current balance of a bank account."""
    return {"account_id": account_id, "balance": BALANCES[account_id], "currency": "CHF"}


@tool
def transfer(source: str, target: str, amount: float) -> str:
    """Move money from one account to another."""
    return "done"


@pytest.mark.parametrize(
    ("value", "schema", "text", "others"),
    [
        ("CH-8812", {}, "What is the total balance of accounts CH-8812 and CH-3301?", ["CH-3301"]),
        ("2026-09", {}, "电表 EM-77120 2026年9月和2026年11月一共用了多少度电？", ["2026-11"]),
        ("2026-10", {}, "tidyparse 在2026年10月和11月一共被下载了多少次？", ["2026-11"]),
        ("2026-11", {}, "How did downloads change from October to November 2026?", ["2026-10"]),
        ("2026-12-01", {}, "Payments on December 1 and December 3, 2026?", ["2026-12-03"]),
        ("sales", {"enum": ["sales", "legal", "design"]}, "Who works in sales and legal?", ["legal"]),
        ("战争与和平", {}, "《战争与和平》和《小王子》哪本架上的更多？", ["小王子"]),
        ("St. Anton", {}, "Which resort has more snow today, St. Anton or Zermatt?", ["Zermatt"]),
        ("圣安东", {}, "圣安东和采尔马特的一日缆车票加起来多少钱？", ["采尔马特"]),
        ("番茄炒蛋", {}, "一份番茄炒蛋加一份西班牙海鲜饭一共多少卡路里？", ["西班牙海鲜饭"]),
        ("EM-77120", {}, "电表 EM-77120 2026年9月和11月一共用了多少度电？", []),
        ("CH-8812", {}, "What is the balance of account CH-8812?", []),
        ("CH-0000", {}, "What are CH-8812 and CH-3301 worth?", []),  # a value the request does not name
    ],
)
def test_the_values_named_beside_a_value(value: str, schema: dict[str, object], text: str, others: list[str]) -> None:
    assert siblings(value, schema, text) == others


def test_a_call_for_one_of_two_accounts_is_asked_for_both() -> None:
    model = ScriptedModel(
        [
            reply(None, call("account_balance", {"account_id": "CH-8812"}, id="a")),
            reply(
                None,
                call("account_balance", {"account_id": "CH-8812"}, id="b1"),
                call("account_balance", {"account_id": "CH-3301"}, id="b2"),
            ),
            "Together 2500.2 CHF.",
        ]
    )
    asked = "账户 CH-8812 和 CH-3301 的余额一共是多少？"
    result = Loop(model, [account_balance], layers=[Siblings()]).run_sync(asked)
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": asked},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"b{i}",
                    "type": "function",
                    "function": {"name": "account_balance", "arguments": f'{{"account_id": "{a}"}}'},
                }
                for i, a in ((1, "CH-8812"), (2, "CH-3301"))
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "b1",
            "name": "account_balance",
            "content": content(account_id="CH-8812", balance=980.2, currency="CHF"),
        },
        {
            "role": "tool",
            "tool_call_id": "b2",
            "name": "account_balance",
            "content": content(account_id="CH-3301", balance=1520.0, currency="CHF"),
        },
        {"role": "assistant", "content": "Together 2500.2 CHF."},
    ]
    note = model.requests[1].messages[-1]
    assert note == {
        "role": "system",
        "content": "用户的请求提到了不止一个 account_id：CH-8812, CH-3301。请对其中每一个都调用 account_balance，在这次回复中一起调用。",
    }
    assert len(model.requests) == 3  # the answer step is not asked twice: both accounts have a call


def test_the_first_decision_stands_when_the_model_asks_for_no_more() -> None:
    model = ScriptedModel(
        [
            reply(None, call("account_balance", {"account_id": "CH-8812"}, id="a")),
            reply(None, call("account_balance", {"account_id": "CH-8812"}, id="again")),
            "CH-8812 holds 980.2 CHF.",
        ]
    )
    result = Loop(model, [account_balance], layers=[Siblings()]).run_sync("Balances of CH-8812 and CH-3301?")
    assert [m.get("tool_call_id") for m in result.messages if m["role"] == "tool"] == ["a"]
    assert result.output == "CH-8812 holds 980.2 CHF."
    assert len(model.requests) == 3


def test_a_call_that_already_names_both_values_is_made_as_it_is() -> None:
    model = ScriptedModel(
        [reply(None, call("transfer", {"source": "CH-8812", "target": "CH-3301", "amount": 300})), "Done."]
    )
    result = Loop(model, [transfer], layers=[Siblings()]).run_sync("Move 300 from CH-8812 to CH-3301.")
    assert result.output == "Done." and len(model.requests) == 2
    assert "siblings" in [type(layer).__name__.lower() for layer in small_model_layers()]
