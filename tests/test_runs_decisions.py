"""Decisions on a paused run's calls, against both stores: an edit runs the edited call (the
trace keeps both), an answer in the tool's place is what the model reads, a decision is bound to
the arguments it was made on, and every bad decision is a clear error that changes nothing."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

import pytest

from minloop import Loop, RecordingSink, Verdict, tool
from minloop.exceptions import DecisionError, MinloopError, RunMismatchError
from minloop.runs import open_store
from minloop.testing import ScriptedModel, call, reply

from .conftest import content, masked

ran: list[str] = []
ASKED = '{"to": "bob", "amount": 100}'
DIGEST = "c53a456d4a88c05e"  # of ASKED, in any key order or spacing


@tool(needs_approval=True)
def transfer(to: str, amount: int) -> str:
    """Send money."""
    ran.append(f"{to}:{amount}")
    return f"sent {amount} to {to}"


def script(answer: str = "Done.") -> ScriptedModel:
    return ScriptedModel([reply(None, call("transfer", {"to": "bob", "amount": 100})), answer])


@pytest.fixture(autouse=True)
def clean() -> None:
    ran.clear()


def paused(store_address: str, **options: Any) -> tuple[Loop, str]:
    loop = Loop(script(), [transfer], store=open_store(store_address), **options)
    result = loop.run_sync("Send bob 100")
    assert (result.status, result.pending[0].digest) == ("paused", DIGEST)
    return loop, result.trace_id


def test_the_digest_is_the_same_in_any_key_order_or_spacing() -> None:
    from minloop.runs.records import digest

    assert (
        digest(ASKED)
        == digest('{"amount":100,"to":"bob"}')
        == DIGEST
        != digest('{"to": "bob", "amount": 10}')
    )


def test_an_edit_runs_the_edited_call_and_the_trace_keeps_both(store_address: str) -> None:
    sink = RecordingSink()
    loop, rid = paused(store_address, sinks=[sink])
    done = loop.resume_sync(
        rid, {"call_1_1": Verdict.edit({"to": "bob", "amount": 50}, digest=DIGEST)}, by="ada"
    )
    assert (done.status, ran) == ("success", ["bob:50"])
    edited = '{"to": "bob", "amount": 50}'
    assert masked(done.messages, rid)[1:] == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1_1", "type": "function", "function": {"name": "transfer", "arguments": edited}}]},
        {"role": "tool", "tool_call_id": "call_1_1", "name": "transfer", "content": content(result="sent 50 to bob")},
        {"role": "assistant", "content": "Done."},
    ]  # fmt: skip
    [decision] = next(e for e in sink.events if e.kind == "run_resumed").data["decisions"]
    assert (decision["asked"], decision["arguments"], decision["digest"], decision["by"]) == (
        ASKED, {"to": "bob", "amount": 50}, DIGEST, "ada",
    )  # fmt: skip
    asked = [e.data["message"]["tool_calls"][0]["function"]["arguments"] for e in sink.events
             if e.kind == "model_response" and e.data["message"].get("tool_calls")]  # fmt: skip
    assert asked == [ASKED, ASKED]  # the model's call as it made it, paused and then resumed
    [ran_as] = [e.data["arguments"] for e in sink.events if e.kind == "tool_call"]
    assert ran_as == edited


def test_an_answer_in_the_tools_place_is_what_the_model_reads(store_address: str) -> None:
    loop, rid = paused(store_address)
    done = loop.resume_sync(rid, {"call_1_1": Verdict.respond("paid by cheque instead")}, by="ada")
    assert (done.status, ran) == ("success", [])
    assert masked(done.messages, rid)[2]["content"] == content(result="paid by cheque instead")


def stored(store_address: str, run_id: str) -> Any:
    store = open_store(store_address)
    try:
        return store.load(run_id)
    finally:
        store.close()


def test_a_call_decided_once_says_how_by_whom_and_when(store_address: str) -> None:
    loop, rid = paused(store_address)
    at = time.mktime((2026, 12, 5, 15, 40, 12, 0, 0, 0)) - time.timezone
    open_store(store_address).decide(rid, {"call_1_1": Verdict(False, "over the limit", "bob", at)})
    before = stored(store_address, rid)
    said = (f"run {rid}: call call_1_1 was already decided: denied by bob at 2026-12-05 15:40:12 UTC "
            "(reason: over the limit); a decision stands once made")  # fmt: skip
    with pytest.raises(DecisionError) as second:
        open_store(store_address).decide(rid, {"call_1_1": Verdict(True, by="ada")})
    with pytest.raises(DecisionError) as on_resume:
        loop.resume_sync(rid, {"call_1_1": True})
    assert str(second.value) == str(on_resume.value) == said
    assert stored(store_address, rid) == before
    done = loop.resume_sync(rid)
    assert (done.status, json.loads(done.messages[2]["content"])["code"], ran) == (
        "success",
        "ERR_TOOL_DENIED",
        [],
    )
    with pytest.raises(MinloopError, match="only a paused run takes decisions; this one is success"):
        open_store(store_address).decide(rid, {"call_1_1": True})


BAD = {
    "another call": ("call_9", Verdict(True), "no call call_9 is waiting for a decision (waiting: call_1_1)"),
    "other arguments": ("call_1_1", Verdict(True, digest="0000000000000000"),
        f"the decision on call_1_1 was made on other arguments (digest 0000000000000000) than the call's: "
        f"transfer({ASKED}), digest {DIGEST}; nothing was recorded"),
    "an edit that does not fit": ("call_1_1", Verdict.edit({"to": "bob", "amount": "lots"}),
        "the edited arguments of call_1_1 do not fit transfer: "),
    "an unknown argument": ("call_1_1", Verdict.edit({"to": "bob", "amount": 5, "memo": "x"}),
        "the edited arguments of call_1_1 do not fit transfer: "),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
@pytest.mark.parametrize("where", ["resume", "store"])
def test_a_bad_decision_is_refused_with_the_stored_run_unchanged(
    store_address: str, case: str, where: str
) -> None:
    loop, rid = paused(store_address)
    before = stored(store_address, rid)
    call_id, verdict, said = BAD[case]
    with pytest.raises(DecisionError) as refused:
        if where == "resume":
            loop.resume_sync(rid, {call_id: verdict})
        else:
            open_store(store_address).decide(rid, {call_id: verdict})
    assert str(refused.value).startswith(f"run {rid}: {said}")
    assert stored(store_address, rid) == before and ran == []


def test_a_decision_of_the_wrong_shape_is_refused_before_the_store_is_read(store_address: str) -> None:
    loop, rid = paused(store_address)
    with pytest.raises(
        MinloopError, match="decision for call_1_1: an edit runs the call, so it cannot also deny"
    ):
        loop.resume_sync(rid, {"call_1_1": Verdict(False, arguments={"to": "eve", "amount": 1})})
    with pytest.raises(MinloopError, match="decision for call_1_1: give True, False or a Verdict, not str"):
        loop.resume_sync(rid, {"call_1_1": "yes"})  # type: ignore[dict-item]


def test_a_resume_that_would_run_other_arguments_than_decided_is_refused(tmp_path: Any) -> None:
    path = str(tmp_path / "runs.db")
    loop, rid = paused(path)
    open_store(path).decide(rid, {"call_1_1": Verdict(True, by="ada")})
    with sqlite3.connect(path) as conn:  # the reply the run would go on with, changed under it
        conn.execute("UPDATE minloop_runs SET reply = replace(reply, '100', '900') WHERE run_id = ?", (rid,))
    with pytest.raises(RunMismatchError) as refused:
        loop.resume_sync(rid)
    assert str(refused.value) == (
        f'run {rid}: call call_1_1 would run other arguments ({{"to": "bob", "amount": 900}}) than were '
        f"decided on (digest {DIGEST}); nothing was run"
    )
    assert ran == []


def test_a_changed_description_alone_does_not_refuse_a_resume(store_address: str) -> None:
    _, rid = paused(store_address)

    @tool(name="transfer", needs_approval=True)
    def reworded(to: str, amount: int) -> str:
        """Send money to a payee, in whole units."""
        ran.append(f"{to}:{amount}")
        return "sent"

    loop = Loop(ScriptedModel(["Done."]), [reworded], store=open_store(store_address))
    done = loop.resume_sync(rid, {"call_1_1": True})
    assert (done.status, ran) == ("success", ["bob:100"])
