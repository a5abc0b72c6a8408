"""``minloop serve`` over real HTTP: runs, events, approvals, resume, cancel, tokens, bad bodies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serving import ROOT, free_port, served


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    where = tmp_path_factory.mktemp("served")
    with served(str(where / "runs.db"), counts=where) as (base, _):
        yield base, where


def events_of(
    client: httpx.Client, run_id: str, last: int | None = None, stop_after: int | None = None
) -> list[tuple[int, dict[str, Any]]]:
    headers = {} if last is None else {"Last-Event-ID": str(last)}
    got: list[tuple[int, dict[str, Any]]] = []
    with client.stream("GET", f"/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200, response.read()
        number = 0
        for line in response.iter_lines():
            if line.startswith("id: "):
                number = int(line[4:])
            elif line.startswith("data: "):
                got.append((number, json.loads(line[6:])))
                if stop_after is not None and len(got) == stop_after:
                    break
    return got


def wait_for(client: httpx.Client, run_id: str, *statuses: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        state = client.get(f"/runs/{run_id}").json()
        if state["status"] in statuses:
            return state
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {statuses}: {state}")


def test_a_run_started_over_http_streams_the_typed_events_and_ends_with_its_result(
    server: tuple[str, Path],
) -> None:
    with httpx.Client(base_url=server[0]) as client:
        started = client.post("/runs", json={"prompt": "add 2 3"})
        assert started.status_code == 202
        run_id = started.json()["run_id"]
        events = events_of(client, run_id)
        assert [n for n, _ in events] == list(range(1, len(events) + 1))
        kinds = [e["type"] for _, e in events]
        assert kinds[0] == "ToolCallStarted" and kinds[-1] == "RunEnd"
        assert {"ToolCallFinished", "ToolCallResult", "StepEnd", "TextDelta"} <= set(kinds)
        finished = next(e for _, e in events if e["type"] == "ToolCallFinished")
        assert finished["call"]["name"] == "add" and json.loads(finished["call"]["arguments"]) == {
            "a": 2,
            "b": 3,
        }
        end = events[-1][1]["result"]
        assert end["status"] == "success"
        assert end["final_message"]["content"].startswith('done: {"result": 5')
        state = wait_for(client, run_id, "success")
        assert state["result"]["final_message"] == end["final_message"] and state["pending"] == []


def test_a_run_started_with_accept_event_stream_answers_with_its_events(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        headers = {"Accept": "text/event-stream"}
        with client.stream("POST", "/runs", json={"prompt": "add 7 8"}, headers=headers) as response:
            assert response.status_code == 200, response.read()
            location = response.headers["location"]
            lines = list(response.iter_lines())
        run_id = location.rsplit("/", 1)[-1]
        assert location == f"/runs/{run_id}"
        events = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
        assert [e for _, e in events_of(client, run_id)] == events
        assert events[-1]["type"] == "RunEnd" and events[-1]["result"]["final_message"]["content"].startswith(
            'done: {"result": 15'
        )


def test_a_runs_events_hold_only_what_the_redactor_leaves(server: tuple[str, Path]) -> None:
    secret = "sk-" + "a1b2c3d4" * 3
    with httpx.Client(base_url=server[0]) as client:
        run_id = client.post("/runs", json={"prompt": f"say {secret}"}).json()["run_id"]
        events = events_of(client, run_id)
    text = "".join(e["text"] for _, e in events if e["type"] == "TextDelta")
    assert text == "echo: say [REDACTED]" and secret not in json.dumps(events)


def test_a_client_that_drops_and_reconnects_sees_every_event_exactly_once(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        run_id = client.post("/runs", json={"prompt": "slow 0.3"}).json()["run_id"]
        first = events_of(client, run_id, stop_after=3)  # then the client goes away
        rest = events_of(client, run_id, last=first[-1][0])
        whole = events_of(client, run_id)
        assert first + rest == whole
        assert [n for n, _ in whole] == list(range(1, len(whole) + 1))
        assert whole[-1][1]["result"]["status"] == "success"  # leaving the stream did not cancel the run
        assert (server[1] / "wait").read_text() == "ran\n"


def test_a_call_needing_approval_pauses_the_run_until_it_is_approved_or_denied(
    server: tuple[str, Path],
) -> None:
    with httpx.Client(base_url=server[0]) as client:
        denied = client.post("/runs", json={"prompt": "delete a.txt"}).json()["run_id"]
        state = wait_for(client, denied, "paused")
        pending = client.get(f"/runs/{denied}/pending").json()
        assert pending == state["pending"] and [(p["name"], p["why"]) for p in pending] == [
            ("delete", "approval")
        ]
        assert json.loads(pending[0]["arguments"]) == {"name": "a.txt"}
        answer = client.post(
            f"/runs/{denied}/calls/{pending[0]['call_id']}/deny", json={"reason": "不要删除"}
        )
        assert answer.status_code == 202
        end = wait_for(client, denied, "success")
        assert "不要删除" in end["result"]["final_message"]["content"]
        assert not (server[1] / "delete").exists()

        approved = client.post("/runs", json={"prompt": "delete b.txt"}).json()["run_id"]
        call_id = wait_for(client, approved, "paused")["pending"][0]["call_id"]
        assert client.post(f"/runs/{approved}/calls/{call_id}/approve").status_code == 202
        end = wait_for(client, approved, "success")
        assert end["result"]["final_message"]["content"].startswith('done: {"result": "deleted b.txt"')
        assert (server[1] / "delete").read_text() == "ran\n"
        again = client.post(f"/runs/{approved}/calls/{call_id}/approve")
        assert again.status_code == 409 and "has ended" in again.json()["error"]["message"]


def test_a_going_run_is_cancelled_over_http(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        run_id = client.post("/runs", json={"prompt": "slow 5"}).json()["run_id"]
        time.sleep(0.2)
        assert client.post(f"/runs/{run_id}/cancel").status_code == 202
        assert wait_for(client, run_id, "cancelled")["status"] == "cancelled"
        end = events_of(client, run_id)[-1][1]
        assert end["type"] == "RunEnd" and end["result"]["status"] == "cancelled"
        assert client.post(f"/runs/{run_id}/cancel").status_code == 409


def test_a_paused_run_is_cancelled_and_its_stream_ends_with_that(server: tuple[str, Path]) -> None:
    deleted = server[1] / "delete"
    ran = deleted.read_text() if deleted.exists() else ""
    with httpx.Client(base_url=server[0]) as client:
        run_id = client.post("/runs", json={"prompt": "delete d.txt"}).json()["run_id"]
        call_id = wait_for(client, run_id, "paused")["pending"][0]["call_id"]
        paused = events_of(client, run_id)
        answer = client.post(f"/runs/{run_id}/cancel")
        assert answer.status_code == 202 and answer.json() == {"run_id": run_id, "status": "cancelled"}
        state = client.get(f"/runs/{run_id}").json()
        after = events_of(client, run_id, last=paused[-1][0])
        late = client.post(f"/runs/{run_id}/calls/{call_id}/approve")
    assert paused[-1][1]["result"]["status"] == "paused"
    assert (state["status"], state["pending"], state["result"]["status"]) == ("cancelled", [], "cancelled")
    assert state["result"]["messages"] == paused[-1][1]["result"]["messages"]
    assert [(n, e["type"], e["result"]["status"]) for n, e in after] == [
        (paused[-1][0] + 1, "RunEnd", "cancelled")
    ]
    assert (
        late.status_code == 409
        and "the run was cancelled by http; a cancelled run cannot be resumed"
        in late.json()["error"]["message"]
    )
    assert (deleted.read_text() if deleted.exists() else "") == ran  # the call never ran


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b"{not json", 400, "not JSON"),
        (b'{"prompt": "hi", "colour": "red"}', 422, "colour: Extra inputs are not permitted"),
        (b'{"prompt": 3}', 422, "prompt: Input should be a valid string"),
        (json.dumps({"prompt": "x" * 100_001}).encode(), 422, "prompt: String should have at most 100000"),
        (b'{"prompt": "' + b"x" * 1_000_001 + b'"}', 413, "over 1000000 bytes"),
    ],
)
def test_a_bad_body_is_a_4xx_that_says_what_is_wrong(
    server: tuple[str, Path], body: bytes, status: int, words: str
) -> None:
    answer = httpx.post(f"{server[0]}/runs", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status and words in answer.json()["error"]["message"]


def test_an_unknown_run_is_a_404(server: tuple[str, Path]) -> None:
    answer = httpx.get(f"{server[0]}/runs/trc_nothing")
    assert (answer.status_code, answer.json()["error"]["message"]) == (
        404,
        "run trc_nothing: no run with this id",
    )


def test_a_finished_runs_state_counts_its_every_step(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        one = client.post("/runs", json={"prompt": "hi"}).json()["run_id"]
        two = client.post("/runs", json={"prompt": "add 2 3"}).json()["run_id"]
        said, added = wait_for(client, one, "success"), wait_for(client, two, "success")
    assert (said["steps"], len(said["result"]["steps"])) == (1, 1)
    assert (added["steps"], len(added["result"]["steps"])) == (2, 2)


def test_a_token_is_required_and_a_run_is_visible_only_to_the_token_that_started_it(tmp_path: Path) -> None:
    with served(str(tmp_path / "runs.db"), "--token", "alpha", "--token", "beta") as (base, _):
        assert httpx.post(f"{base}/runs", json={"prompt": "hi"}).status_code == 401
        wrong = httpx.post(f"{base}/runs", json={"prompt": "hi"}, headers={"Authorization": "Bearer gamma"})
        assert wrong.status_code == 401 and "Bearer" in wrong.json()["error"]["message"]
        with httpx.Client(base_url=base, headers={"Authorization": "Bearer alpha"}) as client:
            run_id = client.post("/runs", json={"prompt": "hi"}).json()["run_id"]
            assert wait_for(client, run_id, "success")["result"]["final_message"]["content"] == "echo: hi"
        beta = {"Authorization": "Bearer beta"}
        for path in (f"/runs/{run_id}", f"/runs/{run_id}/events", f"/runs/{run_id}/pending"):
            answer = httpx.get(f"{base}{path}", headers=beta)
            assert (
                answer.status_code == 404
                and "no run with this id for this token" in answer.json()["error"]["message"]
            )
        assert httpx.post(f"{base}/runs/{run_id}/resume", json={}, headers=beta).status_code == 404


@pytest.mark.parametrize(
    ("host", "token", "env"),
    [
        ("0.0.0.0", [], ""),
        ("0.0.0.0", ["--token", ""], ""),
        ("::", ["--token", "   "], ""),
        ("192.168.1.5", [], " \t "),
        ("example.com", ["--token", " ", "--token", ""], ""),
    ],
)
def test_binding_beyond_loopback_without_a_real_token_is_refused_in_one_line(
    host: str, token: list[str], env: str
) -> None:
    command = [sys.executable, "-c", "from minloop.cli import main; main()", "serve", "--loop",
               "tests.servers.served:loop", "--port", str(free_port()), "--host", host, *token]  # fmt: skip
    environ = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}", "MINLOOP_TOKEN": env}
    outcome = subprocess.run(command, env=environ, capture_output=True, text=True, timeout=60)
    lines = outcome.stderr.strip().splitlines()
    assert outcome.returncode == 2 and len(lines) == 1, outcome.stderr
    assert lines[0].startswith(f"error: binding {host} serves other machines: give --token or MINLOOP_TOKEN")
    assert ("an empty or blank token is no token" in lines[0]) == bool(token)


def test_an_empty_or_blank_token_is_no_token() -> None:
    from minloop.cli.serve import loopback
    from minloop.serve.app import tokens_of

    assert tokens_of("") == tokens_of("  ") == tokens_of(["", " \t"]) == tokens_of(None) == []
    assert tokens_of([" alpha ", "", "beta"]) == ["alpha", "beta"]
    inside = ("127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost", "LOCALHOST.")
    outside = ("0.0.0.0", "::", "10.0.0.1", "example.com", "")
    assert [loopback(h) for h in inside + outside] == [True] * len(inside) + [False] * len(outside)


def test_the_openai_sdk_talks_to_the_loop_through_chat_completions(server: tuple[str, Path]) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=f"{server[0]}/v1", api_key="unused", max_retries=0)
    reply = client.chat.completions.create(
        model="minloop", messages=[{"role": "user", "content": "你好 世界"}]
    )
    assert reply.choices[0].message.content == "echo: 你好 世界" and reply.choices[0].finish_reason == "stop"
    chunks = list(
        client.chat.completions.create(
            model="minloop", messages=[{"role": "user", "content": "add 4 5"}], stream=True
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text.startswith('done: {"result": 9') and chunks[-1].choices[0].finish_reason == "stop"
    with pytest.raises(Exception, match="messages: List should have at least 1 item"):
        client.chat.completions.create(model="minloop", messages=[])


def test_the_a2a_client_reads_the_card_and_a_paused_run_is_input_required_until_approved(
    server: tuple[str, Path],
) -> None:
    import asyncio

    from a2a.client import A2ACardResolver, create_client
    from a2a.helpers.proto_helpers import get_artifact_text, new_text_message
    from a2a.types import Role, SendMessageRequest, TaskState

    async def talk() -> tuple[Any, list[Any], list[Any]]:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, server[0]).get_agent_card()
        client = await create_client(card)
        first = [
            r
            async for r in client.send_message(
                SendMessageRequest(message=new_text_message("add 20 22", role=Role.ROLE_USER))
            )
        ]
        asked = [
            r
            async for r in client.send_message(
                SendMessageRequest(message=new_text_message("delete c.txt", role=Role.ROLE_USER))
            )
        ]
        task = asked[0].task
        assert state_of(asked) == TaskState.TASK_STATE_INPUT_REQUIRED, asked
        reply = new_text_message("是", role=Role.ROLE_USER, task_id=task.id, context_id=task.context_id)
        done = [r async for r in client.send_message(SendMessageRequest(message=reply))]
        return card, first, done

    card, first, done = asyncio.run(talk())
    assert card.name == "minloop" and card.capabilities.streaming
    for responses, words in ((first, 'done: {"result": 42'), (done, 'done: {"result": "deleted c.txt"')):
        assert state_of(responses) == TaskState.TASK_STATE_COMPLETED
        artifacts = [r.artifact_update.artifact for r in responses if r.HasField("artifact_update")]
        artifacts += [a for r in responses if r.HasField("task") for a in r.task.artifacts]
        assert get_artifact_text(artifacts[-1]).startswith(words)
    assert (server[1] / "delete").read_text().count("ran") >= 1


def state_of(responses: list[Any]) -> Any:
    last = responses[-1]
    return last.status_update.status.state if last.HasField("status_update") else last.task.status.state


def test_an_a2a_task_is_visible_only_to_the_token_that_started_it(tmp_path: Path) -> None:
    import asyncio

    from a2a.client import A2ACardResolver, ClientConfig, create_client
    from a2a.helpers.proto_helpers import new_text_message
    from a2a.types import GetTaskRequest, ListTasksRequest, Role, SendMessageRequest, TaskState
    from a2a.utils.errors import A2AError

    async def talk(base: str) -> list[Any]:
        alpha = httpx.AsyncClient(headers={"Authorization": "Bearer alpha"})
        beta = httpx.AsyncClient(headers={"Authorization": "Bearer beta"})
        async with alpha, beta:
            card = await A2ACardResolver(alpha, base).get_agent_card()
            as_alpha = await create_client(card, ClientConfig(httpx_client=alpha))
            as_beta = await create_client(card, ClientConfig(httpx_client=beta))
            start = SendMessageRequest(message=new_text_message("delete e.txt", role=Role.ROLE_USER))
            answers = [r async for r in as_alpha.send_message(start)]
            task = answers[0].task
            seen = await as_alpha.get_task(GetTaskRequest(id=task.id))
            refused = []
            for attempt in (
                as_beta.get_task(GetTaskRequest(id=task.id)),
                _drain(as_beta.send_message(SendMessageRequest(message=new_text_message(
                    "yes", role=Role.ROLE_USER, task_id=task.id, context_id=task.context_id)))),
            ):  # fmt: skip
                try:
                    await attempt
                    refused.append(None)
                except A2AError as exc:
                    refused.append(str(exc))
            listed = [
                [t.id for t in (await c.list_tasks(ListTasksRequest())).tasks] for c in (as_alpha, as_beta)
            ]
            return [task, seen, refused, listed]

    with served(str(tmp_path / "runs.db"), "--token", "alpha", "--token", "beta") as (base, _):
        task, seen, refused, listed = asyncio.run(talk(base))
    assert seen.id == task.id and seen.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert all(r is not None and "not found" in r.lower() for r in refused), refused
    assert listed == [[task.id], []]
    assert not (tmp_path / "delete").exists()


async def _drain(responses: Any) -> None:
    async for _ in responses:
        pass
