"""Tool calls written as text, against llama.cpp's own HTTP server serving the bundled 0.5B model:
the server leaves ``tool_calls`` empty and writes the call in ``content``; the loop runs it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop, RunResult, TextDelta, tool
from minloop.models.openai import OpenAIModel

from .serving import free_port

SERVER = Path(__file__).parent / "servers" / "llama_http.py"
WEATHER = {"sky": "cloudy", "temperature_c": 18}


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The current weather in a city.

    Args:
        city: The city's name.
    """
    return {"city": city, **WEATHER}


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    from minloop.models.local.gguf import ensure_gguf

    port = free_port()
    command = [sys.executable, str(SERVER), str(ensure_gguf("qwen2.5-coder-0.5b")), str(port)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = process.stdout.readline().strip() if process.stdout else ""
        assert address == f"http://127.0.0.1:{port}", "llama.cpp's server did not start"
        yield f"{address}/v1"
    finally:
        process.kill()
        process.wait(10)


async def watched(loop: Loop, prompt: str) -> tuple[RunResult, str]:
    shown = []
    async with loop.stream(prompt) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                shown.append(event.text)
    assert events.result is not None
    return events.result, "".join(shown)


def run(url: str, prompt: str, *, stream: bool, text_calls: bool = True) -> tuple[RunResult, str]:
    """A run through ``OpenAIModel`` against the server, and the text a stream's reader was shown."""
    model = OpenAIModel(
        "qwen", base_url=url, api_key="none", extra_body={"max_tokens": 160, "temperature": 0}
    )
    loop = Loop(model, [get_weather, add], max_steps=4, text_calls=text_calls)
    if stream:
        return asyncio.run(watched(loop, prompt))
    result = loop.run_sync(prompt)
    return result, result.output or ""


CASES = [
    ("What is 1234 + 5678? Use the add tool.", "add", "6912"),
    ("What's the weather in Paris?", "get_weather", "18"),
    ("北京今天天气怎么样？", "get_weather", "18"),
    ("用 add 工具算一下 1234 加 5678 等于多少？", "add", "6912"),
]


@pytest.mark.local_model
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize(("prompt", "name", "value"), CASES)
def test_a_call_the_server_left_in_the_text_is_run_and_answered_from(
    llama_url: str, prompt: str, name: str, value: str, stream: bool
) -> None:
    result, shown = run(llama_url, prompt, stream=stream)
    assert result.status == "success", result.to_dict()
    first = result.steps[0]
    assert [c.name for c in first.tool_calls] == [name] and first.results[0].error is None
    # the transcript holds the call as a call, so the next request to the server was well-formed
    call = result.messages[1]
    assert call["role"] == "assistant" and call["tool_calls"][0]["function"]["name"] == name
    assert (
        result.messages[2]["role"] == "tool"
        and result.messages[2]["tool_call_id"] == call["tool_calls"][0]["id"]
    )
    assert value in (result.output or ""), result.output
    assert '"arguments"' not in shown and value in shown  # a stream's reader saw the answer, not the call


@pytest.mark.local_model
def test_with_text_calls_off_the_call_written_as_text_is_the_answer(llama_url: str) -> None:
    result, _ = run(llama_url, CASES[0][0], stream=False, text_calls=False)
    assert result.status == "success" and result.steps[0].tool_calls == ()
    assert json.loads((result.output or "").strip().strip("`").removeprefix("json"))["name"] == "add"
