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

from .conftest import content, masked, repeated

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


REFUSED = repeated("clock")


def _reads_and_answers(asked: str, messages: list[dict[str, object]], answer: str) -> list[dict[str, object]]:
    """The transcript ``messages`` must be, given where the model read the clock and where it
    answered: how often the model reads the clock before it answers differs between CPUs (greedy
    decoding on AVX2 and AVX-512 builds), what each step holds does not. Every read is of the
    clock, with the id of its step; the loop runs two and refuses the third; every answer is
    ``answer``."""
    expected: list[dict[str, object]] = [{"role": "user", "content": asked}]
    steps = reads = 0
    for message in messages[1:]:
        if message["role"] != "assistant":
            continue
        steps += 1
        if message.get("tool_calls"):
            reads += 1
            expected += _clock_read(f"call_{steps}_1", content(result="12:00") if reads < 3 else REFUSED)
        else:
            expected.append({"role": "assistant", "content": answer})
    return expected


def test_a_typed_answer_no_tool_gave_ends_as_output_invalid_not_success(local: LocalModel) -> None:
    asked = "How is the weather in Paris right now?"
    result = Loop(local, [clock], output=Weather).run_sync(asked)
    assert (result.status, result.output_value) == ("output_invalid", None)
    decline = (
        "I can't answer that reliably from what the tools returned: clock gave 12:00, not what you asked for."
    )
    messages = masked(result.messages, result.trace_id)
    answers = [m["content"] for m in messages[1:-1] if m["role"] == "assistant" and not m.get("tool_calls")]
    assert len(answers) == 1  # sent back once, then replaced
    assert json.loads(str(answers[0])) == {"city": "Paris", "temperature_c": 12}  # the hour: 12 or 12.0
    assert messages == [
        *_reads_and_answers(asked, messages[:-1], str(answers[0])),
        {"role": "assistant", "content": decline},
    ]
    assert "tool_calls" in messages[1]  # the clock was read before any answer
    assert result.error == f"the answer check ended the run with no valid output: {decline}"


def test_a_typed_answer_from_the_users_own_values_passes_after_a_pointless_call(local: LocalModel) -> None:
    asked = "Paris is 21.5 C today. Give it as a record."
    result = Loop(local, [clock], output=Weather).run_sync(asked)
    assert (result.status, result.output_value) == ("success", Weather(city="Paris", temperature_c=21.5))
    messages = masked(result.messages, result.trace_id)
    answer = '{"city": "Paris", "temperature_c": 21.5}'
    assert messages == _reads_and_answers(asked, messages, answer)
    assert messages[-1] == {"role": "assistant", "content": answer}
    assert "tool_calls" in messages[1]  # the clock was read before any answer
