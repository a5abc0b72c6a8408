"""Budgets when the model reports no usage, budgets and prices given the wrong way, and a reply
with text and a call at the limit."""

from __future__ import annotations

from typing import Any

import pytest

from minloop import Budget, Loop, MinloopError, ModelRequest, ModelResponse, Price, Usage, tool
from minloop.models.openai import OpenAIModel
from minloop.testing import ChatServer, FunctionModel, ScriptedModel, call, completion, reply

PAGE = "天气晴,气温二十度。" * 150 + "sunny, twenty degrees " * 100  # about 1,200 tokens a result


@tool
def look(query: str) -> str:
    """Look a query up."""
    return PAGE


def looking(request: ModelRequest) -> ModelResponse:  # reports no usage at all
    return ModelResponse(reply(None, call("look", {"query": f"q{len(request.messages)}"})))


NOTE = "(an estimate: the model reported no token usage for {n} of {n} calls, so the loop counted what was sent and received)"


def test_a_token_budget_holds_when_the_model_reports_no_usage() -> None:
    model = FunctionModel(looking)
    result = Loop(model, [look], budget=Budget(prompt_tokens=3000), max_steps=10).run_sync("查天气")
    assert (result.status, result.model_calls) == ("budget_exceeded", 2)
    assert result.error is not None
    assert result.error.startswith("budget exceeded: prompt_tokens: ")
    assert result.error.endswith(NOTE.format(n=2))
    spent = int(result.error.split("prompt_tokens: ")[1].split(" ")[0])
    assert 1200 < spent < 3000


def test_a_token_budget_holds_over_http_without_usage() -> None:
    def no_usage(i: int) -> dict[str, Any]:
        body = completion(reply(None, call("look", {"query": f"q{i}"}, id=f"c{i}")))
        del body["usage"]
        return body

    with ChatServer([no_usage(i) for i in range(6)]) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key="sk-test", backoff=0.01)
        result = Loop(model, [look], budget=Budget(total_tokens=3000), max_steps=10).run_sync("Look it up.")
    assert (result.status, len(server.requests)) == ("budget_exceeded", 2)
    assert result.error is not None and result.error.endswith(NOTE.format(n=2))


def test_reported_usage_is_not_called_an_estimate() -> None:
    def counted(request: ModelRequest) -> ModelResponse:
        return ModelResponse(reply(None, call("look", {"query": "q"})), Usage(1000, 10))

    result = Loop(FunctionModel(counted), [look], budget=Budget(prompt_tokens=1500)).run_sync("q")
    assert result.status == "budget_exceeded" and "estimate" not in (result.error or "")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Price(-1, 2), "Price(prompt=-1): a price cannot be negative"),
        (lambda: Budget(cost=1, prices={"m": (1.0, -2.0)}), "Price(completion=-2.0): a price cannot be negative"),
        (lambda: Price("0.1", 2), "Price(prompt='0.1'): a price is a number per million tokens, e.g. Price(prompt=0.15, completion=0.6)"),
        (lambda: Budget(prompt_tokens="1000"), "Budget(prompt_tokens='1000'): a budget is a whole number or None, got str"),
        (lambda: Budget(cost="0.5"), "Budget(cost='0.5'): a budget is a number or None, got str"),
        (lambda: Budget(model_calls=2.5), "Budget(model_calls=2.5): a count budget is a whole number (int)"),
        (lambda: Budget(prices={"m": 0.5}), "Budget(prices={'m': 0.5}): a price is Price(prompt, completion) or a (prompt, completion) pair per million tokens"),
        (lambda: Budget(prices=[("m", 1.0, 2.0)]), "Budget(prices=...) maps a model name to a Price, got list"),
        (
            lambda: Loop(ScriptedModel([]), [look], budget={"total_tokens": 1000}),
            "budget= takes a Budget, got dict: write budget=Budget(total_tokens=1000), for example",
        ),
    ],
)  # fmt: skip
def test_budgets_and_prices_given_the_wrong_way_say_what_is_expected(make: Any, message: str) -> None:
    with pytest.raises(MinloopError) as caught:
        make()
    assert str(caught.value) == message


def test_text_beside_a_call_at_the_limit_is_the_answer_at_the_limit() -> None:
    model = ScriptedModel(
        [
            reply(None, call("look", {"query": "北京"})),
            reply("北京今天晴,二十度。", call("look", {"query": "上海"})),
        ]
    )
    result = Loop(model, [look], max_steps=1, answer_at_limit=True).run_sync("北京天气?")
    assert (result.status, result.forced_by, result.output) == (
        "max_steps_exceeded",
        "max_steps",
        "北京今天晴,二十度。",
    )
    assert [s.decision for s in result.steps] == ["tool_calls", "answer"]
    assert result.tool_calls == 1  # the call at the limit was not run
    assert result.messages[-1] == {"role": "assistant", "content": "北京今天晴,二十度。"}
