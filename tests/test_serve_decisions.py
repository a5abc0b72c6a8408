"""Edits, answers in a tool's place and digests, decided over HTTP on a real ``minloop serve``."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest

from minloop.runs import open_store
from minloop.runs.records import Verdict
from tests.serving import served
from tests.test_serve import wait_for


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    where = tmp_path_factory.mktemp("decisions")
    with served(str(where / "runs.db"), counts=where) as (base, _):
        yield base, where


def paused(client: httpx.Client, prompt: str) -> tuple[str, dict[str, Any]]:
    run_id = client.post("/runs", json={"prompt": prompt}).json()["run_id"]
    return run_id, wait_for(client, run_id, "paused")["pending"][0]


def test_an_edit_runs_the_edited_call_and_the_pending_list_shows_the_digest(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        run_id, call = paused(client, "delete a.txt")
        listed = client.get(f"/runs/{run_id}/pending").json()
        assert [p["digest"] for p in listed] == [call["digest"]] and len(call["digest"]) == 16
        edit = {"arguments": {"name": "安全.txt"}, "digest": call["digest"]}
        answer = client.post(f"/runs/{run_id}/calls/{call['call_id']}/approve", json=edit)
        assert answer.status_code == 202, answer.text
        end = wait_for(client, run_id, "success")
        assert end["result"]["final_message"]["content"].startswith('done: {"result": "deleted 安全.txt"')
        again = client.post(f"/runs/{run_id}/calls/{call['call_id']}/approve")
        assert again.status_code == 409


def test_a_result_answers_in_the_tools_place_and_the_tool_does_not_run(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        run_id, call = paused(client, "delete b.txt")
        ran = _ran(server[1])
        answer = client.post(f"/runs/{run_id}/calls/{call['call_id']}/approve", json={"result": "已保留"})
        assert answer.status_code == 202, answer.text
        end = wait_for(client, run_id, "success")
        assert end["result"]["final_message"]["content"].startswith('done: {"result": "已保留"')
        assert _ran(server[1]) == ran


def test_a_stale_digest_is_refused_and_the_store_is_unchanged(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        run_id, call = paused(client, "delete c.txt")
        before = _rows(server[1] / "runs.db")
        stale = client.post(f"/runs/{run_id}/calls/{call['call_id']}/approve", json={"digest": "0" * 16})
        assert stale.status_code == 409
        message = stale.json()["error"]["message"]
        assert (
            f"digest {'0' * 16}" in message
            and call["digest"] in message
            and "nothing was recorded" in message
        )
        denied = client.post(f"/runs/{run_id}/calls/{call['call_id']}/deny", json={"digest": "1" * 16})
        assert denied.status_code == 409 and f"digest {'1' * 16}" in denied.json()["error"]["message"]
        assert _rows(server[1] / "runs.db") == before
        assert client.get(f"/runs/{run_id}").json()["status"] == "paused"


def test_a_decision_that_is_not_one_thing_is_a_422_naming_the_fields(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        run_id, call = paused(client, "delete d.txt")
        where = f"/runs/{run_id}/calls/{call['call_id']}/approve"
        both = client.post(where, json={"arguments": {"name": "e.txt"}, "result": "no"})
        assert both.status_code == 422 and both.json()["error"]["message"].startswith("arguments, result:")
        listed = client.post(where, json={"arguments": ["e.txt"]})
        assert listed.status_code == 422 and "arguments:" in listed.json()["error"]["message"]
        unfit = client.post(where, json={"arguments": {"nom": "e.txt"}})
        assert unfit.status_code == 409 and "edited arguments" in unfit.json()["error"]["message"]
        assert client.get(f"/runs/{run_id}").json()["status"] == "paused"


def test_a_second_decision_on_a_call_says_who_decided_it_and_when(server: tuple[str, Path]) -> None:
    with httpx.Client(base_url=server[0]) as client:
        run_id, call = paused(client, "delete f.txt")
        store = open_store(str(server[1] / "runs.db"))  # decided elsewhere (``minloop approve``)
        try:
            store.decide(run_id, {call["call_id"]: Verdict(False, "不要", "alice", time.time())})
        finally:
            store.close()
        second = client.post(
            f"/runs/{run_id}/calls/{call['call_id']}/approve", json={"digest": call["digest"]}
        )
        assert second.status_code == 409
        message = second.json()["error"]["message"]
        assert message.startswith(
            f"run {run_id}: call {call['call_id']} was already decided: denied by alice at "
        )
        assert message.endswith(" UTC (reason: 不要); a decision stands once made")


def _ran(where: Path) -> int:
    """How many times the delete tool ran."""
    return len((where / "delete").read_text().splitlines()) if (where / "delete").exists() else 0


def _rows(path: Path) -> list[Any]:
    with closing(sqlite3.connect(path)) as db:
        tables = [
            r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        return [(t, json.dumps(db.execute(f"SELECT * FROM {t}").fetchall(), default=str)) for t in tables]
