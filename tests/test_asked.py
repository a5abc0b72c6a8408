"""An English request that names what it asks for ("the humidity") when no tool that ran gives
anything of it: the answer is replaced by the plain statement of what the tools gave
(``asked.not_given``, read by ``EvidenceCheck``)."""

from __future__ import annotations

import json
from typing import Any

from minloop import tool
from minloop.decision import Replacement
from minloop.models.local.asked import not_given
from minloop.models.local.evidence import EvidenceCheck


@tool
def get_weather(city: str) -> dict:
    """Get the current weather in a city: temperature and sky condition."""
    return {}


@tool
def find_contact(name: str) -> dict:
    """Find a person in the address book by name; returns their email and phone number."""
    return {}


MENU = [get_weather.spec(), find_contact.spec()]
WEATHER = {"city": "Paris", "temperature": 18, "unit": "celsius", "condition": "sunny"}
CONTACT = {"found": True, "name": "Ada Lovelace", "email": "ada@example.com", "phone": "+44 20 7946 0018"}


def conversation(request: str, name: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
    return [
        {"role": "user", "content": request},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": name, "content": json.dumps(result)},
    ]


def test_what_no_result_name_or_description_holds_is_not_given() -> None:
    asked = {
        "What's the humidity in Paris?": ("get_weather", WEATHER, "humidity"),
        "What is Ada Lovelace's home address?": ("find_contact", CONTACT, "home address"),
        "What's the weather like in Paris right now?": ("get_weather", WEATHER, None),  # the tool's name
        "What is Ada Lovelace's email address?": ("find_contact", CONTACT, None),  # a key, the description
        "What are the phone numbers of Ada and Alan?": ("find_contact", CONTACT, None),  # "numbers", "number"
        "What's the current temperature in Paris?": ("get_weather", WEATHER, None),  # "current" says when
        "How humid is Paris?": ("get_weather", WEATHER, None),  # not named after "what is": left alone
    }
    for request, (name, result, expected) in asked.items():
        assert not_given(conversation(request, name, result), MENU) == expected, request


def test_nothing_is_looked_for_before_a_tool_served() -> None:
    failed = {"error": "the weather service did not answer", "code": "ERR_TOOL_FAILED"}
    assert not_given(conversation("What's the humidity in Paris?", "get_weather", failed), MENU) is None
    assert not_given([{"role": "user", "content": "What's the humidity in Paris?"}], MENU) is None


def test_an_answer_from_the_nearest_field_is_replaced_by_what_the_tools_gave() -> None:
    messages = conversation("What's the humidity in Paris?", "get_weather", WEATHER)
    verdict = EvidenceCheck(menu=lambda _: MENU)("The humidity in Paris is 18 degrees Celsius.", messages)
    assert verdict == Replacement(
        "I can't answer that reliably from what the tools returned: get_weather gave city Paris, "
        "temperature 18, unit celsius, condition sunny, not what you asked for."
    )


def test_a_decline_a_chinese_request_and_an_answer_to_what_was_given_stay() -> None:
    check = EvidenceCheck(menu=lambda _: MENU)
    humidity = conversation("What's the humidity in Paris?", "get_weather", WEATHER)
    assert check("The weather tool does not give the humidity; it is 18 °C and sunny.", humidity) is None
    chinese = conversation("巴黎现在的湿度是多少？", "get_weather", WEATHER)
    assert check("巴黎现在18°C，晴。", chinese) is None
    weather = conversation("What's the weather like in Paris right now?", "get_weather", WEATHER)
    assert check("It is 18 degrees Celsius and sunny in Paris.", weather) is None
