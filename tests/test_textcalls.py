"""Tool calls written as text: every shape small models write is a call, and JSON or code that
is not a call stays an answer."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop
from minloop.decision import Answer, CallTools, decide
from minloop.testing import ScriptedModel
from minloop.textcalls import may_become_call, read_calls

SET = Path(__file__).resolve().parents[1] / "benchmarks" / "text_calls_set.py"
_spec = importlib.util.spec_from_file_location("text_calls_set", SET)
assert _spec and _spec.loader
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)
TOOLS = cases.TOOLS
ADD = {"name": "add", "arguments": '{"a": 1234, "b": 5678}'}

SHAPES = {
    "bare": '{"name": "add", "arguments": {"a": 1234, "b": 5678}}',
    "fenced json": '```json\n{\n  "name": "add",\n  "arguments": {\n    "a": 1234,\n    "b": 5678\n  }\n}\n```',
    "fenced": '```\n{"name": "add", "arguments": {"a": 1234, "b": 5678}}\n```',
    "tool_call block": '<tool_call>\n{"name": "add", "arguments": {"a": 1234, "b": 5678}}\n</tool_call>',
    "unclosed block": '<tool_call>\n{"name": "add", "arguments": {"a": 1234, "b": 5678}}',
    "function/parameters": '{"function": "add", "parameters": {"a": 1234, "b": 5678}}',
    "tool/tool_input": '{"tool": "add", "tool_input": {"a": 1234, "b": 5678}}',
    "doubled braces": '{{"name": "add", "arguments": {{"a": 1234, "b": 5678}}}}',
    "string arguments": '{"name": "add", "arguments": "{\\"a\\": 1234, \\"b\\": 5678}"}',
    "wire shape": '{"type": "function", "function": {"name": "add", "arguments": {"a": 1234, "b": 5678}}}',
    "list of one": '[{"name": "add", "arguments": {"a": 1234, "b": 5678}}]',
    "calls key": '{"calls": [{"name": "add", "arguments": {"a": 1234, "b": 5678}}]}',
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_shape_of_a_written_call_is_read_as_that_call(shape: str) -> None:
    found = read_calls(SHAPES[shape], TOOLS)
    assert found is not None and found.calls == (ADD,) and found.text == ""


def test_several_calls_and_the_text_around_them() -> None:
    text = (
        '我来查一下。\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "北京"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "now", "arguments": {}}\n</tool_call>'
    )
    found = read_calls(text, TOOLS)
    assert found is not None
    assert found.calls == (
        {"name": "get_weather", "arguments": '{"city": "北京"}'},
        {"name": "now", "arguments": "{}"},
    )
    assert found.text == "我来查一下。"
    lead = read_calls('Let me add them:\n```json\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n```', TOOLS)
    assert lead is not None and lead.text == "Let me add them:" and len(lead.calls) == 1


@pytest.mark.parametrize("text", cases.NOT_CALLS)
def test_json_or_code_that_is_not_a_call_stays_an_answer(text: str) -> None:
    assert read_calls(text, TOOLS) is None
    assert isinstance(decide({"role": "assistant", "content": text}, 1, tools=TOOLS), Answer)


def test_the_false_call_set_is_large_enough() -> None:
    assert len(cases.NOT_CALLS) >= 50 and len(set(cases.NOT_CALLS)) == len(cases.NOT_CALLS)


def test_a_call_needs_registered_tools() -> None:
    assert read_calls(SHAPES["bare"], ()) is None
    assert read_calls(SHAPES["bare"], ("get_weather",)) is None


def test_decide_stores_the_call_with_an_id_and_keeps_the_text() -> None:
    text = 'Checking.\n{"name": "add", "arguments": {"a": 1, "b": 2}}'
    decision = decide({"role": "assistant", "content": text}, 3, tools=TOOLS)
    assert isinstance(decision, CallTools)
    assert decision.message == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "id": "call_s3_1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
            }
        ],
    }


def test_may_become_call_holds_back_only_what_could_be_a_call() -> None:
    assert (
        may_become_call("")
        and may_become_call("  {")
        and may_become_call("```js")
        and may_become_call("<tool")
    )
    assert may_become_call("Let me check:\n") and may_become_call("Let me check:\n{")
    assert not may_become_call("Let me") and not may_become_call("The weather is sunny.\nIt")
    assert not may_become_call("For example:\n{")
    assert not may_become_call("x" * 130)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _script(reply: str) -> list[Any]:
    return [{"role": "assistant", "content": reply}, {"role": "assistant", "content": "1234 + 5678 = 6912"}]


def _expected(content: str | None) -> list[dict[str, Any]]:
    call = {
        "id": "call_s1_1",
        "type": "function",
        "function": {"name": "add", "arguments": '{"a": 1234, "b": 5678}'},
    }
    return [
        {"role": "user", "content": "What is 1234 + 5678?"},
        {"role": "assistant", "content": content, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_s1_1", "content": "6912"},
        {"role": "assistant", "content": "1234 + 5678 = 6912"},
    ]


def _plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        if m["role"] == "tool":
            m = {**m, "content": str(json.loads(m["content"]).get("result", m["content"]))}
        out.append({k: v for k, v in m.items() if k != "name"})
    return out


def test_a_loop_runs_the_written_call_and_a_stream_shows_it_as_a_call() -> None:
    reply = SHAPES["fenced json"]
    result = Loop(ScriptedModel(_script(reply)), tools=[add]).run_sync("What is 1234 + 5678?")
    assert result.status == "success" and result.output == "1234 + 5678 = 6912"
    assert _plain(result.messages) == _expected(None)

    async def streamed() -> tuple[Any, list[Any]]:
        events = []
        async with Loop(ScriptedModel(_script(reply)), tools=[add]).stream("What is 1234 + 5678?") as stream:
            async for event in stream:
                events.append(event)
        return stream.result, events

    import asyncio

    again, events = asyncio.run(streamed())
    assert _plain(again.messages) == _expected(None)
    assert [s.decision for s in again.steps] == [s.decision for s in result.steps]
    texts = "".join(e.text for e in events if type(e).__name__ == "TextDelta")
    assert texts == "1234 + 5678 = 6912"
    started = [e for e in events if type(e).__name__ == "ToolCallStarted"]
    assert [(e.id, e.name) for e in started] == [("call_s1_1", "add")]


def test_with_text_calls_off_the_written_call_is_the_answer() -> None:
    reply = SHAPES["bare"]
    model = ScriptedModel([{"role": "assistant", "content": reply}])
    result = Loop(model, tools=[add], text_calls=False).run_sync("What is 1234 + 5678?")
    assert result.status == "success" and result.output == reply
