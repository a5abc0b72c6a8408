"""Tool contracts: S11, S12, S15, S27."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from minloop import Loop, Tool, ToolCall, ToolDefinitionError, tool
from minloop.builtins import ask_for_clarification
from minloop.execute import ExecContext, execute_calls
from minloop.log import run_logger
from minloop.testing import ScriptedModel, call, reply
from minloop.tools import DEFAULT_TIMEOUT

from .conftest import content, masked


class Weather(BaseModel):
    city: str
    condition: str
    temperature: int


@tool(output=Weather, output_map={"weather": "condition", "temp": "temperature"}, sla=0.1)
def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, object]:
    """Get current weather for a city.

    Args:
        city: City name, e.g. "Beijing".
        unit: Temperature unit.
    """
    if city == "Slow":
        time.sleep(0.5)
    if city == "Drift":
        return {"city": city, "weather": "Sunny"}  # the API dropped a field
    return {"city": city, "weather": "Sunny", "temp": "25"}  # mapped and coerced


@tool(timeout=0.1)
async def slow_async(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "done"


@tool
def boom() -> None:
    """Always fails."""
    raise RuntimeError("backend down")


def run_calls(
    *calls: ToolCall, tools: list[Tool] | None = None
) -> list[tuple[str, object, dict[str, object]]]:
    """(call id, error code, parsed content) per call, in call order."""
    registry = {t.name: t for t in (tools or [get_weather, slow_async, boom])}
    ctx = ExecContext(registry, ask_for_clarification, "trc_test", run_logger("trc_test"))
    results = asyncio.run(execute_calls(list(calls), ctx))
    return [(r.call_id, r.error, json.loads(r.content)) for r in results]


def test_s27_schema_comes_from_signature_and_docstring() -> None:
    assert get_weather.spec() == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get current weather for a city.",
            "parameters": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "city": {"type": "string", "description": 'City name, e.g. "Beijing".'},
                    "unit": {
                        "type": "string",
                        "enum": ["c", "f"],
                        "default": "c",
                        "description": "Temperature unit.",
                    },
                },
                "required": ["city"],
            },
        },
    }


def test_annotated_field_description_and_constraints() -> None:
    @tool
    def pick(n: Annotated[int, Field(ge=1, description="how many")]) -> int:
        """Pick."""
        return n

    assert pick.parameters()["properties"]["n"] == {
        "type": "integer",
        "minimum": 1,
        "description": "how many",
    }


def test_s11_timeout_defaults() -> None:
    assert get_weather.timeout == pytest.approx(0.15)  # 1.5 x SLA
    assert tool(lambda: 1, name="f").timeout == DEFAULT_TIMEOUT
    assert tool(timeout=2.0, sla=10, name="f")(lambda: 1).timeout == 2.0


def test_bad_definitions_raise() -> None:
    with pytest.raises(ToolDefinitionError, match=r"\*args"):
        tool(name="f")(lambda *a: 1)
    with pytest.raises(ToolDefinitionError, match="must match"):
        tool(name="has space")(lambda: 1)
    with pytest.raises(ToolDefinitionError, match="sla must be > 0"):
        tool(sla=0, name="f")(lambda: 1)


def test_s12_output_mapped_coerced_and_validated() -> None:
    assert run_calls(ToolCall("c1", "get_weather", '{"city": "Beijing"}')) == [
        ("c1", None, {"city": "Beijing", "condition": "Sunny", "temperature": 25, "trace_id": "trc_test"})
    ]


def test_s12_s15_schema_mismatch_is_an_envelope_and_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="minloop"):
        result = run_calls(ToolCall("c1", "get_weather", '{"city": "Drift"}'))
    assert result == [
        (
            "c1",
            "ERR_TOOL_SCHEMA_MISMATCH",
            {
                "error": "tool returned data that does not match Weather",
                "code": "ERR_TOOL_SCHEMA_MISMATCH",
                "tool": "get_weather",
                "problems": [{"loc": "temperature", "msg": "Field required"}],
                "trace_id": "trc_test",
            },
        )
    ]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "[trc_test] tool get_weather failed ERR_TOOL_SCHEMA_MISMATCH: tool returned data that does not match Weather"
    ]


def test_s15_bad_arguments_are_args_invalid() -> None:
    (_, c1, bad_json), (_, c2, wrong_type), (_, c3, extra), (_, c4, not_object) = run_calls(
        ToolCall("a", "get_weather", "{city: Beijing}"),
        ToolCall("b", "get_weather", '{"city": "Paris", "unit": "kelvin"}'),
        ToolCall("c", "get_weather", '{"city": "Paris", "country": "FR"}'),
        ToolCall("d", "get_weather", '["Paris"]'),
    )
    assert (c1, c2, c3, c4) == ("ERR_TOOL_ARGS_INVALID",) * 4
    assert bad_json["error"].startswith("arguments are not valid JSON")
    assert wrong_type["problems"] == [{"loc": "unit", "msg": "Input should be 'c' or 'f'"}]
    assert wrong_type["parameters"] == get_weather.parameters()  # the model gets the schema to fix it
    assert extra["problems"] == [{"loc": "country", "msg": "Extra inputs are not permitted"}]
    assert not_object["error"] == "arguments must be a JSON object, got list"


def test_s11_timeouts_for_sync_and_async_tools() -> None:
    (_, sync_code, sync_body), (_, async_code, async_body) = run_calls(
        ToolCall("a", "get_weather", '{"city": "Slow"}'), ToolCall("b", "slow_async", '{"seconds": 5}')
    )
    assert (sync_code, sync_body["error"]) == ("ERR_TOOL_TIMEOUT", "tool did not finish within 0.15s")
    assert (async_code, async_body["error"]) == ("ERR_TOOL_TIMEOUT", "tool did not finish within 0.1s")


def test_sync_tools_reuse_daemon_threads_and_a_hung_call_keeps_its_own() -> None:
    ran_on: list[threading.Thread] = []
    release = threading.Event()

    @tool(timeout=1.0)
    def where() -> dict[str, bool]:
        """Record the thread."""
        ran_on.append(threading.current_thread())
        return {"ok": True}

    @tool(timeout=0.1)
    def stuck() -> dict[str, bool]:
        """Hang until released."""
        ran_on.append(threading.current_thread())
        release.wait(10)
        return {"ok": True}

    try:
        alive_before = []
        for name in ("where", "where", "stuck", "where"):
            alive_before.append(set(threading.enumerate()))
            run_calls(ToolCall("a", name, "{}"), tools=[where, stuck])
            time.sleep(0.05)  # let the worker go idle before the next call
        first, second, hung, after = ran_on
        assert second in alive_before[1]  # an idle worker took the call: no new thread per call
        assert hung.is_alive() and hung.daemon  # abandoned after ERR_TOOL_TIMEOUT, never blocks exit
        assert after is not hung and after.daemon
    finally:
        release.set()


def test_s15_exceptions_become_tool_failed() -> None:
    assert run_calls(ToolCall("a", "boom", "")) == [
        (
            "a",
            "ERR_TOOL_FAILED",
            {
                "error": "RuntimeError: backend down",
                "code": "ERR_TOOL_FAILED",
                "tool": "boom",
                "trace_id": "trc_test",
            },
        )
    ]


def test_parallel_calls_run_concurrently_keep_order_and_survive_failures() -> None:
    @tool
    async def wait(label: str, seconds: float) -> str:
        """Wait."""
        await asyncio.sleep(seconds)
        return label

    started = time.perf_counter()
    results = run_calls(
        ToolCall("1", "wait", '{"label": "first", "seconds": 0.3}'),
        ToolCall("2", "boom", "{}"),
        ToolCall("3", "wait", '{"label": "third", "seconds": 0.3}'),
        ToolCall("4", "nope", "{}"),
        tools=[wait, boom],
    )
    elapsed = time.perf_counter() - started
    assert [(i, code) for i, code, _ in results] == [
        ("1", None),
        ("2", "ERR_TOOL_FAILED"),
        ("3", None),
        ("4", "ERR_TOOL_UNKNOWN"),
    ]
    assert [body.get("result") for _, _, body in results][::2] == ["first", "third"]
    assert elapsed < 0.55, "two 0.3 s waits ran one after the other"


def test_non_json_results_are_a_schema_mismatch() -> None:
    @tool
    def opaque() -> object:
        """Return something that is not JSON."""
        return object()

    [(_, code, body)] = run_calls(ToolCall("a", "opaque", "{}"), tools=[opaque])
    assert code == "ERR_TOOL_SCHEMA_MISMATCH"
    assert body["error"].startswith("result is not JSON-serializable")


def test_a_sync_tool_that_was_fast_still_times_out_when_it_hangs() -> None:
    """Fast sync tools are waited for inline; a later call that hangs is still cut by its timeout."""
    release = threading.Event()

    @tool(timeout=0.2)
    def lookup(hang: bool) -> dict[str, bool]:
        """Look something up."""
        if hang:
            release.wait(5)
        return {"hung": hang}

    model = ScriptedModel(
        [
            reply(None, call("lookup", {"hang": False})),
            reply(None, call("lookup", {"hang": True})),
            "done",
        ]
    )
    result = Loop(model, [lookup]).run_sync("look")
    release.set()
    assert [r.error for s in result.steps for r in s.results] == [None, "ERR_TOOL_TIMEOUT"]
    assert masked(result.messages, result.trace_id)[2]["content"] == content(hung=False)
