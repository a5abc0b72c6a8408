"""Edge cases where the right behaviour was a choice; each test holds the choice the README documents.

* ``Retry-After`` longer than ``max_backoff``: the call fails with a clear ``model_error``, it is
  never retried earlier than the server asked;
* a 200 whose body is not a Chat Completion is retried like a connection dropped mid-body;
* ``ContextPolicy`` overflows only when the pinned part and the latest step cannot fit;
* a legacy ``function_call`` reply is a tool call;
* secrets are redacted after long strings are cut, without losing any that can be shown.
"""

from __future__ import annotations

import json
from typing import Any

from minloop import Controls, Loop, tool
from minloop.envelope import seal, to_json
from minloop.layers.context import ContextPolicy
from minloop.models.openai import OpenAIModel
from minloop.redact import Redactor
from minloop.testing import ChatServer, Fault, ScriptedModel, call, reply

from .conftest import content, masked

USER = {"role": "user", "content": "go"}


def test_a_retry_after_longer_than_max_backoff_ends_the_run_instead_of_retrying_early() -> None:
    script = [Fault(429, body='{"error": "slow down"}', headers={"Retry-After": "120"}), reply("too early")]
    with ChatServer(script) as server:
        model = OpenAIModel("m", base_url=server.base_url, max_retries=2, max_backoff=20)
        result = Loop(model).run_sync("hi")
    assert (result.status, len(server.requests)) == ("model_error", 1)
    assert result.error == (
        f"ModelHTTPError: HTTP 429 from {server.base_url}/chat/completions: the server asked to wait "
        "120 s before retrying (Retry-After), longer than max_backoff=20 s; not retrying sooner than "
        'asked. Raise max_backoff to wait that long; response: {"error": "slow down"}'
    )


def test_a_200_with_a_malformed_body_is_retried_like_a_dropped_connection() -> None:
    script = [Fault(200, body="{not json"), Fault(200, body='{"choices": [', truncate=True), reply("ok")]
    with ChatServer(script) as server:
        result = Loop(OpenAIModel("m", base_url=server.base_url, backoff=0.01)).run_sync("hi")
    assert (result.status, result.output, len(server.requests)) == ("success", "ok", 3)


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Get the current weather for a city."""
    return {"city": city, "temperature": 21, "debug": "x" * 2000}


def test_context_policy_overflows_only_when_the_pinned_part_and_latest_step_cannot_fit() -> None:
    cities = [f"City{i}" for i in range(8)]
    model = ScriptedModel([*(reply(None, call("get_weather", {"city": c})) for c in cities), "Done."])
    loop = Loop(model, [get_weather], max_steps=10, context=ContextPolicy(window=700, reserve=100))
    with model:
        result = loop.run_sync("Weather in eight cities, one per step")
    assert (result.status, result.output) == ("success", "Done.")
    assert all(s.context is not None and s.context.tokens_after <= 600 for s in result.steps)
    last = model.requests[-1].messages  # pinned, summary, the latest step, the control message
    assert [m["role"] for m in last] == ["user", "system", "assistant", "tool", "system"]
    assert last[1]["content"].startswith("Summary of earlier steps:\n")
    assert last[2]["tool_calls"][0]["function"]["arguments"] == '{"city": "City7"}'


def test_a_legacy_function_call_reply_is_a_tool_call() -> None:
    legacy = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    with ScriptedModel([legacy, "Mild in Oslo."]) as model:
        result = Loop(model, [get_weather], controls=Controls(result_role="function")).run_sync("go")
    call_id = "call_s1_1"
    assert masked(result.messages, result.trace_id) == [
        USER,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {
            "role": "function",
            "name": "get_weather",
            "tool_call_id": call_id,
            "content": content(city="Oslo", temperature=21, debug="x" * 2000),
        },
        {"role": "assistant", "content": "Mild in Oslo."},
    ]


def test_secrets_are_still_redacted_when_long_strings_are_cut_first() -> None:
    nested = json.dumps({"password": "hunter2", "rows": ["y" * 100] * 400})  # JSON held in a string

    @tool
    def dump() -> dict[str, Any]:
        """Return a huge result with secrets near its start."""
        return {"api_key": "k" * 50_000, "log": "Bearer abc.def " + "z" * 1_000_000, "raw": nested}

    with ScriptedModel([reply(None, call("dump")), "ok"]) as model:
        result = Loop(model, [dump]).run_sync("go")
    marker = json.loads(result.messages[2]["content"])
    assert marker["result_truncated"] is True and len(result.messages[2]["content"]) <= 16_000
    assert marker["head"].startswith('{"api_key": "[REDACTED]", "log": "[REDACTED] zzz')
    assert "kkkk" not in marker["head"] and "abc.def" not in marker["head"]
    with ScriptedModel([reply(None, call("dump")), "ok"]) as model:
        capped = Loop(model, [dump], controls=Controls(max_result_chars=2_000_000)).run_sync("go")
    raw = json.loads(json.loads(capped.messages[2]["content"])["raw"])
    assert raw["password"] == "[REDACTED]"  # found by key inside the JSON string, which was not cut


def test_cutting_before_redaction_gives_what_redacting_everything_first_gives() -> None:
    redact, tid, cap = Redactor(), "trc_000000000000_000000", 2000
    quotes = '"' * 3000  # each doubles when escaped
    bodies = [
        {"rows": [{"id": i, "note": "n" * 30} for i in range(5000)]},
        {"api_key": "k" * 50_000, "rows": list(range(20_000))},  # redaction pulls later rows into view
        {"q": quotes, "token": "t" * 5000, "rows": ["r" * 50] * 300},
        {"log": "x" * 1930 + " sk-" + "a" * 40 + " " + "y" * 10_000},  # a key straddling the cap
        {"raw": json.dumps({"password": "hunter2", "pad": "p" * 5000}), "tail": "z" * 9000},
        {"deep": [[[["d" * 100] * 50] * 3] * 3], "secret": "s" * 10},
    ]
    for body in bodies:
        body = {**body, "trace_id": tid}
        full = to_json(redact(body))
        assert seal(body, cap, redact, tid) == (
            full if len(full) <= cap else marker(full, len(to_json(body)))
        )


def marker(full: str, original: int, cap: int = 2000) -> str:
    """The truncation marker with the longest head of ``full`` that keeps it within ``cap``."""
    fields = {"result_truncated": True, "original_chars": original}
    for n in range(cap, -1, -1):
        text = to_json({**fields, "head": full[:n], "trace_id": "trc_000000000000_000000"})
        if len(text) <= cap:
            return text
    raise AssertionError("no head fits")
