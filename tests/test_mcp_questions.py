"""An MCP server of the 2026-07-28 protocol that asks for the user's input mid-call
(tests/servers/mcp_asking.py, over stdio and over streamable HTTP on 127.0.0.1): the run pauses,
a second process answers, the call completes with the server's state echoed byte for byte, and a
SIGKILL before the answer or during the second round never sends the first round again (the
server logs every round). Also: answered in process, refused with a clear code when nobody can
answer, declined, cancelled, and a page to visit listed by its host only."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop, Question, UserAnswer
from minloop.mcp import MCPServer, connect
from minloop.testing import ScriptedModel, call, reply
from tests.serving import ROOT, free_port

SERVERS = Path(__file__).parent / "servers"
WHEN = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "description": "Which day (YYYY-MM-DD)"},
        "seats": {"type": "integer", "description": "How many seats"},
    },
    "required": ["date"],
}


def state_for(tool: str, args: dict[str, Any], round_: int) -> str:  # as the server makes it
    return f'{tool}|{json.dumps(args, sort_keys=True)}|round {round_}|"q" \\ +/= 状态\n✓'


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """``stdio`` (each client starts its own server process) or the URL of one server process."""
    if request.param == "stdio":
        yield "stdio"
        return
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVERS / "mcp_asking.py"), str(tmp_path / "log"), "http", str(port)],
                            stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, (
                proc.stderr.read() if proc.stderr else ""
            )
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


def child(where: Path, server: str, tool: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        str(SERVERS / "asking_child.py"),
        str(where / "runs.db"),
        str(where),
        server,
        tool,
        *args,
    ]
    return subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True, timeout=60)


def rounds(where: Path) -> list[dict[str, Any]]:
    log = where / "log"
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []


def outcome(where: Path) -> dict[str, Any]:
    return json.loads((where / "result.json").read_text(encoding="utf-8"))


def said(where: Path) -> str:
    return next(m["content"] for m in outcome(where)["messages"] if m["role"] == "tool")


def first(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"tool": tool, "round": "first", "state": None, "state_ok": None, "answers": {}}


def again(tool: str, args: dict[str, Any], round_: int, answers: dict[str, Any]) -> dict[str, Any]:
    return {"tool": tool, "round": "again", "state": state_for(tool, args, round_), "state_ok": True,
            "answers": answers}  # fmt: skip


PARIS = {"city": "Paris"}
ACCEPTED = {"when": {"action": "accept", "content": {"date": "2026-12-24", "seats": 2}}}


def test_the_run_pauses_a_second_process_answers_and_the_state_comes_back_unchanged(
    server: str, tmp_path: Path
) -> None:
    started = child(tmp_path, server, "book", "start")
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.split()[0]
    asked = {"server": "asking", "key": "when", "kind": "form", "message": "When do you want to go to Paris?",
             "schema": WHEN}  # fmt: skip
    assert (outcome(tmp_path)["status"], outcome(tmp_path)["pending"]) == (
        "paused", [{"call_id": "c1", "name": "book", "arguments": '{"city": "Paris"}', "step": 1, "why": "question",
                    "questions": [asked]}],
    )  # fmt: skip
    answered = subprocess.run(
        [sys.executable, "-c", "from minloop.cli import main; main()", "answer", run_id, "c1", "--json", '{"date": "2026-12-24", "seats": 2}',
         "--store", str(tmp_path / "runs.db")],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    assert answered.returncode == 0, answered.stderr
    done = child(tmp_path, server, "book", "resume", run_id)
    assert done.returncode == 0, done.stderr
    assert outcome(tmp_path)["status"] == "success"
    assert json.loads(said(tmp_path))["result"] == "booked Paris on 2026-12-24 for 2"
    assert rounds(tmp_path) == [first("book", PARIS), again("book", PARIS, 1, ACCEPTED)]


def test_a_kill_before_the_answer_never_sends_the_first_round_again(server: str, tmp_path: Path) -> None:
    killed = child(tmp_path, server, "book", "start", ASK_KILL="asked")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    run_id = killed.stdout.split()[0]
    paused = child(tmp_path, server, "book", "resume", run_id)  # nobody answered: it pauses again
    assert (paused.returncode, outcome(tmp_path)["status"]) == (0, "paused"), paused.stderr
    assert [q["key"] for q in outcome(tmp_path)["pending"][0]["questions"]] == ["when"]
    done = child(tmp_path, server, "book", "resume", run_id, "--answer", '{"date": "2026-12-24", "seats": 2}')
    assert done.returncode == 0, done.stderr
    assert json.loads(said(tmp_path))["result"] == "booked Paris on 2026-12-24 for 2"
    assert rounds(tmp_path) == [first("book", PARIS), again("book", PARIS, 1, ACCEPTED)]


def kill_in_the_second_round(where: Path, server: str, tool: str, run_id: str, answer: str) -> None:
    (where / "slow").touch()
    command = [sys.executable, str(SERVERS / "asking_child.py"), str(where / "runs.db"), str(where), server, tool,
               "resume", run_id, "--answer", answer]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not any(r["round"] == "again" for r in rounds(where)):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=10) == -signal.SIGKILL
    (where / "slow").unlink()


def test_a_kill_during_the_second_round_reports_a_call_not_safe_to_repeat_in_doubt(
    server: str, tmp_path: Path
) -> None:
    run_id = child(tmp_path, server, "book", "start").stdout.split()[0]
    kill_in_the_second_round(tmp_path, server, "book", run_id, '{"date": "2026-12-24", "seats": 2}')
    done = child(tmp_path, server, "book", "resume", run_id)
    assert done.returncode == 0, done.stderr
    assert json.loads(said(tmp_path))["code"] == "ERR_TOOL_IN_DOUBT"
    assert rounds(tmp_path) == [first("book", PARIS), again("book", PARIS, 1, ACCEPTED)]


def test_a_kill_during_the_second_round_sends_it_again_when_safe_and_new_questions_pause_again(
    server: str, tmp_path: Path
) -> None:
    run_id = child(tmp_path, server, "plan", "start").stdout.split()[0]
    kill_in_the_second_round(tmp_path, server, "plan", run_id, '{"date": "2026-12-24"}')
    paused = child(tmp_path, server, "plan", "resume", run_id)  # the second round again, then a new question
    assert (paused.returncode, outcome(tmp_path)["status"]) == (0, "paused"), paused.stderr
    [question] = outcome(tmp_path)["pending"][0]["questions"]
    assert (question["key"], question["message"]) == ("budget", "Your budget for 2026-12-24?")
    done = child(tmp_path, server, "plan", "resume", run_id, "--answer", '{"euros": 300}')
    assert done.returncode == 0, done.stderr
    assert json.loads(said(tmp_path))["result"] == "planned Paris for 300 euros"
    when = {"when": {"action": "accept", "content": {"date": "2026-12-24"}}}
    budget = {"budget": {"action": "accept", "content": {"euros": 300}}}
    assert rounds(tmp_path) == [first("plan", PARIS), again("plan", PARIS, 1, when), again("plan", PARIS, 1, when),
                                again("plan", PARIS, 2, budget)]  # fmt: skip


def test_a_page_to_visit_is_listed_by_its_host_and_accepting_says_it_was_done(
    server: str, tmp_path: Path
) -> None:
    run_id = child(tmp_path, server, "pay", "start").stdout.split()[0]
    [pending] = outcome(tmp_path)["pending"]
    assert pending["questions"] == [
        {"server": "asking", "key": "payment", "kind": "url", "message": "Pay on the payment page.",
         "host": "pay.example.test"},
    ]  # fmt: skip
    assert "one-time" not in (tmp_path / "result.json").read_text()
    done = child(tmp_path, server, "pay", "resume", run_id, "--answer", "{}")
    assert done.returncode == 0, done.stderr
    assert json.loads(said(tmp_path))["result"] == "paid 30"


def in_process(where: Path, **options: Any) -> list[dict[str, Any]]:
    target = [sys.executable, str(SERVERS / "mcp_asking.py"), str(where / "log"), "stdio"]

    async def main() -> list[dict[str, Any]]:
        async with connect(MCPServer(target, name="asking")) as tools:
            model = ScriptedModel([reply(None, call("book", PARIS, id="c1")), "Done."])
            result = await Loop(model, tools, **options).run("Book Paris")
        return result.messages

    return asyncio.run(main())


def test_an_in_process_callback_answers_without_a_store(tmp_path: Path) -> None:
    asked: list[Question] = []

    def ask_user(q: Question) -> UserAnswer:
        asked.append(q)
        return UserAnswer(content={"date": "2027-01-01"})

    messages = in_process(tmp_path, ask_user=ask_user)
    assert [(q.server, q.key, q.kind, q.schema) for q in asked] == [("asking", "when", "form", WHEN)]
    assert json.loads(messages[2]["content"])["result"] == "booked Paris on 2027-01-01 for 1"
    answered = {"when": {"action": "accept", "content": {"date": "2027-01-01"}}}
    assert rounds(tmp_path) == [first("book", PARIS), again("book", PARIS, 1, answered)]


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declining_and_cancelling_reach_the_server(tmp_path: Path, action: str) -> None:
    messages = in_process(tmp_path, ask_user=lambda q: UserAnswer(action))  # type: ignore[arg-type]
    assert json.loads(messages[2]["content"])["result"] == f"not booked: the user chose {action}"
    assert rounds(tmp_path)[1]["answers"] == {"when": {"action": action}}


def test_with_no_store_and_nobody_to_ask_the_model_reads_a_clear_code(tmp_path: Path) -> None:
    body = json.loads(in_process(tmp_path)[2]["content"])
    assert body["code"] == "ERR_TOOL_INPUT_REQUIRED"
    assert body["error"].startswith(
        "the server 'asking' needs the user's input to finish this call (When do you"
    )
    assert body["questions"] == [{"server": "asking", "key": "when", "kind": "form",
                                  "message": "When do you want to go to Paris?", "schema": WHEN}]  # fmt: skip
    assert rounds(tmp_path) == [first("book", PARIS)]
