"""The loop and its decision controls: S1, S2, S3, S8, S9, S10, S18, S26."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from minloop import Controls, Loop, Message, MinloopError, ModelError, ModelRequest, TranscriptError, tool
from minloop.decision import CONTROL_TEXT, DECAY_TEXT, quoting
from minloop.testing import FunctionModel, ScriptedModel, call, reply

from .conftest import TID, content, masked


@tool
def get_weather(city: str) -> dict[str, object]:
    """Get current weather for a city."""
    return {"city": city, "condition": "Sunny", "temperature": 25}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def control(request: str) -> str:
    """The control message sent after tool results, quoting the user's ``request``."""
    return quoting(CONTROL_TEXT, [{"role": "user", "content": request}])


CONTROL = {"role": "system", "content": control("Weather in Beijing?")}


def test_s1_s2_four_steps_close_the_loop() -> None:
    model = ScriptedModel([reply(None, call("get_weather", {"city": "Beijing"})), "Sunny, 25 C in Beijing."])
    with model:
        result = Loop(model, [get_weather]).run_sync("Weather in Beijing?")
    assert result.status == "success"
    assert result.output == "Sunny, 25 C in Beijing."
    expected = [
        {"role": "user", "content": "Weather in Beijing?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1_1",
            "name": "get_weather",
            "content": content(city="Beijing", condition="Sunny", temperature=25),
        },
        {"role": "assistant", "content": "Sunny, 25 C in Beijing."},
    ]
    assert masked(result.messages, result.trace_id) == expected
    # what the model received each round: the transcript so far, plus the control message (S18)
    sent = [masked(list(r.messages), result.trace_id) for r in model.requests]
    assert sent == [expected[:1], [*expected[:3], CONTROL]]
    assert [s.decision for s in result.steps] == ["tool_calls", "answer"]
    assert result.final_message == expected[-1]


def test_s2_max_steps_exceeded_keeps_the_last_message() -> None:
    model = ScriptedModel([reply(None, call("add", {"a": 1, "b": i})) for i in range(3)])
    with model:
        result = Loop(model, [add], max_steps=3).run_sync("count forever")
    assert result.status == "max_steps_exceeded"
    assert result.error == "no answer within 3 steps"
    assert len(result.steps) == 3
    assert result.final_message == result.messages[-2]  # the last assistant message
    assert result.messages[-1]["role"] == "tool"


def test_s2_a_tool_call_ends_the_round_even_with_text() -> None:
    model = ScriptedModel([reply("Let me check.", call("add", {"a": 2, "b": 3})), "5"])
    with model:
        result = Loop(model, [add]).run_sync("2+3?")
    assert result.status == "success"
    assert result.messages[1]["content"] == "Let me check."
    assert [s.decision for s in result.steps] == ["tool_calls", "answer"]
    assert json.loads(result.messages[2]["content"])["result"] == 5


def test_s3_tool_choice_auto_by_default_and_forcing_one_function() -> None:
    model = ScriptedModel(["hi", reply(None, call("add", {"a": 1, "b": 1})), "2"])
    with model:
        Loop(model, [add, get_weather]).run_sync("hello")
        Loop(model, [add, get_weather], tool_choice="add").run_sync("1+1")
    assert [r.tool_choice for r in model.requests] == [
        "auto",
        {"type": "function", "function": {"name": "add"}},
        "auto",  # forced once, then auto
    ]
    assert [t["function"]["name"] for t in model.requests[0].tools] == ["add", "get_weather"]


def test_s8_empty_list_and_none_tool_calls_are_answers() -> None:
    model = ScriptedModel([{"content": "A", "tool_calls": []}, {"content": "B", "tool_calls": None}])
    with model:
        loop = Loop(model, [add])
        assert [loop.run_sync("x").output, loop.run_sync("y").output] == ["A", "B"]


def test_s9_unknown_tool_is_rerouted_not_a_crash() -> None:
    model = ScriptedModel(
        [
            reply(None, call("fake_tool", {"q": 1})),
            "Sorry, I can't recognize 'fake_tool'. Could you describe what you need differently?",
        ]
    )
    with model:
        result = Loop(model, [get_weather]).run_sync("use fake_tool")
    assert result.status == "success"
    tool_msg = result.messages[2]
    assert masked([tool_msg], result.trace_id)[0] == {
        "role": "tool",
        "tool_call_id": "call_1_1",
        "name": "fake_tool",
        "content": json.dumps(
            {
                "error": "unrecognized tool name 'fake_tool', turned into a clarification request",
                "code": "ERR_TOOL_UNKNOWN",
                "tool": "fake_tool",
                "available_tools": ["get_weather"],
                "clarification": {
                    "question": "I can't use a tool called 'fake_tool'. Could you rephrase what you need? I can use: get_weather.",
                    "next": "ask the user this question in your answer",
                },
                "trace_id": TID,
            }
        ),
    }
    assert result.steps[0].results[0].rerouted_to == "ask_for_clarification"
    assert result.steps[0].valid is False


def test_s10_decision_decay_forces_a_direct_answer() -> None:
    model = ScriptedModel(
        [
            reply(None, call("nope", {})),  # invalid: unknown tool
            reply(None, call("add", '{"a": "x"')),  # invalid: broken JSON
            "I cannot compute that; please give two numbers.",
        ]
    )
    with model:
        result = Loop(model, [add]).run_sync("add something")
    assert result.status == "success"
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "none"]
    assert model.requests[2].messages[-1] == {"role": "system", "content": DECAY_TEXT}
    assert [s.valid for s in result.steps] == [False, False, True]
    assert [s.control for s in result.steps] == [None, control("add something"), DECAY_TEXT]


def test_s10_a_valid_round_resets_the_decay_counter() -> None:
    model = ScriptedModel(
        [
            reply(None, call("nope", {})),
            reply(None, call("add", {"a": 1, "b": 2})),
            reply(None, call("nope", {})),
            "3",
        ]
    )
    with model:
        Loop(model, [add]).run_sync("1+2")
    assert [r.tool_choice for r in model.requests] == ["auto"] * 4


def test_s10_blank_replies_count_as_invalid_and_are_not_stored() -> None:
    model = ScriptedModel([{"content": ""}, {"content": None, "tool_calls": []}, "Here is my answer."])
    with model:
        result = Loop(model, [add]).run_sync("hello")
    assert result.status == "success"
    assert [s.decision for s in result.steps] == ["blank", "blank", "answer"]
    assert model.requests[2].tool_choice == "none"
    assert result.messages == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "Here is my answer."},
    ]


def test_s18_control_message_role_and_switch() -> None:
    script = [reply(None, call("add", {"a": 1, "b": 1})), "2"]
    model = ScriptedModel(script)
    with model:
        Loop(model, [add], controls=Controls(control_role="user")).run_sync("1+1")
    assert model.requests[1].messages[-1] == {"role": "user", "content": control("1+1")}
    model = ScriptedModel(script)
    with model:
        Loop(model, [add], controls=Controls(control_message=False)).run_sync("1+1")
    assert model.requests[1].messages[-1]["role"] == "tool"


def test_s5_legacy_function_role() -> None:
    model = ScriptedModel([reply(None, call("add", {"a": 1, "b": 1})), "2"])
    with model:
        result = Loop(model, [add], controls=Controls(result_role="function")).run_sync("1+1")
    assert masked(result.messages, result.trace_id)[2] == {
        "role": "function",
        "name": "add",
        "tool_call_id": "call_1_1",
        "content": content(result=2),
    }


def test_s26_the_loop_keeps_no_state_between_runs() -> None:
    def echo(request: ModelRequest) -> str:
        return f"seen {len(request.messages)} message(s): {request.messages[-1]['content']}"

    loop = Loop(FunctionModel(echo), [add])

    async def many() -> list[str | None]:
        results = await asyncio.gather(*(loop.run(f"q{i}") for i in range(20)))
        return [r.output for r in results]

    assert asyncio.run(many()) == [f"seen 1 message(s): q{i}" for i in range(20)]
    first, second = loop.run_sync("a"), loop.run_sync("a")
    assert first.messages == second.messages and first.trace_id != second.trace_id


def test_step_wise_driving_with_iter() -> None:
    model = ScriptedModel(
        [reply(None, call("add", {"a": 1, "b": 2})), reply(None, call("add", {"a": 3, "b": 4})), "10"]
    )
    loop = Loop(model, [add])

    async def drive() -> list[tuple[int, str, int]]:
        seen = []
        run = loop.iter("1+2, then 3+4")
        async for step in run:
            seen.append((step.index, step.decision, len(run.messages)))
        assert run.result is not None and run.result.status == "success"
        return seen

    with model:
        assert asyncio.run(drive()) == [(1, "tool_calls", 3), (2, "tool_calls", 5), (3, "answer", 6)]


def test_message_list_input_is_checked_and_not_mutated() -> None:
    history = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "1+1?"}]
    model = ScriptedModel(["2"])
    with model:
        result = Loop(model, [add]).run_sync(history)
    assert len(history) == 2
    assert result.messages == [*history, {"role": "assistant", "content": "2"}]
    with pytest.raises(TranscriptError, match="message 1: orphan_tool_result"):
        Loop(model, [add]).run_sync(
            [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c", "content": "{}"}]
        )


def test_model_failure_ends_with_model_error_and_keeps_records() -> None:
    def flaky(request: ModelRequest) -> object:
        if len(request.messages) > 1:
            raise ModelError("connection refused")
        return reply(None, call("add", {"a": 1, "b": 1}))

    result = Loop(FunctionModel(flaky), [add]).run_sync("1+1")  # type: ignore[arg-type]
    assert (result.status, result.error) == ("model_error", "ModelError: connection refused")
    assert len(result.steps) == 1 and len(result.messages) == 3


def test_run_sync_refuses_a_running_event_loop() -> None:
    async def inside() -> None:
        Loop(ScriptedModel([]), []).run_sync("x")

    with pytest.raises(MinloopError, match="inside a running event loop"):
        asyncio.run(inside())


def test_scripted_model_fails_loudly() -> None:
    from minloop import ScriptError

    model = ScriptedModel(["a"])
    loop = Loop(model, [])
    loop.run_sync("x")
    with pytest.raises(ScriptError, match="called 2 times but only 1 turn"):
        loop.run_sync("y")
    with pytest.raises(ScriptError, match="1 scripted turn\\(s\\) were never used"):
        with ScriptedModel(["a", "b"]) as unused:
            Loop(unused, []).run_sync("x")


def test_s23_optional_conclusion_check() -> None:
    note = "That was not an answer yet: give the result."

    def concluded(text: str, messages: Sequence[Message]) -> str | None:
        assert messages[0] == {"role": "user", "content": "2+2?"}
        return note if text.rstrip().endswith("...") else None

    model = ScriptedModel(["Let me check that...", "It is 4."])
    with model:
        result = Loop(model, [add], controls=Controls(answer_check=concluded)).run_sync("2+2?")
    assert result.status == "success" and result.output == "It is 4."
    assert [s.decision for s in result.steps] == ["unfinished", "answer"]
    assert result.messages == [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "Let me check that..."},
        {"role": "assistant", "content": "It is 4."},
    ]
    assert model.requests[1].messages[-1] == {"role": "system", "content": note}


def test_the_control_message_quotes_the_users_request() -> None:
    model = ScriptedModel([reply(None, call("add", {"a": 1, "b": 2})), "3"])
    asked = "What is {a} + {b}? 算一下 1 加 2。"  # braces and Chinese stay as written
    with model:
        result = Loop(model, [add]).run_sync(asked)
    sent = model.requests[1].messages[-1]
    assert sent == {
        "role": "system",
        "content": 'Use the tool results above to answer the user\'s request: "What is {a} + {b}? 算一下 1 加 2。" '
        "If they answer it, give the user the final answer; if more information is needed, call another "
        "tool; if the request is unclear, ask the user to clarify.",
    }
    assert result.steps[1].control == sent["content"] and len(result.messages) == 4  # sent, not stored
    long = quoting(CONTROL_TEXT, [{"role": "user", "content": "word " * 100}])
    assert '"' + "word " * 59 + 'word…"' in long  # 300 characters on one line
    assert quoting("Answer {request} now.", []) == "Answer (see above) now."


def test_the_embedded_model_reads_the_control_message_without_the_quote() -> None:
    from minloop.models.local.decoding import READ_CONTROL, renderable

    sent = {"role": "system", "content": control("Weather in Beijing?")}
    assert renderable([{"role": "user", "content": "Weather in Beijing?"}, sent])[1] == {
        "role": "system",
        "content": READ_CONTROL,
    }
