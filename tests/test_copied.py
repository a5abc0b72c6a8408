"""A call that copies its tool's own example ("BA117" from the description) takes the request's
one value of the same shape instead ("LH401"), else the model is asked once more
(``copied.asked_again``, ``copied.reshaped``)."""

from __future__ import annotations

import json
from typing import Any

from minloop import ModelRequest, tool
from minloop.models.local import copied


@tool
def get_flight_status(flight_number: str, date: str) -> dict:
    """Get the status of a flight on a date.

    Args:
        flight_number: the flight's code, e.g. "BA117".
        date: the date, as YYYY-MM-DD.
    """
    return {}


def call(arguments: dict[str, Any]) -> dict[str, Any]:
    fn = {"name": "get_flight_status", "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": fn}],
    }


def asked(request: str, arguments: dict[str, Any]) -> Any:
    model_request = ModelRequest([{"role": "user", "content": request}], [get_flight_status.spec()])
    return copied.asked_again(model_request, call(arguments), {"get_flight_status": ["flight_number"]})


def test_the_example_is_replaced_by_the_requests_code_of_its_shape() -> None:
    copied = {"flight_number": "BA117", "date": "2026-12-10"}
    assert asked("LH401 航班2026-12-10的状态如何？", copied) == call(
        {"flight_number": "LH401", "date": "2026-12-10"}
    )


def test_without_one_code_of_that_shape_the_model_is_asked_again() -> None:
    copied = {"flight_number": "BA117", "date": "2026-12-10"}
    for request in ("Is my flight on time on 2026-12-10?", "Is LH401 or AF123 on time on 2026-12-10?"):
        again = asked(request, copied)
        assert isinstance(again, ModelRequest), request
        assert again.tool_choice == {"type": "function", "function": {"name": "get_flight_status"}}
        assert again.messages[-1]["content"].startswith('"BA117" is only the example in the description')
        assert asked_twice(again, copied) is None  # once


def asked_twice(request: ModelRequest, arguments: dict[str, Any]) -> Any:
    return copied.asked_again(request, call(arguments), {"get_flight_status": ["flight_number"]})


def test_a_word_is_no_code() -> None:
    assert (
        copied.reshaped(
            call({"flight_number": "Paris"})["tool_calls"][0],
            ["flight_number"],
            [{"role": "user", "content": "Is the flight to Tokyo on time?"}],
        )
        is None
    )
    assert copied.shape("BA117") == "AA999" and copied.shape("Ab-1") == "Aa-9"


def calculator_call(expression: str) -> dict[str, Any]:
    fn = {"name": "calculator", "arguments": json.dumps({"expression": expression})}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": fn}],
    }


def test_a_value_in_the_examples_form_with_its_numbers_is_not_grounded() -> None:
    from minloop.builtins import calculator

    spec = calculator.spec()  # its description: e.g. "(17 + 5) * 3" or "sqrt(2) ** 2"
    asked = [{"role": "user", "content": "What is 17 * 23? Use the calculator."}]
    for expression, lost in [
        ("(17 + 23) * 3", {"calculator": ["expression"]}),  # the example's "* 3", the user's numbers
        ("(17 + 5) * 3", {"calculator": ["expression"]}),  # the example itself
        ("17 * 23", {}),
        ("(17 + 23) * 23", {}),  # the example's form, with the user's numbers only
    ]:
        message, missing = copied.grounded_calls(calculator_call(expression), [spec], asked)
        assert (message, missing) == (calculator_call(expression), lost), expression
    asked = [{"role": "user", "content": "What is (17 + 5) * 3?"}]  # the user's own: grounded
    assert copied.grounded_calls(calculator_call("(17 + 5) * 3"), [spec], asked)[1] == {}


def test_a_date_in_the_form_of_the_examples_date_is_left_to_the_date_rules() -> None:
    # "December" gives no 12, but the month is the user's: a date example is no pattern to copy
    dated = {"function": {"name": "f", "description": 'On a date, e.g. "2026-12-10".', "parameters": {}}}
    assert not copied.borrows("2026-12-11", dated, lambda n: n in (11, 2026))
    timed = {"function": {"name": "f", "description": 'At a time, e.g. "14:30".', "parameters": {}}}
    assert not copied.borrows("14:45", timed)
    counted = {"function": {"name": "f", "description": 'A count, e.g. "3 rooms".', "parameters": {}}}
    assert copied.borrows("3 rooms", counted) and not copied.borrows("3 rooms", counted, lambda n: n == 3)


def test_a_value_borrowing_the_examples_number_is_asked_for_again_with_a_note() -> None:
    from minloop.builtins import calculator

    asked = ModelRequest([{"role": "user", "content": "17 乘以 23 等于多少？"}], [calculator.spec()])
    again = copied.asked_again(asked, calculator_call("(17 + 23) * 3"), {"calculator": ["expression"]})
    assert isinstance(again, ModelRequest)
    assert again.tool_choice == {"type": "function", "function": {"name": "calculator"}}
    assert again.messages[-1] == {
        "role": "system",
        "content": "“(17 + 23) * 3”只是 calculator 说明中的示例，不是用户问的内容。请用用户所问对象的 expression 调用 calculator。",
    }
