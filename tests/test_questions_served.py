"""A tool's question from the command line (``minloop answer``), over HTTP (a paused run's
pending list and its answer endpoint) and over A2A (input-required until answered). The tool is
``trip`` of tests/servers/served.py, which asks the date first."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from minloop.cli.app import app
from minloop.testing import ChatServer, call, reply
from tests.serving import served

WHEN = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}
ASKED = {
    "server": "travel",
    "key": "when",
    "kind": "form",
    "message": "When do you go to Paris?",
    "schema": WHEN,
}
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def options(server: ChatServer, store: Path) -> list[str]:
    return ["--model", "m", "--base-url", server.base_url, "--tools", "tests.servers.served:trip", "--no-builtin",
            "--store", str(store)]  # fmt: skip


@pytest.mark.parametrize(
    ("given", "said", "result"),
    [
        (["--json", '{"date": "2026-12-24"}'], "answered", "trip to Paris on 2026-12-24"),
        (["--decline"], "declined", "no trip: decline"),
        (["--cancel"], "cancelled", "no trip: cancel"),
    ],
)
def test_a_question_is_answered_from_the_command_line_and_the_run_goes_on(
    tmp_path: Path, given: list[str], said: str, result: str
) -> None:
    script = [reply(None, call("trip", {"city": "Paris"}, id="c1")), reply("Done.")]
    store = tmp_path / "runs.db"
    with ChatServer(script) as server:
        code, output = invoke("run", "plan my trip", *options(server, store))
        assert code == 4, output
        run_id = output.split("minloop answer ")[1].split()[0]
        assert "trip" in output and "c1 · its server asks" in output
        assert f"? travel (when): When do you go to Paris? · fields: {json.dumps(WHEN)}" in output
        assert f"minloop answer {run_id} c1 --store {store} --json '{{...}}'" in output

        code, shown = invoke("answer", run_id, "c1", *given, "--store", str(store))
        assert (code, shown.strip()) == (0, f"{said} c1 of {run_id}; go on with: minloop resume {run_id}")
        code, resumed = invoke("resume", run_id, *options(server, store), "--json")
    doc = json.loads(resumed)
    assert (code, doc["status"]) == (0, "success")
    assert json.loads(doc["messages"][2]["content"])["result"] == result


def test_a_bad_answer_on_the_command_line_is_a_clear_error(tmp_path: Path) -> None:
    script = [reply(None, call("trip", {"city": "Paris"}, id="c1"))]
    store = tmp_path / "runs.db"
    with ChatServer(script) as server:
        run_id = json.loads(invoke("run", "plan", *options(server, store), "--json")[1])["trace_id"]
    where = ["--store", str(store)]
    for args, words in [
        (["c1", "--json", "{nope"], "--json: not JSON: Expecting property name enclosed in double quotes"),
        (["c1", "--json", "[1]"], "--json: give a JSON object, not list"),
        (["c1", "--json", '{"day": 1}'], "does not fit its schema: (root): 'date' is a required property"),
        (["c1", "--decline", "--cancel"], "give one of --json, --decline and --cancel"),
        (
            ["c9", "--decline"],
            f"run {run_id}: no call c9 waits for answers to its server's questions (waiting: c1)",
        ),
    ]:
        code, said = invoke("answer", run_id, *args, *where)
        assert code == 2 and words in " ".join(said.split()), said


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    where = tmp_path_factory.mktemp("served")
    with served(str(where / "runs.db"), counts=where) as (base, _):
        yield base, where


def wait_for(client: httpx.Client, run_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        state = client.get(f"/runs/{run_id}").json()
        if state["status"] == status:
            return state
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {status}: {state}")


def test_a_served_run_lists_the_question_and_takes_the_answer(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        run_id = client.post("/runs", json={"prompt": "trip Paris"}).json()["run_id"]
        wait_for(client, run_id, "paused")
        [pending] = client.get(f"/runs/{run_id}/pending").json()
        call_id = pending["call_id"]
        assert re.fullmatch(r"[0-9a-f]{16}", pending["digest"])  # the arguments a decision is made on
        assert pending == {"call_id": call_id, "name": "trip", "arguments": '{"city": "Paris"}', "step": 1,
                           "why": "question", "questions": [ASKED], "digest": pending["digest"]}  # fmt: skip
        wrong = client.post(f"/runs/{run_id}/calls/{call_id}/answer", json={"content": {"date": 5}})
        assert (
            wrong.status_code == 409 and "date: 5 is not of type 'string'" in wrong.json()["error"]["message"]
        )
        bad = client.post(f"/runs/{run_id}/calls/{call_id}/answer", json={"action": "maybe"})
        assert bad.status_code == 422
        ok = client.post(f"/runs/{run_id}/calls/{call_id}/answer", json={"content": {"date": "2026-12-24"}})
        assert ok.status_code == 202
        state = wait_for(client, run_id, "success")
    assert state["result"]["final_message"]["content"].startswith(
        'done: {"result": "trip to Paris on 2026-12-24"'
    )


def test_an_a2a_task_asks_the_question_and_the_reply_answers_it(server: tuple[str, Path]) -> None:
    from a2a.client import A2ACardResolver, create_client
    from a2a.helpers.proto_helpers import get_artifact_text, new_text_message
    from a2a.types import Role, SendMessageRequest, TaskState

    def state_of(responses: list[Any]) -> Any:
        last = responses[-1]
        return last.status_update.status.state if last.HasField("status_update") else last.task.status.state

    def said(responses: list[Any]) -> str:
        last = responses[-1]
        status = last.status_update.status if last.HasField("status_update") else last.task.status
        return " ".join(p.text for p in status.message.parts)

    async def talk() -> tuple[list[Any], list[Any], list[Any]]:
        async with httpx.AsyncClient() as http:
            client = await create_client(await A2ACardResolver(http, server[0]).get_agent_card())

        async def send(text: str, task: Any = None) -> list[Any]:
            where = {} if task is None else {"task_id": task.id, "context_id": task.context_id}
            message = new_text_message(text, role=Role.ROLE_USER, **where)
            return [r async for r in client.send_message(SendMessageRequest(message=message))]

        asked = await send("trip Rome")
        again = await send('{"day": 1}', asked[0].task)
        done = await send('{"date": "2027-01-01"}', asked[0].task)
        return asked, again, done

    asked, again, done = asyncio.run(talk())
    assert state_of(asked) == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "travel asks (when): When do you go to Rome?" in said(asked)
    assert "travel 询问（when）：When do you go to Rome?" in said(asked)
    assert state_of(again) == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "'date' is a required property" in said(again)
    assert state_of(done) == TaskState.TASK_STATE_COMPLETED
    artifacts = [r.artifact_update.artifact for r in done if r.HasField("artifact_update")]
    assert get_artifact_text(artifacts[-1]).startswith('done: {"result": "trip to Rome on 2027-01-01"')


def test_on_a_terminal_the_question_is_asked_there_until_the_answer_fits(tmp_path: Path) -> None:
    import os
    import pty
    import select
    import subprocess
    import sys

    from tests.serving import ROOT

    script = [reply(None, call("trip", {"city": "Paris"}, id="c1")), reply("Done.")]
    with ChatServer(script) as server:
        main, child = pty.openpty()
        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", "COLUMNS": "200"}
        proc = subprocess.Popen(
            [sys.executable, "-c", "from minloop.cli import main; main()", "run", "plan my trip",
             *options(server, tmp_path / "runs.db"), "--trace-db", str(tmp_path / "traces.db")],
            stdin=child, stdout=child, stderr=child, env=env, cwd=tmp_path,
        )  # fmt: skip
        os.close(child)
        seen, typed = "", []
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([main], [], [], 0.1)[0]:
                try:
                    seen += os.read(main, 4096).decode(errors="replace")
                except OSError:
                    break
            if seen.count("(empty: decline)") > len(typed):
                typed.append('{"date": 5}' if not typed else '{"date": "2026-12-24"}')
                os.write(main, (typed[-1] + "\n").encode())
        proc.wait(timeout=10)
        os.close(main)
    flat = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", seen).split())
    assert proc.returncode == 0, seen
    assert "travel asks: When do you go to Paris?" in flat
    assert "date: 5 is not of type 'string'" in flat and len(typed) == 2
    assert "trip to Paris on 2026-12-24" in flat
