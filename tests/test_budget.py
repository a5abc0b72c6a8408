"""Usage budgets and the answer at the limit, against a real Chat Completions server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from minloop import Controls, Loop, MinloopError, Usage, tool
from minloop.cli.app import app
from minloop.decision import CONTROL_TEXT, LIMIT_TEXT, quoting
from minloop.layers.budget import Budget, Price, Spent
from minloop.models.openai import OpenAIModel
from minloop.testing import ChatServer, RecordingSink, ScriptedModel, call, completion, reply

from .conftest import TID, content, masked


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def model_for(server: ChatServer) -> OpenAIModel:
    return OpenAIModel("loopback-model", base_url=server.base_url, api_key="sk-test", backoff=0.01)


def adding(n: int, prompt_tokens: int = 100, completion_tokens: int = 20) -> list[dict[str, Any]]:
    """``n`` replies that each call ``add``, with the usage each reports."""
    return [
        completion(
            reply(None, call("add", {"a": i, "b": 1}, id=f"c{i}")),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )
        for i in range(1, n + 1)
    ]


def run(budget: Budget, script: list[Any], **options: Any) -> tuple[Any, ChatServer]:
    with ChatServer(script) as server:
        result = Loop(model_for(server), [add], budget=budget, **options).run_sync("Keep adding.")
    return result, server


def test_total_tokens_are_checked_before_the_call_with_the_calibrated_estimate() -> None:
    result, server = run(Budget(total_tokens=500), adding(6))
    assert (result.status, len(server.requests)) == ("budget_exceeded", 4)
    assert result.usage.total_tokens == 480 and result.model_calls == 4 and result.tool_calls == 4
    match = re.fullmatch(
        r"budget exceeded: total_tokens: 480 spent and about (\d+) more for the next call's prompt "
        r"would exceed the limit of 500 by (\d+)",
        result.error or "",
    )
    assert match and int(match[1]) > 20 and int(match[2]) == 480 + int(match[1]) - 500


def test_prompt_tokens_stop_the_call_that_would_pass_them() -> None:
    result, server = run(Budget(prompt_tokens=150), adding(5))
    assert (result.status, len(server.requests)) == ("budget_exceeded", 1)
    assert (result.error or "").startswith("budget exceeded: prompt_tokens: 100 spent and about")


def test_completion_tokens_overshot_by_a_reply_end_the_run_before_the_next_call() -> None:
    result, server = run(Budget(completion_tokens=30), adding(5))
    assert (result.status, len(server.requests)) == ("budget_exceeded", 2)
    assert result.error == "budget exceeded: completion_tokens: 40 spent, the limit is 30 (over by 10)"


def test_model_calls() -> None:
    result, server = run(Budget(model_calls=2), adding(5))
    assert (result.status, len(server.requests)) == ("budget_exceeded", 2)
    assert result.error == "budget exceeded: model_calls: 2 model calls made, the limit is 2"
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant", "tool"]


def test_tool_calls_past_the_budget_are_not_run() -> None:
    two = reply(None, call("add", {"a": 1, "b": 1}, id="c1"), call("add", {"a": 2, "b": 2}, id="c2"))
    result, server = run(Budget(tool_calls=1), [two, reply("never asked")])
    assert (result.status, len(server.requests), result.tool_calls) == ("budget_exceeded", 1, 1)
    assert (
        result.error
        == "budget exceeded: tool_calls: the model asked for 2 tool calls, the limit is 1 (1 not run)"
    )
    refused = {
        "error": "not run: this run may make at most 1 tool calls, and they are spent",
        "code": "ERR_TOOL_BUDGET",
        "tool": "add",
        "trace_id": TID,
    }
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "Keep adding."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 1}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "add", "content": content(result=2)},
        {"role": "tool", "tool_call_id": "c2", "name": "add", "content": json.dumps(refused)},
    ]


def test_cost_from_the_price_table() -> None:
    prices = {"loopback-model": Price(prompt=1000.0, completion=2000.0)}  # per million tokens
    result, server = run(Budget(cost=0.5, prices=prices), adding(5))
    assert (result.status, len(server.requests)) == ("budget_exceeded", 3)
    assert result.cost == pytest.approx(0.42)  # 3 x (100 x 0.001 + 20 x 0.002)
    assert (result.error or "").startswith("budget exceeded: cost: 0.42 spent and about 0.1")
    assert result.to_dict()["cost"] == pytest.approx(0.42)
    with pytest.raises(MinloopError, match="needs the price of model 'loopback-model'"):
        Loop(OpenAIModel("loopback-model"), budget=Budget(cost=1.0, prices={"other": (1.0, 2.0)}))
    with pytest.raises(MinloopError, match="cannot be negative"):
        Budget(total_tokens=-1)


def test_an_answer_already_received_is_kept_whatever_it_cost() -> None:
    script = [completion(reply("Done."), prompt_tokens=100, completion_tokens=20)]
    result, _ = run(Budget(total_tokens=110), script)
    assert (result.status, result.output, result.error) == ("success", "Done.", None)


def test_answer_at_the_step_limit() -> None:
    script = [
        reply(None, call("add", {"a": 1, "b": 2}, id="c1")),
        reply(None, call("add", {"a": 3, "b": 3}, id="c2")),
        reply("So far: 1 + 2 = 3 and 3 + 3 = 6."),
    ]
    with ChatServer(script) as server:
        result = Loop(model_for(server), [add], max_steps=2, answer_at_limit=True).run_sync("Add things.")
    assert (result.status, result.forced_by) == ("max_steps_exceeded", "max_steps")
    assert result.output == "So far: 1 + 2 = 3 and 3 + 3 = 6." and result.error == "no answer within 2 steps"
    # tools off: the last request goes without its tools
    assert [(r.get("tool_choice"), "tools" in r) for r in server.requests] == [
        ("auto", True),
        ("auto", True),
        (None, False),
    ]
    transcript = [
        {"role": "user", "content": "Add things."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "add", "content": content(result=3)},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "add", "arguments": '{"a": 3, "b": 3}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "name": "add", "content": content(result=6)},
    ]
    assert masked(server.requests[1]["messages"], result.trace_id) == [
        *transcript[:3],
        {"role": "system", "content": quoting(CONTROL_TEXT, transcript[:1])},
    ]
    assert masked(server.requests[2]["messages"], result.trace_id) == [  # tools off: calls as text
        transcript[0],
        {"role": "assistant", "content": 'add({"a": 1, "b": 2}) -> ' + content(result=3)},
        {"role": "assistant", "content": 'add({"a": 3, "b": 3}) -> ' + content(result=6)},
        {"role": "system", "content": LIMIT_TEXT},
    ]
    assert masked(result.messages, result.trace_id) == [
        *transcript,
        {"role": "assistant", "content": "So far: 1 + 2 = 3 and 3 + 3 = 6."},
    ]


def test_answer_at_a_budget_and_the_trace_holds_the_totals() -> None:
    sink = RecordingSink()
    script = [*adding(1), completion(reply("1 + 1 = 2."), prompt_tokens=120, completion_tokens=8)]
    result, server = run(Budget(model_calls=1), script, answer_at_limit=True, sinks=[sink])
    assert (result.status, result.forced_by, result.output) == (
        "budget_exceeded",
        "model_calls",
        "1 + 1 = 2.",
    )
    assert result.error == "budget exceeded: model_calls: 1 model calls made, the limit is 1"
    assert "tools" not in server.requests[1] and "tool_choice" not in server.requests[1]
    assert server.requests[1]["messages"][-1] == {"role": "system", "content": LIMIT_TEXT}
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    end = sink.events[-1]
    assert end.kind == "run_end"
    assert {k: end.data[k] for k in ("status", "forced_by", "model_calls", "tool_calls", "cost")} == {
        "status": "budget_exceeded",
        "forced_by": "model_calls",
        "model_calls": 2,
        "tool_calls": 1,
        "cost": None,
    }
    assert end.data["usage"]["total_tokens"] == 248


def test_a_call_at_the_limit_is_not_run_and_the_run_ends_without_an_answer() -> None:
    model = ScriptedModel(
        [reply(None, call("add", {"a": 1, "b": 1})), reply(None, call("add", {"a": 2, "b": 2}))]
    )
    result = Loop(model, [add], max_steps=1, answer_at_limit=True).run_sync("Add.")
    assert (result.status, result.forced_by) == ("max_steps_exceeded", "max_steps")  # it was asked for
    assert [s.decision for s in result.steps] == ["tool_calls", "blank"]
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool"]


runner = CliRunner()


def test_cli_budget_exit_code_and_end_line(tmp_path: Path) -> None:
    with ChatServer(adding(3)) as server:
        result = runner.invoke(
            app,
            ["run", "Add.", "--model", "m", "--base-url", server.base_url, "--max-tool-calls", "0", "--no-builtin",
             "--tools", "tests.test_budget:add"],
        )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert (
        "budget_exceeded" in result.output and "tool_calls: the model asked for 1 tool calls" in result.output
    )
    assert "1 steps · 1 model calls · 0 tool calls · 120 tokens" in result.output


def test_cli_output_schema_and_answer_at_limit(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "broken.json").write_text("{")
    script = [*adding(1), reply('{"sum": 2}')]
    with ChatServer(script) as server:
        args = ["run", "Add.", "--model", "m", "--base-url", server.base_url, "--no-builtin", "--json"]
        args += ["--tools", "tests.test_budget:add", "--max-steps", "1", "--answer-at-limit"]
        result = runner.invoke(app, [*args, "--output-schema", str(tmp_path / "schema.json")])
    doc = json.loads(result.output)
    assert (result.exit_code, doc["status"], doc["forced_by"], doc["output_value"]) == (
        1,
        "max_steps_exceeded",
        "max_steps",
        {"sum": 2},
    )
    assert server.requests[1]["response_format"]["json_schema"]["schema"] == schema
    bad = runner.invoke(app, ["run", "x", "--output-schema", str(tmp_path / "broken.json")])
    assert bad.exit_code == 2 and "broken.json: not a JSON file" in bad.output


def test_budget_check_names_the_first_budget_and_the_amount() -> None:
    spent = Spent(Usage(50, 10), model_calls=1, tool_calls=0)
    assert Budget(total_tokens=100).check(spent, next_prompt=40) is None
    over = Budget(total_tokens=100).check(spent, next_prompt=45)
    assert over is not None and (over.name, over.status) == ("total_tokens", "budget_exceeded")
    assert over.reason == (
        "budget exceeded: total_tokens: 60 spent and about 45 more for the next call's prompt "
        "would exceed the limit of 100 by 5"
    )
    both = Budget(model_calls=1, total_tokens=10).check(spent)
    assert both is not None and both.name == "model_calls"  # calls are checked first
    price = Price(prompt=2.0, completion=4.0)
    assert Budget(prices={"m": (2.0, 4.0)}).price_for("m") == price
    assert price.of(Usage(1_000_000, 500_000)) == 4.0


def test_a_forced_answer_that_does_not_validate_is_kept_but_has_no_value() -> None:
    class Total(BaseModel):
        total: int

    model = ScriptedModel([reply(None, call("add", {"a": 1, "b": 1})), '{"total": "two"}'])
    limit_text = "已达到本次运行的上限,不能再调用工具。请根据以上信息直接回答。"
    loop = Loop(
        model,
        [add],
        max_steps=1,
        answer_at_limit=True,
        output=Total,
        controls=Controls(limit_text=limit_text),
    )
    result = loop.run_sync("一加一等于几?")
    assert (result.status, result.forced_by, result.output_value) == ("max_steps_exceeded", "max_steps", None)
    assert result.output == '{"total": "two"}'
    assert result.error is not None and result.error.startswith(
        "no answer within 1 steps; the answer at the limit was not accepted: Your answer is not valid output: total:"
    )
    assert model.requests[1].messages[-1]["content"].startswith(limit_text)
