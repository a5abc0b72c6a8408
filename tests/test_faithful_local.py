"""The embedded model answers from its tools, in Chinese as in English (temperature 0, real model)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from minloop.cli.app import app

pytestmark = pytest.mark.local_model


def run_json(prompt: str, root: Path, *options: str) -> dict:
    result = CliRunner().invoke(app, ["run", prompt, "--root", str(root), "--json", *options])
    return json.loads(result.output)


def test_a_weather_question_without_a_weather_tool_is_declined(tmp_path: Path) -> None:
    # a clock and a calculator, the clock fixed at 09:15 so no number of a weather report is in its result
    doc = run_json("北京今天天气怎么样？", tmp_path, "--no-builtin", "--tools", "tests.fixed_clock:TOOLS")
    answer = doc["final_message"]["content"]
    assert doc["status"] == "success"
    assert re.search(r"无法|没有|不能|抱歉|不知道", answer), answer  # says it cannot tell
    assert not re.search(r"\d|度|晴|雨|云", answer), answer  # and states no weather
