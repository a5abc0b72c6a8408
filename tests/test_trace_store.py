"""The SQLite trace store: what is written, what is read back, and what survives SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest

from minloop import Loop, MinloopError, ModelError, tool
from minloop.decision import CONTROL_TEXT, quoting
from minloop.testing import FunctionModel, RecordingSink, ScriptedModel, call, reply
from minloop.trace.sqlite import RunSummary, SQLiteSink, TraceCall, TraceStep, TraceStore, default_path

from .conftest import TID, content, masked


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def untimed(step: TraceStep, trace_id: str) -> TraceStep:
    """A step without its clock readings and with the trace id masked, for whole-structure asserts."""
    calls = tuple(
        replace(c, latency=None, content=(c.content or "").replace(trace_id, TID) or None) for c in step.calls
    )
    request = tuple(json.loads(json.dumps(step.request).replace(trace_id, TID)))
    return replace(
        step,
        started=0.0,
        model_latency=None,
        tools_started=None,
        tool_latency=None,
        calls=calls,
        request=request,
    )


def test_default_path_prefers_the_variable_then_xdg_then_home() -> None:
    assert default_path({"MINLOOP_TRACE_DB": "/x/t.db", "XDG_DATA_HOME": "/d"}) == Path("/x/t.db")
    assert default_path({"XDG_DATA_HOME": "/d"}) == Path("/d/minloop/traces.db")
    assert default_path({}) == Path.home() / ".local" / "share" / "minloop" / "traces.db"


def test_every_event_is_stored_and_read_back_unchanged(tmp_path: Path) -> None:
    seen = RecordingSink()
    model = ScriptedModel([reply(None, call("add", {"a": 2, "b": 3}), call("nope")), "5"])
    with model, SQLiteSink(tmp_path / "t.db") as sink:
        result = Loop(model, [add], sinks=[seen, sink]).run_sync("2 + 3?")
    with TraceStore(tmp_path / "t.db") as store:
        assert store.events(result.trace_id) == seen.events
        trace = store.trace(result.trace_id)
        assert store.runs() == [trace.run]
    assert trace.run == RunSummary(
        trace_id=result.trace_id,
        started=seen.events[0].time,
        ended=seen.events[-1].time,
        status="success",
        model="scripted",
        steps=2,
        prompt_tokens=0,
        completion_tokens=0,
        duration=result.duration,
        error=None,
        prompt="2 + 3?",
    )


def test_steps_are_folded_from_the_events(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(None, call("add", {"a": 2, "b": "x"})),
            reply("Let me add.", call("add", {"a": 2, "b": 3})),
            "5",
        ]
    )
    with model, SQLiteSink(tmp_path / "t.db") as sink:
        result = Loop(model, [add], sinks=[sink]).run_sync("2 + 3?")
    with TraceStore(tmp_path / "t.db") as store:
        trace = store.trace("last")
    transcript = masked(result.messages, result.trace_id)
    control = {"role": "system", "content": quoting(CONTROL_TEXT, [{"role": "user", "content": "2 + 3?"}])}
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "evaluated_tokens": None}
    assert [untimed(s, result.trace_id) for s in trace.steps] == [
        TraceStep(
            index=1,
            started=0.0,
            offered=("add",),
            request=tuple(transcript[:1]),
            response=transcript[1],
            usage=usage,
            calls=(
                TraceCall(
                    "call_1_1", "add", '{"a": 2, "b": "x"}', transcript[2]["content"], "ERR_TOOL_ARGS_INVALID"
                ),
            ),
            decision="tool_calls",
            valid=False,
            complete=True,
        ),
        TraceStep(
            index=2,
            started=0.0,
            offered=("add",),
            request=(*transcript[:3], control),
            response=transcript[3],
            usage=usage,
            calls=(TraceCall("call_2_1", "add", '{"a": 2, "b": 3}', content(result=5)),),
            decision="tool_calls",
            valid=True,
            complete=True,
        ),
        TraceStep(
            index=3,
            started=0.0,
            offered=("add",),
            request=(*transcript[:5], control),
            response=transcript[5],
            usage=usage,
            decision="answer",
            valid=True,
            complete=True,
        ),
    ]
    assert transcript[2]["content"].startswith('{"error": "arguments do not match the tool\'s schema"')
    assert trace.end is not None and trace.end["final_message"] == {"role": "assistant", "content": "5"}


def test_a_failed_model_call_leaves_an_incomplete_step(tmp_path: Path) -> None:
    def broken(request: object) -> str:
        raise ModelError("endpoint down")

    with SQLiteSink(tmp_path / "t.db") as sink:
        result = Loop(FunctionModel(broken), sinks=[sink]).run_sync("hi")
    with TraceStore(tmp_path / "t.db") as store:
        trace = store.trace(result.trace_id)
    assert (trace.run.status, trace.run.steps, trace.run.error) == (
        "model_error",
        0,
        "ModelError: endpoint down",
    )
    assert [(s.index, s.model_error, s.decision, s.complete) for s in trace.steps] == [
        (1, "ModelError: endpoint down", None, False)
    ]


def test_runs_are_listed_newest_first_and_filtered_by_status(tmp_path: Path) -> None:
    ids = []
    with SQLiteSink(tmp_path / "t.db") as sink:
        for turns, steps in ((["a"], 3), ([reply(None, call("add", {"a": 1, "b": 1}))], 1), (["c"], 3)):
            ids.append(
                Loop(ScriptedModel(turns), [add], max_steps=steps, sinks=[sink]).run_sync("go").trace_id
            )
    with TraceStore(tmp_path / "t.db") as store:
        assert [(r.trace_id, r.status) for r in store.runs()] == [
            (ids[2], "success"),
            (ids[1], "max_steps_exceeded"),
            (ids[0], "success"),
        ]
        assert [r.trace_id for r in store.runs(status="max_steps_exceeded")] == [ids[1]]
        assert [r.trace_id for r in store.runs(limit=1)] == [ids[2]]
        assert store.resolve("last") == ids[2]
        assert store.resolve(ids[0][:-2]) == ids[0]
        with pytest.raises(Exception, match="matches several traces"):
            store.resolve("trc_")
        with pytest.raises(Exception, match="no trace 'trc_nope'"):
            store.resolve("trc_nope")


def test_concurrent_runs_on_one_sink_are_kept_apart(tmp_path: Path) -> None:
    async def both(sink: SQLiteSink) -> list[str]:
        loops = [
            Loop(ScriptedModel([reply(None, call("add", {"a": i, "b": i})), str(2 * i)]), [add], sinks=[sink])
            for i in (1, 2)
        ]
        results = await asyncio.gather(*(loop.run("double") for loop in loops))
        return [r.trace_id for r in results]

    with SQLiteSink(tmp_path / "t.db") as sink:
        ids = asyncio.run(both(sink))
    with TraceStore(tmp_path / "t.db") as store:
        finals = [store.trace(i).end["final_message"]["content"] for i in ids]  # type: ignore[index]
        assert finals == ["2", "4"]
        assert sorted(r.steps for r in store.runs()) == [2, 2]


def test_database_is_in_wal_mode_with_an_index_on_trace_id(tmp_path: Path) -> None:
    SQLiteSink(tmp_path / "t.db").close()
    conn = sqlite3.connect(tmp_path / "t.db")
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    indexes = {row[1]: row[2] for row in conn.execute("PRAGMA index_list(events)")}
    assert "events_by_trace" in indexes
    assert [row[2] for row in conn.execute("PRAGMA index_info(events_by_trace)")] == ["trace_id", "id"]


def test_a_missing_database_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="no trace database at"):
        TraceStore(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


CHILD = """
import sys, time
from pathlib import Path
from minloop import Loop, tool
from minloop.testing import ScriptedModel, call, reply
from minloop.trace.sqlite import SQLiteSink

gate = Path(sys.argv[2])

@tool(timeout=600)
def wait(step: int) -> dict:
    '''Return the step number; step 3 blocks until the gate file exists.'''
    while step == 3 and not gate.exists():
        time.sleep(0.01)
    return {"step": step}

model = ScriptedModel([reply(None, call("wait", {"step": i})) for i in (1, 2, 3)] + ["done"])
Loop(model, [wait], sinks=[SQLiteSink(sys.argv[1])]).run_sync("wait three times")
"""


def _wait_for_blocked_step(db: Path, child: subprocess.Popen[bytes]) -> str:
    """The child's trace id, once its step-3 tool call is recorded (the tool is then blocking)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else "child exited"
        try:
            with TraceStore(db) as store:
                runs = store.runs()
                if runs and any(
                    e.kind == "tool_call" and e.step == 3 for e in store.events(runs[0].trace_id)
                ):
                    return runs[0].trace_id
        except MinloopError:
            pass  # the child has not created the database yet
        time.sleep(0.05)
    raise AssertionError("the child never reached step 3")


def test_completed_steps_survive_sigkill(tmp_path: Path) -> None:
    script, db, gate = tmp_path / "child.py", tmp_path / "t.db", tmp_path / "gate"
    script.write_text(textwrap.dedent(CHILD))
    child = subprocess.Popen([sys.executable, str(script), str(db), str(gate)], stderr=subprocess.PIPE)
    try:
        trace_id = _wait_for_blocked_step(db, child)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    with TraceStore(db) as store:
        trace = store.trace(trace_id)
    assert (trace.run.status, trace.run.steps, trace.end) == ("running", 2, None)
    summary = [
        (
            s.index,
            s.decision,
            s.complete,
            [(c.name, c.arguments, c.content and json.loads(c.content)["step"]) for c in s.calls],
        )
        for s in trace.steps
    ]
    assert summary == [
        (1, "tool_calls", True, [("wait", '{"step": 1}', 1)]),
        (2, "tool_calls", True, [("wait", '{"step": 2}', 2)]),
        (3, None, False, [("wait", '{"step": 3}', None)]),
    ]
