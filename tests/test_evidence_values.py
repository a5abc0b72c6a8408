"""The evidence check on values: typed answers read value by value, what the user stated, the
plain statement of a decline, addresses, decimals, and numbers worked out from the results."""

from __future__ import annotations

import json

from minloop.decision import Replacement
from minloop.small.evidence import EvidenceCheck, declines, unsupported
from minloop.small.values import Evidence

NOON = [
    {"role": "user", "content": "What's the weather in Paris right now?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "clock", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"result": "12:00"}'},
]


def test_a_typed_answer_is_read_value_by_value_and_a_bare_hour_only_under_a_time_key() -> None:
    seen = Evidence.of(NOON)
    assert unsupported('{"city": "Paris", "temperature_c": 12.0}', seen) == ["12.0"]
    assert unsupported('{"city": "Paris", "conditions": [{"high": 12}]}', seen) == ["12"]
    assert unsupported('{"city": "Paris", "hour": 12, "time": "12:00"}', seen) == []
    assert unsupported('{"城市": "巴黎", "小时": 12}', seen) == []
    assert unsupported('{"time": "13:00", "ok": true, "note": null}', seen) == ["13:00"]
    assert unsupported("It is 12.", seen) == []  # in a text, a bare number may name the hour
    assert unsupported("It is around 12 degrees Celsius.", seen) == ["12"]  # but not with a unit word
    assert unsupported("巴黎现在气温12度。", seen) == ["12"]
    assert unsupported("[12, 5]", seen) == ["12", "5"]  # values under no key: no hour either


def test_an_answer_giving_back_what_the_user_stated_is_not_unused_after_a_pointless_call() -> None:
    from minloop.small.evidence import UNUSED, restates_user

    stated = [{"role": "user", "content": "Paris is 21.5 C today. Give it as a record."}, *NOON[1:]]
    check = EvidenceCheck(resend_unused=False)
    assert check('{"city": "Paris", "temperature_c": 21.5}', stated) is None
    assert check("It is 21.5 C in Paris.", stated) is None
    assert (
        check("巴黎今天21.5度。", [{"role": "user", "content": "巴黎今天21.5度，记下来。"}, *NOON[1:]])
        is None
    )
    assert restates_user('{"city": "Lyon", "temperature_c": 21.5}', stated) is False  # Lyon: nobody said it
    assert restates_user('{"city": "Paris", "sunny": true}', stated) is True  # a boolean states no value
    assert restates_user("{}", stated) is False and restates_user("Noted.", stated) is False
    assert EvidenceCheck()("Yes, it will rain in Paris tomorrow.", stated) == UNUSED["en"]
    assert isinstance(check('{"city": "Lyon", "temperature_c": 21.5}', stated), Replacement)


def test_the_plain_statement_quotes_what_the_tools_returned_since_the_user_spoke() -> None:
    from minloop.small.notes import DECLINES, QUOTED_CHARS, plain_statement

    asked = [
        {"role": "user", "content": "1+1?"},
        {"role": "tool", "tool_call_id": "old", "name": "calculator", "content": '{"result": 2}'},
        {"role": "user", "content": "2的10次方是多少？"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "calculator", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"result": 1024, "trace_id": "trc_1"}'},
        {"role": "tool", "tool_call_id": "c2", "content": "x" * 500},
    ]
    said = plain_statement(asked, "zh")
    cut = "x" * (QUOTED_CHARS - 1) + "…"
    assert (
        said == f"我无法根据工具返回的结果可靠地回答这个问题：calculator 只给出了 1024，没有你问的内容；"
        f"read_file 只给出了 {cut}，没有你问的内容。"
    )
    assert plain_statement(asked[:4], "en") == DECLINES["en"]  # no result since the user spoke
    assert declines(said) and declines(plain_statement(asked, "en"))


def test_an_address_is_found_only_as_written() -> None:
    asked = [{"role": "user", "content": "Ada Lovelace 的邮箱地址是什么？"}]
    assert unsupported("Ada Lovelace 的邮箱地址是 Ada.Lovelace@ada.com。", Evidence.of(asked)) == [
        "Ada.Lovelace@ada.com"
    ]
    found = [*asked, {"role": "tool", "content": '{"email": "ada.lovelace@example.com"}'}]
    assert unsupported("Ada Lovelace 的邮箱地址是Ada.Lovelace@example.com。", Evidence.of(found)) == []
    assert unsupported("See https://example.com/docs for more.", Evidence.of(asked)) == [
        "https://example.com/docs"
    ]


def test_one_written_with_decimals_is_a_fact() -> None:
    asked = [{"role": "user", "content": "What is the exchange rate from US dollars to yuan today?"}]
    assert unsupported("1.0", Evidence.of(asked)) == ["1.0"]  # a rate nobody gave
    assert unsupported("One dollar is 0.0 yuan.", Evidence.of(asked)) == ["0.0"]
    assert unsupported("I found 1 result and 0 errors.", Evidence.of(asked)) == []  # "one", "none"


def _answered(request: str, *results: object) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [{"role": "user", "content": request}]
    for i, result in enumerate(results):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"result": result})})
    return messages


def test_a_number_worked_out_from_the_results_is_supported_and_an_invented_one_is_not() -> None:
    check = EvidenceCheck(resend_unused=False)
    team = {"team": "sales", "members": ["Maria Lopez", "Omar Haddad"]}
    assert check("销售部有2个人。", _answered("销售部有几个人？", team)) is None  # a count
    legal = {"team": "legal", "members": ["Ann Lee"]}
    together = _answered("How many people work in sales and legal together?", team, legal)
    assert check("Sales and legal have 3 people together.", together) is None  # two counts added
    account = {"account": "CH-8812", "balance": "980.20 CHF"}
    paid = _answered("What will CH-8812 hold after I pay 300 out of it?", account)
    assert check("It will hold 680.20 CHF.", paid) is None  # a result less the user's number
    grades = {"grades": [{"course": "maths", "score": 91}, {"course": "chemistry", "score": 88}]}
    assert check("The total is 179.", _answered("What is S-1's total?", grades)) is None  # a column's sum
    book = {"title": "Moby-Dick", "copies_total": 3, "copies_available": 2}
    pages = _answered("How many pages does Moby-Dick have?", book)
    assert isinstance(check("Moby-Dick has 320 pages.", pages), Replacement)
    shelf = {"title": "War and Peace", "copies_total": 5, "copies_available": 1}
    assert (
        check("There is 1 copy on the shelf.", _answered("How many copies are on the shelf?", shelf)) is None
    )
