"""``minloop run`` records its trace; ``minloop trace ls | show | export`` and ``minloop replay`` read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from minloop.cli.app import app
from minloop.testing import ChatServer, call, reply
from minloop.trace.sqlite import TraceStore

runner = CliRunner()
SCRIPT = [
    reply(None, call("calculator", {"expression": "6*7"}, id="c1"), call("nope", {}, id="c2")),
    reply(None, call("calculator", {"expression": "1/0"}, id="c3")),
    reply("6*7 is 42; 1/0 is undefined."),
]


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.output


def run_scripted(*extra: str, script: list[dict[str, object]] = SCRIPT) -> str:
    """``minloop run`` against a loopback server; returns its trace id."""
    with ChatServer(script) as server:
        code, stdout, _ = invoke(
            "run", "6*7 and 1/0?", "--model", "gpt-x", "--base-url", server.base_url, "--json", *extra
        )
    assert code == 0, stdout
    return str(json.loads(stdout)["trace_id"])


def test_run_records_its_trace_and_show_displays_every_step(trace_db: Path) -> None:
    with ChatServer(SCRIPT) as server:
        code, _, live = invoke("run", "6*7 and 1/0?", "--model", "gpt-x", "--base-url", server.base_url)
    assert code == 0
    trace_id = TraceStore(trace_db).runs()[0].trace_id
    assert f"trace recorded in {trace_db} · minloop trace show {trace_id}" in live
    code, shown, _ = invoke("trace", "show", trace_id)
    assert code == 0
    lines = [line.strip() for line in shown.splitlines()]
    assert f"run {trace_id}  success" in lines
    steps = [line.split("  ")[0] for line in lines if line.startswith("step ")]
    assert steps == ["step 1 tool_calls", "step 2 tool_calls", "step 3 answer"]
    assert f'← {{"expression": "6*7", "result": 42, "trace_id": "{trace_id}"}}' in lines
    assert "→ nope({}) (rerouted to ask_for_clarification)" in " ".join(lines)
    assert (
        "← ERR_TOOL_UNKNOWN" in shown
        and "← ERR_TOOL_FAILED" in shown
        and "ValueError: division by zero" in shown
    )
    assert "final message: 6*7 is 42; 1/0 is undefined." in lines


LISTED = (
    "trace_id",
    "status",
    "steps",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "model",
    "prompt",
    "error",
)


def test_ls_lists_runs_and_filters_by_status() -> None:
    ok = run_scripted()
    with ChatServer([reply(None, call("calculator", {"expression": "1+1"}, id="c1"))]) as server:
        code, stdout, _ = invoke(
            "run", "loop", "--model", "m", "--base-url", server.base_url, "--max-steps", "1", "--json"
        )
    failed = json.loads(stdout)["trace_id"]
    code, stdout, _ = invoke("trace", "ls", "--json")
    assert code == 0
    listed = [{k: r[k] for k in LISTED} for r in json.loads(stdout)]
    assert listed == [
        {
            "trace_id": failed,
            "status": "max_steps_exceeded",
            "steps": 1,
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "total_tokens": 15,
            "model": "m",
            "prompt": "loop",
            "error": "no answer within 1 steps",
        },
        {
            "trace_id": ok,
            "status": "success",
            "steps": 3,
            "prompt_tokens": 30,
            "completion_tokens": 15,
            "total_tokens": 45,
            "model": "gpt-x",
            "prompt": "6*7 and 1/0?",
            "error": None,
        },
    ]
    code, stdout, _ = invoke("trace", "ls", "--status", "success", "--json")
    assert [r["trace_id"] for r in json.loads(stdout)] == [ok]
    code, table, _ = invoke("trace", "ls")
    rows = [line.split() for line in table.splitlines()[1:]]
    assert [row[:1] + row[3:6] for row in rows] == [
        [failed, "max_steps_exceeded", "1", "15"],
        [ok, "success", "3", "45"],
    ]
    code, listed_by_the_helps_word, _ = invoke("trace", "list")  # the word `minloop trace --help` uses
    assert (code, listed_by_the_helps_word) == (0, table)
    code, stdout, _ = invoke("trace", "list", "--status", "success", "--json")
    assert [r["trace_id"] for r in json.loads(stdout)] == [ok]
    code, helped, _ = invoke("--help")
    assert "Stored runs: list (or ls), show, export." in helped


def test_show_json_has_every_step_in_full() -> None:
    trace_id = run_scripted()
    code, stdout, _ = invoke("trace", "show", trace_id[:-1], "--json")
    doc = json.loads(stdout)
    assert code == 0 and doc["run"]["trace_id"] == trace_id
    assert [
        (s["index"], s["decision"], [(c["name"], c["error"]) for c in s["calls"]]) for s in doc["steps"]
    ] == [
        (1, "tool_calls", [("calculator", None), ("nope", "ERR_TOOL_UNKNOWN")]),
        (2, "tool_calls", [("calculator", "ERR_TOOL_FAILED")]),
        (3, "answer", []),
    ]
    assert doc["end"]["final_message"] == {"role": "assistant", "content": "6*7 is 42; 1/0 is undefined."}
    assert doc["messages"] == [{"role": "user", "content": "6*7 and 1/0?"}]


def test_export_jsonl_and_html(tmp_path: Path, trace_db: Path) -> None:
    trace_id = run_scripted()
    code, stdout, _ = invoke("trace", "export", trace_id, "--jsonl", "-")
    events = [json.loads(line) for line in stdout.splitlines()]
    stored = TraceStore(trace_db).events(trace_id)
    assert code == 0
    assert events == [
        {"kind": e.kind, "trace_id": e.trace_id, "step": e.step, "time": e.time, "data": e.data}
        for e in stored
    ]
    code, _, output = invoke(
        "trace", "export", "last", "--html", str(tmp_path / "r.html"), "--jsonl", str(tmp_path / "e.jsonl")
    )
    assert code == 0 and f"wrote {tmp_path / 'r.html'}" in output
    page = (tmp_path / "r.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and trace_id in page and "ERR_TOOL_FAILED" in page
    assert (tmp_path / "e.jsonl").read_text() == stdout


def test_trace_db_option_and_no_trace(tmp_path: Path, trace_db: Path) -> None:
    trace_id = run_scripted("--trace-db", str(tmp_path / "other.db"))
    assert [r.trace_id for r in TraceStore(tmp_path / "other.db").runs()] == [trace_id]
    assert not trace_db.exists()
    run_scripted("--no-trace")
    assert not trace_db.exists()
    code, _, output = invoke("trace", "show", trace_id, "--db", str(tmp_path / "other.db"))
    assert code == 0 and "step 3 answer" in output


def test_replay_reproduces_the_stored_run() -> None:
    trace_id = run_scripted()
    code, stdout, output = invoke("replay", trace_id)
    assert code == 0, output
    assert "recorded: success after 3 steps · replayed: success after 3 steps" in output
    assert "final message: 6*7 is 42; 1/0 is undefined." in output and "reproduced: no divergence" in output
    code, stdout, _ = invoke("replay", trace_id, "--live-tools", "--json")
    doc = json.loads(stdout)
    assert code == 0
    assert (doc["reproduced"], doc["live_tools"], doc["divergence"]) == (True, True, None)
    assert doc["replayed"] == {
        "status": "success",
        "steps": 3,
        "final_message": {"role": "assistant", "content": "6*7 is 42; 1/0 is undefined."},
    }


def test_replay_with_other_tools_reports_the_first_divergence() -> None:
    trace_id = run_scripted()
    code, stdout, _ = invoke("replay", trace_id, "--live-tools", "--no-builtin", "--json")
    doc = json.loads(stdout)
    assert code == 1
    assert doc["divergence"] == {
        "step": 1,
        "what": "the tools offered",
        "path": "[0]",
        "recorded": "calculator",
        "replayed": None,
        "description": "step 1, the tools offered at [0]",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("trace", "show", "trc_missing"), "no trace 'trc_missing'"),
        (("trace", "export", "last"), "give --html FILE and/or --jsonl FILE"),
        (("replay", "trc_missing"), "no trace 'trc_missing'"),
    ],
)
def test_bad_references_are_clear_errors(args: tuple[str, ...], message: str) -> None:
    run_scripted()
    code, _, output = invoke(*args)
    assert code == 2 and message in output


def test_a_missing_database_is_a_clear_error(tmp_path: Path) -> None:
    code, _, output = invoke("trace", "ls", "--db", str(tmp_path / "none.db"))
    assert code == 2 and f"no trace database at {tmp_path / 'none.db'}" in output.replace("\n", "")
