"""Every run its own id: never twice in one process, and never one that a shared run store
already holds (drawn again before anything is written under it)."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

import minloop.loop
from minloop import Loop, SQLiteRunStore, new_trace_id
from minloop.testing import ScriptedModel
from minloop.trace.sqlite import SQLiteSink, TraceStore

SERVERS = Path(__file__).parent / "servers"
STATE = {
    "messages": [{"role": "user", "content": "first"}],
    "steps": [],
    "invalid_streak": 0,
    "tool_steps": 0,
}


def test_a_process_never_gives_one_id_twice_in_one_second() -> None:
    now = datetime(2026, 12, 5, 12, 0, 0)
    ids = [new_trace_id(now) for _ in range(100_000)]
    assert len(set(ids)) == 100_000
    assert all(re.fullmatch(r"trc_261205120000_[0-9a-f]{6}", i) for i in ids)


def test_an_id_the_store_holds_is_drawn_again_before_anything_is_written_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteRunStore(tmp_path / "runs.db")
    taken = "trc_261205120000_aaaaaa"
    store.create(taken, "host:1:a", 0.0, {}, STATE, "first", None)
    drawn = iter([taken, "trc_261205120000_bbbbbb"])
    monkeypatch.setattr(minloop.loop, "new_trace_id", lambda: next(drawn))
    sink = SQLiteSink(tmp_path / "traces.db")
    result = Loop(ScriptedModel(["hello"]), store=store, sinks=[sink]).run_sync("second")
    assert result.trace_id == "trc_261205120000_bbbbbb" and result.output == "hello"
    first = store.load(taken)
    assert (first.row.status, first.row.prompt, first.state) == ("running", "first", STATE)
    with TraceStore(tmp_path / "traces.db") as traces:
        assert [r.trace_id for r in traces.runs()] == ["trc_261205120000_bbbbbb"]
        assert traces.events(taken) == []


def test_two_processes_sharing_a_store_give_100000_runs_in_one_second_each_its_own_id(tmp_path: Path) -> None:
    store = str(tmp_path / "runs.db")
    SQLiteRunStore(store).close()  # the tables, before two processes race to make them
    script = [sys.executable, str(SERVERS / "id_child.py"), store, "50000"]
    both = [
        subprocess.Popen(script, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outputs = [p.communicate(timeout=240) for p in both]
    assert [p.returncode for p in both] == [0, 0], [err for _, err in outputs]
    ids = [line for out, _ in outputs for line in out.split()]
    assert len(ids) == 100_000 and len(set(ids)) == 100_000
    assert all(re.fullmatch(r"trc_261205120000_[0-9a-f]{6}", i) for i in ids)
    with SQLiteRunStore(store) as shared:
        assert len(shared.runs(limit=200_000)) == 100_000


def test_an_id_the_trace_database_holds_is_drawn_again_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = "trc_261205120000_cccccc"
    with SQLiteSink(tmp_path / "traces.db") as sink:
        Loop(ScriptedModel(["first"]), sinks=[sink]).run_sync("first")
    with TraceStore(tmp_path / "traces.db") as traces:
        [first] = traces.runs()
    drawn = iter([first.trace_id, taken])
    monkeypatch.setattr(minloop.loop, "new_trace_id", lambda: next(drawn))
    with SQLiteSink(tmp_path / "traces.db") as sink:  # another process, sharing the trace database
        result = Loop(ScriptedModel(["second"]), sinks=[sink]).run_sync("second")
    assert result.trace_id == taken
    with TraceStore(tmp_path / "traces.db") as traces:
        assert traces.trace(first.trace_id).run == first  # untouched
        assert traces.trace(taken).run.prompt == "second"
