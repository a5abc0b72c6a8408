"""The ``minloop`` command against a real Chat Completions server on 127.0.0.1."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from minloop.cli.app import app
from minloop.testing import ChatServer, call, reply

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_run_json_prints_the_whole_result(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    script = [reply(None, call("list_files", {"pattern": "*.py"}, id="c1")), reply("One Python file: a.py.")]
    with ChatServer(script) as server:
        code, output = invoke(
            "run",
            "How many Python files?",
            "--model",
            "gpt-x",
            "--base-url",
            server.base_url,
            "--root",
            str(tmp_path),
            "--json",
        )
    doc = json.loads(output)
    assert code == 0
    assert (doc["status"], doc["final_message"]) == (
        "success",
        {"role": "assistant", "content": "One Python file: a.py."},
    )
    assert doc["trace_id"].startswith("trc_")
    assert [s["decision"] for s in doc["steps"]] == ["tool_calls", "answer"]
    tool_result = json.loads(doc["messages"][2]["content"])
    assert (tool_result["count"], tool_result["largest"]) == (1, {"path": "a.py", "bytes": 6})
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == [
        "calculator",
        "current_time",
        "list_files",
        "read_file",
        "search_files",
    ]


def test_live_view_shows_steps_errors_and_answer() -> None:
    script = [
        reply(None, call("calculator", {"expression": "6*7"}, id="c1"), call("nope", {}, id="c2")),
        reply("42"),
    ]
    with ChatServer(script) as server:
        code, output = invoke("run", "6*7?", "--model", "gpt-x", "--base-url", server.base_url)
    assert code == 0
    assert "step 1 tool_calls" in output and "calculator" in output and '"result": 42' in output
    assert "ERR_TOOL_UNKNOWN" in output
    assert "step 2 answer" in output and "success" in output and "42" in output


def test_exit_code_is_non_zero_unless_success() -> None:
    script = [reply(None, call("calculator", {"expression": "1+1"}, id=f"c{i}")) for i in range(2)]
    with ChatServer(script) as server:
        code, output = invoke(
            "run", "loop", "--model", "gpt-x", "--base-url", server.base_url, "--max-steps", "2", "--json"
        )
    assert code == 1 and json.loads(output)["status"] == "max_steps_exceeded"


def test_user_tools_from_module_attr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_tools.py").write_text(
        "def shout(text: str) -> str:\n    '''Upper-case a text.'''\n    return text.upper()\n"
    )
    monkeypatch.chdir(tmp_path)
    script = [reply(None, call("shout", {"text": "hi"}, id="c1")), reply("HI")]
    with ChatServer(script) as server:
        code, output = invoke(
            "run",
            "shout hi",
            "--model",
            "m",
            "--base-url",
            server.base_url,
            "--tools",
            "my_tools:shout",
            "--no-builtin",
            "--json",
        )
    assert code == 0, output
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["shout"]
    assert json.loads(json.loads(output)["messages"][2]["content"])["result"] == "HI"
    sys.modules.pop("my_tools", None)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "expected module:attr"),
        ("missing_module_xyz:f", "cannot import 'missing_module_xyz'"),
        ("json:no_such_attr", "has no attribute 'no_such_attr'"),
        ("json:__version__", "expected a tool, a function or a list of them"),
    ],
)
def test_bad_tools_spec_is_a_clear_error(spec: str, message: str) -> None:
    code, output = invoke("run", "x", "--model", "m", "--base-url", "http://127.0.0.1:9", "--tools", spec)
    assert code == 2 and message in output


def test_bad_gguf_path_is_a_clear_error(tmp_path: Path) -> None:
    code, output = invoke("run", "x", "--gguf", str(tmp_path / "missing.gguf"))
    assert code == 2 and "GGUF file not found" in output
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"NOPE" + b"\0" * 10)
    code, output = invoke("run", "x", "--gguf", str(fake))
    assert code == 2 and "is not a GGUF file" in output


def test_unreachable_endpoint_is_a_model_error() -> None:
    code, output = invoke("run", "x", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--json")
    doc = json.loads(output)
    assert code == 1 and doc["status"] == "model_error" and "cannot reach" in doc["error"]


def test_tools_needing_approval_are_denied_without_a_terminal_or_store_and_run_with_yes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "danger_tools.py").write_text(
        "from minloop import tool\n\n@tool(needs_approval=True)\ndef wipe(target: str) -> str:\n"
        "    '''Delete everything.'''\n    return 'wiped ' + target\n"
    )
    monkeypatch.chdir(tmp_path)
    codes = []
    for extra in (["--no-trace"], ["--yes"]):  # with a run store, it would pause (test_runs_cli.py)
        script = [reply(None, call("wipe", {"target": "disk"}, id="c1")), reply("ok")]
        with ChatServer(script) as server:
            code, output = invoke(
                "run",
                "wipe it",
                "--model",
                "m",
                "--base-url",
                server.base_url,
                "--no-builtin",
                "--tools",
                "danger_tools:wipe",
                "--json",
                *extra,
            )
        doc = json.loads(output[output.index("{") :])
        codes.append(json.loads(doc["messages"][2]["content"]).get("code", "ran"))
    assert codes == ["ERR_TOOL_DENIED", "ran"]
    sys.modules.pop("danger_tools", None)


def test_live_view_shows_what_the_context_policy_did(capsys: pytest.CaptureFixture[str]) -> None:
    from minloop import Step
    from minloop.cli.view import show_step as _show_step
    from minloop.layers.context import ContextReport

    report = ContextReport(
        "summary", window=4096, tokens_before=3900, tokens_after=1200, steps_summarised=4, results_shrunk=1
    )
    _show_step(
        Step(index=6, decision="answer", message={"role": "assistant", "content": "ok"}, context=report)
    )
    shown = " ".join(capsys.readouterr().out.split())
    assert "context summary: 4 step(s) summarised, 1 result(s) shrunk, 3900 -> 1200 of 4096 tokens" in shown


def test_doctor_command_is_registered(tmp_path: Path) -> None:
    bad = tmp_path / "t.json"
    bad.write_text(
        json.dumps([{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "c", "content": "{}"}])
    )
    code, output = invoke("doctor", str(bad))
    assert code == 1 and "orphan_tool_result" in output


def test_live_view_shows_rejected_answers_notes_and_chinese_arguments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from minloop import Step, ToolCall
    from minloop.cli.view import show_step as _show_step
    from minloop.execute import ToolResult

    clock = ToolCall("c1", "current_time", '{"timezone": "\\u4e1c\\u4eac"}')
    result = ToolResult("c1", "current_time", '{"timezone": "Asia/Tokyo"}')
    _show_step(Step(index=1, decision="tool_calls", message={}, tool_calls=(clock,), results=(result,)))
    _show_step(Step(index=2, decision="unfinished", message={"role": "assistant", "content": "晴，22°C。"}))
    _show_step(
        Step(
            index=3,
            decision="answer",
            message={"role": "assistant", "content": "无法提供。"},
            control="22°C 没有出现",
        )
    )
    shown = capsys.readouterr().out
    assert 'current_time({"timezone": "东京"})' in shown
    assert "not accepted: 晴，22°C。" in shown and "note: 22°C 没有出现" in shown


def test_live_view_says_when_the_text_shown_was_replaced(capsys: pytest.CaptureFixture[str]) -> None:
    from minloop import Step
    from minloop.cli.view import LiveView
    from minloop.layers.streaming import StepEnd, TextDelta

    def answered(content: str) -> StepEnd:
        return StepEnd(Step(index=1, decision="answer", message={"role": "assistant", "content": content}))

    view = LiveView()
    for event in (TextDelta("晴，"), TextDelta("22°C。"), answered("晴，22°C。")):  # shown as given
        view(event)
    for event in (TextDelta("北京晴，22°C。"), answered("我无法可靠地回答这个问题。")):  # replaced
        view(event)
    shown = capsys.readouterr().out
    assert shown.count("not accepted: the text above was replaced by the answer below") == 1
    assert shown.index("北京晴，22°C。") < shown.index("not accepted: the text above was replaced")


def test_an_error_line_shows_what_was_typed_as_typed(tmp_path: Path) -> None:
    # brackets are not taken as styles, nor :name: as an emoji code
    code, output = invoke(
        "run", "hi", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--tools", "json:[red]x"
    )
    assert (code, output) == (2, "error: tools 'json:[red]x': module 'json' has no attribute '[red]x'\n")
    code, output = invoke("serve", "--loop", "nomodule_here:loop", "--store", str(tmp_path / "runs.db"))
    assert (code, output) == (
        2,
        "error: --loop nomodule_here:loop: cannot load it (No module named 'nomodule_here')\n",
    )


def test_small_model_gives_a_model_behind_a_url_the_evidence_check() -> None:
    invented = "It is 31 degrees in Paris."  # no tool ran: 31 comes from nowhere
    plain = "I can't answer that reliably: the tools I have did not provide the information it needs."
    for flag, answer in [([], invented), (["--small-model"], plain)]:
        with ChatServer([reply(invented)]) as server:
            args = ["run", "Weather in Paris?", "--model", "gpt-x", "--base-url", server.base_url]
            code, output = invoke(*args, "--no-builtin", "--no-trace", "--json", *flag)
        doc = json.loads(output)
        assert (code, doc["final_message"]["content"], len(server.requests)) == (0, answer, 1)
