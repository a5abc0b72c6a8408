"""The asked-field layer: an answer from results that hold nothing the user asked for."""

from __future__ import annotations

import pytest

from minloop import Loop, tool
from minloop.small import AskedField, small_model_layers
from minloop.small.asked import QUESTION, fields
from minloop.small.results import Outcome
from minloop.testing import ScriptedModel, call, reply


@tool
def get_weather(city: str) -> dict[str, object]:
    """Get the current weather in a city."""
    return {"city": city, "temperature_c": 18, "condition": "sunny"}


@tool
def team_members(team: str) -> dict[str, object]:
    """The members of a team."""
    return {"team": team, "members": ["Ana", "Ben"]}


SCHEMA = {
    "type": "object",
    "properties": {"field": {"type": "string", "enum": ["city", "temperature_c", "condition", "none"]}},
    "required": ["field"],
}


def weather_run(request: str, answer: str, *picked: str) -> tuple[ScriptedModel, list[dict[str, object]]]:
    model = ScriptedModel([reply(None, call("get_weather", {"city": "Paris"})), answer, *picked])
    with model:
        result = Loop(model, [get_weather], layers=[AskedField()]).run_sync(request)
    return model, result.messages


@pytest.mark.parametrize("picked", ['{"field": "none"}', '{"field": "city"}'])
def test_an_answer_from_a_result_without_what_was_asked_is_replaced(picked: str) -> None:
    model, messages = weather_run("What is the humidity in Paris?", "The humidity in Paris is 18%.", picked)
    statement = (
        "I can't answer that reliably from what the tools returned: get_weather gave city Paris, "
        "temperature c 18, condition sunny, not what you asked for."
    )
    assert messages[0] == {"role": "user", "content": "What is the humidity in Paris?"}
    assert messages[-1] == {"role": "assistant", "content": statement}
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    question = model.requests[2]
    assert question.messages[:-1] == model.requests[1].messages  # what the answer was written from
    assert question.messages[-1] == {
        "role": "user",
        "content": QUESTION.format(request="What is the humidity in Paris?"),
    }
    assert (question.tools, question.tool_choice, question.output_schema) == ((), "none", SCHEMA)


@pytest.mark.parametrize("picked", ['{"field": "temperature_c"}', "not json", '{"field": 3}'])
def test_an_answer_from_a_field_that_holds_it_stands(picked: str) -> None:
    _, messages = weather_run("How warm is it in Paris?", "It is 18°C in Paris.", picked)
    assert messages[-1] == {"role": "assistant", "content": "It is 18°C in Paris."}


def test_a_chinese_request_gets_the_statement_in_chinese() -> None:
    _, messages = weather_run("巴黎的湿度是多少？", "巴黎的湿度是18%。", '{"field": "none"}')
    assert messages[-1] == {
        "role": "assistant",
        "content": "我无法根据工具返回的结果可靠地回答这个问题：get_weather 只给出了 city Paris, "
        "temperature c 18, condition sunny，没有你问的内容。",
    }


def test_an_answer_that_declines_or_comes_without_results_is_not_questioned() -> None:
    model, messages = weather_run("What is the humidity in Paris?", "I don't know the humidity.")
    assert messages[-1]["content"] == "I don't know the humidity." and len(model.requests) == 2
    model = ScriptedModel(["Hello! How can I help?"])
    with model:
        result = Loop(model, [get_weather], layers=[AskedField()]).run_sync("Hi")
    assert result.output == "Hello! How can I help?" and len(model.requests) == 1


def test_a_list_counts_as_a_field_and_what_the_call_gave_back_does_not() -> None:
    served = Outcome(
        "team_members", {"team": "sales"}, {"team": "sales", "members": ["Ana", "Ben"]}, "served"
    )
    assert fields([served]) == (["team", "members"], {"team"})
    looked_up = Outcome("get_weather", {"where": "Paris"}, {"city": "Paris", "temperature_c": 18}, "served")
    assert fields([looked_up]) == (["city", "temperature_c"], {"city"})


def test_the_layer_is_added_by_hand_after_the_small_model_layers() -> None:
    assert all(type(layer) is not AskedField for layer in small_model_layers())
    model = ScriptedModel(
        [reply(None, call("get_weather", {"city": "Paris"})), "It is 18% humid.", '{"field": "none"}']
    )
    with model:
        loop = Loop(model, [get_weather], layers=[*small_model_layers(), AskedField()])
        result = loop.run_sync("What is the humidity in Paris?")
    assert result.output is not None and result.output.startswith("I can't answer that reliably")
    assert len(model.requests) == 3
