"""The embedded model answers from its tools, in Chinese as in English (temperature 0, real model)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

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


def test_the_time_in_tokyo_is_asked_of_tokyo_and_never_given_wrong(tmp_path: Path) -> None:
    """The clock is called for Asia/Tokyo (the model wrote it, or grounding mapped 东京 onto it);
    the answer gives Tokyo's hour, or says plainly it cannot answer.
    (The 0.5B model sometimes misreads the hour, 05:02 as 15:02; the evidence check catches it.)"""
    before = datetime.now(ZoneInfo("Asia/Tokyo"))
    doc = run_json("现在东京几点了？", tmp_path)
    after = datetime.now(ZoneInfo("Asia/Tokyo"))
    calls = [c["function"] for m in doc["messages"] for c in m.get("tool_calls") or []]
    assert calls and calls[0]["name"] == "current_time", doc["messages"]
    assert json.loads(calls[0]["arguments"]) == {"timezone": "Asia/Tokyo"}
    answer = doc["final_message"]["content"]
    hours = {t.hour for t in (before, after, before + timedelta(minutes=1))}
    said = {int(h) for h in re.findall(r"(\d{1,2})[:时点]", answer)}
    declined = re.search(r"无法|没有|不能", answer) and not said
    assert declined or said & (hours | {h % 12 for h in hours}), answer
