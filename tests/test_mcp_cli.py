"""``minloop run --mcp``: MCP servers' tools on the command line, in the live view and in traces."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from minloop.cli.app import app
from minloop.testing import ChatServer, call, reply
from minloop.trace.sqlite import TraceStore

FAULTS = f"python {Path(__file__).parent / 'servers' / 'fault_server.py'}"
runner = CliRunner()


def test_run_offers_the_server_tools_and_shows_where_each_call_went(trace_db: Path, tmp_path: Path) -> None:
    script = [reply(None, call("get_current_time", {"timezone": "Europe/Paris"}, id="c1")), reply("Noon.")]
    with ChatServer(script) as server:
        done = runner.invoke(app, ["run", "Time in Paris?", "--model", "m", "--base-url", server.base_url,
                                   "--mcp", "python -m mcp_server_time"])  # fmt: skip
    assert done.exit_code == 0, done.output
    offered = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert offered[-2:] == ["get_current_time", "convert_time"] and "current_time" in offered
    assert re.search(r"→ get_current_time\(\{\"timezone\": \"Europe/Paris\"\}\)\s+@ mcp-time", done.output)
    assert '"timezone": "Europe/Paris"' in done.output
    store = TraceStore(trace_db)
    (summary,) = store.runs()
    (step, _) = store.trace(summary.trace_id).steps
    assert [(c.name, c.server) for c in step.calls] == [("get_current_time", "mcp-time")]
    shown = runner.invoke(app, ["trace", "show", summary.trace_id])
    assert "@ mcp-time" in shown.output
    assert "MCP server mcp-time · stdio · protocol 2026-07-28" in shown.output
    page = tmp_path / "report.html"
    runner.invoke(app, ["trace", "export", summary.trace_id, "--html", str(page)])
    assert '<span class="nums">@ mcp-time</span>' in page.read_text()


def test_a_prefix_keeps_two_servers_apart_and_a_clash_is_an_error() -> None:
    script = [
        reply(None, call("a_echo", {"text": "x"}, id="c1"), call("b_echo", {"text": "y"}, id="c2")),
        reply("ok"),
    ]
    with ChatServer(script) as server:
        done = runner.invoke(app, ["run", "echo", "--model", "m", "--base-url", server.base_url, "--json",
                                   "--mcp", f"a={FAULTS} A", "--mcp", f"b={FAULTS} B"])  # fmt: skip
    doc = json.loads(done.output)
    assert [json.loads(m["content"])["result"] for m in doc["messages"] if m["role"] == "tool"] == [
        "faultA call #1 echo: x", "faultB call #1 echo: y"]  # fmt: skip
    assert doc["mcp_servers"] == [  # the protocol each connection settled on
        {"name": "faultA", "transport": "stdio", "protocol": "2025-11-25"},
        {"name": "faultB", "transport": "stdio", "protocol": "2025-11-25"},
    ]
    clash = runner.invoke(app, ["run", "echo", "--model", "m", "--base-url", server.base_url,
                                "--mcp", FAULTS, "--mcp", FAULTS])  # fmt: skip
    assert clash.exit_code == 2
    assert "tool name 'echo' is offered by MCP server 'fault' and by MCP server 'fault'" in clash.output
    assert '--mcp "fault=COMMAND"' in clash.output


def test_a_server_that_cannot_start_stops_the_command_with_a_clear_error() -> None:
    done = runner.invoke(app, ["run", "hi", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                               "--mcp", "no-such-mcp-server"])  # fmt: skip
    assert done.exit_code == 2
    assert (
        "cannot start MCP server 'no-such-mcp-server': command 'no-such-mcp-server' was not found"
        in done.output
    )


def without_venv_on_path() -> dict[str, str]:
    """The environment of a user who runs .venv/bin/minloop without activating the virtualenv."""
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != venv_bin)
    return {**os.environ, "PATH": path}


def minloop_command() -> list[str]:
    return [sys.executable, "-c", "from minloop.cli import main; main()"]


@pytest.mark.parametrize("command", ["python -m mcp_server_time", "mcp-server-time"])
def test_servers_installed_beside_minloop_start_without_activating_its_environment(command: str) -> None:
    script = [reply(None, call("get_current_time", {"timezone": "UTC"}, id="c1")), reply("ok")]
    with ChatServer(script) as server:
        done = subprocess.run(
            [*minloop_command(), "run", "t", "--model", "m", "--base-url", server.base_url, "--no-builtin",
             "--json", "--mcp", command],
            capture_output=True, text=True, env=without_venv_on_path(), timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    tool_message = json.loads(done.stdout)["messages"][2]
    assert json.loads(tool_message["content"])["timezone"] == "UTC"


@pytest.mark.local_model
def test_embedded_model_answers_the_time_in_tokyo_from_the_time_server() -> None:
    """The issue's done-when check: the embedded model (temperature 0) calls the server's tool and
    its answer holds Tokyo's current time as the server returned it. The prompt holds the live
    clock, so on some minutes the model's first answer is sent back (a "PM" at 7 in the morning)
    and it calls again: every call is the same one, and the answer holds a time it returned."""
    done = subprocess.run(
        [*minloop_command(), "run", "What time is it in Tokyo?", "--mcp", "python -m mcp_server_time", "--json"],
        capture_output=True, text=True, env=without_venv_on_path(), timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    calls = [c for s in doc["steps"] for c in s["tool_calls"]]
    made = [(c["name"], json.loads(c["arguments"])) for c in calls]
    assert made and all(one == ("get_current_time", {"timezone": "Asia/Tokyo"}) for one in made), made
    returned = [json.loads(m["content"]) for m in doc["messages"] if m["role"] == "tool"]
    stamps = [datetime.fromisoformat(r["datetime"]) for r in returned if "datetime" in r]
    assert doc["messages"][2]["role"] == "tool" and stamps
    answer = doc["final_message"]["content"]
    shown = [
        rf"(?<!\d){h}:{stamp.minute:02d}"
        for stamp in stamps
        for h in {f"{stamp.hour:02d}", str(stamp.hour), str(stamp.hour % 12 or 12)}
    ]
    assert any(re.search(pattern, answer) for pattern in shown), answer


def test_a_server_that_writes_other_lines_on_stdout_gives_one_warning_line_each() -> None:
    script = [reply(None, call("echo", {"text": "x"}, id="c1")), reply("好的")]
    with ChatServer(script) as server:
        done = subprocess.run(
            [*minloop_command(), "run", "t", "--model", "m", "--base-url", server.base_url, "--no-builtin",
             "--no-trace", "--json", "--mcp", f"{FAULTS} Noisy"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["final_message"]["content"] == "好的"
    assert json.loads(doc["messages"][2]["content"])["result"] == "faultNoisy call #1 echo: x"
    invalid = "Failed to parse JSONRPC message from server: Invalid JSON: expected value at line 1 column"
    assert done.stderr.splitlines() == [  # one line each, named after the handshake, no traceback
        f"warning: MCP server 'faultNoisy': {invalid} 1: 'starting up...'",
        f"warning: MCP server 'faultNoisy': {invalid} 2: '[配置] 已加载'",
        f"warning: MCP server 'faultNoisy': {invalid} 1: 'handling a call'",
    ]
