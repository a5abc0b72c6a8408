"""MCP servers as tools, against real servers from PyPI (mcp-server-time, mcp-server-git) and a
small server in tests/servers for the faults real servers do not produce on demand."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop, ToolCall, ToolDefinitionError, tool
from minloop.exceptions import MCPConnectionError, MinloopError, MissingDependencyError
from minloop.mcp import MCPServer, connect
from minloop.models.scripted import ScriptedModel, call, reply
from minloop.testing import RecordingSink

from .conftest import content, masked

FAULTS = [sys.executable, str(Path(__file__).parent / "servers" / "fault_server.py")]
TIME = "python -m mcp_server_time"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def tool_contents(result: Any) -> list[Any]:
    return [m["content"] for m in masked(result.messages, result.trace_id) if m["role"] == "tool"]


def test_time_server_tools_are_minloop_tools_with_the_server_schemas() -> None:
    async def main() -> Any:
        async with MCPServer(TIME) as server:
            return server.name, {t.name: t for t in server.tools}

    name, tools = run(main())
    assert name == "mcp-time" and list(tools) == ["get_current_time", "convert_time"]
    now = tools["get_current_time"]
    assert (now.server, now.needs_approval, now.timeout, now.is_async) == ("mcp-time", False, 30.0, True)
    assert now.parameters()["required"] == ["timezone"]
    assert now.output_schema is not None and set(now.output_schema["required"]) >= {"timezone", "datetime"}


def test_a_loop_calls_the_time_server_and_gets_its_errors_as_envelopes() -> None:
    sink = RecordingSink()
    model = ScriptedModel(
        [
            reply(
                None,
                call("get_current_time", {"timezone": "Asia/Tokyo"}),
                call("get_current_time", {"timezone": "Mars/Base"}),
                call("get_current_time", {"timezone": "Asia/Tokyo", "city": "Tokyo"}),
            ),
            "It is late evening in Tokyo.",
        ]
    )

    async def main() -> Any:
        async with connect(TIME) as tools:
            return await Loop(model, tools, sinks=[sink]).run("Time in Tokyo?")

    result = run(main())
    tokyo, mars, extra = tool_contents(result)
    body = json.loads(tokyo)
    stamp = datetime.fromisoformat(body["datetime"])
    assert (body["timezone"], stamp.utcoffset()) == ("Asia/Tokyo", timedelta(hours=9))
    assert abs(stamp.timestamp() - time.time()) < 60
    assert mars == content(
        error="MCPToolError: server 'mcp-time' reported an error: Error executing tool get_current_time: "
        "Invalid timezone: 'No time zone found with key Mars/Base'",
        code="ERR_TOOL_FAILED",
        tool="get_current_time",
    )
    assert json.loads(extra)["problems"] == [
        {"loc": "(root)", "msg": "unknown argument(s) 'city'; expected: timezone"}
    ]
    assert result.status == "success"
    calls = [e.data for e in sink.events if e.kind == "tool_call"]
    assert [c["server"] for c in calls] == ["mcp-time"] * 3  # the trace says where each call went


FAULT_SCRIPT = [
    reply(
        None,
        call("echo", {"text": 5}),
        call("echo", {"text": "hi"}),
        call("drift"),
        call("hang"),
        call("local"),
    ),
    reply(None, call("echo", {"text": "after the hang"}), call("crash"), call("local")),
    reply(None, call("echo", {"text": "after the crash"})),
    "Done.",
]


@tool
def local() -> str:
    """A tool of this process."""
    return "local ok"


def test_faults_become_envelopes_nothing_hangs_and_other_tools_keep_working() -> None:
    model = ScriptedModel(FAULT_SCRIPT)

    async def main() -> Any:
        async with MCPServer(FAULTS, timeout=0.5) as server:
            return await Loop(model, [*server.tools, local], max_steps=5).run("go")

    started = time.monotonic()
    result = run(main())
    assert time.monotonic() - started < 10
    gone = (
        "ConnectionError: MCP server 'fault' closed the connection (it exited or crashed), so its tools cannot be "
        "used any more in this session; its last output: fault server: crashing on purpose"
    )
    assert tool_contents(result) == [
        content(
            error="arguments do not match the tool's schema",
            code="ERR_TOOL_ARGS_INVALID",
            tool="echo",
            problems=[{"loc": "text", "msg": "5 is not of type 'string'"}],
            parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        ),
        content(result="fault call #1 echo: hi"),  # call #1: the invalid call was never sent
        content(
            error="tool returned data that does not match its output schema",
            code="ERR_TOOL_SCHEMA_MISMATCH",
            tool="drift",
            problems=[{"loc": "celsius", "msg": "'warm' is not of type 'number'"}],
        ),
        content(error="tool did not finish within 0.5s", code="ERR_TOOL_TIMEOUT", tool="hang"),
        content(result="local ok"),
        content(result="fault call #4 echo: after the hang"),
        content(error=gone, code="ERR_TOOL_FAILED", tool="crash"),
        content(result="local ok"),
        content(error=gone, code="ERR_TOOL_FAILED", tool="echo"),
    ]
    assert result.status == "success"


def test_destructive_tools_need_approval_unless_told_otherwise() -> None:
    asked: list[ToolCall] = []
    model = ScriptedModel(
        [reply(None, call("wipe"), call("echo", {"text": "x"})), reply(None, call("wipe")), "ok"]
    )

    async def main() -> Any:
        async with (
            MCPServer(FAULTS) as server,
            MCPServer(FAULTS, needs_approval=False, prefix="free") as free,
        ):
            approvals = iter([False, True])
            loop = Loop(
                model, [*server.tools, *free.tools], approve=lambda c: asked.append(c) or next(approvals)
            )
            flags = {t.name: t.needs_approval for t in loop.registry.values()}
            return flags, await loop.run("wipe")

    flags, result = run(main())
    assert flags == {
        "echo": False,
        "crash": False,
        "hang": False,
        "drift": False,
        "wipe": True,
        "free_echo": False,
        "free_crash": False,
        "free_hang": False,
        "free_drift": False,
        "free_wipe": False,
    }
    assert [c.name for c in asked] == ["wipe", "wipe"]
    assert tool_contents(result) == [
        content(
            error="the user did not approve this call; do not retry it", code="ERR_TOOL_DENIED", tool="wipe"
        ),
        content(result="fault call #1 echo: x"),
        content(result="fault call #2 wipe: done"),
    ]


def test_git_server_destructive_reset_needs_approval_and_status_runs(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "notes.txt").write_text("hello\n")
    model = ScriptedModel(
        [
            reply(
                None,
                call("git_status", {"repo_path": str(repo)}),
                call("git_reset", {"repo_path": str(repo)}),
            ),
            "One untracked file.",
        ]
    )

    async def main() -> Any:
        async with MCPServer(f"python -m mcp_server_git --repository {repo}") as git:
            approval = {t.name: t.needs_approval for t in git.tools}
            repeat = {t.name: t.idempotent for t in git.tools}  # safe to run again after a crash
            reads = {t.name: t.read_only for t in git.tools}  # results may be cached
            return approval, repeat, reads, await Loop(model, git.tools).run("status?")

    approval, repeat, reads, result = run(main())
    assert (reads["git_status"], reads["git_log"], reads["git_commit"]) == (True, True, False)
    assert approval["git_reset"] and not approval["git_status"] and not approval["git_commit"]
    assert (repeat["git_status"], repeat["git_log"], repeat["git_commit"], repeat["git_checkout"]) == (
        True, True, False, False,
    )  # fmt: skip
    status, reset = tool_contents(result)
    assert "notes.txt" in json.loads(status)["result"]
    assert json.loads(reset)["code"] == "ERR_TOOL_DENIED"


def test_name_clashes_need_an_explicit_prefix() -> None:
    async def clash(*servers: Any, reserved: tuple[str, ...] = ()) -> None:
        async with connect(*servers, reserved=reserved):
            pass

    with pytest.raises(
        ToolDefinitionError,
        match=r"tool name 'echo' is offered by MCP server 'faultA' and by MCP "
        r"server 'faultB': give the server a prefix, e.g. MCPServer\(\.\.\., "
        r"prefix='faultB'\)",
    ):
        run(clash([*FAULTS, "A"], [*FAULTS, "B"]))
    with pytest.raises(
        ToolDefinitionError, match="'echo' is offered by your own tools and by MCP server 'fault'"
    ):
        run(clash(FAULTS, reserved=("echo",)))

    async def prefixed() -> Any:
        async with connect(
            MCPServer([*FAULTS, "A"], prefix="a"), MCPServer([*FAULTS, "B"], prefix="b")
        ) as tools:
            model = ScriptedModel(
                [reply(None, call("a_echo", {"text": "1"}), call("b_echo", {"text": "2"})), "ok"]
            )
            names = [t.name for t in tools]
            return names, await Loop(model, tools).run("echo")

    names, result = run(prefixed())
    assert names[:5] == ["a_echo", "a_crash", "a_hang", "a_drift", "a_wipe"] and names[5] == "b_echo"
    assert tool_contents(result) == [
        content(result="faultA call #1 echo: 1"),
        content(result="faultB call #1 echo: 2"),
    ]

    async def with_local() -> None:
        async with MCPServer(FAULTS) as server:
            Loop(ScriptedModel([]), [tool(name="echo")(lambda: 1), *server.tools])

    with pytest.raises(
        ToolDefinitionError, match=r"two tools are named 'echo' \(a local tool and MCP server 'fault'\)"
    ):
        run(with_local())


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "no-such-mcp-server --stdio",
            "cannot start MCP server 'no-such-mcp-server': command 'no-such-mcp-server' was "
            "not found on PATH nor in",
        ),
        (
            "python -c \"import sys; sys.exit('config file missing')\"",
            "cannot connect to MCP server 'python' (command: python -c \"import sys; sys.exit('config file missing')\"): "
            "it exited or closed the connection before the MCP handshake; its last output: config file missing",
        ),
        (
            "python -m no_such_module_here",
            "cannot connect to MCP server 'no_such_module_here' (command: python -m "
            "no_such_module_here): it exited or closed the connection before the MCP "
            "handshake; its last output: ",
        ),
        ("python -m no_such_module_here", "No module named no_such_module_here"),
        (
            "http://127.0.0.1:9/mcp",
            "cannot connect to MCP server 'http://127.0.0.1:9/mcp' (URL http://127.0.0.1:9/mcp): "
            "ConnectError: All connection attempts failed",
        ),
    ],
)
def test_a_server_that_cannot_start_or_be_reached_is_a_clear_error(target: str, message: str) -> None:
    async def main() -> None:
        async with MCPServer(target):
            pass

    with pytest.raises(MCPConnectionError) as caught:
        run(main())
    assert message in str(caught.value)


def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    async def main() -> None:
        async with MCPServer('python -c "import time; time.sleep(60)"', connect_timeout=0.5):
            pass

    started = time.monotonic()
    with pytest.raises(MCPConnectionError, match=r"no answer within 0.5s"):
        run(main())
    assert time.monotonic() - started < 10


def test_without_the_extra_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)

    async def main() -> None:
        async with MCPServer(TIME):
            pass

    with pytest.raises(MissingDependencyError, match=r'Install it with: pip install "minloop\[mcp\]"'):
        run(main())


def test_names_the_chat_format_refuses_are_made_safe_and_a_server_opens_once() -> None:
    from minloop.mcp.convert import exposed_name

    assert exposed_name("files.read/all", None) == "files_read_all_c4acc06c"  # + its own name's hash
    assert exposed_name("get-sum", "everything") == "everything_get-sum"
    assert len(exposed_name("x" * 80, "p")) == 64

    async def main() -> None:
        server = MCPServer(FAULTS)
        async with server:
            async with server:
                pass

    with pytest.raises(MinloopError, match="MCP server 'fault' is already open"):
        run(main())
