"""Tool calls written as text: every shape small models write is a call, and JSON or code that
is not a call stays an answer."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop, TextDelta, tool
from minloop.decision import COPIED_RESULT, DECAY_TEXT, ECHOED, UNRUN_CALLS, Answer, Blank, CallTools, decide
from minloop.models.base import ModelRequest
from minloop.models.openai import OpenAIModel, request_body
from minloop.testing import ChatServer, FunctionModel, ScriptedModel
from minloop.textcalls import may_become_call, read_calls, written_call

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


RUN_ON = (  # a small model that ran on after its call: calls run together, the last one cut off
    '{"name": "add", "arguments": {"a": 1234, "b": 5678}}\n{"name": "add", "arguments": {"a": 10, "b": 5}}\n'
    '{"name": "ad'
)
CUT_OFF = '```json\n{"name": "add", "arguments": {"a": 12'


@pytest.mark.parametrize("text", [RUN_ON, CUT_OFF, SHAPES["bare"] + "\n" + SHAPES["bare"]])
def test_calls_run_together_or_cut_off_are_written_calls_but_not_read(text: str) -> None:
    assert read_calls(text, TOOLS) is None and written_call(text, TOOLS)
    assert decide({"role": "assistant", "content": text}, 2, tools=TOOLS) == Blank(
        {"role": "assistant", "content": text}, UNRUN_CALLS
    )


@pytest.mark.parametrize("text", cases.NOT_CALLS)
def test_json_or_code_that_is_not_a_call_is_not_written_as_one(text: str) -> None:
    assert not written_call(text, TOOLS)


def test_with_tools_off_a_written_call_is_not_run_and_not_the_answer() -> None:
    decision = decide({"role": "assistant", "content": SHAPES["bare"]}, 3, tools=TOOLS, tools_off=True)
    assert decision == Blank({"role": "assistant", "content": SHAPES["bare"]}, UNRUN_CALLS)


def _ran_on_script() -> list[Any]:
    return [
        {"role": "assistant", "content": SHAPES["bare"]},
        {"role": "assistant", "content": RUN_ON},
        {"role": "assistant", "content": "1234 + 5678 = 6912"},
    ]


def test_a_reply_that_runs_on_writing_calls_is_dropped_and_tools_go_off() -> None:
    with ChatServer(_ran_on_script()) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key="none")
        result = Loop(model, tools=[add]).run_sync("What is 1234 + 5678?")
    assert result.status == "success" and result.output == "1234 + 5678 = 6912"
    assert [s.decision for s in result.steps] == ["tool_calls", "blank", "answer"]
    assert result.steps[1].message == {"role": "assistant", "content": RUN_ON}  # kept in the trace
    assert _plain(result.messages) == _expected(None)  # not in the transcript: the model would copy it
    # the call after it is made with tools off, and tools off means no tools on the wire
    assert [(r.get("tool_choice"), "tools" in r) for r in server.requests] == [
        ("auto", True),
        ("auto", True),
        (None, False),
    ]
    assert server.requests[2]["messages"][-1] == {"role": "system", "content": DECAY_TEXT}


def test_a_stream_does_not_show_calls_that_are_not_run() -> None:
    async def streamed() -> tuple[Any, str]:
        async with Loop(ScriptedModel(_ran_on_script()), tools=[add]).stream(
            "What is 1234 + 5678?"
        ) as stream:
            shown = [e.text async for e in stream if isinstance(e, TextDelta)]
        return stream.result, "".join(shown)

    result, shown = asyncio.run(streamed())
    assert shown == "1234 + 5678 = 6912"
    assert [s.decision for s in result.steps] == ["tool_calls", "blank", "answer"]


def test_tools_off_can_still_send_the_tools_with_tool_choice_none() -> None:
    request = ModelRequest([{"role": "user", "content": "hi"}], [add_spec()], "none")
    assert "tools" not in request_body("m", request, {})
    kept = request_body("m", request, {}, tools_off="tool_choice")
    assert kept["tool_choice"] == "none" and kept["tools"] == [add_spec()]
    assert OpenAIModel("m", tools_off="tool_choice").payload(request) == {
        **kept,
        "max_completion_tokens": 4096,
    }


def test_with_tools_off_the_calls_and_results_go_as_text_in_the_assistants_turns() -> None:
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}},
        {"id": "c2", "type": "function", "function": {"name": "add", "arguments": '{"a": 3, "b": 4}'}},
    ]
    messages = [
        {"role": "user", "content": "1 + 2 and 3 + 4?"},
        {"role": "assistant", "content": "Adding both.", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c1", "name": "add", "content": '{"result": 3}'},
        {"role": "tool", "tool_call_id": "c2", "name": "add", "content": '{"result": 7}'},
        {"role": "system", "content": "Answer now."},
    ]
    off = ModelRequest(messages, [add_spec()], "none")
    assert request_body("m", off, {})["messages"] == [
        messages[0],
        {
            "role": "assistant",
            "content": 'Adding both.\nadd({"a": 1, "b": 2}) -> {"result": 3}\nadd({"a": 3, "b": 4}) -> {"result": 7}',
        },
        messages[4],
    ]
    assert request_body("m", off, {}, tools_off="omit")["messages"] == messages  # as it is
    on = ModelRequest(messages, [add_spec()], "auto")
    assert request_body("m", on, {})["messages"] == messages


def add_spec() -> dict[str, Any]:
    return tool(add).spec()


TID = "trc_261204101500_a1b2c3"
ADDED = [
    {"role": "user", "content": "What is 1234 + 5678?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1234, "b": 5678}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": f'{{"result": 6912, "trace_id": "{TID}"}}'},
]


@pytest.mark.parametrize(
    ("text", "copied"),
    [
        (f'{{"result": 6912, "trace_id": "{TID}"}}', True),  # the tool's result, copied whole
        (f'```json\n{{"result": 6912.0, "trace_id": "{TID}"}}\n```', True),
        ('{"result": 6912}', False),  # JSON without the run's trace id: a typed answer, say
        ('{"result": 6912, "trace_id": "trc_261204101500_ffffff"}', False),  # not this run's
        (f"The sum is 6912 (trace {TID}).", False),  # words: an answer, if a poor one
    ],
)
def test_a_tool_result_copied_as_the_reply_is_not_an_answer(text: str, copied: bool) -> None:
    decision = decide({"role": "assistant", "content": text}, 2, messages=ADDED, tools=TOOLS)
    if copied:
        assert decision == Blank({"role": "assistant", "content": text}, COPIED_RESULT)
    else:
        assert isinstance(decision, Answer)


def copier(request: ModelRequest) -> Any:
    """Calls add, then copies its result as the reply while tools are on, then answers in words."""
    if len(request.messages) == 1:
        return {"role": "assistant", "content": SHAPES["bare"]}
    if request.tool_choice != "none":
        return request.messages[2]["content"]
    return "1234 + 5678 = 6912"


def test_a_copied_result_turns_tools_off_and_the_model_answers_in_words() -> None:
    result = Loop(FunctionModel(copier), tools=[add]).run_sync("What is 1234 + 5678?")
    assert result.output == "1234 + 5678 = 6912"
    assert [(s.decision, s.tool_choice) for s in result.steps] == [
        ("tool_calls", "auto"),
        ("blank", "auto"),
        ("answer", "none"),
    ]
    assert _plain(result.messages) == _expected(None)


@pytest.mark.parametrize(
    ("text", "messages", "echoed"),
    [
        ("What is 1234 + 5678?", ADDED, True),  # the request given back after its result
        ("  what is 1234 +\n5678? ", ADDED, True),
        ("add", ADDED, True),  # the name of the tool that was called
        ("What is 1234 + 5678?", ADDED[:1], True),  # a question given back, though no tool ran
        ("hello", [{"role": "user", "content": "hello"}], False),  # a greeting may be given back
        ("Add 1 and 2.", [{"role": "user", "content": "Add 1 and 2."}], False),  # no tool ran yet
        ("The sum is 6912.", ADDED, False),
    ],
)
def test_a_question_or_a_called_tools_name_given_back_is_not_an_answer(
    text: str, messages: list[dict[str, Any]], echoed: bool
) -> None:
    decision = decide({"role": "assistant", "content": text}, 2, messages=messages, tools=TOOLS)
    if echoed:
        assert decision == Blank({"role": "assistant", "content": text}, ECHOED)
    else:
        assert isinstance(decision, Answer)


def test_an_echoed_request_turns_tools_off_and_the_model_answers_from_the_result() -> None:
    script = [
        {"role": "assistant", "content": SHAPES["bare"]},
        {"role": "assistant", "content": "What is 1234 + 5678?"},
        {"role": "assistant", "content": "1234 + 5678 = 6912"},
    ]
    with ChatServer(script) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key="none")
        result = Loop(model, tools=[add]).run_sync("What is 1234 + 5678?")
    assert result.output == "1234 + 5678 = 6912"
    assert [(s.decision, s.tool_choice) for s in result.steps] == [
        ("tool_calls", "auto"),
        ("blank", "auto"),
        ("answer", "none"),
    ]
    assert _plain(result.messages) == _expected(None)  # the echo stays in the trace, not the transcript


def test_a_text_naming_no_tool_is_read_at_once_and_an_escaped_name_still_counts() -> None:
    from minloop.textcalls import read_calls

    assert read_calls("The sum is 5; no tool was needed.", {"add"}) is None
    escaped = read_calls('{"name": "\\u0061dd", "arguments": {"a": 1}}', {"add"})
    assert escaped is not None and escaped.calls == ({"name": "add", "arguments": '{"a": 1}'},)
