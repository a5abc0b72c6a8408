"""MCP over streamable HTTP (and stdio) against @modelcontextprotocol/server-everything from npm,
installed by scripts/setup.sh (npm ci) into ./node_modules and started here on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop
from minloop.mcp import MCPServer, connect
from minloop.models.scripted import FunctionModel, ScriptedModel, call, reply

from .conftest import content, masked

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
ITS_TOOLS = {
    "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
    "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource", "toggle-simulated-logging",
    "toggle-subscriber-updates", "trigger-long-running-operation",
}  # fmt: skip


def node_server(*args: str) -> list[str]:
    node = shutil.which("node")
    assert node and EVERYTHING.exists(), (
        "run `bash scripts/setup.sh` (it installs the npm MCP server with npm ci)"
    )
    return [node, str(EVERYTHING), *args]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    proc = subprocess.Popen(
        node_server("streamableHttp"), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "server exited"
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f"server-everything did not listen on 127.0.0.1:{port} within 30s")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


def run_with(server: MCPServer, script: list[Any]) -> tuple[list[str], Any]:
    async def main() -> tuple[list[str], Any]:
        async with connect(server) as tools:
            return [t.name for t in tools], await Loop(ScriptedModel(script), tools).run("go")

    return asyncio.run(main())


SCRIPT = [
    reply(
        None,
        call("get-sum", {"a": 2, "b": 3.5}),
        call("get-structured-content", {"location": "Chicago"}),
        call("get-structured-content", {"location": "Paris"}),
        call("get-tiny-image"),
        call("trigger-long-running-operation", {"duration": 5, "steps": 5}),
    ),
    "Done.",
]


def check_everything_run(names: list[str], result: Any) -> None:
    assert set(names) >= ITS_TOOLS
    total, weather, paris, image, slow = [m["content"] for m in masked(result.messages, result.trace_id)
                                          if m["role"] == "tool"]  # fmt: skip
    assert total == content(result="The sum of 2 and 3.5 is 5.5.")
    body = json.loads(weather)  # structured content, checked against the tool's output schema
    assert sorted(body) == ["conditions", "humidity", "temperature", "trace_id"]
    assert isinstance(body["temperature"], int | float) and isinstance(body["conditions"], str)
    assert json.loads(paris)["code"] == "ERR_TOOL_ARGS_INVALID"  # refused before anything was sent
    assert json.loads(paris)["problems"][0]["loc"] == "location"
    shown = json.loads(image)["result"]
    assert (
        shown[0] == "Here's the image you requested:"
        and shown[1].startswith("[image image/png, ")
        and shown[1].endswith("not shown]")
    )
    assert slow == content(error="tool did not finish within 1s", code="ERR_TOOL_TIMEOUT",
                           tool="trigger-long-running-operation")  # fmt: skip
    assert result.status == "success"


def test_streamable_http_server_tools_run_under_contract(everything_url: str) -> None:
    names, result = run_with(MCPServer(everything_url, timeout=1), SCRIPT)
    check_everything_run(names, result)


def test_the_same_server_over_stdio() -> None:
    names, result = run_with(MCPServer(node_server("stdio"), timeout=1), SCRIPT)
    check_everything_run(names, result)


def test_http_server_named_after_itself_and_closed_cleanly(everything_url: str) -> None:
    async def main() -> tuple[str, Any, Any]:
        server = MCPServer(everything_url)
        async with server:
            name, during = server.name, server.session
        return name, during, server.session

    name, during, after = asyncio.run(main())
    assert name == "mcp-servers/everything" and during is not None and after is None


def test_a_server_that_goes_away_between_steps_fails_its_calls_and_the_run_goes_on() -> None:
    """Killed between two steps, the HTTP server's next call is an ERR_TOOL_FAILED naming it; the
    other server's call in the same step answers, the model answers, and the block exits cleanly."""
    port = free_port()
    proc = subprocess.Popen(node_server("streamableHttp"), env={**os.environ, "PORT": str(port)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None, "server-everything exited"
            time.sleep(0.1)

    def play(request: Any) -> Any:
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        if turn == 0:
            return reply(None, call("echo", {"message": "one"}, id="c1"))
        if turn == 1:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            return reply(None, call("echo", {"message": "two"}, id="c2"),
                         call("get_current_time", {"timezone": "UTC"}, id="c3"))  # fmt: skip
        return "The echo server is gone; it is now UTC."

    async def main() -> Any:
        async with connect(
            MCPServer(f"http://127.0.0.1:{port}/mcp", timeout=20), "python -m mcp_server_time"
        ) as tools:
            return await Loop(FunctionModel(play), tools).run("go")

    try:
        result = asyncio.run(main())
    finally:
        proc.kill()
        proc.wait(timeout=10)
    messages = masked(result.messages, result.trace_id)
    now = json.loads(messages[5]["content"])
    assert now["timezone"] == "UTC" and now["trace_id"] == "<trace_id>"
    gone = ("ConnectionError: MCP server 'mcp-servers/everything' went away (ConnectError: All connection "
            "attempts failed), so its tools cannot be used any more in this session")  # fmt: skip
    assert messages == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "echo", {"message": "one"})]},
        {"role": "tool", "tool_call_id": "c1", "name": "echo", "content": content(result="Echo: one")},
        {"role": "assistant", "content": None, "tool_calls": [
            tool_call("c2", "echo", {"message": "two"}), tool_call("c3", "get_current_time", {"timezone": "UTC"})]},
        {"role": "tool", "tool_call_id": "c2", "name": "echo",
         "content": content(error=gone, code="ERR_TOOL_FAILED", tool="echo")},
        {"role": "tool", "tool_call_id": "c3", "name": "get_current_time", "content": messages[5]["content"]},
        {"role": "assistant", "content": "The echo server is gone; it is now UTC."},
    ]  # fmt: skip
    assert result.status == "success"


def tool_call(id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
