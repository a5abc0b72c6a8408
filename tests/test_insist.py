"""A first answer the evidence check rejects, or a first decline, when the request names a tool,
is decided again with a call required (``insist.insisted``): which requests, and with which tools."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from minloop import ModelRequest, ModelResponse, tool
from minloop.models.local import insist
from minloop.models.local.evidence import EvidenceCheck
from minloop.models.local.select import named_by, terms


@tool
def list_files(pattern: str = "*") -> dict:
    """Count and list (largest first) the files in the working folder that match a glob pattern."""
    return {}


@tool
def current_time(timezone: str = "UTC") -> dict:
    """Get the current date and time in a time zone."""
    return {}


@tool
def calculator(expression: str) -> dict:
    """Evaluate an arithmetic expression exactly."""
    return {}


@tool
def search_restaurants(city: str, cuisine: str = "") -> dict:
    """Search restaurants in a city, optionally by cuisine."""
    return {}


@tool
def find_contact(name: str) -> dict:
    """Find a person in the address book by name."""
    return {}


@tool
def get_flight_status(flight: str, date: str) -> dict:
    """Get the status of a flight on a date."""
    return {}


@tool
def get_stock_quote(symbol: str) -> dict:
    """Get the latest share price of a company by its stock ticker symbol, e.g. "AAPL" for Apple."""
    return {}


SPECS = [
    get_flight_status.spec(),
    get_stock_quote.spec(),
    list_files.spec(),
    current_time.spec(),
    calculator.spec(),
    search_restaurants.spec(),
    find_contact.spec(),
]
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}],
}


def insisted(
    prompt: str, answer: str, english: str | None = None, messages: Any = None
) -> tuple[Any, list[Any]]:
    asked: list[ModelRequest] = []

    async def decide(request: ModelRequest, grounded: bool, grounds_in: Any) -> ModelResponse:
        asked.append(request)
        return ModelResponse(message=CALL)

    request = ModelRequest(messages or [{"role": "user", "content": prompt}], SPECS)
    first = ModelResponse(message={"role": "assistant", "content": answer})
    got = asyncio.run(insist.insisted(request, first, decide, EvidenceCheck(), english))
    return got.message, asked


def test_an_invented_first_answer_to_a_request_naming_a_tool_is_decided_again_with_a_call() -> None:
    message, asked = insisted(
        "Which Python file here is the biggest?", "The biggest is notes.md, 1000 bytes."
    )
    assert message == CALL
    assert [(r.tool_choice, [t["function"]["name"] for t in r.tools]) for r in asked] == [
        ("required", ["list_files"])
    ]


def test_a_chinese_request_is_read_in_english() -> None:
    message, asked = insisted("东京现在几点？", "东京现在是14:00。", english="What time is it in Tokyo now?")
    assert message == CALL and [t["function"]["name"] for t in asked[0].tools] == ["current_time"]


def test_a_first_decline_to_a_request_naming_a_tool_is_decided_again() -> None:
    message, asked = insisted(
        "帮我在巴黎找一家日本餐厅。",
        "抱歉，我无法协助完成这个请求。",
        english="Find a Japanese restaurant in Paris.",
    )
    assert message == CALL
    assert [(r.tool_choice, [t["function"]["name"] for t in r.tools]) for r in asked] == [
        ("required", ["search_restaurants"])  # "find" says what find_contact does, not what it is about
    ]


def test_a_first_answer_that_only_gives_back_the_request_is_decided_again() -> None:
    english = "What is the status of flight LH401 on December 10, 2026?"
    message, asked = insisted(
        "LH401 航班2026年12月10日的状态如何？", "LH401航班2026-12-10状态", english=english
    )
    assert message == CALL and [t["function"]["name"] for t in asked[0].tools] == ["get_flight_status"]


def test_an_answer_the_check_accepts_or_a_request_naming_no_tool_stays() -> None:
    declined = "I can't answer that: none of my tools provides it."
    assert insisted("Find the capital of France.", declined) == (
        {"role": "assistant", "content": declined},
        [],
    )
    invented = "The capital of France is Paris, with 2,100,000 people."
    assert insisted("What is the capital of France?", invented) == (
        {"role": "assistant", "content": invented},
        [],
    )
    said = "You said the file is called notes.md."
    assert insisted("My file is called notes.md.", said) == ({"role": "assistant", "content": said}, [])


def test_after_a_call_the_answer_stays() -> None:
    result = {"role": "tool", "tool_call_id": "c1", "content": '{"count": 2}'}
    messages = [{"role": "user", "content": "Which Python file here is the biggest?"}, CALL, result]
    answer = "The biggest is notes.md, 1000 bytes."
    assert insisted("", answer, messages=messages) == ({"role": "assistant", "content": answer}, [])


def test_a_tool_is_named_by_its_description_too() -> None:
    message, asked = insisted("What is Microsoft's share price?", "Microsoft's share price is 100 dollars.")
    assert message == CALL and [t["function"]["name"] for t in asked[0].tools] == ["get_stock_quote"]
    assert named_by(get_stock_quote.spec()) == {"stock", "quot", "share", "price", "ticker", "symbol"}


def test_the_words_of_a_question_name_no_tool() -> None:
    @tool
    def parking_spaces(garage: str) -> dict:
        """How many free spaces a parking garage has right now."""
        return {}

    assert named_by(parking_spaces.spec()) == {"park", "space", "garag", "free"}  # not "how many"


def test_a_unit_symbol_names_the_tool_by_the_units_name() -> None:
    @tool
    def convert_units(value: float, from_unit: str, to_unit: str) -> dict:
        """Convert a length or a weight from one unit to another (km, m, mi, kg, lb)."""
        return {}

    named = named_by(convert_units.spec())
    assert {"mile", "kilometr", "pound", "英里"} <= named and "inch" not in named
    assert terms("How many kilometres are 26.2 miles?")[1] in named


def test_the_calculator_is_named_by_the_operation_its_example_shows() -> None:
    from minloop.builtins import calculator

    # 'e.g. "(17 + 5) * 3"' does not end the first sentence, and its operations are words
    named = named_by(calculator.spec())
    assert {"add", "multipli", "power", "calcul"} <= named and not named & {"17", "5", "3", "2"}
    assert named & set(terms("What is 1234 times 5678?")) == {"multipli"}


def test_a_required_call_on_invented_values_is_decided_among_the_other_tools() -> None:
    specs = [
        {"type": "function", "function": {"name": n, "parameters": {}}} for n in ("convert_time", "get_time")
    ]
    asked = ModelRequest([{"role": "user", "content": "What time is it in Tokyo?"}], specs, "required")
    again = insist.others(asked, {"convert_time": ["time"]})
    assert again is not None and [t["function"]["name"] for t in again.tools] == ["get_time"]
    assert again.messages == asked.messages and again.tool_choice == "required"
    assert insist.others(asked, {"convert_time": ["time"], "get_time": ["timezone"]}) is None  # none left
    assert (
        insist.others(replace(asked, tool_choice="auto"), {"convert_time": ["time"]}) is None
    )  # not required


def test_a_question_about_now_or_the_users_own_things_answered_without_a_call_is_decided_again() -> None:
    # "雨" has no fact the check could reject, and no word of the request names a tool
    message, asked = insisted("伦敦现在在下雨吗？", "雨", english="Is it raining in London now?")
    assert message == CALL
    assert [(r.tool_choice, len(r.tools)) for r in asked] == [("required", len(SPECS))]  # every tool
    plan = "2026年12月25日，我计划去旅行。"
    message, asked = insisted(
        "我2026年12月25日有什么安排？", plan, english="What are my plans for 2026-12-25?"
    )
    assert message == CALL and asked[0].tool_choice == "required"


def test_a_statement_or_a_question_about_no_time_or_person_stays_answered() -> None:
    said = "Noted: your meeting is at 3 pm today."
    assert insisted("My meeting is at 3 pm today.", said) == ({"role": "assistant", "content": said}, [])
    answer = "Paris is the capital of France."
    assert insisted("Which city is the capital of France?", answer) == (
        {"role": "assistant", "content": answer},
        [],
    )
