"""Bad input that used to get through: each test failed before its fix and names the defect it holds.

1. an error longer than the output cap kept only a truncation marker (no code, no tool);
2. an unknown tool name 40,000 characters long made a 120,000-character tool message;
3. an exception whose ``__str__`` raises ended the whole run;
4. NaN and Infinity reached the model as invalid JSON, and the transcript check accepted them;
5. text in content parts was thrown away as a blank reply;
6. a tool that caught ``NestedModelCallError`` hid the breach and the run succeeded;
7. ``WindowPolicy(max_messages=6)`` needed a token window (now: regression tests only);
8. the documented transcript rules (docs/failures.md) named a rule the code does not raise.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from minloop import (
    Controls,
    Loop,
    MinloopError,
    ModelRequest,
    NestedModelCallError,
    TranscriptError,
    check_transcript,
    messages,
    tool,
)
from minloop.layers.context import ContextPolicy, WindowPolicy
from minloop.models.openai import OpenAIModel
from minloop.testing import ChatServer, FunctionModel, ScriptedModel, call, reply

from .conftest import content, masked
from .test_doctor import rules_raised_by_the_code

USER = {"role": "user", "content": "go"}
README = Path(__file__).resolve().parents[1] / "docs" / "failures.md"  # the transcript rules table


def asked(name: str, call_id: str = "call_1_1", arguments: str = "{}") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def answered(name: str, body: str, call_id: str = "call_1_1") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": body}


# --- 1. an error over the cap keeps its envelope ------------------------------------------------


@tool
def shouts() -> str:
    """Fail with a very long message."""
    raise ValueError("E" * 1_000_000)


def test_1_an_error_longer_than_the_cap_keeps_code_tool_and_trace_id() -> None:
    with ScriptedModel([reply(None, call("shouts")), "It failed."]) as model:
        result = Loop(model, [shouts]).run_sync("go")
    body = result.messages[2]["content"]
    kept = len(re.fullmatch(r'\{"error": "ValueError: (E*) \[\.\.\. \d+ more characters\]".*', body)[1])  # type: ignore[index]
    error = f"ValueError: {'E' * kept} [... {1_000_012 - 12 - kept} more characters]"
    assert masked(result.messages, result.trace_id) == [
        USER,
        asked("shouts"),
        answered("shouts", content(error=error, code="ERR_TOOL_FAILED", tool="shouts")),
        {"role": "assistant", "content": "It failed."},
    ]
    assert 16_000 - 50 < len(body) <= 16_000  # the cap is used, never exceeded
    assert result.steps[0].results[0].error == "ERR_TOOL_FAILED"


def test_1_a_result_over_the_cap_becomes_a_marker_within_the_cap() -> None:
    @tool
    def quotes() -> list[str]:
        """Many short strings: their JSON escapes make the head longer than the text it shows."""
        return ['"q"'] * 2000

    with ScriptedModel([reply(None, call("quotes")), "ok"]) as model:
        result = Loop(model, [quotes], controls=Controls(max_result_chars=500)).run_sync("go")
    body = result.messages[2]["content"]
    full = json.dumps({"result": ['"q"'] * 2000, "trace_id": result.trace_id}, ensure_ascii=False)
    marker = json.loads(body)
    assert list(marker) == ["result_truncated", "original_chars", "head", "trace_id"]
    assert (marker["result_truncated"], marker["original_chars"]) == (True, len(full))
    assert full.startswith(marker["head"]) and len(body) <= 500


# --- 2. every envelope is capped, and an over-long name is an error of its own --------------------


def test_2_a_tool_name_of_40000_characters_is_refused_in_a_short_envelope() -> None:
    name = "x" * 40_000
    shown = "x" * 64 + "..."
    with ScriptedModel([reply(None, call(name)), "Which tool did you mean?"]) as model:
        result = Loop(model, [shouts]).run_sync("go")
    note = (
        f"the tool name is 40000 characters long, but a tool name has at most 64; no tool has this "
        f"name ({shown!r}), turned into a clarification request"
    )
    question = f"I can't use a tool called {shown!r}. Could you rephrase what you need? I can use: shouts."
    assert masked(result.messages, result.trace_id) == [
        USER,
        asked(name),
        answered(
            name,
            content(
                error=note,
                code="ERR_TOOL_UNKNOWN",
                tool=shown,
                available_tools=["shouts"],
                clarification={"question": question, "next": "ask the user this question in your answer"},
            ),
        ),
        {"role": "assistant", "content": "Which tool did you mean?"},
    ]
    assert len(result.messages[2]["content"]) < 1000


def test_2_envelopes_are_capped_like_results() -> None:
    tools = [tool(lambda: 1, name=f"tool_{i:03}_{'t' * 40}", description="A tool.") for i in range(300)]
    with ScriptedModel([reply(None, call("nope")), "ok"]) as model:
        result = Loop(model, tools, controls=Controls(max_result_chars=2000)).run_sync("go")
    body = json.loads(result.messages[2]["content"])
    assert len(result.messages[2]["content"]) <= 2000
    assert (body["code"], body["tool"], body["trace_id"]) == ("ERR_TOOL_UNKNOWN", "nope", result.trace_id)
    assert body["error"] == "unrecognized tool name 'nope', turned into a clarification request"


# --- 3. describing a failure never fails ----------------------------------------------------------


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot print me")


@tool
def fails_oddly() -> str:
    """Raise an exception that cannot be turned into text."""
    raise Unprintable()


def test_3_an_exception_whose_str_raises_becomes_err_tool_failed() -> None:
    with ScriptedModel([reply(None, call("fails_oddly")), "It failed."]) as model:
        result = Loop(model, [fails_oddly]).run_sync("go")
    error = "Unprintable: (its message could not be read: RuntimeError while converting it to text)"
    assert result.status == "success"
    assert masked(result.messages, result.trace_id) == [
        USER,
        asked("fails_oddly"),
        answered("fails_oddly", content(error=error, code="ERR_TOOL_FAILED", tool="fails_oddly")),
        {"role": "assistant", "content": "It failed."},
    ]


# --- 4. tool content is strict JSON ---------------------------------------------------------------


@tool
def measures() -> dict[str, float]:
    """Return values JSON cannot carry."""
    return {"value": float("nan"), "high": float("inf"), "low": float("-inf"), "ok": 1.5}


def test_4_nan_and_infinity_become_strings_in_strict_json() -> None:
    with ScriptedModel([reply(None, call("measures")), "done"]) as model:
        result = Loop(model, [measures]).run_sync("go")
    assert masked(result.messages, result.trace_id) == [
        USER,
        asked("measures"),
        answered("measures", content(value="NaN", high="Infinity", low="-Infinity", ok=1.5)),
        {"role": "assistant", "content": "done"},
    ]
    json.loads(result.messages[2]["content"], parse_constant=pytest.fail)  # strict: no NaN token at all


def test_4_the_transcript_check_refuses_nan_in_tool_content_and_parts() -> None:
    with pytest.raises(TranscriptError) as info:
        check_transcript([USER, asked("measures"), answered("measures", '{"value": NaN}')])
    assert (info.value.index, info.value.rule) == (2, "content_not_json")
    parts = {"role": "user", "content": [{"type": "text", "text": "x", "score": float("inf")}]}
    with pytest.raises(TranscriptError) as info:
        check_transcript([parts])
    assert (info.value.index, info.value.rule) == (0, "bad_content_part")


def test_4_nan_in_model_arguments_is_invalid_json() -> None:
    @tool
    def scale(x: float) -> float:
        """Scale x."""
        return 2 * x

    with ScriptedModel([reply(None, call("scale", '{"x": NaN}')), "ok"]) as model:
        result = Loop(model, [scale]).run_sync("go")
    assert json.loads(result.messages[2]["content"])["error"] == (
        "arguments are not valid JSON: NaN is not a JSON value"
    )


# --- 5. text content parts are an answer ----------------------------------------------------------


def test_5_text_parts_are_the_answer_not_a_blank_round() -> None:
    parts = [{"type": "text", "text": "The answer"}, {"type": "text", "text": "is 42."}]
    with ScriptedModel([{"role": "assistant", "content": parts}]) as model:
        result = Loop(model, []).run_sync("go")
    assert (result.status, result.output, [s.decision for s in result.steps]) == (
        "success",
        "The answer\nis 42.",
        ["answer"],
    )
    assert result.messages == [USER, {"role": "assistant", "content": "The answer\nis 42."}]


def test_5_text_parts_beside_calls_and_refusals_are_kept() -> None:
    with_call = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Checking."}],
        "tool_calls": [call("f")],
    }
    refusal = {"role": "assistant", "content": None, "refusal": "I can't help with that."}

    @tool
    def f() -> int:
        """F."""
        return 1

    with ScriptedModel([with_call, refusal]) as model:
        result = Loop(model, [f]).run_sync("go")
    assert masked(result.messages, result.trace_id) == [
        USER,
        {**asked("f"), "content": "Checking."},
        answered("f", content(result=1)),
        {"role": "assistant", "content": "I can't help with that."},
    ]


# --- 6. the nested-model guard cannot be swallowed ------------------------------------------------

INNER = ScriptedModel(["never used"], name="inner")


@tool
async def hides_the_breach(text: str) -> str:
    """Call a model and swallow the error: the run must still end loudly."""
    try:
        await INNER.call(ModelRequest([{"role": "user", "content": text}]))
    except Exception:
        return "fine"
    return "unreachable"


@tool
def hides_it_in_a_thread(text: str) -> str:
    """The same, from a sync tool (it runs in a worker thread)."""
    import asyncio

    try:
        asyncio.run(INNER.call(ModelRequest([{"role": "user", "content": text}])))
    except NestedModelCallError as exc:
        raise ValueError("summary unavailable") from exc
    return "unreachable"


@pytest.mark.parametrize("bad_tool", [hides_the_breach, hides_it_in_a_thread])
def test_6_a_tool_that_catches_the_guard_error_still_ends_the_run(
    bad_tool: Any, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel([reply(None, call(bad_tool.name, {"text": "hi"})), "never sent"])
    loop = Loop(model, [bad_tool])
    with caplog.at_level(logging.ERROR, "minloop"), pytest.raises(NestedModelCallError) as info:
        loop.run_sync("summarise hi")
    breach = f"model 'inner' was called from inside tool {bad_tool.name!r}"
    assert str(info.value).startswith(breach)
    assert INNER.requests == [] and model.remaining == 1
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(logged) == 1 and f"tool {bad_tool.name} broke the red line: {breach}" in logged[0]


# --- 7. context policies: a message window needs no token window ---------------------------------


@tool
def ping() -> str:
    """Ping."""
    return "pong"


def pings(n: int) -> list[dict[str, Any]]:
    return [*(reply(None, call("ping", id=f"c{i}")) for i in range(n)), reply("done")]


@pytest.mark.parametrize("kind", ["scripted", "function", "openai"])
def test_7_window_policy_works_with_every_model_without_a_token_window(kind: str) -> None:
    script = pings(4)
    if kind == "openai":
        with ChatServer(script) as server:
            model = OpenAIModel("m", base_url=server.base_url, api_key="sk-test", tools_off="omit")
            result = Loop(model, [ping], context=WindowPolicy(max_messages=4)).run_sync("go")
            sent = [len(r["messages"]) for r in server.requests]
    else:
        turns = iter(script)
        model = ScriptedModel(script) if kind == "scripted" else FunctionModel(lambda request: next(turns))
        result = Loop(model, [ping], context=WindowPolicy(max_messages=4)).run_sync("go")
        sent = [len(r.messages) for r in model.requests]  # type: ignore[union-attr]
    assert (result.status, result.output) == ("success", "done")
    # pinned user message + at most 4 messages of whole steps (+ the control message after tools)
    assert sent == [1, 4, 6, 6, 6]
    assert [s.context.mode for s in result.steps] == ["window"] * 5  # type: ignore[union-attr]


def test_7_a_context_policy_without_any_window_is_refused_by_name() -> None:
    with pytest.raises(
        MinloopError, match=r"^ContextPolicy needs a token window: give ContextPolicy\(window=\.\.\.\)"
    ):
        Loop(ScriptedModel([]), context=ContextPolicy())


def test_7_openai_model_states_its_context_window() -> None:
    with ChatServer([reply("hi")]) as server:
        model = OpenAIModel("m", base_url=server.base_url, context_window=4096)
        result = Loop(model, context=ContextPolicy()).run_sync("go")
    assert result.steps[0].context is not None and result.steps[0].context.window == 4096


# --- 8. the README's transcript rules are the code's ----------------------------------------------


def readme_rules() -> set[str]:
    section = README.read_text(encoding="utf-8").split("## Transcript rules", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return {name for cell in rows for name in re.findall(r"`([a-z_]+)`", cell)}


def test_8_the_readme_table_names_exactly_the_rules_the_code_raises() -> None:
    documented, raised = readme_rules(), rules_raised_by_the_code()
    assert documented - raised == set(), "README rows for rules the code never raises"
    assert raised - documented == set(), "rules the code raises that the README does not list"
    assert documented == messages.RULES


def test_8_a_dict_as_tool_content_is_content_not_json_as_documented() -> None:
    with pytest.raises(TranscriptError) as info:
        check_transcript([USER, asked("ping"), {**answered("ping", "{}"), "content": {"temp": 25}}])
    assert (info.value.index, info.value.rule) == (2, "content_not_json")
