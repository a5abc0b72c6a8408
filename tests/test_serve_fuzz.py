"""Property-based tests of the served app (``create_app`` over a SQLite or a PostgreSQL store,
in process):
whatever body, path, method or header a client sends, the answer is a success or a 4xx with a
JSON error, never a 500 and never an exception escaping. Deterministic (``derandomize=True``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from minloop.runs import open_store
from minloop.serve import create_app
from tests.servers.served import loop

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
roles = st.sampled_from(["user", "system", "developer", "assistant", "tool", "function", "robot", ""])
words = st.sampled_from(["add 2 3", "add x y", "delete a.txt", "hi", "你好", "", " "]) | st.text(max_size=30)
calls = st.lists(
    st.fixed_dictionaries(
        {"id": st.sampled_from(["c1", "c2", ""]) | json_values, "type": st.just("function")},
        optional={
            "function": st.fixed_dictionaries(
                {"name": st.sampled_from(["add", "delete", "nothing"]) | json_values},
                optional={"arguments": st.sampled_from(['{"a": 1, "b": 2}', "{", "[]", ""]) | json_values},
            )
        },
    ),
    max_size=3,
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": roles | json_values},
        optional={
            "content": words | json_values,
            "tool_calls": calls | json_values,
            "tool_call_id": st.sampled_from(["c1", "c2"]) | json_values,
            "name": st.sampled_from(["add", "delete"]) | json_values,
        },
    ),
    max_size=5,
)
chat_bodies = st.fixed_dictionaries(
    {"messages": messages | json_values},
    optional={
        "model": st.text(max_size=10) | json_values,
        "stream": st.booleans() | json_values,
        "temperature": json_values,
    },
)
ids = st.sampled_from(["trc_x", "c1"]) | st.text(alphabet=st.characters(codec="utf-8"), max_size=40)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    if request.param == "sqlite":
        store = open_store(str(tmp_path_factory.mktemp("fuzz") / "runs.db"))
    else:
        import psycopg

        dsn = request.getfixturevalue("postgres").dsn
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE fuzzed")
        store = open_store(dsn.rsplit("/", 1)[0] + "/fuzzed")
    with TestClient(create_app(loop, store, lease_scan=None), raise_server_exceptions=True) as client:
        yield client
    store.close()


def answered(response: Any) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400 and response.request.method != "HEAD":
        body = response.json()
        assert body["error"]["status"] == response.status_code and body["error"]["message"]


@FUZZ
@given(body=chat_bodies | json_values)
def test_any_chat_completion_body_is_answered_or_refused_as_json(client: TestClient, body: Any) -> None:
    answered(client.post("/v1/chat/completions", content=json.dumps(body)))


@FUZZ
@given(
    body=st.fixed_dictionaries({}, optional={"prompt": words | json_values, "x": json_values}) | json_values
)
def test_any_run_body_is_answered_or_refused_as_json(client: TestClient, body: Any) -> None:
    answered(client.post("/runs", content=json.dumps(body)))


@FUZZ
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
    path=st.sampled_from(
        [
            "/runs/{}",
            "/runs/{}/events",
            "/runs/{}/pending",
            "/runs/{}/resume",
            "/runs/{}/cancel",
            "/runs/trc_x/calls/{}/approve",
            "/runs/trc_x/calls/{}/deny",
            "/{}",
            "/v1/{}",
        ]
    ),
    run_id=ids,
    body=st.none() | json_values,
    last=st.none() | st.text(alphabet=st.characters(codec="latin-1"), max_size=30).map(str.strip),
)
def test_any_method_path_and_header_is_answered_or_refused_as_json(
    client: TestClient, method: str, path: str, run_id: str, body: Any, last: str | None
) -> None:
    headers = {} if last is None else {"Last-Event-ID": last.encode("latin-1")}
    content = None if body is None else json.dumps(body)
    from urllib.parse import quote

    response = client.request(method, path.format(quote(run_id, safe="")), content=content, headers=headers)
    answered(response)


def test_a_stored_run_is_found_after_the_fuzzing(client: TestClient, tmp_path: Path) -> None:
    started = client.post("/runs", json={"prompt": "add 2 3"})
    assert started.status_code == 202
    with client.stream("GET", f"/runs/{started.json()['run_id']}/events") as events:
        assert "event: RunEnd" in "".join(events.iter_text())
