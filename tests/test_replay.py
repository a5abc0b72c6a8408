"""Replay: a stored run reruns offline on the recorded model turns and tool results, and the first
place where the current code behaves differently is reported."""

from __future__ import annotations

from pathlib import Path

from minloop import Controls, Loop, ModelError, tool
from minloop.decision import CONTROL_TEXT, quoting
from minloop.testing import ChatServer, FunctionModel, RecordingSink, ScriptedModel, call, reply
from minloop.trace.replay import Divergence, first_divergence, replay_sync
from minloop.trace.sqlite import SQLiteSink, Trace, TraceStore

from .conftest import masked


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(name="add")
def add_off_by_one(a: int, b: int) -> int:
    """Add two integers."""
    return a + b + 1


def recorded(turns: list[object], tools: list[object], **options: object) -> tuple[Trace, object]:
    sink = RecordingSink()
    with ScriptedModel(turns) as model:  # type: ignore[arg-type]
        result = Loop(model, tools, sinks=[sink], **options).run_sync("2 + 3?")  # type: ignore[arg-type]
    return Trace.from_events(sink.events), result


def test_a_stored_run_replays_offline_to_the_same_final_message(tmp_path: Path) -> None:
    script = [
        reply(None, call("add", {"a": 2, "b": 3}, id="c1"), call("nope", {}, id="c2")),
        reply("2 + 3 = 5"),
    ]
    with ChatServer(script) as server, SQLiteSink(tmp_path / "t.db") as sink:
        from minloop.models.openai import OpenAIModel

        original = Loop(
            OpenAIModel("gpt-x", base_url=server.base_url, api_key="sk-test-abcdefgh123"), [add], sinks=[sink]
        ).run_sync("2 + 3?")
    with TraceStore(tmp_path / "t.db") as store:  # the server is gone: the replay cannot reach it
        report = replay_sync(store.trace(original.trace_id))
    assert report.reproduced and report.divergence is None
    assert (report.result.status, report.result.final_message) == (
        "success",
        {"role": "assistant", "content": "2 + 3 = 5"},
    )
    assert masked(report.result.messages, report.result.trace_id) == masked(
        original.messages, original.trace_id
    )
    assert [s.errors for s in report.result.steps] == [["ERR_TOOL_UNKNOWN"], []]


def test_recorded_error_codes_drive_the_same_decay() -> None:
    turns = [reply(None, call("add", {"a": "x"})), reply(None, call("add", {"a": 1})), "I cannot add that."]
    trace, original = recorded(turns, [add])
    report = replay_sync(trace)
    assert report.reproduced
    assert [(s.tool_choice, s.errors, s.valid) for s in report.result.steps] == [
        ("auto", ["ERR_TOOL_ARGS_INVALID"], False),
        ("auto", ["ERR_TOOL_ARGS_INVALID"], False),
        ("none", [], True),
    ]
    assert [(s.tool_choice, s.errors, s.valid) for s in original.steps] == [  # type: ignore[attr-defined]
        (s.tool_choice, s.errors, s.valid) for s in report.result.steps
    ]


def test_changed_behaviour_is_reported_at_the_first_divergence() -> None:
    trace, _ = recorded([reply(None, call("add", {"a": 2, "b": 3})), "5"], [add])
    report = replay_sync(trace, controls=Controls(control_message=False))  # as if the loop stopped sending it
    assert not report.reproduced
    assert report.divergence == Divergence(
        step=2,
        what="the messages sent to the model",
        path="[3]",
        recorded={
            "role": "system",
            "content": quoting(CONTROL_TEXT, [{"role": "user", "content": "2 + 3?"}]),
        },
        replayed=None,
    )
    assert report.divergence.describe() == "step 2, the messages sent to the model at [3]"
    assert report.result.output == "5"  # the recorded turns still play to the end


def test_live_tools_rerun_the_tools_and_compare_their_results() -> None:
    trace, _ = recorded([reply(None, call("add", {"a": 2, "b": 3})), "5"], [add])
    assert replay_sync(trace, tools=[add]).reproduced
    report = replay_sync(trace, tools=[add_off_by_one])
    assert report.live_tools
    assert report.divergence == Divergence(
        step=1, what="the tool results", path="[0].content.result", recorded=5, replayed=6
    )


def test_a_recorded_model_failure_replays_as_a_failure() -> None:
    def broken(request: object) -> str:
        raise ModelError("endpoint down")

    sink = RecordingSink()
    Loop(FunctionModel(broken), sinks=[sink]).run_sync("hi")
    report = replay_sync(Trace.from_events(sink.events))
    assert report.reproduced
    assert (report.result.status, len(report.result.steps)) == ("model_error", 0)


def test_a_missing_or_extra_step_is_a_divergence() -> None:
    long_trace, _ = recorded([reply(None, call("add", {"a": 1, "b": 1})), "2"], [add])
    short_trace, _ = recorded([reply(None, call("add", {"a": 1, "b": 1}))], [add], max_steps=1)
    found = first_divergence(long_trace, short_trace)
    assert found == Divergence(
        2, "a missing step", "", {"decision": "answer", "calls": [], "model_error": None}, None
    )


def test_redacted_runs_still_replay() -> None:
    turns = [reply(None, call("add", {"a": 1, "b": 2})), "Bearer abc.def-123 says 3"]
    trace, _ = recorded(turns, [add])
    assert "abc.def-123" not in str([e.data for e in trace.events])
    report = replay_sync(trace)
    assert report.reproduced and report.result.output == "[REDACTED] says 3"
