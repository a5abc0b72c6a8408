"""Decisions decoded as compact JSON under a grammar (llguidance's or llama.cpp's own), and the
fall-back when the runtime does not apply one."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from minloop import ModelRequest
from minloop.models.local import LocalModel, grammar
from minloop.models.local.grammar import (
    GUIDANCE,
    Compaction,
    Unguided,
    guided,
    guided_gbnf,
    guided_llguidance,
)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}
ASKED = [{"role": "user", "content": "What is the weather in Paris? Use celsius (unit c)."}]
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "c"}'},
        }
    ],
}


def test_the_guard_trips_on_whitespace_between_tokens_only() -> None:
    inside = Unguided()
    assert not any(inside(p) for p in ['{"answer":"', "it is 3 pm ", 'in \\"Tokyo\\"', '"}'])
    assert not inside.tripped
    spaced = Unguided()
    assert [spaced(p) for p in ['{"name":', ' "f"']] == [False, True] and spaced.tripped
    assert Unguided()("Hello! How can I help?")  # no grammar at all: plain text


def test_the_grammar_is_the_schema_with_compact_separators() -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string", "description": "东京"}}}
    text = guided_llguidance(schema)
    assert text.startswith(GUIDANCE)
    options = json.loads(text[len(GUIDANCE) :]).pop("x-guidance")
    assert json.loads(text[len(GUIDANCE) :]) == {**schema, "x-guidance": options}
    assert options == {
        "whitespace_flexible": False,
        "item_separator": ",",
        "key_separator": ":",
        "lenient": True,
    }
    assert "东京" in text  # written as is, not escaped


def test_compact_decisions_start_after_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grammar, "guidance", lambda: True)
    compaction, body = Compaction(), {"messages": ASKED, "json_schema": {"type": "object"}}
    assert compaction.wire(body, after=2) == body
    for _ in range(2):
        compaction.decided(body, None)
    wired = compaction.wire(body, after=2)
    assert wired == {"messages": ASKED, "grammar": guided({"type": "object"})}
    assert compaction.wire({**body, "tools": [WEATHER]}, after=2) == {**body, "tools": [WEATHER]}
    result = {"role": "tool", "tool_call_id": "call_1_1", "content": '{"city": "Paris", "c": 21}'}
    after_result = {**body, "messages": [*ASKED, CALL, result]}  # a reply may copy the result
    assert compaction.wire(after_result, after=2) == after_result
    answer_only = {**body, "json_schema": {"type": "object", "properties": {"answer": {"type": "string"}}}}
    assert compaction.wire(answer_only, after=2) == answer_only  # tools off: as before
    compaction.decided(wired, None)
    assert compaction.decisions == 3 and compaction.wire({"messages": ASKED}, after=0) == {"messages": ASKED}
    monkeypatch.setattr(grammar, "guidance", lambda: False)  # llama.cpp's own engine: no start-up cost
    monkeypatch.setattr(grammar, "guided_gbnf", lambda schema: 'root ::= "{}"')
    assert Compaction().wire(body, after=4) == {"messages": ASKED, "grammar": 'root ::= "{}"'}
    monkeypatch.setattr(grammar, "guided_gbnf", lambda schema: None)  # cannot be converted
    assert Compaction().wire(body, after=0) == body


# What llama.cpp's converter writes for a call to get_weather (the runtime built without llguidance).
GBNF = r"""arguments ::= "{" space arguments-city-kv "}" space
arguments-city-kv ::= "\"city\"" space ":" space string
char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})
root ::= "{" space name-kv "," space arguments-kv "}" space
space ::= | " " | "\n"{1,2} [ \t]{0,20}
string ::= "\"" char* "\"" space
"""


def test_llama_cpp_grammar_keeps_the_schema_and_leaves_no_whitespace(monkeypatch: pytest.MonkeyPatch) -> None:
    import xllamacpp

    monkeypatch.setattr(xllamacpp, "json_schema_to_grammar", lambda schema: GBNF)
    lines = GBNF.splitlines()
    assert guided_gbnf({"type": "object"}) == "\n".join([*lines[:4], 'space ::= ""', lines[5]]) + "\n"
    monkeypatch.setattr(xllamacpp, "json_schema_to_grammar", lambda schema: GUIDANCE + "{}")
    assert guided_gbnf({"type": "object"}) is None  # llguidance's: no whitespace rule to empty

    def unconvertible(schema: Any) -> str:
        raise ValueError("Unrecognized schema")

    monkeypatch.setattr(xllamacpp, "json_schema_to_grammar", unconvertible)
    assert guided_gbnf({"type": "object"}) is None


STOCK = {
    "type": "function",
    "function": {
        "name": "stock_price",
        "description": "The price of a company's shares.",
        "parameters": {
            "type": "object",
            "properties": {"ticker": {"type": "string"}},
            "required": ["ticker"],
        },
    },
}


def decide(model: LocalModel) -> Any:
    """One decision on the weather tool and the quote's, compact when the menu has more than
    ``COMPACT_ABOVE`` tools (set to 1 here)."""
    return asyncio.run(model.call(ModelRequest(ASKED, [WEATHER, STOCK])))


@pytest.fixture
def compact_above_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import minloop.models.local as local

    monkeypatch.setattr(local, "COMPACT_ABOVE", 1)


@pytest.mark.local_model
def test_a_compact_decision_is_the_same_call_in_fewer_tokens(
    local: LocalModel, compact_above_one: None
) -> None:
    spaced = decide(LocalModel(compact_json=None))
    compact = decide(LocalModel(compact_json=0))
    assert spaced.message == compact.message == CALL
    assert compact.usage.completion_tokens < spaced.usage.completion_tokens


@pytest.mark.local_model
def test_a_grammar_the_runtime_ignores_is_decoded_again_under_the_schema(
    local: LocalModel, monkeypatch: pytest.MonkeyPatch, compact_above_one: None
) -> None:
    # llguidance cannot compile it and says nothing; llama.cpp's own engine refuses it (an error)
    broken = GUIDANCE + "{not json"
    monkeypatch.setattr(grammar, "guided", lambda schema: broken)
    model = LocalModel(compact_json=0)
    assert decide(model).message == CALL
    body = model.body(ModelRequest(ASKED, [WEATHER]))
    assert "json_schema" in model.wire(body, compact=True) and "grammar" not in model.wire(body, compact=True)
    assert broken in model._compaction().unapplied
