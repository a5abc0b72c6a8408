"""Tools from JSON schemas: the same contracts and envelopes as function tools, without MCP."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from minloop import Loop, ToolCall, ToolDefinitionError, tool_from_schema
from minloop.models.scripted import ScriptedModel, call, reply

from .conftest import content, masked

FORECAST = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city"],
}
FORECAST_OUT = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "high": {"type": "number"}},
    "required": ["city", "high"],
}


def forecast(city: str, days: int = 1) -> dict[str, Any]:
    if city == "Drift":
        return {"city": city, "high": "warm"}  # breaks the output schema
    return {"city": city, "high": 21.5 + days}


async def slow(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


def forecast_tool(**options: Any) -> Any:
    return tool_from_schema(
        "forecast", "Weather forecast for a city.", FORECAST, forecast, output_schema=FORECAST_OUT, **options
    )


def test_the_model_sees_the_schema_as_given() -> None:
    t = forecast_tool()
    assert t.spec() == {
        "type": "function",
        "function": {
            "name": "forecast",
            "description": "Weather forecast for a city.",
            "parameters": FORECAST,
        },
    }
    assert (t.is_async, t.timeout, t.needs_approval, t.server) == (False, 30.0, False, None)


def test_valid_calls_run_and_bad_ones_get_the_function_tool_envelopes() -> None:
    model = ScriptedModel(
        [
            reply(
                None,
                call("forecast", {"city": "Oslo", "days": 2}),
                call("forecast", {"city": "Oslo", "country": "NO"}),
                call("forecast", {"days": 9}),
                call("forecast", {"city": "Drift"}),
                call("forecast", "{not json"),
            ),
            "Oslo: 23.5.",
        ]
    )
    result = Loop(model, [forecast_tool()]).run_sync("Forecast for Oslo?")
    assert result.status == "success"
    envelope = lambda problems: content(
        error="arguments do not match the tool's schema",
        code="ERR_TOOL_ARGS_INVALID",
        tool="forecast",
        problems=problems,
        parameters=FORECAST,
    )
    tool_messages = [m["content"] for m in masked(result.messages, result.trace_id) if m["role"] == "tool"]
    assert tool_messages == [
        content(city="Oslo", high=23.5),
        envelope([{"loc": "(root)", "msg": "unknown argument(s) 'country'; expected: city, days"}]),
        envelope(
            [
                {"loc": "(root)", "msg": "'city' is a required property"},
                {"loc": "days", "msg": "9 is greater than the maximum of 7"},
            ]
        ),
        content(
            error="tool returned data that does not match its output schema",
            code="ERR_TOOL_SCHEMA_MISMATCH",
            tool="forecast",
            problems=[{"loc": "high", "msg": "'warm' is not of type 'number'"}],
        ),
        json.dumps(
            {
                "error": "arguments are not valid JSON: Expecting property name enclosed in double quotes: "
                "line 1 column 2 (char 1)",
                "code": "ERR_TOOL_ARGS_INVALID",
                "tool": "forecast",
                "trace_id": "<trace_id>",
            }
        ),
    ]
    assert [s.errors for s in result.steps] == [
        [
            "ERR_TOOL_ARGS_INVALID",
            "ERR_TOOL_ARGS_INVALID",
            "ERR_TOOL_SCHEMA_MISMATCH",
            "ERR_TOOL_ARGS_INVALID",
        ],
        [],
    ]


def test_an_open_schema_accepts_unknown_arguments_and_passes_them_on() -> None:
    seen: list[dict[str, Any]] = []
    t = tool_from_schema(
        "log",
        "Log fields.",
        {"type": "object", "additionalProperties": True},
        lambda **fields: seen.append(fields) or "logged",
    )
    model = ScriptedModel([reply(None, call("log", {"a": 1, "b-c": "x"})), "Logged."])
    assert Loop(model, [t]).run_sync("log it").status == "success"
    assert seen == [{"a": 1, "b-c": "x"}]


def test_a_schema_made_of_parts_takes_their_properties_and_refuses_others() -> None:
    seen: list[dict[str, Any]] = []
    parts = [{"properties": {"item": {"type": "string"}}, "required": ["item"]}]
    parts.append({"properties": {"detail": {"type": "boolean"}}})
    t = tool_from_schema(
        "lookup", "Look up an item.", {"type": "object", "allOf": parts}, lambda **a: seen.append(a) or "open"
    )
    good, other = (
        call("lookup", {"item": "42", "detail": True}),
        call("lookup", {"item": "42", "colour": "red"}),
    )
    result = Loop(ScriptedModel([reply(None, good, other), "Open."]), [t]).run_sync("item 42?")
    assert seen == [{"item": "42", "detail": True}]  # the parts' properties are the tool's
    refused = json.loads(str(result.messages[3]["content"]))
    unknown = {"loc": "(root)", "msg": "unknown argument(s) 'colour'; expected: detail, item"}
    assert (refused["code"], refused["problems"]) == ("ERR_TOOL_ARGS_INVALID", [unknown])


def test_async_callable_timeout_and_approval() -> None:
    wait = tool_from_schema(
        "wait",
        "Wait.",
        {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
        slow,
        timeout=0.1,
    )
    delete = tool_from_schema(
        "delete",
        "Delete a file.",
        {"type": "object", "properties": {"path": {"type": "string"}}},
        lambda path: f"deleted {path}",
        needs_approval=True,
    )
    asked: list[ToolCall] = []
    model = ScriptedModel(
        [reply(None, call("wait", {"seconds": 5}), call("delete", {"path": "a.txt"})), "No."]
    )
    result = Loop(model, [wait, delete], approve=lambda c: asked.append(c) or False).run_sync("go")
    assert wait.is_async and [c.name for c in asked] == ["delete"]
    assert [m["content"] for m in masked(result.messages, result.trace_id) if m["role"] == "tool"] == [
        content(error="tool did not finish within 0.1s", code="ERR_TOOL_TIMEOUT", tool="wait"),
        content(
            error="the user did not approve this call; do not retry it", code="ERR_TOOL_DENIED", tool="delete"
        ),
    ]


def test_a_result_missing_where_a_schema_is_declared_is_a_mismatch() -> None:
    t = tool_from_schema(
        "nothing", "Returns nothing.", {"type": "object"}, lambda: None, output_schema=FORECAST_OUT
    )
    model = ScriptedModel([reply(None, call("nothing")), "Nothing."])
    result = Loop(model, [t]).run_sync("go")
    assert json.loads(result.messages[2]["content"])["problems"] == [
        {"loc": "(root)", "msg": "None is not of type 'object'"}
    ]


def test_bad_definitions_raise_with_the_tool_named() -> None:
    with pytest.raises(
        ToolDefinitionError, match=r"tool 'f' parameters is not a valid JSON schema: 'strin' is not valid"
    ):
        tool_from_schema("f", "", {"type": "object", "properties": {"a": {"type": "strin"}}}, print)
    with pytest.raises(ToolDefinitionError, match="parameters must be a JSON schema of type 'object'"):
        tool_from_schema("f", "", {"type": "array"}, print)
    with pytest.raises(ToolDefinitionError, match="output_schema is not a valid JSON schema"):
        tool_from_schema("f", "", {"type": "object"}, print, output_schema={"type": 3})
    with pytest.raises(ToolDefinitionError, match="must match"):
        tool_from_schema("no spaces", "", {"type": "object"}, print)
    with pytest.raises(ToolDefinitionError, match="timeout must be > 0"):
        tool_from_schema("f", "", {"type": "object"}, print, timeout=0)
    with pytest.raises(ToolDefinitionError, match="fn must be callable"):
        tool_from_schema("f", "", {"type": "object"}, "print")  # type: ignore[arg-type]


def test_the_schema_is_copied_so_later_edits_change_nothing() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    t = tool_from_schema("f", "", schema, lambda a=0: a)
    schema["properties"]["a"]["type"] = "string"
    assert t.parameters() == {"type": "object", "properties": {"a": {"type": "integer"}}}
