"""After one result, the same tool again for each other code the request writes in the shape of
one a call took ("orders A1234 and C5502", two ISBNs): made by the embedded model's guide without
asking the model (``shaped.another`` through ``policy.follow_up``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from minloop import ModelRequest, tool
from minloop.models.local import LocalModel
from minloop.models.local.shaped import another, runs


@tool
def get_order_status(order_id: str) -> dict:
    """Look up the status and delivery date of an order by its order number."""
    return {}


@tool
def get_stock_quote(symbol: str) -> dict:
    """Get the latest share price of a company by its stock ticker symbol."""
    return {}


@tool
def find_book(isbn: str) -> dict:
    """Find a book by its ISBN: title and author."""
    return {}


NAMES = {"get_order_status", "get_stock_quote", "find_book"}


def made(name: str, **arguments: str) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def test_each_other_code_of_the_shape_is_looked_up_with_the_same_tool() -> None:
    order = [made("get_order_status", order_id="A1234")]
    assert another("What is the status of orders A1234 and C5502?", order, NAMES) == (
        "get_order_status",
        {"order_id": "C5502"},
    )
    assert another("订单A1234和C5502分别是什么状态？", order, NAMES) == (
        "get_order_status",
        {"order_id": "C5502"},
    )
    book = [made("find_book", isbn="978-0-13-468599-1")]
    asked = "Who wrote 978-0-13-468599-1, and who wrote 978-0-262-03384-8?"
    assert another(asked, book, NAMES) == ("find_book", {"isbn": "978-0-262-03384-8"})
    three = "Where are orders A1234, B7781 and C5502?"
    both = [*order, made("get_order_status", order_id="B7781")]
    assert another(three, both, NAMES) == ("get_order_status", {"order_id": "C5502"})
    assert another(three, [*both, made("get_order_status", order_id="C5502")], NAMES) is None
    assert runs("978-0-13-468599-1") == "9-9-9-9-9" and runs("BA117") == "A9"


def test_what_is_no_second_code_is_left_alone() -> None:
    quote = [made("get_stock_quote", symbol="AAPL")]
    assert another("What is AAPL's price in EUR?", quote, NAMES) is None  # capitals alone: joined only
    assert another("Compare AAPL and MSFT.", quote, NAMES) == ("get_stock_quote", {"symbol": "MSFT"})
    order = [made("get_order_status", order_id="12345")]
    assert another("Where is order 12345? I ordered it 3 days ago.", order, NAMES) is None  # not as long
    dated = [made("get_order_status", order_id="2026-12-05")]
    assert another("Orders of 2026-12-05 and 2026-12-06?", dated, NAMES) is None  # dates: their own rules
    translated = [made("get_order_status", order_id="A1234")]
    assert another("我的订单什么时候到？另一个是C5502。", translated, NAMES) is None  # A1234 is not written
    mixed = [made("get_order_status", order_id="A1234"), made("get_stock_quote", symbol="AAPL")]
    assert another("Orders A1234 and C5502, and AAPL?", mixed, NAMES) is None  # two tools ran


def test_the_embedded_model_makes_the_call_without_deciding_again() -> None:
    call = {
        "id": "call_1_1",
        "type": "function",
        "function": {"name": "get_order_status", "arguments": json.dumps({"order_id": "A1234"})},
    }
    result = {"order_id": "A1234", "status": "shipped", "trace_id": "trc_1"}
    messages = [
        {"role": "user", "content": "What is the status of order A1234, and of order C5502?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1_1", "content": json.dumps(result)},
    ]
    specs = [get_order_status.spec(), get_stock_quote.spec()]
    response = asyncio.run(LocalModel().call(ModelRequest(messages, specs)))
    assert response.message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_2_1",
                "type": "function",
                "function": {"name": "get_order_status", "arguments": '{"order_id": "C5502"}'},
            }
        ],
    }
