"""``minloop model-server``: llama.cpp's own HTTP server on a bundled model, from the embedded
runtime, reached by a loop through ``OpenAIModel`` with the small-model layers."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from minloop import Loop, tool
from minloop.cli.app import app
from minloop.models.openai import OpenAIModel
from minloop.small import small_model_layers

from .serving import free_port

KEY = "local-secret"
CLI = [sys.executable, "-c", "from minloop.cli import main; main()"]


@tool
def get_weather(city: str) -> dict[str, object]:
    """The current weather in a city.

    Args:
        city: The city's name.
    """
    return {"city": city, "sky": "cloudy", "temperature_c": 18}


def test_a_server_for_other_machines_needs_a_key_and_bad_input_is_named(tmp_path: Path) -> None:
    runner = CliRunner()
    wide = runner.invoke(app, ["model-server", "--host", "0.0.0.0"])
    assert (wide.exit_code, wide.output.strip()) == (
        2,
        "error: binding 0.0.0.0 serves other machines: give --api-key",
    )
    text = tmp_path / "notes.gguf"
    text.write_text("not a model")
    bad = runner.invoke(app, ["model-server", "--gguf", str(text), "--port", str(free_port())])
    assert bad.exit_code == 2 and f"{text} is not a GGUF file" in bad.output
    unknown = runner.invoke(app, ["model-server", "--model", "gpt-x"])
    assert unknown.exit_code == 2 and "--model 'gpt-x': the bundled models are" in unknown.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [*CLI, "model-server", "--model", "local-0.5b", "--port", str(port)]
        busy = subprocess.run(
            command, capture_output=True, text=True, timeout=120
        )  # a server would not return
    assert (busy.returncode, busy.stderr.strip()) == (
        2,
        f"error: cannot serve on 127.0.0.1:{port}: Address already in use",
    )


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    port = free_port()
    command = [*CLI, "model-server", "--model", "local-0.5b", "--port", str(port), "--threads", "2", "--api-key", KEY]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline().strip() if process.stdout else ""
        assert line.startswith(f"llama.cpp's server on http://127.0.0.1:{port}/v1 serving qwen2.5-coder-0.5b")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.kill()
        process.wait(10)


@pytest.mark.local_model
def test_a_loop_with_the_layers_runs_on_the_served_model(served: str) -> None:
    model = OpenAIModel("qwen2.5-coder-0.5b", base_url=served, api_key=KEY, extra_body={"temperature": 0})
    result = Loop(model, [get_weather], layers=small_model_layers()).run_sync("What's the weather in Paris?")
    assert result.status == "success"
    assert [(c.name, c.arguments) for s in result.steps for c in s.tool_calls] == [
        ("get_weather", '{"city": "Paris"}')
    ]
    assert "18" in (result.output or "")


@pytest.mark.local_model
def test_a_request_without_the_key_is_refused(served: str) -> None:
    model = OpenAIModel("qwen2.5-coder-0.5b", base_url=served, api_key="wrong")
    result = Loop(model, [get_weather]).run_sync("What's the weather in Paris?")
    assert result.status == "model_error" and result.error is not None
    assert "HTTP 401" in result.error and "Invalid API Key" in result.error
