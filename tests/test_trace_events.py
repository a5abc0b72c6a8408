"""Trace events reach the sinks in order, and secrets never do."""

from __future__ import annotations

import json

from minloop import Loop, tool
from minloop.redact import REDACTED, Redactor
from minloop.testing import RecordingSink, ScriptedModel, call, reply


@tool
def login(user: str, password: str) -> dict[str, str]:
    """Log in."""
    return {"user": user, "session": "ok", "api_key": "sk-live-abcdefgh12345678"}


def test_events_follow_the_four_steps() -> None:
    sink = RecordingSink()
    model = ScriptedModel(
        [reply(None, call("login", {"user": "ann", "password": "hunter2"}), call("nope")), "done"]
    )
    with model:
        result = Loop(model, [login], sinks=[sink]).run_sync("log me in")
    assert [(e.kind, e.step) for e in sink.events] == [
        ("run_start", 0),
        ("step_start", 1),
        ("model_request", 1),
        ("model_response", 1),
        ("tool_call", 1),
        ("tool_call", 1),
        ("tool_result", 1),
        ("tool_result", 1),
        ("step_end", 1),
        ("step_start", 2),
        ("model_request", 2),
        ("model_response", 2),
        ("step_end", 2),
        ("run_end", 2),
    ]
    assert {e.trace_id for e in sink.events} == {result.trace_id}
    end = sink.events[-1].data
    assert (end["status"], end["steps"], end["final_message"]) == (
        "success",
        2,
        {"role": "assistant", "content": "done"},
    )
    unknown = sink.events[7].data
    assert (unknown["name"], unknown["error"], unknown["rerouted_to"]) == (
        "nope",
        "ERR_TOOL_UNKNOWN",
        "ask_for_clarification",
    )


def test_secrets_never_reach_a_sink() -> None:
    sink = RecordingSink()
    model = ScriptedModel(
        [reply(None, call("login", {"user": "ann", "password": "hunter2"})), "Bearer abc.def-123 ok"]
    )
    with model:
        result = Loop(model, [login], sinks=[sink], redact=Redactor(fields=["user"])).run_sync(
            "key sk-test-1234567890abcd"
        )
    dumped = json.dumps([e.data for e in sink.events])
    for secret in ("hunter2", "sk-live-abcdefgh12345678", "sk-test-1234567890abcd", "abc.def-123", '"ann"'):
        assert secret not in dumped
    assert REDACTED in dumped
    assert (
        "hunter2" in result.messages[1]["tool_calls"][0]["function"]["arguments"]
    )  # the run itself is untouched


def test_redactor_keeps_json_text_unchanged_when_clean() -> None:
    text = '{"a":1,  "b": [2]}'
    assert Redactor()(text) == text
    assert Redactor()({"Authorization": "Bearer x", "n": 1}) == {"Authorization": REDACTED, "n": 1}
