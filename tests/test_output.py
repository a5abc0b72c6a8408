"""Typed final output: over HTTP with ``response_format``, in the prompt, and the schema helpers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from minloop import Controls, Loop, MinloopError, tool
from minloop.decision import DECAY_TEXT, Replacement, combine_checks
from minloop.layers.output import OutputSpec, response_format
from minloop.models.local.decoding import (
    ANSWER,
    answer_schema,
    bounded,
    decision_schema,
    parse_decision,
)
from minloop.models.openai import OpenAIModel
from minloop.schemas import closed, distributed, problems
from minloop.testing import ChatServer, ScriptedModel, call, reply

from .conftest import content, masked


class City(BaseModel):
    name: str
    population: int


CITY_SCHEMA = City.model_json_schema()
CITY_FORMAT = {"type": "json_schema", "json_schema": {"name": "City", "schema": CITY_SCHEMA, "strict": False}}
MISSING = (
    "Your answer is not valid output: population: Field required. Reply with only one JSON object "
    "that matches the required schema."
)
GOOD = '{"name": "Paris", "population": 2102650}'


@tool
def lookup(city: str) -> dict[str, object]:
    """Look up a city's population."""
    return {"city": city, "population": 2102650}


def model_for(server: ChatServer, **kwargs: Any) -> OpenAIModel:
    return OpenAIModel("loopback-model", base_url=server.base_url, api_key="sk-test", backoff=0.01, **kwargs)


def test_valid_at_once_sends_response_format_and_returns_the_object() -> None:
    script = [reply(None, call("lookup", {"city": "Paris"}, id="c1")), reply(GOOD)]
    with ChatServer(script) as server:
        result = Loop(model_for(server), [lookup], output=City).run_sync("Population of Paris?")
    assert result.status == "success"
    assert result.output_value == City(name="Paris", population=2102650)
    assert result.to_dict()["output_value"] == {"name": "Paris", "population": 2102650}
    assert [r["response_format"] for r in server.requests] == [CITY_FORMAT, CITY_FORMAT]
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "Population of Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "lookup",
            "content": content(city="Paris", population=2102650),
        },
        {"role": "assistant", "content": GOOD},
    ]


def test_invalid_then_fixed_sends_the_errors_back_as_a_control_message() -> None:
    with ChatServer([reply('{"name": "Paris"}'), reply(GOOD)]) as server:
        result = Loop(model_for(server), output=City).run_sync("Biggest city in France?")
    assert (result.status, result.output_value) == ("success", City(name="Paris", population=2102650))
    assert [(s.decision, s.valid) for s in result.steps] == [("unfinished", False), ("answer", True)]
    assert server.requests[1]["messages"] == [
        {"role": "user", "content": "Biggest city in France?"},
        {"role": "assistant", "content": '{"name": "Paris"}'},
        {"role": "system", "content": MISSING},
    ]
    assert result.messages == [
        {"role": "user", "content": "Biggest city in France?"},
        {"role": "assistant", "content": '{"name": "Paris"}'},
        {"role": "assistant", "content": GOOD},
    ]


def test_never_valid_ends_with_output_invalid_after_decay() -> None:
    bad = [reply("Paris, about two million."), reply('{"name": "Paris"}'), reply('{"name": "Paris"}')]
    with ChatServer(bad) as server:
        result = Loop(model_for(server), [lookup], max_steps=10, output=City).run_sync("Paris?")
    assert result.status == "output_invalid" and result.output_value is None
    assert result.error is not None and "population: Field required" in result.error
    assert len(server.requests) == 3 and server.overrun == 0  # not ten: decay, then the end
    assert [r.get("tool_choice") for r in server.requests] == ["auto", "auto", None]  # tools off: none sent
    assert server.requests[2]["messages"][-1] == {"role": "system", "content": f"{MISSING}\n\n{DECAY_TEXT}"}
    assert server.requests[1]["messages"][-1]["content"].startswith(
        "Your answer is not valid output: the answer is not JSON"
    )


def test_an_endpoint_without_structured_output_reads_the_schema_in_the_prompt() -> None:
    with ChatServer([reply("```json\n" + GOOD + "\n```")]) as server:
        result = Loop(model_for(server, structured_output=False), output=City).run_sync("Paris?")
    assert result.status == "success" and result.output_value == City(name="Paris", population=2102650)
    assert "response_format" not in server.requests[0]
    assert server.requests[0]["messages"] == [
        {"role": "user", "content": "Paris?"},
        {"role": "system", "content": OutputSpec.of(City).instruction},
    ]
    assert json.dumps(CITY_SCHEMA) in OutputSpec.of(City).instruction


def test_a_scalar_type_is_wrapped_as_an_object_and_unwrapped() -> None:
    spec = OutputSpec.of(list[int])
    assert spec.schema["type"] == "object" and spec.schema["required"] == ["result"]
    with ChatServer([reply('{"result": [2, 3, 5]}')]) as server:
        result = Loop(model_for(server), output=list[int]).run_sync("First three primes?")
    assert result.output_value == [2, 3, 5]
    assert server.requests[0]["response_format"]["json_schema"]["schema"] == spec.schema


def test_a_json_schema_dict_validates_with_jsonschema_and_works_in_chinese() -> None:
    schema = {
        "type": "object",
        "properties": {"城市": {"type": "string"}, "人口": {"type": "integer", "minimum": 0}},
        "required": ["城市", "人口"],
        "additionalProperties": False,
    }
    model = ScriptedModel(['{"城市": "北京", "人口": -1}', '{"城市": "北京", "人口": 21893095}'])
    result = Loop(model, output=schema).run_sync("北京有多少人?")
    assert result.status == "success" and result.output_value == {"城市": "北京", "人口": 21893095}
    assert result.steps[1].control is not None
    assert result.steps[1].control.startswith(
        "Your answer is not valid output: 人口: -1 is less than the minimum of 0"
    )
    assert response_format(schema)["json_schema"]["strict"] is True
    with pytest.raises(MinloopError, match="must describe an object"):
        Loop(model, output={"type": "string"})
    with pytest.raises(MinloopError, match="not valid"):
        Loop(model, output={"type": "object", "properties": {"a": {"type": 5}}})


def test_the_output_check_runs_before_the_callers_own_check() -> None:
    seen: list[str] = []

    def short(text: str, messages: object) -> str | None:
        seen.append(text)
        return "Shorter, please." if len(text) > 45 else None

    model = ScriptedModel(["not json", '{"name": "Paris", "population": 2102650, "x": 1}', GOOD])
    result = Loop(model, output=City, controls=Controls(answer_check=short)).run_sync("?")
    assert result.status == "success"
    assert seen == ['{"name": "Paris", "population": 2102650, "x": 1}', GOOD]  # "not json" never reached it
    assert [s.control for s in result.steps][1].startswith("Your answer is not valid output")
    assert combine_checks(None, None) is None and combine_checks(short) is short


def test_a_check_that_replaces_a_typed_answer_ends_the_run_as_output_invalid() -> None:
    def unsure(text: str, messages: object) -> Replacement:
        return Replacement("I can't answer that reliably.")

    model = ScriptedModel([reply(None, call("lookup", {"city": "Paris"}, id="c1")), GOOD])
    result = Loop(model, [lookup], output=City, controls=Controls(answer_check=unsure)).run_sync("Paris?")
    assert (result.status, result.output_value) == ("output_invalid", None)
    assert (
        result.error == "the answer check ended the run with no valid output: I can't answer that reliably."
    )
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "lookup",
            "content": content(city="Paris", population=2102650),
        },
        {"role": "assistant", "content": "I can't answer that reliably."},
    ]
    plain = Loop(ScriptedModel([GOOD]), controls=Controls(answer_check=unsure)).run_sync("Paris?")
    assert (plain.status, plain.final_message) == (
        "success",
        {"role": "assistant", "content": "I can't answer that reliably."},
    )


def test_local_decoding_puts_the_output_schema_under_answer() -> None:
    class Reading(BaseModel):
        city: City
        note: str

    schema = OutputSpec.of(Reading).schema
    answer = answer_schema(schema)
    assert answer_schema(None) == ANSWER
    assert answer["properties"]["answer"]["properties"]["city"] == {"$ref": "#/$defs/City"}
    city = {**schema["$defs"]["City"], "additionalProperties": False}  # decoded with no other keys
    assert answer["$defs"] == {"City": city} and "$defs" not in answer["properties"]["answer"]
    tools = [lookup.spec()]
    both = decision_schema(tools, "auto", answer=answer)
    assert (
        both["$defs"] == answer["$defs"] and both["anyOf"][-1]["properties"]["answer"]["title"] == "Reading"
    )
    assert decision_schema(tools, "none", answer=answer) == answer
    assert "$defs" not in decision_schema(tools, "required", answer=answer)
    text = json.dumps({"answer": {"city": {"name": "Paris", "population": 1}, "note": "ok"}})
    parsed = parse_decision(text)
    assert parsed == {
        "role": "assistant",
        "content": '{"city": {"name": "Paris", "population": 1}, "note": "ok"}',
    }
    assert OutputSpec.of(Reading).parse(parsed["content"]) == Reading(
        city=City(name="Paris", population=1), note="ok"
    )


def test_the_embedded_model_constrains_its_answer_to_the_output_schema() -> None:
    from minloop import ModelRequest
    from minloop.models.local import LocalModel

    local = LocalModel()  # body() builds the request only; nothing is loaded
    schema = OutputSpec.of(City).schema
    asked = [{"role": "user", "content": "Paris?"}]
    assert local.body(ModelRequest(asked, (), "auto", schema))["json_schema"] == answer_schema(schema)
    with_tools = local.body(ModelRequest(asked, [lookup.spec()], "auto", schema))["json_schema"]
    assert with_tools["anyOf"][-1] == answer_schema(schema)
    assert "json_schema" not in local.body(ModelRequest(asked))
    assert getattr(local, "structured_output", False) is True


def test_a_list_of_choices_is_decoded_with_at_most_as_many_items_as_choices() -> None:
    amenities = {"type": "array", "items": {"type": "string", "enum": ["Breakfast", "Parking", "Wi-Fi"]}}
    params = {
        "type": "object",
        "properties": {
            "amenities": amenities,
            "flags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 1},
            "rooms": {"type": "array", "items": {"type": "object", "properties": {"kind": amenities}}},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["amenities"],
        "$defs": {"Stay": {"anyOf": [amenities, {"type": "null"}]}},
    }
    limited = {**amenities, "maxItems": 3}
    room = {"type": "object", "properties": {"kind": limited}, "additionalProperties": False}
    assert bounded(params) == {
        **params,
        "properties": {
            "amenities": limited,
            "flags": params["properties"]["flags"],  # already fewer than the two booleans
            "rooms": {"type": "array", "items": room},  # an object names its keys: no others
            "tags": params["properties"]["tags"],  # free text: no bound
        },
        "$defs": {"Stay": {"anyOf": [limited, {"type": "null"}]}},
        "additionalProperties": False,
    }
    tools = [{"type": "function", "function": {"name": "find_hotels", "parameters": params}}]
    arguments = decision_schema(tools, "required")["properties"]["arguments"]
    assert arguments == bounded(params)
    free = {"type": "object", "properties": {"kind": {"type": "string"}}, "additionalProperties": True}
    assert bounded(free) == free and bounded({"type": "object"}) == {"type": "object"}
    referred = {"allOf": [{"$ref": "#/$defs/A"}, {"properties": {"b": {"type": "string"}}}]}
    assert bounded(referred) == referred  # parts of one object: closing each would leave none
    assert params["properties"]["amenities"] == amenities  # the tool's own schema is not changed


def test_a_part_of_an_any_of_takes_the_properties_its_parent_gives_beside_it() -> None:
    params = {
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "required": ["kind"],
        "anyOf": [
            {"properties": {"id": {"type": "integer"}}, "required": ["id"]},
            {"properties": {"名称": {"type": "string"}}, "required": ["名称"]},
        ],
        "$defs": {"Unused": {"type": "string"}},
    }
    tools = [{"type": "function", "function": {"name": "find", "parameters": params}}]
    arguments = decision_schema(tools, "required")["properties"]["arguments"]
    kind = {"kind": {"type": "string"}}
    assert arguments == {
        "anyOf": [
            {"type": "object", "properties": {**kind, "id": {"type": "integer"}}, "required": ["kind", "id"],
             "additionalProperties": False},
            {"type": "object", "properties": {**kind, "名称": {"type": "string"}}, "required": ["kind", "名称"],
             "additionalProperties": False},
        ],
        "$defs": {"Unused": {"type": "string"}},
    }  # fmt: skip
    for value, fits in [
        ({"kind": "a", "id": 3}, True),
        ({"kind": "a", "名称": "书"}, True),
        ({"id": 3}, False),
    ]:
        assert (problems(arguments, value, "arguments") == []) is fits
        assert (problems(params, value, "arguments") == []) is fits  # the same values as the tool's
    only_parts = {"type": "object", "oneOf": [{"properties": {"id": {"type": "integer"}}}]}
    assert bounded(only_parts) == {
        "oneOf": [
            {"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": False}
        ]
    }


def test_an_all_of_of_plain_parts_is_decoded_as_one_closed_object() -> None:
    text, number = {"type": "string"}, {"type": "integer"}
    params = {
        "type": "object",
        "properties": {"kind": text},
        "required": ["kind"],
        "allOf": [
            {"properties": {"id": number}, "required": ["id"]},
            {"type": "object", "properties": {"名称": text}, "description": "optional"},
        ],
    }
    tools = [{"type": "function", "function": {"name": "find", "parameters": params}}]
    arguments = decision_schema(tools, "required")["properties"]["arguments"]
    assert arguments == {
        "type": "object",
        "properties": {"kind": text, "id": number, "名称": text},
        "required": ["kind", "id"],
        "additionalProperties": False,
    }
    for value, fits in [
        ({"kind": "a", "id": 3}, True),
        ({"kind": "a", "id": 3, "名称": "书"}, True),
        ({"id": 3}, False),
        ({"kind": "a", "id": 3, "other": 1}, False),
    ]:
        assert (problems(arguments, value, "arguments") == []) is fits
        assert (problems(closed(params), value, "arguments") == []) is fits  # as the tool checks them
    # left as they are: a part that is more than properties, two parts defining one property
    # differently, a parent closed on its own properties
    for kept in (
        {"allOf": [{"properties": {"id": number}, "minProperties": 1}]},
        {"allOf": [{"properties": {"id": number}}, {"properties": {"id": text}}]},
        {
            "properties": {"kind": text},
            "additionalProperties": False,
            "allOf": [{"properties": {"id": number}}],
        },
    ):
        assert distributed(kept) == kept


def test_a_schema_reference_that_points_nowhere_is_refused_when_the_loop_is_built() -> None:
    model = ScriptedModel([])  # no call is made: the schema is refused first
    properties = {"城市": {"$ref": "#/$defs/City"}, "other": {"items": {"$ref": "#/$defs/Missing"}}}
    broken = {"type": "object", "$defs": {"City": {"type": "string"}}, "properties": properties}
    with pytest.raises(MinloopError) as caught:
        Loop(model, output=broken)
    assert (
        str(caught.value)
        == "the output JSON schema is not valid: $ref '#/$defs/Missing' points to nothing in the schema"
    )
    good = {**broken, "properties": {"城市": {"$ref": "#/$defs/City"}, "self": {"$ref": "#"}}}
    assert OutputSpec.of(good).parse('{"城市": "北京"}') == {"城市": "北京"}


@pytest.mark.parametrize("tag", ["json", "JSON", "Json", ""])
def test_a_fenced_answer_is_accepted_whatever_the_case_of_its_language_tag(tag: str) -> None:
    model = ScriptedModel([f"```{tag}\n{GOOD}\n```"])
    result = Loop(model, output=City).run_sync("Paris?")
    assert (result.status, result.output_value) == ("success", City(name="Paris", population=2102650))
