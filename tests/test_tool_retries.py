"""Retries: only tools safe to repeat (or opted in), only transient failures, each try in the
trace, one result for the model, and no wait past the run's time budget."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from minloop import CallKey, Loop, MinloopError, TransientToolError, tool
from minloop.layers import RecordingSink, Retry
from minloop.testing import ScriptedModel, call, reply

from .conftest import content, masked

QUICK = Retry(attempts=3, first_wait=0.001, max_wait=0.01)


def flaky(fails: int, **options: Any) -> tuple[Any, list[int]]:
    """A tool whose first ``fails`` calls raise ``TransientToolError``; the calls it got."""
    calls: list[int] = []

    @tool(name="rate", **options)
    def rate(currency: str) -> float:
        """The exchange rate of a currency."""
        calls.append(len(calls) + 1)
        if len(calls) <= fails:
            raise TransientToolError(f"the rates service is busy (try {len(calls)})")
        return 0.92

    return rate, calls


def one_call_then(answer: str) -> ScriptedModel:
    return ScriptedModel([reply(None, call("rate", {"currency": "EUR"}, id="r1")), answer])


def attempts(sink: RecordingSink) -> list[dict[str, Any]]:
    return [e.data for e in sink.events if e.kind == "tool_attempt"]


def test_a_flaky_idempotent_tool_succeeds_on_its_third_attempt() -> None:
    rate, calls = flaky(2, idempotent=True)
    sink = RecordingSink()
    result = Loop(one_call_then("0.92"), [rate], retry=QUICK, sinks=[sink]).run_sync("EUR?")
    assert calls == [1, 2, 3]
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "EUR?"},
        reply(None, call("rate", {"currency": "EUR"}, id="r1")),
        {"role": "tool", "tool_call_id": "r1", "name": "rate", "content": content(result=0.92)},
        {"role": "assistant", "content": "0.92"},
    ]
    tries = attempts(sink)
    assert [(t["attempt"], t["code"], t["error"]) for t in tries] == [
        (1, "ERR_TOOL_FAILED", "TransientToolError: the rates service is busy (try 1)"),
        (2, "ERR_TOOL_FAILED", "TransientToolError: the rates service is busy (try 2)"),
        (3, None, None),
    ]
    assert [t["id"] for t in tries] == ["r1"] * 3
    assert all(0 < t["wait"] <= 0.01 for t in tries[:2]) and tries[2]["wait"] is None
    kinds = [e.kind for e in sink.events if e.step == 1]
    assert kinds.index("tool_attempt") > kinds.index("tool_call") and kinds[-2] == "tool_result"


def test_a_tool_that_is_not_safe_to_repeat_is_not_retried() -> None:
    rate, calls = flaky(2)
    sink = RecordingSink()
    result = Loop(one_call_then("Busy."), [rate], retry=QUICK, sinks=[sink]).run_sync("EUR?")
    assert calls == [1]
    assert result.steps[0].results[0].error == "ERR_TOOL_FAILED"
    assert attempts(sink) == []


@pytest.mark.parametrize("options", [{"retry": True}, {"read_only": True}])
def test_an_author_opts_a_tool_in_and_a_read_only_tool_is_safe(options: dict[str, Any]) -> None:
    rate, calls = flaky(1, **options)
    result = Loop(one_call_then("0.92"), [rate], retry=QUICK).run_sync("EUR?")
    assert calls == [1, 2] and result.steps[0].results[0].error is None


def test_a_tool_taking_the_call_key_is_retried_with_the_same_key() -> None:
    keys: list[str] = []

    @tool
    def charge(cents: int, key: CallKey) -> str:
        """Charge the card."""
        keys.append(key)
        if len(keys) < 2:
            raise TransientToolError("the payment service timed out")
        return "charged"

    model = ScriptedModel([reply(None, call("charge", {"cents": 5}, id="c1")), "Charged."])
    result = Loop(model, [charge], retry=QUICK).run_sync("Charge 5.")
    assert result.steps[0].results[0].error is None
    assert len(keys) == 2 and keys[0] == keys[1]


def test_a_failure_that_is_not_transient_goes_to_the_model_at_once() -> None:
    calls: list[int] = []

    @tool(idempotent=True)
    def rate(currency: str) -> float:
        """The exchange rate."""
        calls.append(1)
        raise ValueError(f"no such currency: {currency}")

    result = Loop(one_call_then("Unknown."), [rate], retry=QUICK).run_sync("EUR?")
    assert calls == [1] and result.steps[0].results[0].error == "ERR_TOOL_FAILED"


def test_a_timeout_is_retried() -> None:
    tries: list[int] = []

    @tool(idempotent=True, timeout=0.05)
    async def rate(currency: str) -> float:
        """The exchange rate."""
        tries.append(1)
        if len(tries) == 1:
            await asyncio.sleep(1)
        return 0.92

    result = Loop(one_call_then("0.92"), [rate], retry=QUICK).run_sync("EUR?")
    assert len(tries) == 2 and result.steps[0].results[0].error is None


def test_the_last_failure_stands_when_all_attempts_fail() -> None:
    rate, calls = flaky(5, idempotent=True)
    sink = RecordingSink()
    result = Loop(one_call_then("Busy."), [rate], retry=QUICK, sinks=[sink]).run_sync("EUR?")
    assert calls == [1, 2, 3]
    assert "busy (try 3)" in result.messages[2]["content"]
    assert [(t["attempt"], t["wait"] is None) for t in attempts(sink)] == [(1, False), (2, False), (3, True)]


def test_no_wait_ends_past_the_run_time_budget() -> None:
    rate, calls = flaky(1, idempotent=True)
    slow = Retry(attempts=3, first_wait=30, max_wait=30, jitter=0)
    started = time.monotonic()
    result = Loop(one_call_then("Busy."), [rate], retry=slow, time_budget=5).run_sync("EUR?")
    assert calls == [1] and result.status == "success"
    assert time.monotonic() - started < 5


def test_waits_grow_and_stay_under_the_tool_timeout() -> None:
    rate, _ = flaky(0, idempotent=True, timeout=0.3)
    steady = Retry(attempts=5, first_wait=0.1, factor=2, max_wait=10, jitter=0)
    assert [steady.wait(n, rate) for n in (1, 2, 3)] == [0.1, 0.2, 0.3]
    jittered = Retry(first_wait=1, jitter=0.5)
    assert all(
        0.5 <= jittered.wait(1, rate.__class__(**{**_fields(rate), "timeout": 9})) <= 1 for _ in range(50)
    )


def _fields(t: Any) -> dict[str, Any]:
    return {f: getattr(t, f) for f in t.__dataclass_fields__ if not f.startswith("_")}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"attempts": 0}, "attempts must be"),
        ({"jitter": 2}, "jitter must be"),
        ({"factor": 0.5}, "factor >= 1"),
    ],
)
def test_a_retry_policy_is_checked(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(MinloopError, match=message):
        Retry(**bad)


def test_retries_with_a_run_store_record_the_last_try(tmp_path: Any) -> None:
    from minloop.runs import SQLiteRunStore

    rate, calls = flaky(2, idempotent=True)
    store = SQLiteRunStore(tmp_path / "runs.db")
    result = Loop(one_call_then("0.92"), [rate], retry=QUICK, store=store).run_sync("EUR?")
    assert calls == [1, 2, 3] and result.status == "success"
    assert result.steps[0].results[0].error is None
    store.close()
