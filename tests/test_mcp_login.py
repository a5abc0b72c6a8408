"""Servers behind a login: a bearer token in a header, then OAuth's client-credentials grant from an
authorization server on 127.0.0.1 (tests/servers/login_server.py). The run gets through, a token
that expires mid-run is replaced, a server that refuses the credentials fails its calls (not the
run), and no token is ever written to the transcript, the trace, the run store or a log line."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from typer.testing import CliRunner

from minloop import Loop, SQLiteRunStore
from minloop.cli.app import app
from minloop.mcp import MCPConnectionError, MCPServer, client_credentials
from minloop.testing import ChatServer, FunctionModel, call, reply
from minloop.trace.sqlite import SQLiteSink

from .conftest import content, masked
from .test_mcp_http import free_port

LOGIN_SERVER = Path(__file__).parent / "servers" / "login_server.py"
STATIC = "static-token-5f1c9e"  # what the bearer tests send


@pytest.fixture
def login() -> Iterator[str]:
    """A login server whose issued tokens live one second."""
    port = free_port()
    env = {**os.environ, "STATIC_TOKEN": STATIC, "TOKEN_SECONDS": "1"}
    proc = subprocess.Popen([sys.executable, str(LOGIN_SERVER), str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    import socket

    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the login server did not start"
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


def issued(base: str) -> list[str]:
    with urllib.request.urlopen(f"{base}/issued") as answer:
        return list(json.loads(answer.read()))


def refuse(base: str) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{base}/refuse", method="POST")).close()


def written(tmp_path: Path, *texts: str) -> str:
    """Everything the run left on disk, as text."""
    return "".join(
        p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file()
    ) + "".join(texts)


def test_a_bearer_token_in_a_header_gets_in_and_is_written_nowhere(
    login: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    script = [reply(None, call("whoami", {}, id="c1")), "In."]

    async def main(server: MCPServer) -> Any:
        async with server:
            loop = Loop(FunctionModel(lambda r: script[sum(m["role"] == "assistant" for m in r.messages)]),
                        server.tools, sinks=[SQLiteSink(tmp_path / "traces.db")],
                        store=SQLiteRunStore(tmp_path / "runs.db"))  # fmt: skip
            return await loop.run("Am I in?")

    with pytest.raises(MCPConnectionError, match=r"it refused the credentials \(HTTP 401 Unauthorized"):
        asyncio.run(main(MCPServer(f"{login}/mcp")))
    result = asyncio.run(main(MCPServer(f"{login}/mcp", headers={"Authorization": f"Bearer {STATIC}"})))
    assert masked(result.messages, result.trace_id)[2]["content"] == content(result="you are in")
    assert result.status == "success"
    assert STATIC not in written(tmp_path, json.dumps(result.to_dict()), caplog.text)


def test_oauth_gets_in_replaces_an_expired_token_and_a_refusal_fails_the_call_only(
    login: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)

    def play(request: Any) -> Any:
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        if turn == 1:
            time.sleep(1.3)  # the token lives one second: it has expired by the next call
        if turn == 2:
            refuse(login)
        return (
            reply(None, call("whoami", {"note": str(turn)}, id=f"c{turn + 1}"))
            if turn < 3
            else "Refused at the end."
        )

    async def main() -> Any:
        auth = client_credentials(f"{login}/mcp", "minloop-test", "s3cret", issuer=login)
        async with MCPServer(f"{login}/mcp", auth=auth) as server:
            loop = Loop(FunctionModel(play), server.tools, sinks=[SQLiteSink(tmp_path / "traces.db")],
                        store=SQLiteRunStore(tmp_path / "runs.db"))  # fmt: skip
            return await loop.run("Am I in?")

    result = asyncio.run(main())
    answers = [m["content"] for m in masked(result.messages, result.trace_id) if m["role"] == "tool"]
    refused = ("MCP server 'login' refused the credentials (HTTP 401 Unauthorized, invalid_token): its tools "
               "cannot be used until the login is fixed")  # fmt: skip
    assert answers == [content(result="you are in"), content(result="you are in"),
                       content(error=refused, code="ERR_TOOL_UNAUTHORIZED", tool="whoami", server="login")]  # fmt: skip
    assert result.status == "success"
    tokens = issued(login)
    assert len(tokens) >= 2  # the first expired mid-run and was replaced
    everything = written(tmp_path, json.dumps(result.to_dict()), caplog.text)
    assert not [t for t in tokens if t in everything]


def test_wrong_client_credentials_are_a_clear_error(login: str) -> None:
    async def main() -> None:
        auth = client_credentials(f"{login}/mcp", "minloop-test", "wrong", issuer=login)
        async with MCPServer(f"{login}/mcp", auth=auth):
            pass

    with pytest.raises(MCPConnectionError) as failed:
        asyncio.run(main())
    assert "cannot connect to MCP server" in str(failed.value) and "wrong" not in str(failed.value)


def test_mcp_header_on_the_command_line(login: str, trace_db: Path) -> None:
    with ChatServer([reply(None, call("whoami", {}, id="c1")), reply("In.")]) as chat:
        done = CliRunner().invoke(app, ["run", "Am I in?", "--model", "m", "--base-url", chat.base_url, "--json",
                                        "--no-builtin", "--mcp", f"{login}/mcp",
                                        "--mcp-header", f"Authorization: Bearer {STATIC}"])  # fmt: skip
        refused = CliRunner().invoke(app, ["run", "Am I in?", "--model", "m", "--base-url", chat.base_url,
                                           "--no-builtin", "--mcp", f"{login}/mcp"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads(json.loads(done.output)["messages"][2]["content"])["result"] == "you are in"
    assert STATIC not in done.output + written(trace_db.parent)
    assert refused.exit_code == 2 and "refused the credentials" in refused.output


def test_the_hint_to_resume_names_a_header_but_never_its_value() -> None:
    from minloop.cli.runs import Setup

    setup = Setup("m", None, "OPENAI_API_KEY", None, [], True, Path("."), 6, None, False, False, True, None,
                  ["http://127.0.0.1:1/mcp"], [f"Authorization: Bearer {STATIC}"])  # fmt: skip
    assert (
        setup.resume_options() == "--model m --mcp http://127.0.0.1:1/mcp --mcp-header 'Authorization: ...'"
    )


def test_oauth_with_a_login_page_through_the_sdk_provider_and_a_refresh_token(
    login: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDK's OAuthClientProvider (authorization code with PKCE): the redirect handler opens the
    login page (here, a request that follows it to the code), the token expires mid-run and the
    refresh token gets the next one."""
    import httpx2
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

    from minloop.mcp.login import MemoryTokens

    caplog.set_level(logging.DEBUG)
    back = "http://127.0.0.1:9/callback"  # the page the person lands on; nothing listens there
    app_info = {"redirect_uris": [back], "token_endpoint_auth_method": "none", "scope": "tools",
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}  # fmt: skip
    storage = MemoryTokens()
    storage.client_info = OAuthClientInformationFull(client_id="minloop-app", **app_info)
    landed: dict[str, str] = {}

    async def open_page(url: str) -> None:
        async with httpx2.AsyncClient() as browser:
            location = (await browser.get(url)).headers["location"]
        landed.update({k: v[0] for k, v in parse_qs(urlsplit(location).query).items()})

    async def came_back() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(**landed)

    def play(request: Any) -> Any:
        turn = sum(1 for m in request.messages if m["role"] == "assistant")
        if turn == 1:
            time.sleep(1.3)
        return reply(None, call("whoami", {"note": str(turn)}, id=f"c{turn + 1}")) if turn < 2 else "In."

    async def main() -> Any:
        auth = OAuthClientProvider(
            f"{login}/mcp", OAuthClientMetadata(**app_info), storage, open_page, came_back
        )
        async with MCPServer(f"{login}/mcp", auth=auth) as server:
            loop = Loop(FunctionModel(play), server.tools, sinks=[SQLiteSink(tmp_path / "traces.db")],
                        store=SQLiteRunStore(tmp_path / "runs.db"))  # fmt: skip
            return await loop.run("Am I in?")

    result = asyncio.run(main())
    answers = [m["content"] for m in masked(result.messages, result.trace_id) if m["role"] == "tool"]
    assert answers == [content(result="you are in")] * 2 and result.status == "success"
    with urllib.request.urlopen(f"{login}/grants") as answer:
        assert json.loads(answer.read()) == ["authorization_code", "refresh_token"]
    everything = written(tmp_path, json.dumps(result.to_dict()), caplog.text)
    assert not [t for t in issued(login) if t in everything]
