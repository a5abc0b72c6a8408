"""``minloop batch``: many scripted tasks, bounded concurrency, resume after a crash, and Ray."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from minloop.batch import finished_ids, read_tasks, run_batch
from minloop.cli.app import app
from minloop.exceptions import MinloopError, MissingDependencyError

PAUSE_TOOLS = '''
import asyncio


async def pause(ms: int) -> dict:
    """Wait a few milliseconds.

    Args:
        ms: How long.
    """
    await asyncio.sleep(ms / 1000)
    return {"waited_ms": ms}
'''


def calc_task(i: int) -> dict[str, Any]:
    """A two-step scripted run on the built-in calculator: call, then answer."""
    call = {
        "type": "function",
        "function": {"name": "calculator", "arguments": json.dumps({"expression": f"{i}*2"})},
    }
    return {
        "id": f"t{i}",
        "prompt": f"{i} * 2?",
        "model": "scripted",
        "tools": "builtins",
        "script": [{"content": None, "tool_calls": [call]}, f"{i * 2}"],
    }


def pause_task(i: int, ms: int) -> dict[str, Any]:
    call = {"type": "function", "function": {"name": "pause", "arguments": json.dumps({"ms": ms})}}
    return {
        "id": f"t{i}",
        "prompt": "wait",
        "model": "scripted",
        "tools": "pause_tools:pause",
        "max_steps": 3,
        "script": [{"content": None, "tool_calls": [call]}, f"done {i}"],
    }


def write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_task_file_runs_to_one_record_per_task(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [calc_task(i) for i in range(20)])
    summary = run_batch(tasks, tmp_path / "out.jsonl", concurrency=4)
    assert (summary.total, summary.skipped, summary.statuses, summary.complete) == (
        20,
        0,
        {"success": 20},
        True,
    )
    got = {r["id"]: r for r in records(tmp_path / "out.jsonl")}
    first = got["t3"]
    assert first["trace_id"].startswith("trc_") and first["duration"] >= 0
    assert {k: v for k, v in first.items() if k not in ("trace_id", "duration")} == {
        "id": "t3",
        "status": "success",
        "output": "6",
        "final_message": {"role": "assistant", "content": "6"},
        "steps": 2,
        "tokens": {"prompt": 0, "completion": 0, "total": 0},
        "model_calls": 2,
        "tool_calls": 1,
        "cost": None,
        "output_value": None,
        "forced_by": None,
        "error": None,
    }
    assert sorted(got) == sorted(f"t{i}" for i in range(20))
    assert all(r["output"] == str(int(r["id"][1:]) * 2) for r in got.values())


def test_1000_tasks_survive_a_kill_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pause_tools.py").write_text(PAUSE_TOOLS)
    tasks = write_tasks(tmp_path / "tasks.jsonl", [pause_task(i, 15) for i in range(1000)])
    out = tmp_path / "out.jsonl"
    code = f"from pathlib import Path; from minloop.batch import run_batch; run_batch(Path({str(tasks)!r}), Path({str(out)!r}))"
    child = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 50):
            time.sleep(0.01)
    finally:
        child.send_signal(signal.SIGKILL)  # a crash: no cleanup, maybe a line half written
        child.wait()
    before = finished_ids(out)
    assert 50 <= len(before) < 1000

    monkeypatch.chdir(tmp_path)
    summary = run_batch(tasks, out, concurrency=32)
    assert (summary.skipped, summary.statuses, summary.complete) == (
        len(before),
        {"success": 1000 - len(before)},
        True,
    )
    got = records(out)
    assert sorted(r["id"] for r in got) == sorted(f"t{i}" for i in range(1000))  # each exactly once
    assert all(
        r["status"] == "success" and r["output"] == f"done {r['id'][1:]}" and r["steps"] == 2 for r in got
    )
    assert run_batch(tasks, out).statuses == {}  # a third run has nothing left to do


def test_a_torn_last_line_is_cut_off_before_resuming(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "a", "status": "success"}\n{"id": "b", "status": "success"}\n{"id": "c", "sta')
    assert finished_ids(out) == {"a", "b"}
    assert out.read_text() == '{"id": "a", "status": "success"}\n{"id": "b", "status": "success"}\n'


def test_a_broken_task_is_an_error_record_not_a_crash(tmp_path: Path) -> None:
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "ok", "prompt": "hi", "model": "scripted", "script": ["hello"]},
            {"id": "spec", "prompt": "hi", "model": "scripted", "script": ["hello"], "tools": "no_colon"},
            {"id": "short", "prompt": "hi", "model": "scripted", "script": [], "max_steps": 2},
            {
                "id": "transcript",
                "messages": [{"role": "assistant", "content": "no user"}],
                "model": "scripted",
                "script": ["x"],
            },
        ],
    )
    summary = run_batch(tasks, tmp_path / "out.jsonl")
    assert summary.statuses == {"success": 1, "error": 3} and summary.complete
    errors = {
        r["id"]: r["error"].split(":")[0] for r in records(tmp_path / "out.jsonl") if r["status"] == "error"
    }
    assert errors == {"spec": "MinloopError", "short": "ScriptError", "transcript": "TranscriptError"}


def test_task_files_are_checked_and_ids_default_to_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"prompt": "a"}\n\n{"id": "x", "messages": [{"role": "user", "content": "b"}]}\n')
    assert [t["id"] for t in read_tasks(path, {"model": "scripted"})] == ["1", "x"]
    assert read_tasks(path, {"model": "scripted"})[0] == {"model": "scripted", "prompt": "a", "id": "1"}
    for bad, why in (
        ('{"id": 1, "prompt": "a"}\n{"id": 1, "prompt": "b"}', "duplicate task id"),
        ('{"id": 1}', "either 'prompt' or 'messages'"),
        ("not json", "not a JSON object"),
    ):
        path.write_text(bad)
        with pytest.raises(MinloopError, match=why):
            read_tasks(path)


def test_minloop_batch_on_the_command_line(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks.jsonl", [calc_task(i) for i in range(5)])
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(
        app, ["batch", str(tasks), "--out", str(out), "--concurrency", "2", "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "5 success; 0 skipped" in result.output
    result = CliRunner().invoke(app, ["batch", str(tasks), "--out", str(out), "--no-progress"])
    assert "5 tasks, 5 already in" in result.output and "nothing to run; 5 skipped" in result.output


def test_the_ray_engine_without_ray_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    tasks = write_tasks(tmp_path / "tasks.jsonl", [calc_task(1)])
    with pytest.raises(MissingDependencyError, match=r"minloop\[ray\]"):
        run_batch(tasks, tmp_path / "out.jsonl", engine="ray")


def test_100_tasks_on_local_ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ray  # noqa: F401  (installed by the dev extra: a missing one fails, not skips)

    (tmp_path / "pause_tools.py").write_text(PAUSE_TOOLS)  # imported inside the Ray workers
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", [calc_task(i) if i % 2 else pause_task(i, 1) for i in range(100)]
    )
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "t0", "status": "success"}) + "\n")  # one finished before
    summary = run_batch(tasks, out, engine="ray", concurrency=8)
    assert (summary.skipped, summary.statuses, summary.complete) == (1, {"success": 99}, True)
    got = {r["id"]: r for r in records(out)}
    assert sorted(got) == sorted(f"t{i}" for i in range(100))
    assert all(got[f"t{i}"]["output"] == (str(i * 2) if i % 2 else f"done {i}") for i in range(1, 100))
