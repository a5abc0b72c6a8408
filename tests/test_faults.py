"""S20, the seed's four stress groups, driven by the fault toolkit in ``minloop.testing``:
long chains up to max_steps, tool timeouts, invalid or unknown tool calls (a clarification, not a
crash) and malformed tool output. Controlled failure: never a crash, never a silent stop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from minloop import Loop, Model, RunResult, Tool, check_transcript
from minloop.decision import CONTROL_TEXT, DECAY_TEXT, quoting
from minloop.testing import (
    ScriptedModel,
    blank_model,
    call,
    failing_model,
    forever_caller,
    hallucinating_model,
    hanging_model,
    hanging_tool,
    huge_output_tool,
    invalid_json_model,
    no_call_model,
    raising_tool,
    reply,
    schema_breaking_tool,
    slow_tool,
    text_and_call_model,
    unserializable_tool,
)
from minloop.testing.matrix import STEP

from .conftest import TID, content, masked

USER = {"role": "user", "content": "Help me with my task."}


def run(model: Model, tools: list[Tool], **options: Any) -> RunResult:
    result = Loop(model, tools, **options).run_sync(USER["content"])
    check_transcript(result.messages)  # whatever happened, the transcript stays valid
    return result


def asked(name: str, arguments: str, call_id: str, text: str | None = None) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def answered(name: str, call_id: str, body: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": body}


# --- group 1: long multi-step chains up to max_steps ------------------------------------------


def test_s20_long_chain_runs_up_to_max_steps_and_answers() -> None:
    model = ScriptedModel([*(reply(None, call("step", {"n": i})) for i in range(1, 8)), "All 7 steps done."])
    with model:
        result = run(model, [STEP], max_steps=8)
    assert (result.status, result.output, len(result.steps)) == ("success", "All 7 steps done.", 8)
    expected = [USER]
    for i in range(1, 8):
        expected += [
            asked("step", json.dumps({"n": i}), f"call_{i}_1"),
            answered("step", f"call_{i}_1", content(done=i)),
        ]
    assert masked(result.messages, result.trace_id) == [
        *expected,
        {"role": "assistant", "content": "All 7 steps done."},
    ]
    assert [s.control for s in result.steps] == [None, *[quoting(CONTROL_TEXT, [USER])] * 7]


def test_s20_a_chain_past_max_steps_stops_with_the_last_message() -> None:
    result = run(forever_caller("step", lambda i: {"n": i}), [STEP], max_steps=6)
    assert (result.status, result.error, len(result.steps)) == (
        "max_steps_exceeded",
        "no answer within 6 steps",
        6,
    )
    assert len(result.messages) == 1 + 2 * 6
    assert result.final_message == asked("step", '{"n": 6}', "call_6_1")


# --- group 2: tool timeouts --------------------------------------------------------------------


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync-thread"])
def test_s20_a_hanging_tool_is_cut_by_its_timeout_and_the_run_goes_on(sync: bool) -> None:
    model = ScriptedModel([reply(None, call("hang")), "The resource did not answer."])
    with model:
        result = run(model, [hanging_tool(timeout=0.05, sync=sync)])
    assert (result.status, result.output) == ("success", "The resource did not answer.")
    assert masked(result.messages, result.trace_id)[1:3] == [
        asked("hang", "{}", "call_1_1"),
        answered(
            "hang",
            "call_1_1",
            content(error="tool did not finish within 0.05s", code="ERR_TOOL_TIMEOUT", tool="hang"),
        ),
    ]
    assert result.steps[0].valid  # a timeout is the tool's fault: no decay


def test_s20_a_tool_hanging_past_the_run_budget_ends_in_timeout_keeping_completed_steps() -> None:
    model = ScriptedModel([reply(None, call("step", {"n": 1})), reply(None, call("hang")), "unused"])
    result = run(model, [STEP, hanging_tool(timeout=30.0)], time_budget=0.3)
    assert (result.status, result.error) == ("timeout", "the run's 0.3s time budget ran out in step 2")
    assert masked(result.messages, result.trace_id) == [
        USER,
        asked("step", '{"n": 1}', "call_1_1"),
        answered("step", "call_1_1", content(done=1)),
    ]
    assert result.final_message == asked("step", '{"n": 1}', "call_1_1")


def test_s20_a_slow_tool_inside_its_timeout_just_answers() -> None:
    model = ScriptedModel([reply(None, call("slow", {"delay": 0.05})), "Done."])
    with model:
        result = run(model, [slow_tool(delay=0.05, timeout=0.5)])
    assert (result.status, result.steps[0].errors) == ("success", [])
    assert masked(result.messages, result.trace_id)[2] == answered("slow", "call_1_1", content(waited=0.05))


# --- group 3: invalid and unknown tool calls ---------------------------------------------------


def test_s20_an_unknown_tool_is_answered_with_a_clarification_not_a_crash() -> None:
    result = run(hallucinating_model("fake_tool"), [STEP])
    assert result.status == "success"
    assert (
        result.output
        == "Sorry, I can't recognize 'fake_tool'. I can use: step. Could you rephrase your request?"
    )
    body = json.loads(result.messages[2]["content"])
    assert body == {
        "error": "unrecognized tool name 'fake_tool', turned into a clarification request",
        "code": "ERR_TOOL_UNKNOWN",
        "tool": "fake_tool",
        "available_tools": ["step"],
        "clarification": {
            "question": "I can't use a tool called 'fake_tool'. Could you rephrase what you need? I can use: step.",
            "next": "ask the user this question in your answer",
        },
        "trace_id": result.trace_id,
    }


def test_s20_a_model_that_keeps_hallucinating_is_made_to_answer() -> None:
    result = run(hallucinating_model("fake_tool", times=10), [STEP])
    assert (result.status, [s.decision for s in result.steps]) == (
        "success",
        ["tool_calls", "tool_calls", "answer"],
    )
    assert [(s.tool_choice, s.valid, s.control) for s in result.steps] == [
        ("auto", False, None),
        ("auto", False, quoting(CONTROL_TEXT, [USER])),
        ("none", True, DECAY_TEXT),
    ]


def test_s20_invalid_json_arguments_go_back_to_the_model_as_data() -> None:
    result = run(invalid_json_model("step", arguments='{"n": 1'), [STEP])
    error = "arguments are not valid JSON: Expecting ',' delimiter: line 1 column 8 (char 7)"
    assert masked(result.messages, result.trace_id) == [
        USER,
        asked("step", '{"n": 1', "call_1_1"),
        answered("step", "call_1_1", content(error=error, code="ERR_TOOL_ARGS_INVALID", tool="step")),
        {"role": "assistant", "content": f"I could not call step: {error}"},
    ]


def test_s20_the_same_call_forever_is_stopped_by_the_repetition_guard() -> None:
    result = run(forever_caller("step", {"n": 1}), [STEP])
    assert (result.status, result.output) == ("success", "I will stop calling tools now.")
    assert [(s.errors, s.tool_choice) for s in result.steps] == [
        ([], "auto"),
        ([], "auto"),
        (["ERR_TOOL_REPEATED"], "auto"),
        ([], "none"),
    ]


# --- group 4: malformed tool output ------------------------------------------------------------


def fitted_head(chars: int, limit: int = 16_000) -> str:
    """The head a result of ``chars`` x's keeps: the longest prefix of its JSON whose marker fits."""
    tid = "trc_yymmddHHMMSS_abcdef"  # as long as a real trace id
    full = json.dumps({"result": "x" * chars, "trace_id": tid})
    marker = {"result_truncated": True, "original_chars": len(full), "trace_id": tid}
    return next(
        full[:n] for n in range(limit, -1, -1) if len(json.dumps({**marker, "head": full[:n]})) <= limit
    )


@pytest.mark.parametrize(
    ("fault", "body"),
    [
        (
            schema_breaking_tool(),
            {
                "error": "tool returned data that does not match Reading",
                "code": "ERR_TOOL_SCHEMA_MISMATCH",
                "tool": "broken_schema",
                "problems": [
                    {"loc": "city", "msg": "Field required"},
                    {
                        "loc": "temperature",
                        "msg": "Input should be a valid integer, unable to parse string as an integer",
                    },
                ],
            },
        ),
        (
            unserializable_tool(),
            {
                "error": "result is not JSON-serializable: Unable to serialize unknown type: <class 'object'>",
                "code": "ERR_TOOL_SCHEMA_MISMATCH",
                "tool": "opaque",
            },
        ),
        (
            raising_tool(exc=ValueError("bad row 7")),
            {"error": "ValueError: bad row 7", "code": "ERR_TOOL_FAILED", "tool": "boom"},
        ),
        (
            huge_output_tool(chars=20_000),
            {
                "result_truncated": True,
                "original_chars": len(
                    json.dumps({"result": "x" * 20_000, "trace_id": "trc_yymmddHHMMSS_abcdef"})
                ),
                "head": fitted_head(20_000),
            },
        ),
    ],
    ids=["schema-mismatch", "not-json", "raises", "huge"],
)
def test_s20_malformed_tool_output_becomes_a_standard_result(fault: Tool, body: dict[str, Any]) -> None:
    model = ScriptedModel([reply(None, call(fault.name)), "Reported."])
    with model:
        result = run(model, [fault])
    assert (result.status, result.output) == ("success", "Reported.")
    assert json.loads(masked(result.messages, result.trace_id)[2]["content"]) == {**body, "trace_id": TID}


# --- the model's other faults ------------------------------------------------------------------


@pytest.mark.parametrize("tool_calls", [None, []], ids=["none", "empty-list"])
def test_s20_none_and_empty_tool_calls_are_answers(tool_calls: list[Any] | None) -> None:
    result = run(no_call_model(tool_calls, content="Hello!"), [STEP])
    assert (result.status, result.messages, len(result.steps)) == (
        "success",
        [USER, {"role": "assistant", "content": "Hello!"}],
        1,
    )


def test_s20_text_plus_calls_ends_the_round() -> None:
    result = run(text_and_call_model("step", {"n": 2}, text="Let me check."), [STEP])
    assert masked(result.messages, result.trace_id) == [
        USER,
        asked("step", '{"n": 2}', "call_1_1", "Let me check."),
        answered("step", "call_1_1", content(done=2)),
        {"role": "assistant", "content": f"Done: {json.dumps({'done': 2, 'trace_id': TID})}"},
    ]


def test_s20_blank_replies_decay_to_an_answer_or_stop_at_max_steps() -> None:
    result = run(blank_model(), [STEP])
    assert (result.status, result.messages[1:]) == (
        "success",
        [{"role": "assistant", "content": "Here is my answer."}],
    )
    assert [(s.decision, s.tool_choice) for s in result.steps] == [
        ("blank", "auto"),
        ("blank", "auto"),
        ("answer", "none"),
    ]
    stubborn = run(blank_model(obey_tool_choice=False), [STEP], max_steps=4)
    assert (stubborn.status, stubborn.messages, stubborn.final_message) == (
        "max_steps_exceeded",
        [USER],
        None,
    )


def test_s20_a_failing_or_hanging_model_ends_in_a_defined_status() -> None:
    failed = run(failing_model(), [STEP])
    assert (failed.status, failed.error, failed.messages) == (
        "model_error",
        "ModelError: upstream down",
        [USER],
    )
    hung = run(hanging_model(), [STEP], time_budget=0.1)
    assert (hung.status, hung.error, hung.messages) == (
        "timeout",
        "the run's 0.1s time budget ran out in step 1",
        [USER],
    )


def test_s20_cancelling_a_run_stuck_in_a_tool_reports_cancelled() -> None:
    async def scenario() -> RunResult | None:
        steps = Loop(ScriptedModel([reply(None, call("hang"))]), [hanging_tool(timeout=30.0)]).iter("wait")
        task = asyncio.ensure_future(anext(steps))
        while not steps.state.calls.seen:  # the call passed the repetition guard: the tool is running
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return steps.result

    result = asyncio.run(scenario())
    assert result is not None
    assert (result.status, result.error, result.messages) == (
        "cancelled",
        "the run was cancelled",
        [{"role": "user", "content": "wait"}],
    )


def test_the_fault_toolkit_is_exported_from_minloop_testing() -> None:
    import minloop.testing
    from minloop.testing import faults

    assert minloop.testing.__all__ == sorted(minloop.testing.__all__)
    factories = {n for n in faults.__all__ if n.endswith(("_tool", "_model", "_caller"))}
    assert factories <= set(minloop.testing.__all__)
