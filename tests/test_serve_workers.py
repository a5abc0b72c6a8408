"""Two ``minloop serve`` workers over one real PostgreSQL: a worker killed mid-run loses no run."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx

from tests.serving import served


def test_a_run_whose_worker_is_killed_during_a_tool_call_is_finished_by_another_with_no_tool_run_twice(
    postgres: Any, tmp_path: Path
) -> None:
    import psycopg

    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute("CREATE DATABASE served_workers")
    store = postgres.dsn.rsplit("/", 1)[0] + "/served_workers"
    with served(store, counts=tmp_path) as (a, worker_a), served(store, counts=tmp_path) as (b, _):
        run_id = httpx.post(f"{a}/runs", json={"prompt": "slow 30"}).json()["run_id"]
        deadline = time.monotonic() + 10
        while not (tmp_path / "wait").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (tmp_path / "wait").read_text() == "ran\n"  # the call is under way on worker A
        os.kill(worker_a.pid, signal.SIGKILL)
        worker_a.wait(10)
        seen = httpx.get(f"{b}/runs/{run_id}").json()
        assert seen["status"] == "running"  # B reads the run from the shared store
        resumed = httpx.post(f"{b}/runs/{run_id}/resume", json={})
        assert resumed.status_code == 202, resumed.text
        state = _wait(b, run_id)
    assert state["status"] == "success"
    assert state["result"]["final_message"]["content"].startswith("done: ")
    assert (tmp_path / "wait").read_text() == "ran\n"  # the call in doubt was reported, not run again
    tool_messages = [m for m in state["result"]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1 and tool_messages[0]["name"] == "wait"


def _wait(base: str, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        state = httpx.get(f"{base}/runs/{run_id}").json()
        if state["status"] not in ("running", "paused"):
            return state
        time.sleep(0.05)
    raise AssertionError(f"the run never ended: {state}")
