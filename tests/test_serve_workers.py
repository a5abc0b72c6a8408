"""Two ``minloop serve`` workers over one real PostgreSQL: any worker reads a run's events and
cancels it, and a worker killed mid-run loses no run (resumed on request, or by the other
worker's lease scan with no request at all)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx

from minloop.runs import open_store
from tests.serving import served
from tests.test_serve import events_of, wait_for


def _started(counts: Path, tool: str = "wait") -> None:
    deadline = time.monotonic() + 10
    while not (counts / tool).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (counts / tool).read_text() == "ran\n"  # the call is under way


def test_a_run_whose_worker_is_killed_during_a_tool_call_is_finished_by_another_with_no_tool_run_twice(
    postgres_address: str, tmp_path: Path
) -> None:
    store = postgres_address
    with (
        served(store, counts=tmp_path) as (a, worker_a),
        served(store, "--lease-scan", "0", counts=tmp_path) as (b, _),
    ):
        run_id = httpx.post(f"{a}/runs", json={"prompt": "slow 30"}).json()["run_id"]
        _started(tmp_path)
        os.kill(worker_a.pid, signal.SIGKILL)
        worker_a.wait(10)
        seen = httpx.get(f"{b}/runs/{run_id}").json()
        assert seen["status"] == "running"  # B reads the run from the shared store
        resumed = httpx.post(f"{b}/runs/{run_id}/resume", json={})
        assert resumed.status_code == 202, resumed.text
        with httpx.Client(base_url=b) as client:
            state = wait_for(client, run_id, "success")
    assert state["result"]["final_message"]["content"].startswith("done: ")
    assert (tmp_path / "wait").read_text() == "ran\n"  # the call in doubt was reported, not run again
    tool_messages = [m for m in state["result"]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1 and tool_messages[0]["name"] == "wait"
    assert json.loads(tool_messages[0]["content"])["code"] == "ERR_TOOL_IN_DOUBT"


def test_a_runs_events_are_read_on_the_other_worker_and_a_reader_that_moves_sees_each_once(
    postgres_address: str, tmp_path: Path
) -> None:
    with served(postgres_address, counts=tmp_path) as (a, _), served(postgres_address) as (b, _):
        with httpx.Client(base_url=a) as on_a, httpx.Client(base_url=b) as on_b:
            run_id = on_a.post("/runs", json={"prompt": "slow 1"}).json()["run_id"]
            first = events_of(on_a, run_id, stop_after=3)  # then the client moves to worker B
            assert [e["type"] for _, e in first] == ["ToolCallStarted", "ArgumentsDelta", "ToolCallFinished"]
            _started(tmp_path)
            rest = events_of(on_b, run_id, last=first[-1][0])  # B reads them from the store as they come
            whole_a, whole_b = events_of(on_a, run_id), events_of(on_b, run_id)
            back = events_of(on_a, run_id, last=rest[2][0])  # and back to A, from the middle
    assert first + rest == whole_a == whole_b
    assert [n for n, _ in whole_b] == list(range(1, len(whole_b) + 1))
    assert back == rest[3:]
    kinds = [e["type"] for _, e in whole_b]
    assert kinds.count("StepEnd") == 2 and kinds[-1] == "RunEnd"
    assert whole_b[-1][1]["result"]["status"] == "success"


def test_the_lease_scan_of_another_worker_finishes_a_killed_workers_run_without_any_request(
    postgres_address: str, tmp_path: Path
) -> None:
    store = open_store(postgres_address)
    with (
        served(postgres_address, counts=tmp_path) as (a, worker_a),
        served(postgres_address, "--lease-scan", "0.5", counts=tmp_path) as (b, _),
    ):
        run_id = httpx.post(f"{a}/runs", json={"prompt": "slow 30"}).json()["run_id"]
        _started(tmp_path)
        with httpx.Client(base_url=a) as client:
            before = events_of(client, run_id, stop_after=3)
        while store.last_event(run_id) < 3:  # written within moments
            time.sleep(0.02)
        os.kill(worker_a.pid, signal.SIGKILL)
        worker_a.wait(10)
        deadline = time.monotonic() + 20
        while store.row(run_id).status == "running" and time.monotonic() < deadline:
            time.sleep(0.1)  # nothing but the store is read: no request touches the run
        stored = store.load(run_id)
        assert stored.row.status == "success", stored.row
        with httpx.Client(base_url=b) as client:
            after = events_of(client, run_id)
    assert (tmp_path / "wait").read_text() == "ran\n"  # the call in doubt was not run again
    tool_messages = [m for m in (stored.result or {})["messages"] if m["role"] == "tool"]
    assert [(m["name"], json.loads(m["content"])["code"]) for m in tool_messages] == [
        ("wait", "ERR_TOOL_IN_DOUBT")
    ]
    numbers = [n for n, _ in after]
    assert after[: len(before)] == before and numbers == sorted(set(numbers))  # each once, in order
    assert after[-1][1]["type"] == "RunEnd" and after[-1][1]["result"]["status"] == "success"
    store.close()


def test_a_run_driven_by_one_worker_is_cancelled_from_the_other(
    postgres_address: str, tmp_path: Path
) -> None:
    with served(postgres_address, counts=tmp_path) as (a, _), served(postgres_address) as (b, _):
        with httpx.Client(base_url=b) as on_b:
            run_id = httpx.post(f"{a}/runs", json={"prompt": "slow 30"}).json()["run_id"]
            _started(tmp_path)
            asked = on_b.post(f"/runs/{run_id}/cancel", json={"reason": "too slow", "by": "grace"})
            assert asked.status_code == 202 and asked.json()["status"] == "cancelling"
            state = wait_for(on_b, run_id, "cancelled")
            events = events_of(on_b, run_id)
            again = on_b.post(f"/runs/{run_id}/cancel")
    assert (state["result"]["status"], state["result"]["error"]) == (
        "cancelled",
        "the run was cancelled by grace: too slow",
    )
    assert events[-1][1]["type"] == "RunEnd" and events[-1][1]["result"]["status"] == "cancelled"
    assert again.status_code == 409 and "has already ended (cancelled)" in again.json()["error"]["message"]


def test_a_stopped_worker_leaves_its_run_to_another_and_its_reader_goes_on_there(
    postgres_address: str, tmp_path: Path
) -> None:
    store = open_store(postgres_address)
    with served(postgres_address, counts=tmp_path) as (a, worker_a), httpx.Client(base_url=a) as on_a:
        run_id = on_a.post("/runs", json={"prompt": "slow 30"}).json()["run_id"]
        _started(tmp_path)
        seen: list[int] = []
        with on_a.stream("GET", f"/runs/{run_id}/events", timeout=20) as stream:
            worker_a.terminate()  # SIGTERM while a client reads the run's events
            try:
                for line in stream.iter_lines():
                    if line.startswith("id: "):
                        seen.append(int(line[4:]))
            except httpx.RemoteProtocolError:
                pass  # the stream is cut when the worker goes away
        worker_a.wait(15)
    row = store.row(run_id)
    assert (row.status, row.lease_until) == ("running", 0)  # left for another worker, not cancelled
    assert store.last_event(run_id) == seen[-1]  # every event its reader saw is in the store
    with (
        served(postgres_address, "--lease-scan", "0.5", counts=tmp_path) as (b, _),
        httpx.Client(base_url=b) as on_b,
    ):
        state = wait_for(on_b, run_id, "success")
        rest = events_of(on_b, run_id, last=seen[-1])
    assert rest[0][0] > seen[-1] and rest[-1][1]["type"] == "RunEnd"
    assert (tmp_path / "wait").read_text() == "ran\n"  # the call cut short was not run again
    tool_messages = [m for m in state["result"]["messages"] if m["role"] == "tool"]
    assert [json.loads(m["content"])["code"] for m in tool_messages] == ["ERR_TOOL_IN_DOUBT"]
    store.close()
