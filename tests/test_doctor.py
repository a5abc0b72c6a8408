"""``minloop doctor``: every transcript pitfall reported at once, with its fix (S16, S17, S21, S4)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from minloop import Loop, TranscriptError, check_transcript, messages, tool
from minloop.cli.doctor import doctor_command
from minloop.doctor import FIXES, Finding, diagnose
from minloop.testing import ScriptedModel, call, reply

USER = {"role": "user", "content": "Weather in Paris?"}
ASK = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
    ],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": '{"condition": "Sunny"}'}
LOG = {"role": "system", "content": "log: get_weather called"}
ANSWER = {"role": "assistant", "content": "Sunny."}


@tool
def get_weather(city: str) -> dict[str, str]:
    """Get the weather."""
    return {"city": city, "condition": "Sunny"}


def rules(messages: Any) -> list[tuple[int | None, str]]:
    return [(f.index, f.rule) for f in diagnose(messages)]


def test_a_valid_transcript_and_a_real_run_have_no_findings() -> None:
    assert diagnose([USER, ASK, RESULT, ANSWER]) == []
    model = ScriptedModel([reply(None, call("get_weather", {"city": "Paris"})), "Sunny."])
    result = Loop(model, [get_weather]).run_sync("Paris?")
    assert diagnose(result.messages) == []
    assert diagnose(result.to_dict()["messages"]) == []


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        pytest.param(
            [USER, ASK, LOG, RESULT, ANSWER],
            [(1, "unanswered_tool_call"), (3, "orphan_tool_result")],
            id="s16-result-not-adjacent",
        ),
        pytest.param(
            [USER, ASK, {**RESULT, "tool_call_id": "call_1"}, ANSWER],
            [(2, "tool_call_id_mismatch"), (1, "unanswered_tool_call")],
            id="s21-id-mismatch",
        ),
        pytest.param(
            [USER, ASK, {**RESULT, "content": {"condition": "Sunny"}}, ANSWER],
            [(2, "content_not_json")],
            id="s17-dict-content",
        ),
        pytest.param([ASK, RESULT, ANSWER], [(None, "no_user_message")], id="s4-missing-user-message"),
        pytest.param([USER, ASK, RESULT, RESULT], [(3, "duplicate_tool_result")], id="duplicate-result"),
        pytest.param(
            [USER, ASK, {**RESULT, "content": "Sunny"}], [(2, "content_not_json")], id="plain-text-content"
        ),
        pytest.param(
            [USER, {**RESULT, "role": "function", "name": ""}],
            [(1, "orphan_tool_result"), (1, "missing_name")],
            id="orphan-function-without-name",
        ),
        pytest.param(
            [USER, {"role": "bot", "content": "hi"}, "hello", {"role": "assistant"}],
            [(1, "invalid_role"), (2, "not_an_object"), (3, "missing_content")],
            id="shapes",
        ),
        pytest.param({"role": "user", "content": "hi"}, [(None, "not_a_list")], id="not-a-list"),
    ],
)
def test_each_pitfall_is_named_where_it_is(messages: Any, expected: list[tuple[int | None, str]]) -> None:
    assert sorted(rules(messages), key=lambda r: (r[0] is None, r[0] or 0)) == sorted(
        expected, key=lambda r: (r[0] is None, r[0] or 0)
    )
    with pytest.raises(TranscriptError) as info:  # the runtime check agrees on at least the first problem
        check_transcript(messages)
    assert (info.value.index, info.value.rule) in expected


def test_all_findings_are_reported_not_just_the_first() -> None:
    bad_call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}},
            {"id": "a", "type": "function", "function": {"name": "g", "arguments": "{}"}},
        ],
    }
    messages = [
        {"role": "system", "content": "be brief"},
        bad_call,
        {"role": "tool", "tool_call_id": "a", "content": {}},
        LOG,
        {"role": "tool", "tool_call_id": "zzz", "content": "{}"},
    ]
    assert diagnose(messages) == [
        Finding(
            1,
            "bad_tool_calls",
            "tool_calls[0].function.arguments is a dict, not a JSON string",
            FIXES["bad_tool_calls"],
        ),
        Finding(1, "duplicate_tool_call_id", "tool call id 'a' repeats", FIXES["duplicate_tool_call_id"]),
        Finding(
            2,
            "content_not_json",
            "tool result content must be a JSON string, got dict (use json.dumps)",
            FIXES["content_not_json"],
        ),
        Finding(
            4,
            "orphan_tool_result",
            "a tool message must directly follow the assistant message that requested it",
            FIXES["orphan_tool_result"],
        ),
        Finding(None, "no_user_message", "at least one user message is required", FIXES["no_user_message"]),
    ]


def rules_raised_by_the_code() -> set[str]:
    """Every rule name the package can raise: the transcript walk's ``add(index, rule, ...)`` calls
    and ``rule = ...`` choices in messages.py, and every ``TranscriptError(index, rule, ...)``."""
    raised: set[str] = set()
    for path in Path(messages.__file__).parent.rglob("*.py"):
        walk = path.name == "messages.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and len(node.args) > 1:
                name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
                if name == "TranscriptError" or (walk and name == "add"):
                    rule = node.args[1]
                    options = [rule.body, rule.orelse] if isinstance(rule, ast.IfExp) else [rule]
                    raised |= {o.value for o in options if isinstance(o, ast.Constant)}
            if walk and isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "rule":
                raised |= {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
    return raised


def test_every_rule_of_check_transcript_has_a_fix() -> None:
    assert rules_raised_by_the_code() == set(FIXES) == messages.RULES


def test_diagnose_never_raises_on_unhashable_values() -> None:
    weird = [
        USER,
        {"role": ["user"]},
        {**ASK, "tool_calls": [{"id": ["c1"], "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": ["c1"], "content": "{}"},
    ]
    assert rules(weird) == [(1, "invalid_role"), (2, "bad_tool_calls"), (3, "orphan_tool_result")]
    assert rules([USER, ASK, {**RESULT, "tool_call_id": ["c1"]}]) == [
        (1, "unanswered_tool_call"),
        (2, "tool_call_id_mismatch"),
    ]


# --- the command ---------------------------------------------------------------------------------


def invoke(tmp_path: Path, data: Any, *options: str) -> tuple[int, str]:
    app = typer.Typer()
    app.command()(doctor_command)
    path = tmp_path / "transcript.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    result = CliRunner().invoke(app, [str(path), *options])
    return result.exit_code, result.output


def test_command_accepts_a_list_or_run_json_output(tmp_path: Path) -> None:
    model = ScriptedModel([reply(None, call("get_weather", {"city": "Paris"})), "Sunny."])
    result = Loop(model, [get_weather]).run_sync("Paris?")
    code, output = invoke(tmp_path, result.to_dict())
    assert (code, output.split()) == (
        0,
        ["ok", str(tmp_path / "transcript.json") + ":", "4", "messages,", "no", "findings"],
    )
    assert invoke(tmp_path, [USER, ANSWER])[0] == 0


def test_command_explains_each_finding_and_exits_1(tmp_path: Path) -> None:
    code, output = invoke(
        tmp_path, {"messages": [USER, ASK, LOG, {**RESULT, "content": {"condition": "Sunny"}}]}
    )
    assert code == 1
    flat = " ".join(output.split())
    assert flat.startswith(f"3 finding(s) in {tmp_path / 'transcript.json'} (4 messages)")
    for rule in ("unanswered_tool_call", "orphan_tool_result", "content_not_json"):
        assert rule in flat
    assert "move logs, status notes and system messages after the results" in flat
    assert "json.dumps(...)" in flat


def test_command_json_output(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, [ASK, {**RESULT, "tool_call_id": "c9"}], "--json")
    assert code == 1
    assert json.loads(output) == {
        "file": str(tmp_path / "transcript.json"),
        "messages": 2,
        "findings": [
            {
                "index": 0,
                "rule": "unanswered_tool_call",
                "problem": "tool call(s) ['c1'] have no result before the end of the transcript",
                "fix": FIXES["unanswered_tool_call"],
            },
            {
                "index": 1,
                "rule": "tool_call_id_mismatch",
                "problem": "tool_call_id 'c9' does not answer a pending call of message 0 (pending: ['c1'])",
                "fix": FIXES["tool_call_id_mismatch"],
            },
            {
                "index": None,
                "rule": "no_user_message",
                "problem": "at least one user message is required",
                "fix": FIXES["no_user_message"],
            },
        ],
    }


def test_unreadable_file_exits_2(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, "{not json")
    assert code == 2 and "cannot read" in output
