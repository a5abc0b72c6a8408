"""Property-based tests: whatever a caller passes as a transcript either runs or raises the
documented ``TranscriptError``, and whatever a model sends as tool calls ends the run in a defined
status with a valid transcript. Nothing else escapes. Deterministic (``derandomize=True``)."""

from __future__ import annotations

import copy
import json
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from minloop import ErrorCode, Loop, RunResult, TranscriptError, check_transcript, tool
from minloop.doctor import diagnose
from minloop.messages import ROLES
from minloop.testing import FunctionModel, ScriptedModel

FUZZ = settings(derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TRANSCRIPT_EXAMPLES = 300
CONSISTENCY_EXAMPLES = 500
PAYLOAD_EXAMPLES = 300

ran_guarded: list[str] = []


@tool(timeout=1.0)
def echo(text: str = "") -> dict[str, str]:
    """Echo the text."""
    return {"echo": text}


@tool(timeout=1.0, needs_approval=True)
def wipe(path: str = "/") -> str:
    """Never approved in these tests."""
    ran_guarded.append(path)
    return "wiped"


# --- strategies ----------------------------------------------------------------------------------

text = st.text(alphabet='ab {}[]":,', max_size=6)  # JSON's own characters, to hit its edges
scalars = st.none() | st.booleans() | st.integers(-2, 2) | text
jsonish = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
roles = st.sampled_from(sorted(ROLES)) | st.sampled_from(["bot", "", None, 3])
ids = st.sampled_from(["c1", "c2", "c3", "", None])
names = st.sampled_from(["echo", "echo", "wipe", "fake_tool", "", None, 7])
arguments = (
    st.sampled_from(["{}", '{"text": "hi"}', '{"text": 5}', '{"path": "/"}', "{", "", "[1]", "null"])
    | text
    | st.builds(json.dumps, st.dictionaries(st.sampled_from(["text", "path", "x"]), jsonish, max_size=2))
)
wire_call = st.fixed_dictionaries(  # mostly a call a model could send, sometimes a wreck
    {"function": st.fixed_dictionaries({"name": names, "arguments": arguments})},
    optional={"id": ids, "type": st.just("function")},
) | st.fixed_dictionaries(
    {},
    optional={
        "id": ids,
        "type": st.just("function"),
        "function": st.none()
        | st.fixed_dictionaries({}, optional={"name": names, "arguments": arguments | jsonish}),
    },
)
contents = st.none() | text | st.sampled_from(['{"ok": true}', "[]", "not json"]) | jsonish
message = st.fixed_dictionaries(
    {"role": roles},
    optional={
        "content": contents,
        "tool_calls": st.none() | st.lists(wire_call | scalars, max_size=2),
        "tool_call_id": ids,
        "name": st.sampled_from(["echo", "", None]),
    },
)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A well-formed transcript: user turns, tool rounds with their results, answers."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}] if draw(st.booleans()) else []
    for turn in range(draw(st.integers(1, 3))):
        out.append({"role": "user", "content": draw(text)})
        for r in range(draw(st.integers(0, 2))):
            n = draw(st.integers(1, 2))
            calls = [
                {
                    "id": f"t{turn}r{r}c{j}",
                    "type": "function",
                    "function": {"name": "echo", "arguments": "{}"},
                }
                for j in range(n)
            ]
            out.append({"role": "assistant", "content": None, "tool_calls": calls})
            out += [
                {"role": "tool", "tool_call_id": c["id"], "name": "echo", "content": '{"echo": ""}'}
                for c in calls
            ]
        if draw(st.booleans()):
            out.append({"role": "assistant", "content": draw(st.sampled_from(["Done.", "", " "]))})
    return out


retouches = st.fixed_dictionaries(
    {},
    optional={
        "role": roles,
        "content": contents,
        "tool_call_id": ids,
        "tool_calls": st.none() | st.lists(wire_call, max_size=2),
    },
).filter(bool)


@st.composite
def mutated(draw: st.DrawFn) -> list[Any]:
    """A well-formed transcript with one to three of the classic mistakes applied."""
    msgs: list[Any] = draw(conversations())
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(msgs)))
        kind = draw(st.sampled_from(["insert", "delete", "swap", "retouch"]))
        if kind == "insert":
            msgs.insert(i, draw(message | jsonish))
        elif msgs and kind == "delete":
            del msgs[min(i, len(msgs) - 1)]
        elif len(msgs) > 1 and kind == "swap":
            j = min(i, len(msgs) - 2)
            msgs[j], msgs[j + 1] = msgs[j + 1], msgs[j]
        elif msgs:
            j = min(i, len(msgs) - 1)
            msgs[j] = {**msgs[j], **draw(retouches)} if isinstance(msgs[j], dict) else draw(message)
    return msgs


transcripts = conversations() | mutated() | st.lists(message, max_size=4)


# --- properties ----------------------------------------------------------------------------------


def answering_model() -> FunctionModel:
    return FunctionModel(lambda request: "ok", name="answers")


@settings(FUZZ, max_examples=TRANSCRIPT_EXAMPLES)
@given(transcripts)
def test_any_transcript_runs_or_raises_transcript_error(messages: list[Any]) -> None:
    before = copy.deepcopy(messages)
    try:
        result = Loop(answering_model(), [echo], max_steps=2).run_sync(messages)
    except TranscriptError as exc:
        event(f"refused: {exc.rule}")
        assert (exc.index, exc.rule) in {(f.index, f.rule) for f in diagnose(messages)}
    else:
        event("ran")
        assert (result.status, result.output, diagnose(messages)) == ("success", "ok", [])
        assert result.messages == [*before, {"role": "assistant", "content": "ok"}]
    assert messages == before  # the caller's list is never mutated


@settings(FUZZ, max_examples=CONSISTENCY_EXAMPLES)
@given(transcripts | jsonish)
def test_doctor_agrees_with_check_transcript(messages: Any) -> None:
    findings = diagnose(messages)
    try:
        check_transcript(messages)
    except TranscriptError as exc:
        assert (exc.index, exc.rule) in {(f.index, f.rule) for f in findings}
    else:
        assert findings == []


replies = st.fixed_dictionaries(
    {"tool_calls": st.lists(wire_call | scalars, min_size=1, max_size=3)},
    optional={"content": contents},
) | st.fixed_dictionaries({}, optional={"content": contents, "tool_calls": st.none() | st.just([])})


@settings(FUZZ, max_examples=PAYLOAD_EXAMPLES)
@given(st.lists(replies, min_size=1, max_size=4))
def test_any_tool_call_payload_ends_in_a_defined_status(turns: list[dict[str, Any]]) -> None:
    result = Loop(ScriptedModel(turns), [echo, wipe], max_steps=len(turns)).run_sync("Fuzz me.")
    check_transcript(result.messages)
    assert result.status in {"success", "max_steps_exceeded"}
    event(f"{result.status}; errors: {sorted({e for s in result.steps for e in s.errors})}")
    assert len(result.steps) <= len(turns) and ran_guarded == []
    for step in result.steps:
        for r in step.results:
            assert r.error in (None, *get_args(ErrorCode))
            assert json.loads(r.content)["trace_id"] == result.trace_id


# --- found by fuzzing: core bugs, fixed; kept as regression tests -------------------------------


def test_a_call_whose_function_is_not_an_object_does_not_crash_the_run() -> None:
    turns = [{"content": None, "tool_calls": [{"id": "a", "function": "echo"}]}, "ok"]
    result: RunResult = Loop(ScriptedModel(turns), [echo]).run_sync("hi")
    assert result.status == "success"


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": ["user"], "content": "hi"}],
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": ["a"], "function": {"name": "echo", "arguments": "{}"}}],
            },
        ],
        [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "a", "function": {"name": "echo", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": ["a"], "content": "{}"},
        ],
    ],
    ids=["role", "call-id", "tool-call-id"],
)
def test_unhashable_values_raise_transcript_error(messages: list[Any]) -> None:
    with pytest.raises(TranscriptError):
        check_transcript(messages)


def test_deeply_nested_arguments_are_args_invalid_not_a_crash() -> None:
    turns = [
        {
            "content": None,
            "tool_calls": [{"id": "a", "function": {"name": "echo", "arguments": "[" * 100_000}}],
        },
        "ok",
    ]
    result = Loop(ScriptedModel(turns), [echo]).run_sync("hi")
    assert result.steps[0].errors == ["ERR_TOOL_ARGS_INVALID"]


def test_a_transcript_the_check_accepts_can_be_sent() -> None:
    from minloop.models.openai import OpenAIModel

    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", max_retries=0)  # fails before any network use
    with pytest.raises(TranscriptError, match="message 0: bad_content_part"):
        Loop(model, []).run_sync([{"role": "user", "content": [{"type": "text", "text": b"bytes"}]}])
