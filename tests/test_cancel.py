"""Cancelling a stored run wherever it is: paused (at once), running in this process or in
another (at its next step boundary), or left by a process that died; with who and why in its
result and trace. A cancelled run cannot be resumed, and an ended run cannot be cancelled. Through
the API (``loop.cancel``), the command line (``minloop cancel``) and the server."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from minloop import Loop, ModelRequest, SQLiteRunStore, tool
from minloop.cli.app import app
from minloop.exceptions import RunConflictError, RunNotFoundError
from minloop.runs import open_store
from minloop.runs.cancel import cancel
from minloop.testing import FunctionModel, ScriptedModel, call, reply
from minloop.trace.sqlite import SQLiteSink, TraceStore
from tests.serving import served

SERVERS = Path(__file__).parent / "servers"


@tool(needs_approval=True)
def refund(order: str, amount: float) -> str:
    """Refund part of an order."""
    raise AssertionError("a cancelled run's call never runs")


def paused_run(store: Any, sinks: list[Any] = ()) -> tuple[Loop, str]:  # type: ignore[assignment]
    model = ScriptedModel([reply(None, call("refund", {"order": "A-7", "amount": 30}, id="c1"))])
    loop = Loop(model, [refund], store=store, sinks=sinks)
    result = loop.run_sync("Refund 30 on A-7")
    assert result.status == "paused"
    return loop, result.trace_id


def test_a_paused_run_is_cancelled_at_once_with_who_and_why_and_cannot_be_resumed_or_cancelled_again(
    store_address: str, tmp_path: Path
) -> None:
    store = open_store(store_address)
    sink = SQLiteSink(tmp_path / "traces.db")
    loop, run_id = paused_run(store, [sink])
    assert loop.cancel_sync(run_id, reason="the wrong order", by="alice") == "cancelled"
    stored = store.load(run_id)
    said = "the run was cancelled by alice: the wrong order"
    assert (stored.row.status, stored.pending, stored.result["status"], stored.result["error"]) == (
        "cancelled", [], "cancelled", said,
    )  # fmt: skip
    assert (stored.result["cancelled_by"], stored.result["reason"]) == ("alice", "the wrong order")
    with TraceStore(tmp_path / "traces.db") as traces:
        trace = traces.trace(run_id)
    assert (trace.run.status, trace.run.error, trace.end["cancelled_by"]) == ("cancelled", said, "alice")
    with pytest.raises(RunConflictError) as resumed:
        loop.resume_sync(run_id, {"c1": True})
    assert str(resumed.value) == f"run {run_id}: {said}; a cancelled run cannot be resumed"
    with pytest.raises(RunConflictError) as again:
        loop.cancel_sync(run_id)
    assert (
        str(again.value) == f"run {run_id}: the run has already ended (cancelled); there is nothing to cancel"
    )
    assert store.load(run_id).result == stored.result  # nothing changed
    store.close()


def test_an_ended_or_unknown_run_cannot_be_cancelled(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "runs.db")
    loop = Loop(ScriptedModel(["Done."]), store=store)
    done = loop.run_sync("hello")
    with pytest.raises(RunConflictError) as ended:
        asyncio.run(loop.cancel(done.trace_id))
    assert str(ended.value) == f"run {done.trace_id}: the run has already ended (success); there is nothing to cancel"  # fmt: skip
    with pytest.raises(
        RunNotFoundError, match=f"run trc_none: no run with this id in {tmp_path / 'runs.db'}"
    ):
        loop.cancel_sync("trc_none")
    assert store.load(done.trace_id).row.status == "success"


def test_a_run_going_in_this_process_stops_at_its_next_step_boundary(tmp_path: Path) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def step_on(n: int) -> int:
        """Take one more step."""
        started.set()
        await release.wait()
        return n + 1

    def model(request: ModelRequest) -> Any:
        n = sum(m["role"] == "tool" for m in request.messages)
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": f"c{n}", "type": "function", "function": {"name": "step_on", "arguments": json.dumps({"n": n})}}]}  # fmt: skip

    store = SQLiteRunStore(tmp_path / "runs.db")
    loop = Loop(FunctionModel(model), [step_on], max_steps=50, store=store)

    async def main() -> tuple[Any, str]:
        run = loop.iter("count on")
        driving = asyncio.create_task(_drive(run))
        await started.wait()
        said = await loop.cancel(run.trace_id, reason="enough", by="bob")
        release.set()
        return await driving, said

    result, said = asyncio.run(main())
    assert said == "cancelling"
    assert (result.status, result.error, len(result.steps)) == (
        "cancelled",
        "the run was cancelled by bob: enough",
        1,
    )
    assert [m["role"] for m in result.messages] == [
        "user",
        "assistant",
        "tool",
    ]  # the step under way finished
    stored = store.load(result.trace_id)
    assert (stored.row.status, stored.result["error"]) == (
        "cancelled",
        "the run was cancelled by bob: enough",
    )


async def _drive(run: Any) -> Any:
    async for _ in run:
        pass
    return run.result


def _child(store: str, counts: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(SERVERS / "durable_child.py"), store, str(counts), *args],
                            env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_a_run_going_in_another_process_is_cancelled_there_at_its_next_step_boundary(
    store_address: str, tmp_path: Path
) -> None:
    child = _child(store_address, tmp_path, "start", DURABLE_DELAY="0.3")
    assert child.stdout is not None
    run_id = child.stdout.readline().split()[0]
    store = open_store(store_address)
    deadline = time.monotonic() + 20
    while not (tmp_path / "lookup").exists() and time.monotonic() < deadline:  # step 1's call is under way
        time.sleep(0.02)
    assert cancel(store, run_id, by="carol", reason="not needed") == "cancelling"
    assert child.wait(timeout=60) == 0, child.stderr.read() if child.stderr else ""
    ended = json.loads((tmp_path / "result.json").read_text())
    assert (ended["status"], ended["error"]) == ("cancelled", "the run was cancelled by carol: not needed")
    assert ended["messages"][-1]["role"] == "tool"  # it stopped at a step boundary, with no answer
    assert not (tmp_path / "notify").exists()  # asked in step 1 or 2, it never reached step 3
    assert store.load(run_id).row.status == "cancelled"
    store.close()


def test_a_run_whose_process_died_is_cancelled_at_once(store_address: str, tmp_path: Path) -> None:
    child = _child(store_address, tmp_path, "start", DURABLE_KILL="step:1")
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL and child.stdout is not None
    run_id = child.stdout.read().split()[0]
    store = open_store(store_address)
    assert store.row(run_id).status == "running"  # as its process left it
    assert cancel(store, run_id, by="dave") == "cancelled"
    stored = store.load(run_id)
    assert (stored.row.status, stored.result["error"]) == ("cancelled", "the run was cancelled by dave")
    assert [m["role"] for m in stored.result["messages"]] == ["user", "assistant", "tool"]
    resumed = _child(store_address, tmp_path, "resume", run_id)
    assert resumed.wait(timeout=60) == 1 and resumed.stderr is not None
    assert f"RunConflictError: run {run_id}: the run was cancelled by dave; a cancelled run cannot be resumed" in resumed.stderr.read()  # fmt: skip
    store.close()


def test_minloop_cancel_cancels_a_paused_run_and_says_so_in_one_line(tmp_path: Path) -> None:
    path, traces = tmp_path / "runs.db", tmp_path / "traces.db"
    with SQLiteSink(traces) as sink:
        _, run_id = paused_run(SQLiteRunStore(path), [sink])
    runner = CliRunner()
    first = runner.invoke(app, ["cancel", run_id, "--reason", "订单错了", "--by", "erin", "--store", str(path),
                                "--trace-db", str(traces)])  # fmt: skip
    assert (first.exit_code, first.output) == (0, f"cancelled {run_id}; it cannot be resumed\n")
    with TraceStore(traces) as read:
        assert read.trace(run_id).run.error == "the run was cancelled by erin: 订单错了"
    again = runner.invoke(app, ["cancel", run_id, "--store", str(path)])
    said = f"error: run {run_id}: the run has already ended (cancelled); there is nothing to cancel\n"
    assert (again.exit_code, again.output) == (2, said)
    unknown = runner.invoke(app, ["cancel", "trc_none", "--store", str(path)])
    assert (unknown.exit_code, unknown.output) == (2, f"error: run trc_none: no run with this id in {path}\n")


def test_the_server_cancels_a_run_paused_by_loop_run_in_the_same_store(tmp_path: Path) -> None:
    from tests.servers.served import loop as served_loop

    path = tmp_path / "runs.db"
    paused = replace(served_loop, store=SQLiteRunStore(path)).run_sync("delete d.txt")
    assert paused.status == "paused"
    with served(str(path)) as (base, _), httpx.Client(base_url=base) as client:
        answer = client.post(
            f"/runs/{paused.trace_id}/cancel", json={"reason": "not this file", "by": "frank"}
        )
        state = client.get(f"/runs/{paused.trace_id}").json()
        again = client.post(f"/runs/{paused.trace_id}/cancel")
    assert (answer.status_code, answer.json()) == (202, {"run_id": paused.trace_id, "status": "cancelled"})
    assert (state["status"], state["result"]["error"]) == (
        "cancelled",
        "the run was cancelled by frank: not this file",
    )
    assert again.status_code == 409
    assert again.json()["error"]["message"] == f"run {paused.trace_id}: the run has already ended (cancelled); there is nothing to cancel"  # fmt: skip


def test_a_run_asked_to_cancel_that_pauses_first_ends_cancelled(tmp_path: Path) -> None:
    asked, release = asyncio.Event(), asyncio.Event()

    async def model(request: ModelRequest) -> Any:
        asked.set()
        await release.wait()  # cancelled meanwhile; then the reply asks for a call that needs approval
        return {"role": "assistant", "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "refund", "arguments": '{"order": "A-7", "amount": 30}'}}]}  # fmt: skip

    store = SQLiteRunStore(tmp_path / "runs.db")
    loop = Loop(FunctionModel(model), [refund], store=store)

    async def main() -> tuple[Any, str]:
        run = loop.iter("Refund 30 on A-7")
        driving = asyncio.create_task(_drive(run))
        await asked.wait()
        said = await loop.cancel(run.trace_id, reason="stop", by="heidi")
        release.set()
        return await driving, said

    result, said = asyncio.run(main())
    assert said == "cancelling"
    assert (result.status, result.error, result.pending) == (
        "cancelled",
        "the run was cancelled by heidi: stop",
        (),
    )
    stored = store.load(result.trace_id)
    assert (stored.row.status, stored.pending) == ("cancelled", [])
    assert [(r.status, r.pending) for r in store.runs()] == [("cancelled", 0)]


EARLIER_TABLES = [  # what the release before cancel's who and why made
    """CREATE TABLE minloop_runs (run_id TEXT PRIMARY KEY, status TEXT NOT NULL, schema_version INTEGER
    NOT NULL, version INTEGER NOT NULL, created REAL NOT NULL, updated REAL NOT NULL, owner TEXT,
    lease_until REAL, steps INTEGER NOT NULL, prompt TEXT NOT NULL, tag TEXT, tools TEXT NOT NULL,
    state TEXT NOT NULL, reply_step INTEGER, reply TEXT, result TEXT)""",
    "CREATE TABLE minloop_cancels (run_id TEXT PRIMARY KEY, asked REAL NOT NULL)",
]


def test_a_store_an_earlier_version_made_gains_the_columns_of_who_and_why(store_address: str) -> None:
    if store_address.startswith("postgresql"):
        import psycopg

        with psycopg.connect(store_address, autocommit=True) as conn:
            for statement in EARLIER_TABLES:
                conn.execute(statement.replace("REAL", "DOUBLE PRECISION"))
    else:
        import sqlite3

        with sqlite3.connect(store_address) as conn:
            for statement in EARLIER_TABLES:
                conn.execute(statement)
    loop, run_id = paused_run(open_store(store_address))
    assert loop.cancel_sync(run_id, reason="opened again", by="bob") == "cancelled"
    assert (
        open_store(store_address).load(run_id).result["error"] == "the run was cancelled by bob: opened again"
    )
