"""``minloop run`` pauses a call needing approval when nobody can answer on a terminal;
``minloop runs`` lists it, ``minloop approve`` decides, ``minloop resume`` goes on, and
``minloop trace show`` says where the run was resumed. Against a real Chat Completions server
on 127.0.0.1."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from minloop import Loop, tool
from minloop.cli.app import app
from minloop.runs import SQLiteRunStore
from minloop.testing import ChatServer, ScriptedModel, call, reply

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def wipe_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    (tmp_path / "danger_tools.py").write_text(
        "from minloop import tool\n\n@tool(needs_approval=True)\ndef wipe(target: str) -> str:\n"
        "    '''Delete everything.'''\n    return 'wiped ' + target\n"
    )
    monkeypatch.chdir(tmp_path)
    yield
    sys.modules.pop("danger_tools", None)


def options(server: ChatServer) -> list[str]:
    return ["--model", "m", "--base-url", server.base_url, "--tools", "danger_tools:wipe", "--no-builtin"]


def test_a_paused_run_is_listed_approved_and_resumed_from_the_command_line(wipe_tool: None) -> None:
    script = [reply(None, call("wipe", {"target": "disk"}, id="c1")), reply("Wiped the disk.")]
    with ChatServer(script) as server:
        code, output = invoke("run", "wipe it", *options(server))
        assert code == 4, output
        run_id = output.split("minloop approve ")[1].split()[0]
        assert f"minloop approve {run_id} c1" in output
        assert f"minloop resume {run_id} {' '.join(options(server))}" in output
        assert len(server.requests) == 1

        code, listed = invoke("runs")
        assert code == 0 and listed.splitlines()[0].startswith(f"{run_id}  paused")
        assert "1 waiting" in listed.splitlines()[0]

        code, said = invoke("approve", run_id, "c1", "--by", "alice")
        assert (code, said.strip()) == (0, f"approved c1 of {run_id}; go on with: minloop resume {run_id}")

        code, resumed = invoke("resume", run_id, *options(server), "--json")
    doc = json.loads(resumed)
    assert (code, doc["status"], doc["trace_id"]) == (0, "success", run_id)
    assert [m["role"] for m in doc["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert json.loads(doc["messages"][2]["content"])["result"] == "wiped disk"
    assert doc["messages"][3] == {"role": "assistant", "content": "Wiped the disk."}

    code, shown = invoke("trace", "show", run_id)
    assert code == 0 and "resumed at step 1 (it was paused) · wipe (c1) approved by alice" in shown
    code, listed = invoke("runs")
    assert listed.splitlines()[0].startswith(f"{run_id}  success")


def test_a_denial_with_a_reason_reaches_the_model(wipe_tool: None) -> None:
    script = [reply(None, call("wipe", {"target": "disk"}, id="c1")), reply("I did not wipe it.")]
    with ChatServer(script) as server:
        code, output = invoke("run", "wipe it", *options(server), "--no-input", "--json")
        run_id = json.loads(output)["trace_id"]
        assert (code, json.loads(output)["pending"][0]["call_id"]) == (4, "c1")
        assert invoke("approve", run_id, "c1", "--deny", "--reason", "not today")[0] == 0
        code, resumed = invoke("resume", run_id, *options(server), "--json")
        told = server.requests[1]["messages"][2]
    doc = json.loads(resumed)
    assert (code, doc["status"]) == (0, "success")
    body = json.loads(told["content"])
    assert (body["code"], "not today" in body["error"]) == ("ERR_TOOL_DENIED", True)


def test_bad_decisions_and_resumes_are_clear_errors(wipe_tool: None) -> None:
    script = [reply(None, call("wipe", {"target": "disk"}, id="c1"))]
    with ChatServer(script) as server:
        code, output = invoke("run", "wipe it", *options(server), "--json")
        run_id = json.loads(output)["trace_id"]
        code, said = invoke("approve", run_id, "c9")
        assert code == 2 and f"run {run_id}: no call c9 is waiting for a decision (waiting: c1)" in " ".join(
            said.split()
        )
        code, said = invoke("resume", "trc_nope", *options(server))
        assert code == 2 and "run trc_nope: no run with this id" in said
        code, said = invoke("resume", run_id, "--model", "m", "--base-url", server.base_url)
        assert code == 2 and "lacks the run's tools (missing wipe)" in " ".join(said.split())
    code, listed = invoke("runs")
    assert listed.splitlines()[0].startswith(f"{run_id}  paused")  # nothing changed


def test_an_edit_or_an_answer_in_the_tools_place_from_the_command_line(wipe_tool: None) -> None:
    script = [
        reply(None, call("wipe", {"target": "disk"}, id="c1")), reply(None, call("wipe", {"target": "disk"}, id="c1")),
        reply("Wiped tmp."), reply("It was done by hand."),
    ]  # fmt: skip
    with ChatServer(script) as server:
        edited, answered = (json.loads(invoke("run", "wipe it", *options(server), "--json")[1])["trace_id"]
                            for _ in range(2))  # fmt: skip
        code, said = invoke("approve", edited, "c1", "--args", '{"target": "tmp"}', "--digest", DISK)
        assert (code, said.strip()) == (
            0, f"approved c1 of {edited} with the arguments given; go on with: minloop resume {edited}"
        )  # fmt: skip
        code, said = invoke("approve", answered, "c1", "--respond", "done by hand")
        assert (code, said.strip()) == (
            0, f"answered c1 of {answered} in the tool's place; go on with: minloop resume {answered}"
        )  # fmt: skip
        docs = [json.loads(invoke("resume", r, *options(server), "--json")[1]) for r in (edited, answered)]
    assert [json.loads(d["messages"][2]["content"])["result"] for d in docs] == ["wiped tmp", "done by hand"]
    assert json.loads(docs[0]["messages"][1]["tool_calls"][0]["function"]["arguments"]) == {"target": "tmp"}
    code, shown = invoke("trace", "show", edited)
    said = 'wipe (c1) approved with the arguments {"target": "tmp"} (asked: {"target": "disk"}) by'
    assert said in " ".join(shown.split())


DISK = "c334ec9b90ebc12a"  # the digest of {"target": "disk"}


def test_each_bad_decision_is_one_line_and_changes_nothing(wipe_tool: None) -> None:
    with ChatServer([reply(None, call("wipe", {"target": "disk"}, id="c1"))]) as server:
        run_id = json.loads(invoke("run", "wipe it", *options(server), "--json")[1])["trace_id"]
    bad = {
        ("--args", "nope"): "--args is not valid JSON: Expecting value: line 1 column 1 (char 0)",
        ("--args", "[1]"): "--args must be a JSON object of the call's arguments, not list",
        ("--args", '{"target": 5}'): f"run {run_id}: the edited arguments of c1 do not fit wipe: target: 5 is not "
        "of type 'string' (given: {\"target\": 5}); nothing was recorded",
        ("--deny", "--args", "{}"): "give one of --deny, --args and --respond: a decision is one of them",
        ("--digest", "0000000000000000"): f"run {run_id}: the decision on c1 was made on other arguments (digest "
        f'0000000000000000) than the call\'s: wipe({{"target": "disk"}}), digest {DISK}; nothing was recorded',
    }  # fmt: skip
    for options_given, error in bad.items():
        code, said = invoke("approve", run_id, "c1", *options_given)
        assert (code, said.strip().splitlines()) == (2, [f"error: {error}"]), options_given
        assert "1 waiting" in invoke("runs")[1].splitlines()[0]  # nothing recorded
    assert invoke("approve", run_id, "c1", "--deny", "--by", "alice")[0] == 0
    code, said = invoke("approve", run_id, "c1", "--by", "bob")
    [line] = said.strip().splitlines()
    assert code == 2 and line.startswith(
        f"error: run {run_id}: call c1 was already decided: denied by alice at "
    )
    assert line.endswith(" UTC; a decision stands once made")


def test_a_paused_calls_chinese_arguments_are_shown_in_their_own_characters(wipe_tool: None) -> None:
    script = [reply(None, call("wipe", {"target": "东京的磁盘"}, id="c1"))]  # sent as \u escapes
    with ChatServer(script) as server:
        assert '"\\u4e1c' in server.script[0]["tool_calls"][0]["function"]["arguments"]
        code, output = invoke("run", "清空它", *options(server), "--no-input")
        assert code == 4 and 'wipe({"target": "东京的磁盘"}) · c1 · needs approval' in output
        run_id = output.split("minloop approve ")[1].split()[0]
    code, shown = invoke("trace", "show", run_id)
    assert code == 0 and 'waiting for a decision: wipe({"target": "东京的磁盘"}) · c1' in shown


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_the_listed_steps_of_a_finished_run_count_its_last_step(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    two = [reply(None, call("add", {"a": 1, "b": 2}, id="c1")), reply("3")]
    result = Loop(ScriptedModel(two), [add], store=SQLiteRunStore(path)).run_sync("add 1 and 2")
    one = Loop(ScriptedModel([reply("hello")]), [add], store=SQLiteRunStore(path)).run_sync("say hello")
    code, listed = invoke("runs", "--store", str(path))
    lines = [re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "WHEN", line) for line in listed.splitlines()]
    assert (code, len(result.steps), len(one.steps)) == (0, 2, 1)
    assert lines == [
        f"{one.trace_id}  success           1 steps · WHEN · say hello",
        f"{result.trace_id}  success           2 steps · WHEN · add 1 and 2",
    ]
