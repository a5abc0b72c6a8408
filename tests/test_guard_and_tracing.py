"""Red line and traceability: S13, S14, S19, S25."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest

from minloop import Loop, NestedModelCallError, TraceIdFilter, new_trace_id, tool
from minloop.log import current_trace_id
from minloop.testing import ScriptedModel, call, reply

INNER = ScriptedModel(["never used"], name="inner")


@tool
async def summarise_with_llm(text: str) -> str:
    """A tool that breaks the red line by calling a model."""
    from minloop import ModelRequest

    response = await INNER.call(ModelRequest([{"role": "user", "content": text}]))
    return str(response.message["content"])


@tool
def sync_llm_tool(text: str) -> str:
    """The same breach from a sync tool (runs in a worker thread)."""
    from minloop import ModelRequest

    return str(asyncio.run(INNER.call(ModelRequest([{"role": "user", "content": text}]))))


@pytest.mark.parametrize("bad_tool", [summarise_with_llm, sync_llm_tool])
def test_s14_s25_a_model_called_inside_a_tool_fails_loudly(bad_tool: object) -> None:
    model = ScriptedModel([reply(None, call(bad_tool.name, {"text": "hi"}))])  # type: ignore[attr-defined]
    with pytest.raises(
        NestedModelCallError, match=rf"model 'inner' was called from inside tool '{bad_tool.name}'"
    ):  # type: ignore[attr-defined]
        Loop(model, [bad_tool]).run_sync("summarise hi")  # type: ignore[list-item]
    assert INNER.requests == []


def test_s13_trace_id_format_and_presence_in_every_result() -> None:
    assert re.fullmatch(r"trc_\d{12}_[0-9a-f]{6}", new_trace_id())

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    model = ScriptedModel([reply(None, call("ping"), call("missing"), call("ping", "{bad")), "done"])
    with model:
        result = Loop(model, [ping]).run_sync("ping")
    tool_contents = [json.loads(m["content"]) for m in result.messages if m["role"] == "tool"]
    assert len(tool_contents) == 3
    assert {c["trace_id"] for c in tool_contents} == {result.trace_id}


def test_s19_every_log_record_of_a_run_carries_its_trace_id(caplog: pytest.LogCaptureFixture) -> None:
    @tool
    def ping() -> str:
        """Ping."""
        logging.getLogger("user.tool").info("inside the tool")
        return "pong"

    handler_filter = TraceIdFilter()
    caplog.handler.addFilter(handler_filter)
    model = ScriptedModel([reply(None, call("ping")), "done"])
    with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, "minloop"), model:
        result = Loop(model, [ping]).run_sync("ping")
    caplog.handler.removeFilter(handler_filter)
    records = [r for r in caplog.records if r.name in ("minloop", "user.tool")]
    assert {r.trace_id for r in records} == {result.trace_id}  # type: ignore[attr-defined]
    messages = [r.getMessage().removeprefix(f"[{result.trace_id}] ") for r in records if r.name == "minloop"]
    kinds = [m.split(":")[0].split(" ")[0:2] for m in messages]
    assert [" ".join(k) for k in kinds] == [
        "run start",
        "step 1",
        "step 1",
        "tool call",
        "tool result",
        "step 1",
        "step 2",
        "step 2",
        "step 2",
        "run end",
    ]
    assert current_trace_id.get() is None  # nothing leaks after the run
