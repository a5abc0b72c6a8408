"""A tool that asks the user mid-call (``minloop.questions``), on both run stores: the run pauses
with the questions listed like an approval, a resume sends the answers with the state echoed,
new questions on the retried call pause it again, answers are checked against the questions,
an in-process ``ask_user`` answers without a store, and with neither the model reads
``ERR_TOOL_INPUT_REQUIRED``. The tool here is a Python tool speaking the same protocol an MCP
server does (tests/test_mcp_questions.py runs a real one)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from minloop import Loop, Question, UserAnswer, Verdict, tool
from minloop.exceptions import RunConflictError
from minloop.questions import Asked, Asking, answered
from minloop.runs import PendingCall, open_store
from minloop.testing import ScriptedModel, call, reply

from .conftest import TID, content, masked

WHEN = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}
BUDGET = {"type": "object", "properties": {"euros": {"type": "integer"}}, "required": ["euros"]}
STATE = 'round 1 "q" \\ +/= 状态\n✓'
rounds: list[tuple[str | None, dict[str, Any]]] = []  # (state, answers) of every call the tool got


def ask(key: str, message: str, schema: dict[str, Any], state: str, round_: int) -> Asked:
    return Asked(Asking((Question("travel", key, "form", message, schema),), state, round_))


@tool
async def plan(city: str) -> str:
    """Plan a trip: asks the date, then the budget."""
    sent = answered()
    rounds.append(
        (None, {}) if sent is None else (sent.state, {k: a.to_dict() for k, a in sent.answers.items()})
    )
    if sent is None:
        raise ask("when", f"When do you go to {city}?", WHEN, STATE, 1)
    first = next(iter(sent.answers.values()))
    if first.action != "accept":
        return f"not planned: {first.action}"
    if sent.state == STATE:
        raise ask("budget", "Your budget?", BUDGET, "round 2", 2)
    return f"planned {city} for {first.content}"


def script(*then: Any) -> ScriptedModel:
    return ScriptedModel([reply(None, call("plan", {"city": "Paris"}, id="c1")), *then])


def transcript(result: str) -> list[dict[str, Any]]:
    asked = {"type": "function", "function": {"name": "plan", "arguments": '{"city": "Paris"}'}, "id": "c1"}
    return [
        {"role": "user", "content": "Plan Paris"},
        {"role": "assistant", "content": None, "tool_calls": [asked]},
        {"role": "tool", "tool_call_id": "c1", "name": "plan", "content": result},
        {"role": "assistant", "content": "Done."},
    ]


@pytest.fixture(autouse=True)
def clean() -> None:
    rounds.clear()


def test_with_no_store_and_nobody_to_ask_the_model_reads_a_clear_code() -> None:
    result = Loop(script("Done."), [plan]).run_sync("Plan Paris")
    told = {
        "error": "the server 'travel' needs the user's input to finish this call (When do you go to Paris?) "
        "and the user cannot be asked in this run. Tell the user what it needs; do not retry the call",
        "code": "ERR_TOOL_INPUT_REQUIRED",
        "tool": "plan",
        "questions": [{"server": "travel", "key": "when", "kind": "form", "message": "When do you go to Paris?",
                       "schema": WHEN}],
        "trace_id": TID,
    }  # fmt: skip
    assert result.status == "success"
    assert masked(result.messages, result.trace_id) == transcript(json.dumps(told, ensure_ascii=False))
    assert rounds == [(None, {})]


def test_an_in_process_callback_answers_every_round() -> None:
    asked: list[str] = []

    async def ask_user(q: Question) -> UserAnswer:
        asked.append(f"{q.server}/{q.key}: {q.message}")
        return UserAnswer(content={"date": "2026-12-24"} if q.key == "when" else {"euros": 300})

    result = Loop(script("Done."), [plan], ask_user=ask_user).run_sync("Plan Paris")
    assert masked(result.messages, result.trace_id) == transcript(
        content(result="planned Paris for {'euros': 300}")
    )
    assert asked == ["travel/when: When do you go to Paris?", "travel/budget: Your budget?"]
    assert rounds == [
        (None, {}),
        (STATE, {"when": {"action": "accept", "content": {"date": "2026-12-24"}}}),
        ("round 2", {"budget": {"action": "accept", "content": {"euros": 300}}}),
    ]


def test_a_callback_without_an_answer_and_no_store_leaves_the_question_to_the_model() -> None:
    result = Loop(script("Done."), [plan], ask_user=lambda q: None).run_sync("Plan Paris")
    assert json.loads(result.messages[2]["content"])["code"] == "ERR_TOOL_INPUT_REQUIRED"


def test_a_question_pauses_the_run_and_each_answer_goes_on_until_the_call_completes(
    store_address: str,
) -> None:
    store = open_store(store_address)
    paused = Loop(script(), [plan], store=store).run_sync("Plan Paris")
    when = Question("travel", "when", "form", "When do you go to Paris?", WHEN)
    assert (paused.status, paused.pending) == (
        "paused",
        (PendingCall("c1", "plan", '{"city": "Paris"}', 1, "question", (when,)),),
    )
    assert paused.error == "waiting for the user's answers to plan (c1): When do you go to Paris?"
    assert [r.pending for r in store.runs()] == [1]

    again = Loop(ScriptedModel([]), [plan], store=store).resume_sync(
        paused.trace_id, {"c1": UserAnswer(content={"date": "2026-12-24"})}
    )
    budget = Question("travel", "budget", "form", "Your budget?", BUDGET)
    assert (again.status, again.pending) == (
        "paused",
        (PendingCall("c1", "plan", '{"city": "Paris"}', 1, "question", (budget,)),),
    )
    with pytest.raises(
        RunConflictError, match="the questions asked now are budget; no question when; no answer to budget"
    ):
        Loop(ScriptedModel([]), [plan], store=store).resume_sync(
            paused.trace_id, {"c1": {"when": UserAnswer(content={"date": "x"})}}
        )

    done = Loop(ScriptedModel(["Done."]), [plan], store=store).resume_sync(
        paused.trace_id, {"c1": {"budget": UserAnswer(content={"euros": 300})}}
    )
    assert masked(done.messages, done.trace_id) == transcript(
        content(result="planned Paris for {'euros': 300}")
    )
    assert rounds == [
        (None, {}),
        (STATE, {"when": {"action": "accept", "content": {"date": "2026-12-24"}}}),
        ("round 2", {"budget": {"action": "accept", "content": {"euros": 300}}}),
    ]  # fmt: skip


def test_an_answer_that_does_not_fit_is_refused_and_the_run_stays_paused(store_address: str) -> None:
    store = open_store(store_address)
    paused = Loop(script(), [plan], store=store).run_sync("Plan Paris")
    loop = Loop(ScriptedModel([]), [plan], store=store)
    with pytest.raises(
        RunConflictError,
        match=r"call c1 \(plan\): the answer to 'when' \(When do you go to Paris\?\) does not fit its schema: date: 5 is not of type 'string'",
    ):
        loop.resume_sync(paused.trace_id, {"c1": UserAnswer(content={"date": 5})})
    with pytest.raises(
        RunConflictError, match=r"does not fit its schema: \(root\): 'date' is a required property"
    ):
        loop.resume_sync(paused.trace_id, {"c1": UserAnswer(content={})})
    assert store.load(paused.trace_id).row.status == "paused" and rounds == [(None, {})]


@pytest.mark.parametrize("given", [UserAnswer("decline"), False, Verdict(False, "no"), UserAnswer("cancel")])
def test_declining_and_cancelling_are_answers_the_server_gets(store_address: str, given: Any) -> None:
    store = open_store(store_address)
    paused = Loop(script(), [plan], store=store).run_sync("Plan Paris")
    done = Loop(ScriptedModel(["Done."]), [plan], store=store).resume_sync(paused.trace_id, {"c1": given})
    action = "cancel" if given == UserAnswer("cancel") else "decline"
    assert masked(done.messages, done.trace_id) == transcript(content(result=f"not planned: {action}"))
    assert rounds == [(None, {}), (STATE, {"when": {"action": action, "content": None}})]


def test_the_trace_says_what_was_answered_and_a_bare_approval_accepts(store_address: str) -> None:
    from minloop import RecordingSink
    from minloop.runs.decisions import said
    from minloop.trace.sqlite import decision_text

    store, sink = open_store(store_address), RecordingSink()
    loop = Loop(script(), [plan], store=store, sinks=[sink])
    paused = loop.run_sync("Plan Paris")
    again = loop.resume_sync(paused.trace_id, {"c1": UserAnswer(content={"date": "2026-12-24"})}, by="ada")
    [first] = next(e for e in sink.events if e.kind == "run_resumed").data["decisions"]
    assert decision_text(first) == "plan (c1) answered (when: accept) by ada"
    [record] = [c for c in store.load(paused.trace_id).calls if c.call_id == "c1"]
    assert record.verdict is None and record.phase == "pending"  # asked again: the budget

    store.decide(again.trace_id, {"c1": Verdict(True, by="bob")})  # as `minloop approve` records it
    Loop(ScriptedModel(["Done."]), [plan], store=store).resume_sync(again.trace_id)
    assert rounds[-1] == ("round 2", {"budget": {"action": "accept", "content": None}})
    decided = Verdict(True, by="bob", answers={"when": UserAnswer("decline")})
    assert said(decided) == "answered (when: decline) by bob"


def test_two_calls_of_one_step_that_both_ask_pause_together_and_each_gets_its_answer(
    store_address: str,
) -> None:
    store = open_store(store_address)
    both = reply(None, call("plan", {"city": "Paris"}, id="c1"), call("plan", {"city": "Rome"}, id="c2"))
    paused = Loop(ScriptedModel([both]), [plan], store=store).run_sync("Plan both")
    assert [(p.call_id, p.why, p.questions[0].message) for p in paused.pending] == [
        ("c1", "question", "When do you go to Paris?"), ("c2", "question", "When do you go to Rome?"),
    ]  # fmt: skip
    answers = {"c1": UserAnswer("decline"), "c2": UserAnswer("cancel")}
    done = Loop(ScriptedModel(["Neither."]), [plan], store=store).resume_sync(paused.trace_id, answers)
    told = [json.loads(m["content"])["result"] for m in done.messages if m["role"] == "tool"]
    assert (done.status, told) == ("success", ["not planned: decline", "not planned: cancel"])
    assert sorted(r[0] or "" for r in rounds) == ["", "", STATE, STATE]
