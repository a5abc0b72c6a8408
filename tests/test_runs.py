"""Durable runs against both stores (SQLite and a real PostgreSQL): pause for approval, resume
with decisions, in-process approval, the trace of a resumed run, and every bad resume refused
with the stored run unchanged."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from minloop import Loop, RecordingSink, Verdict, tool
from minloop.exceptions import RunConflictError, RunCorruptError, RunMismatchError, RunNotFoundError
from minloop.runs import PendingCall, open_store
from minloop.testing import ScriptedModel, call, reply

from .conftest import content, masked

ran: list[str] = []


@tool(needs_approval=True)
def transfer(to: str, amount: int) -> str:
    """Send money."""
    ran.append(f"{to}:{amount}")
    return f"sent {amount} to {to}"


@tool
def balance() -> int:
    """The balance."""
    return 500


def script() -> ScriptedModel:
    return ScriptedModel([
        reply(None, call("balance")),
        reply(None, call("transfer", {"to": "bob", "amount": 100})),
        "Done.",
    ])  # fmt: skip


@pytest.fixture(autouse=True)
def clean() -> None:
    ran.clear()


def test_a_call_needing_approval_pauses_the_run_and_nothing_of_its_step_runs(store_address: str) -> None:
    store = open_store(store_address)
    result = Loop(script(), [transfer, balance], store=store).run_sync("Send bob 100")
    assert (result.status, ran, len(result.steps)) == ("paused", [], 1)
    assert result.pending == (
        PendingCall("call_2_1", "transfer", '{"to": "bob", "amount": 100}', 2, "approval"),
    )
    assert result.error == "waiting for a decision on 1 call(s): transfer (call_2_1)"
    [row] = store.runs()
    assert (row.run_id, row.status, row.pending, row.steps, row.owner, row.prompt) == (
        result.trace_id, "paused", 1, 1, None, "Send bob 100",
    )  # fmt: skip


@pytest.mark.parametrize("approve", [True, False])
def test_resume_with_a_decision_runs_or_denies_the_call_and_finishes(
    store_address: str, approve: bool
) -> None:
    model = script()
    loop = Loop(model, [transfer, balance], store=open_store(store_address))
    paused = loop.run_sync("Send bob 100")
    decision = True if approve else Verdict(False, "bob is not a known payee")
    with model:
        result = loop.resume_sync(paused.trace_id, {"call_2_1": decision}, by="ada")
    assert (result.status, result.trace_id, ran) == (
        "success",
        paused.trace_id,
        ["bob:100"] if approve else [],
    )
    outcome = content(result="sent 100 to bob") if approve else content(
        error="the user did not approve this call; do not retry it (the reason given: bob is not a known payee)",
        code="ERR_TOOL_DENIED", tool="transfer",
    )  # fmt: skip
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "Send bob 100"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1_1", "type": "function", "function": {"name": "balance", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1_1", "name": "balance", "content": content(result=500)},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_2_1", "type": "function",
                         "function": {"name": "transfer", "arguments": '{"to": "bob", "amount": 100}'}}]},
        {"role": "tool", "tool_call_id": "call_2_1", "name": "transfer", "content": outcome},
        {"role": "assistant", "content": "Done."},
    ]  # fmt: skip
    assert [s.index for s in result.steps] == [1, 2, 3] and len(
        model.requests
    ) == 3  # the paused reply was reused


def test_the_in_process_approver_still_decides_and_none_means_no_decision_here(store_address: str) -> None:
    asked: list[str] = []

    def undecided(c: Any) -> None:
        asked.append(c.name)

    first = Loop(script(), [transfer, balance], store=open_store(store_address), approve=undecided).run_sync(
        "Send"
    )
    assert (first.status, asked, ran) == ("paused", ["transfer"], [])
    later = Loop(
        ScriptedModel(["Done."]), [transfer, balance], store=open_store(store_address), approve=lambda c: True
    )
    assert (later.resume_sync(first.trace_id).status, ran) == (
        "success",
        ["bob:100"],
    )  # asked again, approved
    model = ScriptedModel([reply(None, call("transfer", {"to": "amy", "amount": 5})), "ok"])
    yes = Loop(model, [transfer], store=open_store(store_address), approve=lambda c: True).run_sync(
        "Send amy 5"
    )
    no = Loop(ScriptedModel([reply(None, call("transfer", {"to": "eve", "amount": 9})), "no"]), [transfer],
              store=open_store(store_address), approve=lambda c: False).run_sync("Send eve 9")  # fmt: skip
    assert (yes.status, no.status, ran) == ("success", "success", ["bob:100", "amy:5"])
    assert json.loads(no.messages[2]["content"])["code"] == "ERR_TOOL_DENIED"


def test_a_resumed_runs_trace_says_where_it_went_on_and_who_decided(store_address: str) -> None:
    sink = RecordingSink()
    loop = Loop(script(), [transfer, balance], store=open_store(store_address), sinks=[sink])
    paused = loop.run_sync("Send bob 100")
    loop.resume_sync(paused.trace_id, {"call_2_1": Verdict(True, "ok by phone")}, by="ada")
    kinds = [k for k, _ in sink.kinds()]
    assert kinds.count("run_start") == 1 and kinds.count("run_resumed") == 1 and kinds.count("run_end") == 2
    ends = [e.data for e in sink.events if e.kind == "run_end"]
    assert [e["status"] for e in ends] == ["paused", "success"]
    assert ends[0]["pending"] == [{"call_id": "call_2_1", "name": "transfer",
                                   "arguments": '{"to": "bob", "amount": 100}', "step": 2, "why": "approval"}]  # fmt: skip
    resumed = next(e for e in sink.events if e.kind == "run_resumed")
    assert resumed.step == 2 and resumed.data["from_step"] == 2 and resumed.data["status_before"] == "paused"
    [decision] = resumed.data["decisions"]
    assert {k: decision[k] for k in ("call_id", "tool", "approve", "reason", "by")} == {
        "call_id": "call_2_1", "tool": "transfer", "approve": True, "reason": "ok by phone", "by": "ada",
    }  # fmt: skip
    assert isinstance(decision["at"], float)


def test_the_trace_of_a_paused_then_resumed_run_reads_back_whole(tmp_path: Any) -> None:
    from minloop.trace.html import render_html
    from minloop.trace.sqlite import SQLiteSink, Trace, TraceStore

    sink = SQLiteSink(tmp_path / "traces.db")
    loop = Loop(script(), [transfer, balance], store=open_store(str(tmp_path / "runs.db")), sinks=[sink])
    paused = loop.run_sync("Send bob 100")
    waiting = TraceStore(tmp_path / "traces.db").trace(paused.trace_id)
    assert (waiting.run.status, [p["call_id"] for p in waiting.pending], waiting.resumed) == (
        "paused",
        ["call_2_1"],
        [],
    )
    assert "waiting for a decision: transfer" in render_html(waiting)
    loop.resume_sync(paused.trace_id, {"call_2_1": Verdict(False, "call me first")}, by="ada")
    trace: Trace = TraceStore(tmp_path / "traces.db").trace(paused.trace_id)
    assert (trace.run.status, (trace.end or {}).get("status"), trace.pending) == ("success", "success", [])
    assert [s.index for s in trace.steps] == [1, 2, 3] and all(s.complete for s in trace.steps)
    page = render_html(trace)
    assert "resumed at step 2 (it was paused); transfer (call_2_1) denied by ada: call me first" in page


def stored_row(store_address: str, run_id: str) -> Any:
    store = open_store(store_address)
    got = store.load(run_id)
    store.close()
    return got


def test_bad_resumes_are_refused_and_change_nothing(store_address: str) -> None:
    loop = Loop(script(), [transfer, balance], store=open_store(store_address))
    paused = loop.run_sync("Send bob 100")
    before = stored_row(store_address, paused.trace_id)
    rid = paused.trace_id
    with pytest.raises(RunNotFoundError, match="run trc_nope: no run with this id"):
        loop.resume_sync("trc_nope")
    with pytest.raises(
        RunConflictError, match=f"run {rid}: no call call_9 is waiting for a decision \\(waiting: call_2_1\\)"
    ):
        loop.resume_sync(rid, {"call_9": True})

    @tool(needs_approval=True)
    def transfer_money(to: str, amount: int) -> str:  # renamed
        """Send money."""
        return "sent"

    renamed = Loop(script(), [transfer_money, balance], store=open_store(store_address))
    with pytest.raises(
        RunMismatchError, match=f"run {rid}: the resuming loop lacks the run's tools \\(missing transfer\\)"
    ):
        renamed.resume_sync(rid, {"call_2_1": True})

    @tool(name="transfer", needs_approval=True)
    def changed(to: str, amount: float, memo: str = "") -> str:
        """Send money."""
        return "sent"

    with pytest.raises(RunMismatchError, match="changed parameters: transfer"):
        Loop(script(), [changed, balance], store=open_store(store_address)).resume_sync(
            rid, {"call_2_1": True}
        )
    assert stored_row(store_address, rid) == before  # nothing changed
    with pytest.raises(Exception, match="give True, False or a Verdict"):
        loop.resume_sync(rid, {"call_2_1": "yes"})  # type: ignore[dict-item]
    done = loop.resume_sync(rid, {"call_2_1": False})
    assert done.status == "success"
    with pytest.raises(
        RunConflictError, match=f"run {rid}: the run has ended \\(success\\); there is nothing to resume"
    ):
        loop.resume_sync(rid)


def test_a_loop_without_a_store_cannot_resume() -> None:
    with pytest.raises(Exception, match="this loop has no run store"):
        Loop(script(), [transfer, balance]).resume_sync("trc_x")


def test_a_corrupt_row_or_one_from_a_newer_minloop_is_refused(tmp_path: Any) -> None:
    path = str(tmp_path / "runs.db")
    loop = Loop(script(), [transfer, balance], store=open_store(path))
    rid = loop.run_sync("Send bob 100").trace_id
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE minloop_runs SET schema_version = 99 WHERE run_id = ?", (rid,))
    with pytest.raises(
        RunCorruptError,
        match=f"run {rid}: the row was written by a newer minloop \\(format 99, this one reads 2\\)",
    ):
        loop.resume_sync(rid, {"call_2_1": True})
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE minloop_runs SET schema_version = 1, state = '{\"messages\": 3' WHERE run_id = ?", (rid,)
        )
    with pytest.raises(RunCorruptError, match=f"run {rid}: a stored row cannot be read: JSONDecodeError"):
        loop.resume_sync(rid, {"call_2_1": True})
    with sqlite3.connect(path) as conn:
        conn.execute(
            'UPDATE minloop_runs SET state = \'{"messages": [{"role": "robot"}]}\' WHERE run_id = ?', (rid,)
        )
    with pytest.raises(RunCorruptError, match="the stored state cannot be read: TranscriptError"):
        loop.resume_sync(rid, {"call_2_1": True})


def test_store_rows_never_hold_what_the_redactor_scrubs(tmp_path: Any) -> None:
    secret = "sk-" + "a1b2c3d4" * 4

    @tool(needs_approval=True)
    def login(user: str, api_key: str) -> dict[str, str]:
        """Log in."""
        return {"user": user, "token": "t-" + api_key[-4:], "note": f"used {api_key}"}

    path = str(tmp_path / "runs.db")
    model = ScriptedModel([reply(None, call("login", {"user": "ada", "api_key": secret})), "Logged in."])
    loop = Loop(model, [login], store=open_store(path))
    paused = loop.run_sync(f"Log in as ada with key {secret}")
    result = loop.resume_sync(paused.trace_id, {"call_1_1": True})
    with sqlite3.connect(path) as conn:
        rows = [json.dumps(r) for r in conn.execute("SELECT * FROM minloop_runs")]
        rows += [json.dumps(r) for r in conn.execute("SELECT * FROM minloop_calls")]
        rows += [json.dumps(r) for r in conn.execute("SELECT * FROM minloop_entries")]
    assert rows and not any(secret in r for r in rows)
    assert result.status == "success"  # the call's arguments were not stored, so it could not run
    assert json.loads(result.messages[2]["content"])["code"] == "ERR_TOOL_NOT_STORED"
    assert secret not in json.dumps(result.messages)  # the resumed transcript is the stored one
