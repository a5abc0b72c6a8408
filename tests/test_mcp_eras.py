"""One client for both protocol eras: every pair of client mode, server era and transport.

The servers are built with the ``mcp`` SDK (tests/servers/era_server.py): one that speaks only
the 2026-07-28 protocol, one that speaks only the handshake protocol before it, and one that
speaks both, each over stdio and over streamable HTTP on 127.0.0.1. The same run goes through
every pair that can talk; the pairs that cannot fail when the block is entered, saying so."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop, RecordingSink
from minloop.mcp import MCPConnectionError, MCPServer, connect
from minloop.testing import ScriptedModel, call, reply

from .conftest import content, masked
from .test_mcp_http import free_port, node_server

ERA_SERVER = Path(__file__).parent / "servers" / "era_server.py"
NEW, OLD = "2026-07-28", "2025-11-25"
SETTLES = {  # (client mode, server era) -> the protocol version the connection settles on
    ("auto", "new"): NEW, ("auto", "old"): OLD, ("auto", "both"): NEW,
    ("legacy", "new"): None, ("legacy", "old"): OLD, ("legacy", "both"): OLD,
    (NEW, "new"): NEW, (NEW, "old"): None, (NEW, "both"): NEW,
}  # fmt: skip


def start_http(era: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ERA_SERVER), era, str(port)], env={**os.environ, **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 30
    import socket

    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            assert proc.poll() is None, "the era server exited"
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"the era server did not listen on 127.0.0.1:{port}")


@pytest.fixture(scope="module")
def era_urls() -> Iterator[dict[str, str]]:
    started = {era: start_http(era) for era in ("new", "old", "both")}
    yield {era: url for era, (_, url) in started.items()}
    for proc, _ in started.values():
        proc.terminate()
        proc.wait(timeout=10)


def target(era: str, transport: str, urls: dict[str, str]) -> str | list[str]:
    return urls[era] if transport == "http" else [sys.executable, str(ERA_SERVER), era]


SCRIPT = [
    reply(None, call("add", {"a": 2, "b": 3}, id="c1"), call("echo", {"text": "你好"}, id="c2"),
          call("era", {}, id="c3"), call("add", {"a": "two", "b": 3}, id="c4")),
    "Done.",
]  # fmt: skip


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["new", "old", "both"])
@pytest.mark.parametrize("mode", ["auto", "legacy", NEW])
def test_every_client_mode_against_every_server_era(mode: str, era: str, transport: str,
                                                    era_urls: dict[str, str]) -> None:  # fmt: skip
    server = MCPServer(target(era, transport, era_urls), protocol=mode, timeout=10)
    settles = SETTLES[(mode, era)]
    sink = RecordingSink()

    async def main() -> Any:
        async with connect(server) as tools:
            assert server.protocol_version == settles
            return await Loop(ScriptedModel(list(SCRIPT)), tools, sinks=[sink]).run("go")

    if settles is None:
        with pytest.raises(MCPConnectionError) as failed:
            asyncio.run(main())
        assert f"cannot connect to MCP server {server.name!r}" in str(failed.value)
        return
    result = asyncio.run(main())
    tools = [m for m in masked(result.messages, result.trace_id) if m["role"] == "tool"]
    assert [m["content"] for m in tools[:3]] == [
        content(result=5),
        content(result="echo: 你好"),
        content(result=settles),  # the server saw the version the client settled on
    ]
    refused = json.loads(tools[3]["content"])
    assert refused["code"] == "ERR_TOOL_ARGS_INVALID" and refused["problems"][0]["loc"] == "a"
    assert result.status == "success"
    (start,) = [e for e in sink.events if e.kind == "run_start"]
    name = f"era-{era}" if settles == OLD or mode == "auto" else server.name
    transported = "http" if transport == "http" else "stdio"
    assert start.data["servers"] == [{"name": name, "transport": transported, "protocol": settles}]


@pytest.mark.parametrize(
    ("server", "modes"),
    [
        ("python -m mcp_server_time", {"auto": NEW, "legacy": OLD, NEW: NEW}),
        ("python -m mcp_server_git --repository .", {"auto": NEW, "legacy": OLD, NEW: NEW}),
        ("everything", {"auto": OLD, "legacy": OLD, NEW: None}),
    ],
)
def test_published_servers_settle_on_the_era_they_speak(server: str, modes: dict[str, str | None]) -> None:
    """mcp-server-time and mcp-server-git (built on the SDK) speak both eras; the npm server-everything
    speaks only the handshake protocol, so pinning the 2026 protocol fails against it."""
    argv = node_server("stdio") if server == "everything" else server
    probe = {"everything": ("get-sum", {"a": 1, "b": 2}), "python -m mcp_server_time": (
        "get_current_time", {"timezone": "UTC"})}.get(server, ("git_status", {"repo_path": "."}))  # fmt: skip

    async def main(mode: str) -> tuple[str | None, Any]:
        async with MCPServer(argv, protocol=mode, cwd=Path(__file__).parents[1]) as opened:
            (tool,) = [t for t in opened.tools if t.name == probe[0]]
            return opened.protocol_version, await tool.fn(**probe[1])

    for mode, settles in modes.items():
        if settles is None:
            with pytest.raises(MCPConnectionError, match="protocol='auto'"):
                asyncio.run(main(mode))
            continue
        version, answer = asyncio.run(main(mode))
        assert version == settles and answer
