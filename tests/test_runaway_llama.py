"""Replies that run away, stopped with the real runtimes: llama.cpp's own HTTP server serving the
bundled 0.5B model through ``OpenAIModel``, and the same model embedded (``LocalModel``),
streamed and not. Short on purpose: a few dozen tokens each."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minloop.models.base import ModelRequest, ModelResponse

from .serving import free_port

SERVER = Path(__file__).parent / "servers" / "llama_http.py"
REPEAT = "Repeat this sentence five times: The sea is calm and blue today."
COUNT = "Count from 1 to 500, separated by commas."


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    from minloop.models.local.gguf import ensure_gguf

    port = free_port()
    command = [sys.executable, str(SERVER), str(ensure_gguf("qwen2.5-coder-0.5b")), str(port), "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = process.stdout.readline().strip() if process.stdout else ""
        assert address == f"http://127.0.0.1:{port}", "llama.cpp's server did not start"
        yield f"{address}/v1"
    finally:
        process.kill()
        process.wait(10)


def both(model: Any, prompt: str) -> tuple[ModelResponse, ModelResponse]:
    """The reply to ``prompt`` whole and streamed."""
    request = ModelRequest([{"role": "user", "content": prompt}])

    async def go() -> tuple[ModelResponse, ModelResponse]:
        whole = await model.call(request)
        parts = [part async for part in model.stream(request)]
        assert isinstance(parts[-1], ModelResponse)
        return whole, parts[-1]

    return asyncio.run(go())


@pytest.mark.local_model
def test_llama_servers_reply_that_repeats_itself_is_cut_where_the_repeat_began(llama_url: str) -> None:
    from minloop.models.openai import OpenAIModel

    model = OpenAIModel("local", base_url=llama_url, max_tokens=200, timeout=300)
    for reply in both(model, REPEAT):
        assert (reply.message["content"], reply.stopped) == ("The sea is calm and blue today.", "repeated")


@pytest.mark.local_model
def test_llama_servers_reply_past_the_cap_is_stopped_there(llama_url: str) -> None:
    from minloop.models.openai import OpenAIModel

    whole, streamed = both(OpenAIModel("local", base_url=llama_url, max_tokens=16, timeout=300), COUNT)
    assert whole.stopped == streamed.stopped == "length"
    assert whole.usage.completion_tokens == 16 and streamed.usage.completion_tokens <= 16
    for reply in (whole, streamed):
        assert reply.message["content"].replace(" ", "").startswith("1,2,3,4,5")


@pytest.mark.local_model
def test_the_embedded_models_reply_past_its_cap_is_stopped_there() -> None:
    from minloop.models.local import LocalModel

    whole, streamed = both(LocalModel("qwen2.5-coder-0.5b", max_tokens=16), COUNT)
    assert whole.stopped == streamed.stopped == "length"
    assert whole.usage.completion_tokens == streamed.usage.completion_tokens == 16
