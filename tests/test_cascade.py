"""The cascade of the two embedded models: when the larger one takes over (rules that need no model)."""

from __future__ import annotations

import json
from typing import Any

from minloop import ModelRequest, tool
from minloop.models.local.cascade import Cascade


@tool
def get_weather(city: str, unit: str = "C") -> dict:
    """Get the current weather in a city: temperature and sky condition."""
    return {}


SPECS = [get_weather.spec()]
ASKED = [{"role": "user", "content": "What's the weather in Paris?"}]


def call(name: str, arguments: Any) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    function = {"name": name, "arguments": raw}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }


def ran(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        *ASKED,
        call("get_weather", {"city": "Paris"}),
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({**result, "trace_id": "trc_1"})},
    ]


def test_a_call_its_tool_accepts_stays_with_the_small_model() -> None:
    cascade = Cascade()
    assert not cascade.fails(ModelRequest(ASKED, SPECS), call("get_weather", {"city": "Paris"}))


def test_a_call_to_no_offered_tool_or_with_refused_arguments_is_taken_over() -> None:
    cascade, request = Cascade(), ModelRequest(ASKED, SPECS)
    assert cascade.fails(request, call("get_stock_quote", {"symbol": "AAPL"}))
    assert cascade.fails(request, call("get_weather", {"town": "Paris"}))
    assert cascade.fails(request, call("get_weather", {"city": 75}))
    assert cascade.fails(request, call("get_weather", '{"city": "Par'))


def test_an_answer_without_a_tool_on_the_first_decision_is_taken_over() -> None:
    cascade = Cascade()
    declined = {"role": "assistant", "content": "I can't look up the weather."}
    assert cascade.fails(ModelRequest(ASKED, SPECS), declined)
    assert not cascade.fails(ModelRequest(ASKED, SPECS, tool_choice="none"), declined)
    assert not cascade.fails(ModelRequest(ASKED, []), {"role": "assistant", "content": "Hello!"})


def test_an_answer_the_evidence_check_would_not_accept_is_taken_over() -> None:
    cascade, request = Cascade(), ModelRequest(ran({"temperature_c": 18, "sky": "sunny"}), SPECS)
    assert not cascade.fails(request, {"role": "assistant", "content": "It is 18°C and sunny in Paris."})
    assert cascade.fails(request, {"role": "assistant", "content": "It is 21°C and sunny in Paris."})
    assert cascade.fails(request, {"role": "assistant", "content": ""})


def test_the_answer_check_is_shared_by_both_models() -> None:
    cascade = Cascade()
    assert cascade.small.answer_check is cascade.answer_check is cascade.large.answer_check
    own = object()
    cascade.answer_check = own
    assert cascade.small.answer_check is own and cascade.large.answer_check is own
    assert cascade.name == "qwen2.5-coder-0.5b+qwen2.5-coder-1.5b"
