"""A server's resources and prompts, from Python and from the command line, in both protocol eras
and over both transports; and a run given a resource's text with its prompt."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from typer.testing import CliRunner

from minloop import Loop
from minloop.cli.app import app
from minloop.exceptions import MinloopError
from minloop.mcp import MCPServer, attach
from minloop.testing import ChatServer, ScriptedModel, reply

from .test_mcp_eras import ERA_SERVER, era_urls, target  # noqa: F401  (era_urls is a fixture)
from .test_mcp_http import node_server

runner = CliRunner()
README = {
    "uri": "note://readme",
    "name": "readme",
    "description": "What this server is.",
    "mime_type": "text/plain",
}
NOTE = {
    "uri_template": "note://{name}",
    "name": "note",
    "description": "A note by name.",
    "mime_type": "text/plain",
}
GREET = {"name": "greet", "description": "Greet someone.",
         "arguments": [{"name": "name", "description": None, "required": True}]}  # fmt: skip


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["new", "old"])
def test_resources_and_prompts_in_both_eras(era: str, transport: str, era_urls: dict[str, str]) -> None:  # noqa: F811
    async def main() -> tuple[Any, ...]:
        async with MCPServer(target(era, transport, era_urls)) as server:
            return (await server.resources(), await server.read("note://readme"), await server.read("note://x"),
                    await server.prompts(), await server.prompt("greet", {"name": "Ada"}))  # fmt: skip

    resources, readme, note, prompts, greeting = asyncio.run(main())
    assert resources == [README, NOTE]
    assert (readme, note) == (f"A test server of the {era} era.", "note x")
    assert prompts == [GREET]
    assert greeting == [{"role": "user", "content": "Say hello to Ada, briefly."}]


def test_a_prompt_is_a_run_input_and_a_missing_resource_is_a_clear_error() -> None:
    async def main() -> Any:
        async with MCPServer([sys.executable, str(ERA_SERVER), "new"]) as server:
            with pytest.raises(MinloopError, match="MCP server 'era-new' could not read 'nothing://here'"):
                await server.read("nothing://here")
            messages = await server.prompt("greet", {"name": "张伟"})
            return await Loop(ScriptedModel(["你好，张伟！"]), []).run(messages)

    result = asyncio.run(main())
    assert result.messages == [
        {"role": "user", "content": "Say hello to 张伟, briefly."},
        {"role": "assistant", "content": "你好，张伟！"},
    ]


def test_server_everything_resources_and_prompts() -> None:
    async def main() -> tuple[Any, ...]:
        async with MCPServer(node_server("stdio")) as server:
            resources = await server.resources()
            first = next(r for r in resources if r.get("uri", "").endswith("architecture.md"))
            return resources, await server.read(first["uri"]), await server.prompts(), await server.prompt(
                "args-prompt", {"city": "Paris"})  # fmt: skip

    resources, text, prompts, filled = asyncio.run(main())
    assert text.startswith("# Everything Server")
    assert {"simple-prompt", "args-prompt"} <= {p["name"] for p in prompts}
    assert filled == [{"role": "user", "content": "What's weather in Paris?"}]
    assert any("uri_template" in r for r in resources)


def test_the_mcp_commands_list_and_read() -> None:
    server = f"{sys.executable} {ERA_SERVER} old"
    tools = runner.invoke(app, ["mcp", "tools", server, "--json"])
    assert tools.exit_code == 0, tools.output
    shown = json.loads(tools.output)
    assert (shown["name"], shown["protocol"], shown["transport"]) == ("era-old", "2025-11-25", "stdio")
    assert [t["name"] for t in shown["tools"]] == ["add", "echo", "era", "old_tool", "rotate"]
    listed = runner.invoke(app, ["mcp", "resources", server])
    assert listed.output.splitlines() == ["note://readme  readme: What this server is.",
                                          "note://{name}  note: A note by name."]  # fmt: skip
    read = runner.invoke(app, ["mcp", "read", server, "note://readme"])
    assert read.output == "A test server of the old era.\n"
    prompts = runner.invoke(app, ["mcp", "prompts", server])
    assert prompts.output == "greet(name*): Greet someone.\n"
    got = runner.invoke(app, ["mcp", "prompt", server, "greet", "--arg", "name=Ada"])
    assert json.loads(got.output) == [{"role": "user", "content": "Say hello to Ada, briefly."}]
    missing = runner.invoke(app, ["mcp", "read", server, "nothing://here"])
    assert missing.exit_code == 2 and "could not read 'nothing://here'" in missing.output
    typo = runner.invoke(app, ["mcp", "prompt", server, "greet", "--arg", "name:Ada"])
    assert (typo.exit_code, typo.output) == (2, "error: --arg 'name:Ada': give NAME=VALUE\n")


def test_a_server_without_resources_or_prompts_says_so() -> None:
    server = f"{sys.executable} -m mcp_server_time"
    listed = runner.invoke(app, ["mcp", "resources", server])
    assert (listed.exit_code, listed.output) == (0, "the server offers no resources\n")
    prompts = runner.invoke(app, ["mcp", "prompts", server])
    assert (prompts.exit_code, prompts.output) == (0, "the server offers no prompts\n")
    as_json = runner.invoke(app, ["mcp", "prompts", server, "--json"])
    assert json.loads(as_json.output) == []


def test_run_attaches_a_resource_to_its_prompt() -> None:
    server = f"{sys.executable} {ERA_SERVER} new"
    with ChatServer([reply("It is a test server.")]) as chat:
        done = runner.invoke(app, ["run", "What is this?", "--model", "m", "--base-url", chat.base_url, "--json",
                                   "--no-builtin", "--mcp", server, "--mcp-resource", "note://readme"])  # fmt: skip
    assert done.exit_code == 0, done.output
    asked = chat.requests[0]["messages"][-1]
    assert asked == {
        "role": "user",
        "content": attach("What is this?", {"note://readme": "A test server of the new era."}),
    }
    assert (
        asked["content"]
        == 'What is this?\n\n<resource uri="note://readme">\nA test server of the new era.\n</resource>'
    )
    unread = runner.invoke(app, ["run", "x", "--model", "m", "--base-url", chat.base_url, "--no-builtin",
                                 "--mcp", server, "--mcp-resource", "note://x/y"])  # fmt: skip
    assert unread.exit_code == 2 and "--mcp-resource 'note://x/y': no server could read it" in unread.output
