"""The small-model layers (``minloop.small``) on the generic seam: any model gets them."""

from __future__ import annotations

import json

import pytest

from minloop import Loop, MinloopError, tool
from minloop.models.base import ModelRequest, WhileDecoding
from minloop.models.local import LocalModel
from minloop.small import LAYERS, EvidenceCheck, Grounding, ToolMenu, UserLanguage, small_model_layers
from minloop.small.language import TRANSLATE
from minloop.small.notes import ungrounded_note
from minloop.testing import ScriptedModel, call, reply
from tests.conftest import content, masked


@tool
def get_weather(city: str) -> dict[str, object]:
    """Get the current weather in a city."""
    return {"city": city, "temperature_c": 18, "condition": "sunny"}


@tool
def find_order(order_id: str) -> dict[str, object]:
    """Look up an order by its id."""
    return {"order_id": order_id, "status": "shipped"}


def test_the_layers_come_one_per_concern_and_each_can_be_left_out() -> None:
    names = list(LAYERS)
    assert names == ["menu", "language", "grounding", "evidence"]
    assert [type(layer).__name__ for layer in small_model_layers()] == [
        "ToolMenu", "UserLanguage", "Grounding", "EvidenceCheck",
    ]  # fmt: skip
    kept = small_model_layers(without=("menu", "evidence"))
    assert [type(layer).__name__ for layer in kept] == ["UserLanguage", "Grounding"]
    with pytest.raises(MinloopError, match="no small-model layer is called 'policy': the names are menu"):
        small_model_layers(without=["policy"])


def test_the_embedded_model_brings_the_layers_and_its_plain_twin_none() -> None:
    model = LocalModel()  # nothing is loaded until a call
    assert [type(layer) for layer in model.layers] == [type(layer) for layer in small_model_layers()]
    assert model.plain().layers == ()
    assert LocalModel(layers=[Grounding()]).layers[0].__class__ is Grounding


def test_a_call_on_a_value_nobody_said_is_not_made_and_the_model_answers_briefly() -> None:
    model = ScriptedModel([reply(None, call("get_weather", {"city": "Paris"})), "Which city do you mean?"])
    with model:
        result = Loop(model, [get_weather], layers=small_model_layers()).run_sync("What's the weather like?")
    assert result.messages == [
        {"role": "user", "content": "What's the weather like?"},
        {"role": "assistant", "content": "Which city do you mean?"},
    ]
    asked_again = model.requests[1]
    assert asked_again.tool_choice == "none"
    assert asked_again.messages[-1] == {
        "role": "system",
        "content": ungrounded_note({"get_weather": ["city"]}),
    }
    first = model.requests[0].decoding
    assert first is not None and first.refuse is not None and first.language == "en"
    assert first.refuse("get_weather", {"city": "Paris"}) and not first.refuse(
        "get_weather", {"city": "weather"}
    )


def test_a_value_only_the_note_sending_an_answer_back_quotes_does_not_ground_a_call() -> None:
    from minloop.builtins import calculator

    model = ScriptedModel(
        [
            reply(None, call("get_weather", {"city": "Paris"})),
            "It is sunny and 64 degrees in Paris.",  # 64: nobody said it; sent back, the note quotes it
            reply(None, call("calculator", {"expression": "64"})),  # not made: 64 comes from the note
            "It is sunny and 64 degrees in Paris.",  # asked again without the calculator: no call
            "It is sunny and 18 °C in Paris.",  # told, tools off, that 64 is no value given
        ]
    )
    with model:
        result = Loop(model, [get_weather, calculator], layers=small_model_layers()).run_sync(
            "What's the weather in Paris?"
        )
    weather = content(city="Paris", temperature_c=18, condition="sunny")
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "What's the weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("get_weather", {"city": "Paris"}, id="call_1_1")],
        },
        {"role": "tool", "tool_call_id": "call_1_1", "name": "get_weather", "content": weather},
        {"role": "assistant", "content": "It is sunny and 64 degrees in Paris."},
        {"role": "assistant", "content": "It is sunny and 18 °C in Paris."},
    ]
    assert result.status == "success" and model.requests[2].messages[-1]["content"].startswith(
        "Your answer states 64"
    )


def test_the_watch_on_a_sent_back_answer_does_not_take_the_note_s_quote_as_evidence() -> None:
    model = ScriptedModel(
        [
            reply(None, call("get_weather", {"city": "Paris"})),
            "It is sunny and 64 degrees in Paris.",  # sent back: the note quotes 64
            "It is sunny and 18 °C in Paris.",
        ]
    )
    with model:
        result = Loop(model, [get_weather], layers=small_model_layers()).run_sync(
            "What's the weather in Paris?"
        )
    assert result.output == "It is sunny and 18 °C in Paris."
    again = model.requests[2]
    assert again.messages[-1]["content"].startswith("Your answer states 64")
    assert again.decoding is not None and again.decoding.stop is not None
    assert again.decoding.stop("It is sunny and 64 degrees in Paris. ")  # stopped at once, as the first
    assert not again.decoding.stop("It is sunny and 18 °C in Paris. ")


@pytest.mark.parametrize("forced", ["required", "get_weather"])
def test_a_forced_call_on_a_value_nobody_said_is_not_made_either(forced: str) -> None:
    model = ScriptedModel([reply(None, call("get_weather", {"city": "Paris"})), "Which city do you mean?"])
    with model:
        loop = Loop(model, [get_weather], layers=small_model_layers(), tool_choice=forced)
        result = loop.run_sync("What's the weather like?")
    assert result.status == "success"
    assert result.messages == [
        {"role": "user", "content": "What's the weather like?"},
        {"role": "assistant", "content": "Which city do you mean?"},
    ]
    wire = forced if forced == "required" else {"type": "function", "function": {"name": forced}}
    assert [request.tool_choice for request in model.requests] == [wire, "none"]
    assert model.requests[1].messages[-1] == {
        "role": "system",
        "content": ungrounded_note({"get_weather": ["city"]}),
    }


def test_a_call_on_values_the_user_gave_is_made_and_the_answer_held_to_the_result() -> None:
    model = ScriptedModel(
        [
            reply(None, call("find_order", {"order_id": "A1234"})),
            "Order A1234 shipped on 13 May.",  # "13" is no fact a tool gave
            "Order A1234 has shipped.",
        ]
    )
    with model:
        result = Loop(model, [find_order], layers=small_model_layers()).run_sync("Where is order A1234?")
    assert [s.decision for s in result.steps] == ["tool_calls", "unfinished", "answer"]
    assert result.output == "Order A1234 has shipped."
    assert model.requests[2].messages[-1]["content"].startswith("Your answer states 13")  # sent back


def test_a_chinese_request_answered_in_chinese_is_not_translated() -> None:
    model = ScriptedModel(
        [reply(None, call("find_order", {"order_id": "A1234"})), "订单 A1234 已发货（shipped）。"]
    )
    with model:
        result = Loop(model, [find_order], layers=small_model_layers()).run_sync("订单A1234在哪里？")
    assert result.output == "订单 A1234 已发货（shipped）。"
    decision, answer = model.requests
    assert decision.messages == [{"role": "user", "content": "订单A1234在哪里？"}]
    assert answer.decoding is None or answer.decoding.language is None  # the model answers as it will


def test_a_call_written_as_text_is_not_translated_but_run() -> None:
    """A model behind a server that left its call in the text (llama.cpp's, given a Chinese
    request) is not an English answer: the loop reads the call, and no translation is asked."""
    written = '```json\n{"name": "find_order", "arguments": {"order_id": "A1234"}}\n```'
    model = ScriptedModel([written, "订单 A1234 已发货。"])
    with model:
        result = Loop(model, [find_order], layers=[UserLanguage()]).run_sync("订单A1234在哪里？")
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert result.messages[1]["tool_calls"][0]["function"] == {
        "name": "find_order",
        "arguments": '{"order_id": "A1234"}',
    }
    assert result.output == "订单 A1234 已发货。" and len(model.requests) == 2


def test_a_call_written_as_text_is_checked_like_any_call() -> None:
    """The loop reads a call written as text before the layers see the reply, so grounding
    checks it: behind llama.cpp's server the 1.5B wrote a call on an id nobody gave as text."""
    written = '[find_order(order_id="A9999")]'
    model = ScriptedModel([written, "Which order do you mean?"])
    with model:
        result = Loop(model, [find_order], layers=small_model_layers()).run_sync("Where is my order?")
    assert result.messages == [
        {"role": "user", "content": "Where is my order?"},
        {"role": "assistant", "content": "Which order do you mean?"},
    ]
    assert model.requests[1].tool_choice == "none"
    assert model.requests[1].messages[-1] == {
        "role": "system",
        "content": ungrounded_note({"find_order": ["order_id"]}),
    }


def test_an_answer_in_english_to_a_chinese_request_is_translated_keeping_its_numbers() -> None:
    team = tool(lambda team: {"team": team, "members": ["Maria Lopez", "Omar Haddad"]}, name="team_members",
                description="The members of a team.")  # fmt: skip
    model = ScriptedModel(
        [reply(None, call("team_members", {"team": "sales"})), "There are 2 people.", "销售部有2人。"]
    )
    with model:
        result = Loop(model, [team], layers=[UserLanguage()]).run_sync("销售部有几个人？")
    assert masked(result.messages, result.trace_id)[3:] == [{"role": "assistant", "content": "销售部有2人。"}]
    asked = model.requests[-1]
    assert asked.tools == () and asked.messages == [
        {"role": "system", "content": TRANSLATE["zh"]},
        {"role": "user", "content": "There are 2 people."},
    ]
    assert asked.decoding is not None and asked.decoding.language == "zh"
    lost = ScriptedModel(
        [reply(None, call("team_members", {"team": "sales"})), "There are 2 people.", "销售部有人。"]
    )
    with lost:
        kept = Loop(lost, [team], layers=[UserLanguage()]).run_sync("销售部有几个人？")
    assert kept.output == "There are 2 people."  # the translation lost the number: the answer stands
    english = ScriptedModel(["Hello! How can I help?"])
    with english:
        assert (
            Loop(english, [team], layers=[UserLanguage()]).run_sync("Hi").output == "Hello! How can I help?"
        )
    assert len(english.requests) == 1


def test_a_large_menu_is_narrowed_to_the_tools_that_share_words_with_the_request() -> None:
    many = [get_weather, find_order] + [
        tool(lambda x: x, name=f"tool_{i}", description=f"Convert a thing number {i} into another kind.")
        for i in range(40)
    ]
    model = ScriptedModel(["I would call get_weather."])
    with model:
        Loop(model, many, layers=[ToolMenu()]).run_sync("What is the weather in Paris?")
    assert [spec["function"]["name"] for spec in model.requests[0].tools] == ["get_weather"]


def test_an_answer_check_over_http_is_the_same_layer_as_in_process() -> None:
    check = EvidenceCheck()
    assert check("It is 22 C.", [{"role": "user", "content": "Weather?"}]) is not None  # a callable check
    request = ModelRequest([{"role": "user", "content": "hi"}]).asking(WhileDecoding(stop=lambda t: False))
    both = request.asking(WhileDecoding(stop=lambda t: t.endswith("."), language="zh")).decoding
    assert both is not None and both.stop is not None and both.stop("Done.") and both.language == "zh"
    assert json.dumps(LAYERS["evidence"]().__class__.__name__) == '"EvidenceCheck"'
