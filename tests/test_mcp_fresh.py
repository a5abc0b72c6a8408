"""A server whose tools change during a run: the next step offers the new list.

``rotate`` on the era server removes ``old_tool`` and adds ``new_tool``, announcing it the way its
protocol does (``notifications/tools/list_changed`` in the handshake era, a ``subscriptions/listen``
event in the 2026-07-28 protocol); a quiet server announces nothing but gives its list a ``ttlMs``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop, SQLiteRunStore
from minloop.exceptions import RunMismatchError
from minloop.mcp import MCPServer, connect
from minloop.testing import FunctionModel, call, reply

from .conftest import content, masked
from .test_mcp_eras import ERA_SERVER, start_http


def offered(request: Any) -> list[str]:
    return sorted(t["function"]["name"] for t in request.tools)


def rotating_run(server: MCPServer) -> tuple[list[list[str]], Any]:
    menus: list[list[str]] = []

    def play(request: Any) -> Any:
        menus.append(offered(request))
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        if turn == 0:
            return reply(None, call("rotate", {}, id="c1"))
        if turn == 1:
            return reply(None, call("old_tool", {}, id="c2"), call("new_tool", {"word": "hi"}, id="c3"))
        return "Done."

    async def main() -> Any:
        async with connect(server) as tools:
            return await Loop(FunctionModel(play), tools).run("rotate, then use the tools")

    return menus, asyncio.run(main())


EXPECTED_MENUS = [
    ["add", "echo", "era", "old_tool", "rotate"],
    ["add", "echo", "era", "new_tool", "rotate"],
    ["add", "echo", "era", "new_tool", "rotate"],
]


def check(menus: list[list[str]], result: Any) -> None:
    assert menus == EXPECTED_MENUS
    tools = [m for m in masked(result.messages, result.trace_id) if m["role"] == "tool"]
    unknown = json.loads(tools[1]["content"])
    assert unknown["code"] == "ERR_TOOL_UNKNOWN" and "old_tool" in unknown["error"]
    assert "new_tool" in unknown["available_tools"] and "old_tool" not in unknown["available_tools"]
    assert [tools[0]["content"], tools[2]["content"]] == [
        content(result="rotated"),
        content(result="new: hi"),
    ]
    assert result.status == "success"


@pytest.mark.parametrize("era", ["new", "old"])
def test_an_announced_change_is_offered_at_the_next_step_over_stdio(era: str) -> None:
    check(*rotating_run(MCPServer([sys.executable, str(ERA_SERVER), era])))


@pytest.mark.parametrize("era", ["new", "old"])
def test_an_announced_change_is_offered_at_the_next_step_over_http(era: str) -> None:
    proc, url = start_http(era)
    try:
        check(*rotating_run(MCPServer(url)))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_quiet_server_is_listed_again_when_its_ttl_runs_out() -> None:
    env = {"QUIET": "1", "TTL_MS": "1"}
    check(*rotating_run(MCPServer([sys.executable, str(ERA_SERVER), "new"], env=env)))


def test_a_handshake_server_that_announces_nothing_keeps_its_first_list() -> None:
    menus, result = rotating_run(MCPServer([sys.executable, str(ERA_SERVER), "old"], env={"QUIET": "1"}))
    assert menus == [EXPECTED_MENUS[0]] * 3
    gone, unknown = (
        json.loads(m["content"]) for m in result.messages if m["role"] == "tool" and m["tool_call_id"] != "c1"
    )
    assert gone["error"] == "MCPToolError: server 'era-old' reported an error: Unknown tool: old_tool"
    assert unknown["code"] == "ERR_TOOL_UNKNOWN" and "old_tool" in unknown["available_tools"]


def test_a_run_resumed_later_sees_the_current_list_and_a_call_in_flight_must_still_be_there(
    tmp_path: Path,
) -> None:
    """Paused on an approval, the run is resumed over a new connection after the server changed
    its tools: the approved call runs and the next step offers the new list. A paused call to a
    tool the server removed is reported instead (the run's other stored tools may come and go)."""
    proc, url = start_http("old")
    store = SQLiteRunStore(tmp_path / "runs.db")
    menus: list[list[str]] = []

    def play(request: Any) -> Any:
        menus.append(offered(request))
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        if turn == 0:
            pick = "echo" if "echo" in request.messages[0]["content"] else "old_tool"
            return reply(None, call(pick, {"text": "hi"} if pick == "echo" else {}, id="c1"))
        return "Done."

    async def start(prompt: str) -> Any:
        async with connect(MCPServer(url, needs_approval=True)) as tools:
            return await Loop(FunctionModel(play), tools, store=store).run(prompt)

    async def later(run_id: str) -> Any:
        async with MCPServer(url) as other:
            await other.call("rotate", {})
        async with connect(MCPServer(url, needs_approval=True)) as tools:
            return await Loop(FunctionModel(play), tools, store=store).resume(run_id, {"c1": True})

    try:
        paused = asyncio.run(start("use echo"))
        stuck = asyncio.run(start("use old_tool"))
        assert paused.status == stuck.status == "paused"
        done = asyncio.run(later(paused.trace_id))
        with pytest.raises(RunMismatchError, match="missing old_tool"):
            asyncio.run(later(stuck.trace_id))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        store.close()
    assert menus == [EXPECTED_MENUS[0], EXPECTED_MENUS[0], EXPECTED_MENUS[1]]
    assert [m["content"] for m in masked(done.messages, done.trace_id) if m["role"] == "tool"] == [
        content(result="echo: hi")
    ]
    assert done.status == "success"
