"""Every request a client can send to ``minloop serve`` gets an answer: a bad one a 4xx with a
JSON error naming the field, never a file path nor the whole of a long input, and nothing
unhandled in the server's log."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serving import served
from tests.test_serve import wait_for

TOKEN = {"Authorization": "Bearer alpha"}
LONG = "x" * 60_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Path]]:
    where = tmp_path_factory.mktemp("requests")
    log = where / "server.log"
    with served(str(where / "runs.db"), "--token", "alpha", log=log) as (base, _):
        with httpx.Client(base_url=base, headers=TOKEN, timeout=30) as client:
            yield client, where
    assert log.read_text() == ""


def refused(answer: httpx.Response, status: int, where: Path) -> str:
    """The error's message, once checked: the status, the JSON shape, no path, nothing long."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert list(body) == ["error"] and body["error"]["status"] == status
    message: str = body["error"]["message"]
    assert str(where) not in message and "runs.db" not in message and len(message) <= 640
    assert (where / "server.log").read_text() == ""
    return message


def chat(*messages: Any, **fields: Any) -> dict[str, Any]:
    return {"model": "minloop", "messages": list(messages), **fields}


USER = {"role": "user", "content": "add 1 2"}
CALL = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("body", "words"),
    [
        (chat({"role": "robot", "content": "hi"}), "messages[0].role: Input should be 'system', 'developer'"),
        (chat({"role": "system", "content": "be brief"}), "messages: at least one user message is required"),
        (chat({"role": "user", "content": 5}), "messages[0].content: must be a string, a list of content parts or null, not a number"),
        (chat({"role": "user", "content": True}), "messages[0].content: must be a string, a list of content parts or null, not true or false"),
        (chat({"role": "user", "content": {"text": "hi"}}), "messages[0].content: must be a string, a list of content parts or null, not an object"),
        (chat({"role": "tool", "tool_call_id": "c1", "content": "3"}), "messages[0]: a tool message must directly follow the assistant message that requested it"),
        (chat(USER, {"role": "assistant", "tool_calls": [CALL]}), "messages[1]: tool call(s) ['c1'] have no result before the end of the transcript"),
        (chat(USER, {"role": "assistant", "tool_calls": [CALL]}, {"role": "tool", "tool_call_id": "c2", "content": "3"}), "messages[2]"),
        (chat(USER, {"role": "assistant", "tool_calls": [{"id": "c1"}]}), "messages[1]: tool_calls[0] needs a string id and function.name"),
        (chat({"role": "user"}), "messages[0]: a user message needs content"),
        (chat({"role": "user", "content": [1]}), "messages[0]: content[0] must be an object with a string 'type'"),
        (chat({"content": "hi"}), "messages[0].role: Field required"),
        (chat(), "messages: List should have at least 1 item"),
        ({"messages": "hi"}, "messages: Input should be a valid list"),
        ({"messages": ["hi"]}, "messages[0]: Input should be a valid dictionary"),
        (chat(USER, model=5), "model: Input should be a valid string"),
        (chat({"role": LONG, "content": "hi"}), "messages[0].role: Input should be"),
        (chat({"role": "user", "content": "\ud800"}), "a lone surrogate"),
    ],
)  # fmt: skip
def test_a_chat_completion_the_loop_cannot_take_is_a_422_naming_the_message_and_field(
    server: tuple[httpx.Client, Path], body: dict[str, Any], words: str, stream: bool
) -> None:
    client, where = server
    content = json.dumps({**body, "stream": stream}).encode()
    answer = client.post(
        "/v1/chat/completions", content=content, headers={"content-type": "application/json"}
    )
    message = refused(answer, 400 if "surrogate" in words else 422, where)
    assert words in message


@pytest.mark.parametrize(
    ("path", "content", "status", "words"),
    [
        (
            "/runs",
            b'{"prompt": "hi", "x": NaN}',
            400,
            "the request body is not JSON: NaN is not a JSON value",
        ),
        ("/runs", b"[" * 100_000, 400, "the request body is not JSON"),
        (
            "/runs",
            b'{"prompt": "\\udfff"}',
            400,
            "or a lone surrogate (\\ud800 to \\udfff), which is no text",
        ),
        ("/runs", b'{"prompt": "hi", "' + LONG.encode() + b'": 1}', 422, "Extra inputs are not permitted"),
        ("/runs", b'{"prompt": "' + b"1" * 5000 + b'"}', 202, ""),
        ("/runs", b'{"prompt": ' + b"1" * 5000 + b"}", 400, "the request body is not JSON"),
        ("/runs", b"\xff\xfe\x00", 400, "the request body is not JSON"),
        ("/runs", b'{"prompt": "a\\u0000b"}', 400, "the request body holds a NUL character (\\u0000)"),
        (
            "/v1/chat/completions",
            json.dumps(chat(USER, x=[[[[{"a": "\x00"}]]]])).encode(),
            400,
            "a NUL character",
        ),
        (
            "/v1/chat/completions",
            json.dumps(chat({**USER, "x": json.loads("[" * 66 + "]" * 66)})).encode(),
            400,
            "the request body nests deeper than 64 levels",
        ),
        ("/v1/chat/completions", b"", 422, "messages: Field required"),
        ("/v1/chat/completions", b"null", 422, "body: Input should be a valid dictionary"),
    ],
)
def test_a_body_that_is_no_json_object_or_holds_a_long_name_is_a_4xx(
    server: tuple[httpx.Client, Path], path: str, content: bytes, status: int, words: str
) -> None:
    client, where = server
    answer = client.post(path, content=content, headers={"content-type": "application/json"})
    if status == 202:
        assert answer.status_code == 202 and (where / "server.log").read_text() == ""
        return
    assert words in refused(answer, status, where)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/runs", "POST"),
        ("GET", "/runs", "POST"),
        ("DELETE", "/runs/trc_1", "GET, HEAD"),
        ("GET", "/runs/trc_1/cancel", "POST"),
        ("PATCH", "/runs/trc_1/events", "GET, HEAD"),
        ("GET", "/runs/trc_1/calls/c1/approve", "POST"),
        ("GET", "/v1/chat/completions", "POST"),
    ],
)
def test_a_wrong_method_is_a_json_405_saying_which_it_takes(
    server: tuple[httpx.Client, Path], method: str, path: str, allowed: str
) -> None:
    client, where = server
    answer = client.request(method, path)
    assert refused(answer, 405, where) == f"{method} {path}: this endpoint takes {allowed}"
    assert sorted(answer.headers["allow"].split(", ")) == allowed.split(", ")


def test_a_wrong_path_is_a_json_404(server: tuple[httpx.Client, Path]) -> None:
    client, where = server
    assert refused(client.get("/nothing/here"), 404, where) == "GET /nothing/here: there is no such endpoint"
    assert refused(client.get("/" + LONG), 404, where).endswith(
        "... (60001 characters): there is no such endpoint"
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/runs/{id}"),
        ("GET", "/runs/{id}/events"),
        ("GET", "/runs/{id}/pending"),
        ("POST", "/runs/{id}/resume"),
        ("POST", "/runs/{id}/cancel"),
        ("POST", "/runs/{id}/calls/c1/approve"),
    ],
)
def test_an_unknown_run_is_a_404_that_names_no_file_and_cuts_a_long_id_short(
    server: tuple[httpx.Client, Path], method: str, path: str
) -> None:
    client, where = server
    message = refused(client.request(method, path.format(id="trc_nothing")), 404, where)
    assert message == "run trc_nothing: no run with this id for this token"
    message = refused(client.request(method, path.format(id=LONG)), 404, where)
    assert message == f"run_id {'x' * 80}... (60000 characters): no such id"
    message = refused(client.request(method, path.format(id="trc%00x%0A")), 404, where)
    assert message == "run_id: no such id (it holds control characters)"


def test_a_decision_for_a_long_call_id_is_refused_with_the_id_cut_short(
    server: tuple[httpx.Client, Path],
) -> None:
    client, where = server
    run_id = client.post("/runs", json={"prompt": "delete a.txt"}).json()["run_id"]
    wait_for(client, run_id, "paused")
    message = refused(client.post(f"/runs/{run_id}/resume", json={"decisions": {LONG: True}}), 422, where)
    assert (
        message
        == "the request body is not valid: decisions.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (60000 characters).[key]: String should have at most 200 characters"
    )
    many = {f"call_{i}_{'y' * 190}": True for i in range(1000)}
    message = refused(client.post(f"/runs/{run_id}/resume", json={"decisions": many}), 409, where)
    assert message.startswith(f"run {run_id}: no call call_0_yyy") and "(waiting: " in message
    message = refused(client.post(f"/runs/{run_id}/calls/{LONG}/approve"), 404, where)
    assert message == f"call_id {'x' * 80}... (60000 characters): no such id"
    assert client.post(f"/runs/{run_id}/cancel").json()["status"] == "cancelled"


def test_any_last_event_id_is_taken_and_one_past_the_end_ends_the_stream(
    server: tuple[httpx.Client, Path],
) -> None:
    client, where = server
    run_id = client.post("/runs", json={"prompt": "add 2 3"}).json()["run_id"]
    wait_for(client, run_id, "success")
    whole = client.get(f"/runs/{run_id}/events").text
    assert whole.count("event: RunEnd") == 1
    for past in ("1" * 40, "9" * 4000, "0" * 50 + "99", "9223372036854775808"):
        answer = client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": past})
        assert answer.status_code == 200 and answer.text == ""
    after = client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": "002"}).text
    assert after.startswith("id: 3\n") and whole.endswith(after)
    for wrong in ("²".encode(), "٣".encode(), b"-1", b"2.0", b"x", b"1 2"):
        message = refused(client.get(f"/runs/{run_id}/events", headers={"Last-Event-ID": wrong}), 400, where)
        assert message == "Last-Event-ID must be the number of an event this stream sent"


def test_a_token_of_any_characters_is_refused_plainly(server: tuple[httpx.Client, Path]) -> None:
    client, where = server
    for given in (
        "Bearer é".encode("latin-1"),
        b"Bearer \xe4\xbd\xa0\xe5\xa5\xbd",
        b"Bearer " + b"a" * 8000,
        b"Basic alpha",
    ):
        answer = client.get("/runs/trc_x", headers={"Authorization": given})
        assert refused(answer, 401, where) == "this server needs 'Authorization: Bearer <token>'"
        answer = client.post("/a2a", json={}, headers={"Authorization": given})
        assert refused(answer, 401, where) == "this server needs 'Authorization: Bearer <token>'"


def test_a_run_that_breaks_on_the_server_is_a_json_500_and_its_traceback_is_logged(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    failed = {"message": "the run failed on the server; its log says why", "status": 500}
    with served(str(tmp_path / "runs.db"), log=log) as (base, _):
        body = chat({"role": "user", "content": "crash"})
        answer = httpx.post(f"{base}/v1/chat/completions", json=body)
        assert answer.status_code == 500 and answer.json() == {"error": failed}
        streamed = httpx.post(f"{base}/v1/chat/completions", json={**body, "stream": True})
        assert streamed.status_code == 200 and streamed.text.endswith(
            f"data: {json.dumps({'error': failed})}\n\n"
        )
        assert httpx.post(f"{base}/v1/chat/completions", json=chat(USER)).status_code == 200
        message = {"role": "ROLE_USER", "parts": [{"text": "crash"}], "messageId": "m1"}
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
        task = httpx.post(f"{base}/a2a", json=rpc, headers={"A2A-Version": "1.0"}).json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_FAILED"
        assert task["status"]["message"]["parts"] == [{"text": failed["message"]}]
    logged = log.read_text()
    assert (
        logged.count("a chat completion's run failed") == 2 and logged.count("an A2A task's run failed") == 1
    )
    assert logged.count("RuntimeError: the model broke") == 3
    assert "Exception in ASGI application" not in logged


def test_an_idle_connection_stays_open_longer_than_clients_keep_theirs(
    server: tuple[httpx.Client, Path],
) -> None:
    client, _ = server
    host, port = str(client.base_url).removeprefix("http://").rstrip("/").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        for wait in (6, 0):  # the second request after uvicorn's own idle limit (5 s) has passed
            conn.request("GET", "/runs/trc_x", headers={"Authorization": "Bearer alpha"})
            answer = conn.getresponse()  # a closed connection raises RemoteDisconnected here
            assert answer.status == 404 and json.loads(answer.read())["error"]["status"] == 404
            time.sleep(wait)
    finally:
        conn.close()
