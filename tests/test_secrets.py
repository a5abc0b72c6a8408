"""Secrets kept out of logs, results, trace events and error messages, and the redactor's check of
JSON documents."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from minloop import tool
from minloop.layers.tracing import Event
from minloop.testing import ChatServer, Fault, ScriptedModel, call, reply

from .conftest import TID
from .test_security import bodies, run

# --- secrets never reach logs or results -------------------------------------------------------

SECRETS = [
    "sk-live-abcdefghijklmnop",
    "ghp_" + "a" * 36,
    "AKIAABCDEFGHIJKLMNOP",
    "hunter2-horse",
    "tok.en-value",
]


@tool
def leaky(query: str) -> dict[str, Any]:
    """Return a config full of credentials."""
    return {
        "api_key": SECRETS[0],
        "note": f"use Authorization: Bearer {SECRETS[4]}",
        "nested": {"password": SECRETS[3]},
        "text": f"{query}: {SECRETS[1]} and {SECRETS[2]}",
    }


@tool
def leaky_error(query: str) -> None:
    """Fail, quoting a key."""
    raise PermissionError(f"key {SECRETS[0]} was refused for {query}")


class Sink:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


def test_secrets_never_appear_in_logs_results_or_trace_events(caplog: pytest.LogCaptureFixture) -> None:
    sink = Sink()
    model = ScriptedModel(
        [
            reply(None, call("leaky", {"query": f"keys {SECRETS[1]}"}), call("leaky_error", {"query": "x"})),
            "Configured.",
        ]
    )
    with caplog.at_level(logging.DEBUG, logger="minloop"), model:
        result = run(model, [leaky, leaky_error], sinks=[sink])
    assert bodies(result) == [
        {
            "api_key": "[REDACTED]",
            "note": "use Authorization: [REDACTED]",
            "nested": {"password": "[REDACTED]"},
            "text": "keys [REDACTED]: [REDACTED] and [REDACTED]",
            "trace_id": TID,
        },
        {
            "error": "PermissionError: key [REDACTED] was refused for x",
            "code": "ERR_TOOL_FAILED",
            "tool": "leaky_error",
            "trace_id": TID,
        },
    ]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    traced = json.dumps([(e.kind, e.data) for e in sink.events], default=str)
    results = json.dumps([r.content for s in result.steps for r in s.results])
    assert "tool result leaky" in logged and "tool_result" in traced
    assert [s for s in SECRETS if s in logged or s in traced or s in results] == []


def test_a_secret_in_the_prompt_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="minloop"):
        run(ScriptedModel(["ok"]), [], prompt=f"my key is {SECRETS[0]}")
    assert SECRETS[0] not in "\n".join(r.getMessage() for r in caplog.records)


def test_a_key_echoed_by_the_endpoint_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    from minloop.models.openai import OpenAIModel

    echo = Fault(401, body=json.dumps({"error": {"message": f"Incorrect API key provided: {SECRETS[0]}"}}))
    with ChatServer([echo]) as server, caplog.at_level(logging.INFO, logger="minloop"):
        result = run(OpenAIModel("m", base_url=server.base_url, api_key=SECRETS[0], max_retries=0), [])
    assert result.status == "model_error"
    assert SECRETS[0] not in (result.error or "") + "\n".join(r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "value",
    [
        {"type": "ToolCallFinished", "call": {"name": "login", "arguments": '{"password": "hunter2"}'}},
        {"type": "StepEnd", "record": {"message": {"content": '{"outer": "{\\"API_KEY\\" : \\"x\\"}"}'}}},
        {"headers": {"Authorization": "Basic abc"}},
        {"type": "ToolResult", "content": '{"token"\n\t: "x"}'},
        {"type": "TextDelta", "text": "use sk-abcdefghijklmnop"},
        {"type": "TextDelta", "text": "Bearer abc.def"},
        {"type": "TextDelta", "text": "\\u0074oken"},
    ],
)
def test_a_json_document_with_anything_secret_is_not_clean(value: Any) -> None:
    from minloop.redact import Redactor

    redactor = Redactor()
    text = json.dumps(value, ensure_ascii=False)
    assert not redactor.is_clean_json(text)
    assert redactor(value) != value or "\\u" in text


def test_a_json_document_whose_keys_only_look_secret_is_clean_and_redacts_to_itself() -> None:
    from minloop.redact import Redactor

    redactor = Redactor()
    value = {
        "type": "RunEnd",
        "result": {"usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}, "x_token": "a",
                   "messages": [{"role": "tool", "content": '{"tokens": 2, "kind": "token"}'}]},
    }  # fmt: skip
    assert redactor.is_clean_json(json.dumps(value, ensure_ascii=False)) and redactor(value) == value
    assert not redactor.is_clean(json.dumps(value))  # the plain check stops at "prompt_tokens"
