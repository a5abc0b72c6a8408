"""Typed output, a budget and the answer at the limit on the embedded model (temperature 0)."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from pydantic import AfterValidator, BaseModel

from minloop import Budget, Loop, tool
from minloop.builtins import calculator
from minloop.decision import LIMIT_TEXT
from minloop.models.local import LocalModel

from .conftest import content, masked

pytestmark = pytest.mark.local_model


class Product(BaseModel):
    expression: str
    result: int


def no_city(value: str) -> str:
    raise ValueError("no city is accepted")


class Capital(BaseModel):
    city: Annotated[str, AfterValidator(no_city)]  # a rule the JSON schema cannot carry


def test_a_typed_answer_decoded_under_the_schema(local: LocalModel) -> None:
    result = Loop(local, [calculator], max_steps=4, output=Product).run_sync(
        "What is 19 * 23? Use the calculator."
    )
    assert result.status == "success", result.to_dict()
    assert result.output_value == Product(expression="19 * 23", result=437)
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "What is 19 * 23? Use the calculator."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "calculator", "arguments": '{"expression": "19 * 23"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1_1",
            "name": "calculator",
            "content": content(expression="19 * 23", result=437),
        },
        {"role": "assistant", "content": '{"expression": "19 * 23", "result": 437}'},
    ]


def test_an_answer_that_never_validates_ends_after_decay(local: LocalModel) -> None:
    result = Loop(local, [], max_steps=10, output=Capital).run_sync("Which city is the capital of France?")
    assert result.status == "output_invalid" and result.output_value is None
    assert [(s.decision, s.tool_choice) for s in result.steps] == [
        ("unfinished", "auto"),
        ("unfinished", "auto"),
        ("unfinished", "none"),
    ]
    assert result.error is not None and "city: Value error, no city is accepted" in result.error
    assert result.messages == [
        {"role": "user", "content": "Which city is the capital of France?"},
        *[{"role": "assistant", "content": '{"city": "Paris"}'}] * 3,
    ]


def test_the_prompt_budget_counts_with_the_models_own_tokenizer(local: LocalModel) -> None:
    asked = "What is 2 + 2?"
    exact = local.count_tokens([{"role": "user", "content": asked}], [calculator.spec()])
    result = Loop(local, [calculator], budget=Budget(prompt_tokens=10)).run_sync(asked)
    assert (result.status, result.steps) == ("budget_exceeded", ())
    assert result.error == (
        f"budget exceeded: prompt_tokens: 0 spent and about {exact} more for the next call's prompt "
        f"would exceed the limit of 10 by {exact - 10}"
    )


def test_an_answer_at_the_step_limit(local: LocalModel) -> None:
    result = Loop(local, [calculator], max_steps=1, answer_at_limit=True).run_sync(
        "What is 19 * 23? Use the calculator."
    )
    assert (result.status, result.forced_by) == ("max_steps_exceeded", "max_steps")
    assert [(s.decision, s.tool_choice, s.control) for s in result.steps][1] == ("answer", "none", LIMIT_TEXT)
    assert result.output == "437"  # the tool's result; an earlier wording of the limit text got a refusal
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]


class Weather(BaseModel):
    city: str
    temperature_c: float


@tool
def clock() -> str:
    """Current time."""
    return "12:00"


def _clock_read(call_id: str, result: str) -> list[dict[str, object]]:
    """The model's read of the clock and what came back."""
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "clock", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "name": "clock", "content": result},
    ]


def _called_clock(asked: str) -> list[dict[str, object]]:
    return [{"role": "user", "content": asked}, *_clock_read("call_1_1", content(result="12:00"))]


def test_a_typed_answer_no_tool_gave_ends_as_output_invalid_not_success(local: LocalModel) -> None:
    asked = "How is the weather in Paris right now?"
    result = Loop(local, [clock], output=Weather).run_sync(asked)
    assert (result.status, result.output_value) == ("output_invalid", None)
    decline = (
        "I can't answer that reliably from what the tools returned: clock gave 12:00, not what you asked for."
    )
    messages = masked(result.messages, result.trace_id)
    sent_back = messages[3]["content"]  # the model writes the hour as 12 or 12.0 from run to run
    assert json.loads(sent_back) == {"city": "Paris", "temperature_c": 12}  # the hour, sent back
    refused = content(
        error="this exact call was already made 2 times; its result is above. Answer with it, or change the arguments",
        code="ERR_TOOL_REPEATED",
        tool="clock",
    )
    assert messages == [
        *_called_clock(asked),
        {"role": "assistant", "content": sent_back},
        *_clock_read("call_3_1", content(result="12:00")),  # the model reads the clock again
        *_clock_read("call_4_1", refused),  # the loop refuses a third read
        {"role": "assistant", "content": decline},
    ]
    assert result.error == f"the answer check ended the run with no valid output: {decline}"


def test_a_typed_answer_from_the_users_own_values_passes_after_a_pointless_call(local: LocalModel) -> None:
    asked = "Paris is 21.5 C today. Give it as a record."
    result = Loop(local, [clock], output=Weather).run_sync(asked)
    assert (result.status, result.output_value) == ("success", Weather(city="Paris", temperature_c=21.5))
    assert masked(result.messages, result.trace_id) == [
        *_called_clock(asked),
        {"role": "assistant", "content": '{"city": "Paris", "temperature_c": 21.5}'},
    ]
