"""``OpenAIModel`` sends straight to its client's pool and keeps what the client would do."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from minloop import Loop, ModelError
from minloop.models.base import ModelRequest
from minloop.models.openai import OpenAIModel
from minloop.testing import ChatServer, Fault, completion, reply


def answer(text: str, headers: dict[str, str] | None = None) -> Fault:
    """A 200 completion with extra response headers."""
    body = json.dumps(completion({"content": text}))
    return Fault(status=200, body=body, headers=headers or {})


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_clients_headers_go_out_and_a_cookie_the_server_sets_comes_back(stream: bool) -> None:
    script = [answer("one", {"Set-Cookie": "route=b7; Path=/"}), reply("two"), reply("three")]
    with ChatServer(script) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key="sk-test", max_retries=0)

        async def runs() -> list[str | None]:
            outputs = []
            for prompt in ("a", "b", "c"):
                if stream:
                    async with Loop(model, []).stream(prompt) as events:
                        async for _ in events:
                            pass
                    assert events.result is not None
                    outputs.append(events.result.output)
                else:
                    outputs.append((await Loop(model, []).run(prompt)).output)
            return outputs

        assert asyncio.run(runs()) == ["one", "two", "three"]
    first, second, third = ({k.lower(): v for k, v in h.items()} for h in server.headers)
    for headers in (first, second, third):
        assert headers["authorization"] == "Bearer sk-test"
        assert headers["content-type"] == "application/json"
        assert headers["user-agent"].startswith("python-httpx/")
    assert "cookie" not in first
    assert second["cookie"] == third["cookie"] == "route=b7"


def test_a_proxy_from_the_environment_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with ChatServer([reply("through the proxy")]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.removesuffix("/v1"))
        model = OpenAIModel("m", base_url="http://models.invalid/v1", max_retries=0)
        result = Loop(model, []).run_sync("hello")
    assert result.output == "through the proxy"
    assert proxy.headers[0]["Host"] == "models.invalid"


def test_a_refused_connection_names_the_url_and_keeps_the_request() -> None:
    with ChatServer([]) as server:
        url = server.base_url
    model = OpenAIModel("m", base_url=url, max_retries=0)
    with pytest.raises(
        ModelError, match=r"cannot reach http://127\.0\.0\.1:\d+/v1/chat/completions: ConnectError"
    ) as info:
        asyncio.run(model.call(ModelRequest([{"role": "user", "content": "hello"}])))
    cause = info.value.__cause__
    assert isinstance(cause, httpx.ConnectError)
    assert str(cause.request.url) == f"{url}/chat/completions"


def test_without_the_pool_the_client_sends_as_usual() -> None:
    """An httpx without the private ``_transport_for_url``: ``client.post`` and ``client.stream``."""
    from minloop.models.send import Sender

    async def both(url: str) -> tuple[bytes, list[str]]:
        async with httpx.AsyncClient(headers={"Content-Type": "application/json"}) as client:
            sender = Sender(client, url)
            sender.transport = None
            whole = await sender.post(b'{"model": "m", "messages": []}')
            async with sender.stream(b'{"model": "m", "messages": [], "stream": true}') as response:
                lines = [line async for line in response.aiter_lines() if line]
            return whole.content, lines

    with ChatServer([reply("whole"), reply("streamed")]) as server:
        whole, lines = asyncio.run(both(f"{server.base_url}/chat/completions"))
    assert json.loads(whole)["choices"][0]["message"]["content"] == "whole"
    assert lines[-1] == "data: [DONE]" and len(server.requests) == 2
