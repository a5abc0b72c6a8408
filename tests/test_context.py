"""Context under a token budget: S6, S7, S22, S24."""

from __future__ import annotations

import json

import pytest

from minloop import Loop, check_transcript, tool
from minloop.layers.context import (
    ContextPolicy,
    WindowPolicy,
    estimate_tokens,
    split_steps,
    summarise,
    task_summary,
)
from minloop.testing import ScriptedModel, call, reply

NOISE = {f"debug_{i}": "x" * 150 for i in range(12)}  # ~2 KB of fields nobody asked for


@tool
def lookup(city: str) -> dict[str, object]:
    """Weather with noise."""
    return {"city": city, "condition": "Sunny", "temperature": 20 + len(city), **NOISE}


@tool(keep_fields=["city", "condition", "temperature"])
def lookup_clean(city: str) -> dict[str, object]:
    """Weather, noise dropped by contract (S24)."""
    return {"city": city, "condition": "Sunny", "temperature": 20 + len(city), **NOISE}


CITIES = ["Beijing", "Paris", "Oslo", "Lima", "Cairo", "Delhi", "Tokyo", "Quito", "Rome", "Riga", "Bern"]


def long_run(tool_name: str, policy: object, rounds: int = 10) -> tuple[object, ScriptedModel]:
    script = [reply(None, call(tool_name, {"city": c})) for c in CITIES[:rounds]] + ["All done."]
    model = ScriptedModel(script)
    loop = Loop(model, [lookup, lookup_clean], max_steps=rounds + 1, context=policy)  # type: ignore[arg-type]
    with model:
        result = loop.run_sync("Weather in every city, one at a time")
    return result, model


def test_s6_s22_every_list_sent_is_valid_and_within_budget() -> None:
    policy = ContextPolicy(window=2500, reserve=300, keep_steps=2)
    result, model = long_run("lookup", policy)
    assert result.status == "success"  # type: ignore[attr-defined]
    for request in model.requests:
        transcript = [m for m in request.messages if m["content"] != Loop(model).controls.control_text]
        check_transcript(transcript)  # S7: no call is ever separated from its result
        assert (
            estimate_tokens(request.messages) + int(len(json.dumps(request.tools)) / 3.6) <= 2500 - 300 + 60
        )
    modes = [s.context.mode for s in result.steps]  # type: ignore[attr-defined]
    assert modes[0] == "full" and modes[-1] == "summary"
    assert len(result.messages) == 1 + 2 * 10 + 1  # type: ignore[attr-defined]  # the stored transcript stays whole


def test_s6_summary_names_each_older_round_and_its_results() -> None:
    result, model = long_run("lookup_clean", ContextPolicy(window=700, reserve=100, keep_steps=2), rounds=6)
    last = model.requests[-1].messages
    summary = next(m for m in last if (m["content"] or "").startswith("Summary of earlier steps"))
    lines = summary["content"].splitlines()[1:]
    assert (
        lines[0]
        == 'step 1: lookup({"city": "Beijing"}) -> {"city":"Beijing","condition":"Sunny","temperature":27}'.replace(
            "lookup(", "lookup_clean("
        )
    )
    assert len(lines) == 4  # rounds 1-4 summarised, rounds 5-6 whole
    kept_calls = [m["tool_calls"][0]["function"]["arguments"] for m in last if m.get("tool_calls")]
    assert kept_calls == ['{"city": "Cairo"}', '{"city": "Delhi"}']
    assert result.steps[-1].context.steps_summarised == 4  # type: ignore[attr-defined]


def test_s24_keep_fields_drops_noise() -> None:
    result, _ = long_run("lookup_clean", None, rounds=1)
    body = json.loads(result.messages[2]["content"])  # type: ignore[attr-defined]
    assert sorted(body) == ["city", "condition", "temperature", "trace_id"]


def test_s22_oldest_results_shrink_when_summary_is_not_enough() -> None:
    result, model = long_run("lookup", ContextPolicy(window=1400, reserve=100, keep_steps=2), rounds=4)
    assert result.status == "success"  # type: ignore[attr-defined]
    shrunk = [s.context.results_shrunk for s in result.steps]  # type: ignore[attr-defined]
    assert max(shrunk) >= 1
    notes = [m["content"] for m in model.requests[-1].messages if m["role"] == "tool"]
    assert any("[shrunk to fit the context window]" in n for n in notes)


def test_pinned_part_over_the_window_is_a_clear_status() -> None:
    model = ScriptedModel([reply(None, call("lookup", {"city": "Oslo"})), "never"])
    big = "please " * 800
    result = Loop(model, [lookup], context=ContextPolicy(window=600, reserve=100)).run_sync(big)
    assert result.status == "context_overflow"
    assert result.error is not None and "pinned messages" in result.error
    assert model.remaining == 2 and result.messages == [{"role": "user", "content": big}]


def test_s7_window_policy_keeps_whole_rounds() -> None:
    result, model = long_run("lookup_clean", WindowPolicy(window=10_000, max_messages=5), rounds=5)
    last = model.requests[-1].messages
    check_transcript([m for m in last if m["role"] != "system"])
    roles = [m["role"] for m in last]
    assert roles == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "system",
    ]  # 2 rounds of 2 + the control


def test_split_steps_and_task_summary() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather in Oslo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "a",
            "name": "lookup",
            "content": '{"code": "ERR_TOOL_TIMEOUT", "trace_id": "t"}',
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "b", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "b", "name": "lookup", "content": '{"temp": 3, "trace_id": "t"}'},
    ]
    pinned, rounds = split_steps(messages)
    assert (len(pinned), [len(r) for r in rounds]) == (2, [2, 2])
    assert task_summary(messages) == {
        "role": "system",
        "content": (
            'Task: weather in Oslo?\nInformation gathered: lookup: {"temp":3}\n'
            'Still to do: retry or work around: lookup: {"code":"ERR_TOOL_TIMEOUT"}'
        ),
    }
    assert (
        summarise(rounds[:1], 80)["content"]
        == 'Summary of earlier steps:\nstep 1: lookup({}) -> {"code":"ERR_TOOL_TIMEOUT"}'
    )


def test_task_summary_is_sent_at_the_head_each_round() -> None:
    model = ScriptedModel([reply(None, call("lookup_clean", {"city": "Oslo"})), "3 C"])
    with model:
        Loop(model, [lookup_clean], context=ContextPolicy(window=8000, task_summary=True)).run_sync("Oslo?")
    heads = [r.messages[1]["content"].splitlines()[0] for r in model.requests]
    assert heads == ["Task: Oslo?", "Task: Oslo?"]
    assert "Information gathered: lookup_clean:" in model.requests[1].messages[1]["content"]


def test_context_needs_a_window() -> None:
    from minloop import MinloopError

    with pytest.raises(
        MinloopError, match=r"ContextPolicy needs a token window: give ContextPolicy\(window=...\)"
    ):
        Loop(ScriptedModel(["x"]), [], context=ContextPolicy())
