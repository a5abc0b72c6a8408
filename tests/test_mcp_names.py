"""MCP tool names the Chat Completions format does not allow, a real clash, and an error raised
in a server's tool handler; against the small server in tests/servers."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop, ToolDefinitionError
from minloop.mcp import MCPServer, connect
from minloop.mcp.convert import exposed_name
from minloop.models.scripted import ScriptedModel, call, reply

from .conftest import content, masked

FAULTS = [sys.executable, str(Path(__file__).parent / "servers" / "fault_server.py")]
LONG = "get_the_weather_forecast_for_the_next_seven_days_in_a_given_city_"


def suffix(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:8]


def tool_contents(result: Any) -> list[Any]:
    return [m["content"] for m in masked(result.messages, result.trace_id) if m["role"] == "tool"]


def test_names_that_are_not_ascii_or_too_long_become_legal_distinct_and_readable() -> None:
    assert exposed_name("get-sum", "everything") == "everything_get-sum"  # legal names stay as they are
    assert exposed_name("查询天气", None) == f"tool_{suffix('查询天气')}"
    assert exposed_name("查询天气", "zh") == f"zh_{suffix('查询天气')}"
    assert exposed_name("weather.today 今天", None) == f"weather_today_{suffix('weather.today 今天')}"
    long_a, long_b = exposed_name(LONG + "a", None), exposed_name(LONG + "b", None)
    assert (len(long_a), long_a) == (64, f"{LONG[:55]}_{suffix(LONG + 'a')}") and long_a != long_b

    async def main() -> tuple[list[str], Any]:
        async with connect(MCPServer([*FAULTS, "Zh"])) as tools:
            names = [t.name for t in tools]
            script = [reply(None, call(names[0], {"text": "北京"}), call(names[3], {"text": "Oslo"})), "好。"]
            return names, await Loop(ScriptedModel(script), tools).run("天气?")

    names, result = asyncio.run(main())
    assert names == [f"tool_{suffix('查询天气')}", f"tool_{suffix('查询时间')}", long_a, long_b]
    assert tool_contents(result) == [  # each call reached the server under its own name
        content(result="faultZh call #1 查询天气: 北京"),
        content(result=f"faultZh call #2 {LONG}b: Oslo"),
    ]


def test_a_clash_that_remains_names_both_tools() -> None:
    async def clash() -> None:
        async with connect(MCPServer([*FAULTS, "Zh"]), MCPServer([*FAULTS, "Zh"], name="zh2")):
            pass

    with pytest.raises(ToolDefinitionError) as caught:
        asyncio.run(clash())
    name = f"tool_{suffix('查询天气')}"
    assert str(caught.value).startswith(
        f"tool name {name!r} is offered by MCP server 'faultZh' (its tool '查询天气') and by "
        "MCP server 'zh2' (its tool '查询天气'): give the server a prefix"
    )


def test_an_error_raised_in_the_servers_tool_handler_is_called_what_it_is() -> None:
    async def main() -> Any:
        async with MCPServer(FAULTS) as server:
            script = [reply(None, call("echo", {"text": "raise"}), call("echo", {"text": "after"})), "ok"]
            return await Loop(ScriptedModel(script), server.tools).run("echo")

    result = asyncio.run(main())
    failed, after = tool_contents(result)
    assert json.loads(failed) == {
        "code": "ERR_TOOL_FAILED",
        "error": "MCPToolError: server 'fault' answered the call with an error: "
        "ValueError: the handler raised (JSON-RPC error -32603)",
        "tool": "echo",
        "trace_id": "<trace_id>",
    }
    assert after == content(result="fault call #2 echo: after")  # the connection is fine
