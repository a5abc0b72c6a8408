"""Runs killed with SIGKILL at chosen moments and resumed in a new process, on both stores: the
run ends as an uninterrupted one does, a recorded result is never produced again, and a tool
that is not safe to repeat ran once or is reported in doubt. Also: approval from a second
process, two resumes at once, and two workers sharing one PostgreSQL database.

The child process and its tools are tests/servers/durable_child.py: every tool appends a line
to a file as its side effect, so the files count what really happened.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SERVERS = Path(__file__).parent / "servers"
ROLES = ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "tool", "assistant"]
ONCE = {"lookup": ["balance", "receipt"], "charge": ["30"], "notify": ["charged 30"]}


def child(store: str, counts: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SERVERS / "durable_child.py"), store, str(counts), *args],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def model_calls(counts: Path) -> list[str]:
    """The steps whose model call returned, in order."""
    return (counts / "model").read_text().split("\n")[:-1]


def effects(counts: Path) -> dict[str, list[str]]:
    return {
        name: (counts / name).read_text().split("\n")[:-1] if (counts / name).exists() else []
        for name in ONCE
    }


def outcome(counts: Path) -> dict[str, Any]:
    return json.loads((counts / "result.json").read_text())


def tool_text(result: dict[str, Any], name: str) -> list[str]:
    return [m["content"] for m in result["messages"] if m["role"] == "tool" and m["name"] == name]


def test_an_uninterrupted_run_is_the_reference(store_address: str, tmp_path: Path) -> None:
    done = child(store_address, tmp_path, "start")
    assert done.returncode == 0, done.stderr
    result = outcome(tmp_path)
    assert (result["status"], [m["role"] for m in result["messages"]]) == ("success", ROLES)
    assert result["messages"][-1] == {"role": "assistant", "content": "Charged 30; the receipt is r-1."}
    assert effects(tmp_path) == ONCE


# Where the child dies, and which tool (if any) was inside its call at that moment.
POINTS = {
    "model:1": None,
    "model:3": None,
    "step:1": None,
    "step:3": None,
    "write:2": None,
    "write:5": None,
    "write:8": None,
    "tool:lookup:after": "lookup",
    "tool:charge:before": "charge",
    "tool:charge:after": "charge",
    "tool:notify:after": "notify",
    "end": None,
}


@pytest.mark.parametrize("point", list(POINTS))
def test_a_run_killed_anywhere_finishes_on_resume_without_a_side_effect_twice(
    store_address: str, tmp_path: Path, point: str
) -> None:
    killed = child(store_address, tmp_path, "start", DURABLE_KILL=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    run_id = killed.stdout.split()[0]
    resumed = child(store_address, tmp_path, "resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    result = outcome(tmp_path)
    assert (result["status"], [m["role"] for m in result["messages"]]) == ("success", ROLES)
    assert model_calls(tmp_path) == ["1", "2", "3", "4"]  # a recorded reply is never asked for again
    ran, inside = effects(tmp_path), POINTS[point]
    for name in ("charge", "notify"):  # not safe to repeat: ran once, or is reported in doubt
        if name == inside:
            assert ran[name] == ([] if point.endswith("before") else ONCE[name])
            assert json.loads(tool_text(result, name)[0])["code"] == "ERR_TOOL_IN_DOUBT"
        else:
            assert ran[name] == ONCE[name]
            assert "ERR_" not in tool_text(result, name)[0]
    if inside == "lookup":  # safe to repeat: the call in doubt ran again, nothing else did
        assert ran["lookup"] == ["balance", "balance", "receipt"]
    elif inside == "notify":  # the receipt lookup ran beside it and may have been in doubt too
        assert ran["lookup"][:1] == ["balance"] and ran["lookup"][1:] in (["receipt"], ["receipt"] * 2)
    else:
        assert ran["lookup"] == ONCE["lookup"]


def test_a_paused_run_is_approved_from_another_process_and_finishes_there(
    store_address: str, tmp_path: Path
) -> None:
    started = child(store_address, tmp_path, "start", DURABLE_APPROVE="charge")
    assert (started.returncode, outcome(tmp_path)["status"], outcome(tmp_path)["pending"]) == (
        0, "paused", ["call_2_1"],
    )  # fmt: skip
    assert effects(tmp_path)["charge"] == []
    run_id = started.stdout.split()[0]
    done = child(
        store_address, tmp_path, "resume", run_id, "--decide", "call_2_1=yes", DURABLE_APPROVE="charge"
    )
    assert done.returncode == 0, done.stderr
    result = outcome(tmp_path)
    assert (result["status"], [m["role"] for m in result["messages"]]) == ("success", ROLES)
    assert effects(tmp_path) == ONCE


def approve_by_cli(store: str, run_id: str) -> None:
    cli = [sys.executable, "-c", "from minloop.cli import main; main()"]
    said = subprocess.run([*cli, "approve", run_id, "call_2_1", "--store", store, "--by", "ada"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert said.returncode == 0, said.stderr


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("how", ["in process", "by the API", "by the command line"])
def test_an_approved_call_killed_while_it_runs_is_in_doubt_on_resume_never_run_again(
    store_address: str, tmp_path: Path, how: str, where: str
) -> None:
    guarded = {"DURABLE_APPROVE": "charge", "DURABLE_APPROVER": "yes" if how == "in process" else "no"}
    kill = {**guarded, "DURABLE_KILL": f"tool:charge:{where}"}
    if how == "in process":
        killed = child(store_address, tmp_path, "start", **kill)
    else:
        paused = child(store_address, tmp_path, "start", **guarded)
        run_id = paused.stdout.split()[0]
        decide = ["--decide", "call_2_1=yes"] if how == "by the API" else []
        if how == "by the command line":
            approve_by_cli(store_address, run_id)
        killed = child(store_address, tmp_path, "resume", run_id, *decide, **kill)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    run_id = killed.stdout.split()[0]
    resumed = child(store_address, tmp_path, "resume", run_id, **guarded)
    assert resumed.returncode == 0, resumed.stderr
    result = outcome(tmp_path)
    assert (result["status"], [m["role"] for m in result["messages"]]) == ("success", ROLES)
    assert effects(tmp_path)["charge"] == ([] if where == "before" else ["30"])
    [charged] = tool_text(result, "charge")
    assert json.loads(charged)["code"] == "ERR_TOOL_IN_DOUBT"
    assert (effects(tmp_path)["notify"], model_calls(tmp_path)) == (["charged 30"], ["1", "2", "3", "4"])


def test_a_call_in_doubt_left_for_a_person_never_runs_until_one_decides(
    store_address: str, tmp_path: Path
) -> None:
    killed = child(store_address, tmp_path, "start", DURABLE_KILL="tool:charge:after")
    run_id = killed.stdout.split()[0]
    for _ in range(2):  # resumed without a decision, it pauses again: nothing runs
        again = child(store_address, tmp_path, "resume", run_id, DURABLE_IN_DOUBT="pause")
        assert (again.returncode, outcome(tmp_path)["status"], outcome(tmp_path)["pending"]) == (
            0, "paused", ["call_2_1"],
        )  # fmt: skip
    done = child(
        store_address, tmp_path, "resume", run_id, "--decide", "call_2_1=no", DURABLE_IN_DOUBT="pause"
    )
    assert done.returncode == 0, done.stderr
    [charged] = tool_text(outcome(tmp_path), "charge")
    assert (json.loads(charged)["code"], json.loads(charged)["error"].endswith("(the reason given: not now)")) == (
        "ERR_TOOL_IN_DOUBT", True,
    )  # fmt: skip
    assert effects(tmp_path) == ONCE


def test_a_denial_from_another_process_reaches_the_model_with_its_reason(
    store_address: str, tmp_path: Path
) -> None:
    started = child(store_address, tmp_path, "start", DURABLE_APPROVE="charge")
    run_id = started.stdout.split()[0]
    done = child(
        store_address, tmp_path, "resume", run_id, "--decide", "call_2_1=no", DURABLE_APPROVE="charge"
    )
    assert done.returncode == 0, done.stderr
    result = outcome(tmp_path)
    [denied] = tool_text(result, "charge")
    assert (json.loads(denied)["code"], "not now" in denied) == ("ERR_TOOL_DENIED", True)
    assert effects(tmp_path)["charge"] == []


def test_two_processes_resuming_one_run_at_once_exactly_one_proceeds(
    store_address: str, tmp_path: Path
) -> None:
    killed = child(store_address, tmp_path, "start", DURABLE_KILL="step:1")
    run_id = killed.stdout.split()[0]
    script = [
        sys.executable,
        str(SERVERS / "durable_child.py"),
        store_address,
        str(tmp_path),
        "resume",
        run_id,
    ]
    env = {**os.environ, "DURABLE_DELAY": "0.3"}
    both = [subprocess.Popen(script, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]  # fmt: skip
    ends = [(p.wait(timeout=60), p.stderr.read() if p.stderr else "") for p in both]
    assert sorted(code for code, _ in ends) == [0, 1]
    [refused] = [err for code, err in ends if code == 1]
    assert f"RunConflictError: run {run_id}:" in refused
    assert outcome(tmp_path)["status"] == "success"
    assert effects(tmp_path) == ONCE


def test_two_workers_on_one_postgres_database_never_take_the_same_run(
    postgres_address: str, tmp_path: Path
) -> None:
    store_address = postgres_address
    runs = []
    for _ in range(6):
        killed = child(store_address, tmp_path, "start", DURABLE_KILL="step:2")
        runs.append(killed.stdout.split()[0])
    taken = [tmp_path / "taken-a", tmp_path / "taken-b"]
    script = [sys.executable, str(SERVERS / "durable_worker.py"), store_address, str(tmp_path)]
    env = {**os.environ, "DURABLE_DELAY": "0.05"}
    workers = [subprocess.Popen([*script, str(t)], env=env, stderr=subprocess.PIPE, text=True) for t in taken]
    for w in workers:
        assert w.wait(timeout=120) == 0, w.stderr.read() if w.stderr else ""
    took = [t.read_text().split("\n")[:-1] if t.exists() else [] for t in taken]
    ids = [line.split()[0] for lines in took for line in lines]
    assert sorted(ids) == sorted(runs)  # every run once, by one worker
    assert {line.split()[1] for lines in took for line in lines} == {"success"}
    assert len(effects(tmp_path)["charge"]) == 6  # each run charged once
