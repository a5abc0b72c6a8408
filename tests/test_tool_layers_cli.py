"""``minloop run`` with the layers around tool calls: retries, the result cache shared through a
file, and the cap on concurrent calls, against a real Chat Completions server on 127.0.0.1."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from minloop.cli.app import app
from minloop.testing import ChatServer, call, reply

TOOLS = '''
from pathlib import Path

from minloop import TransientToolError, tool

CALLS = Path("calls.txt")


@tool(read_only=True)
def stock(item: str) -> int:
    """How many of an item are in stock."""
    with CALLS.open("a") as f:
        f.write(item + "\\n")
    if len(CALLS.read_text().split()) == 1:
        raise TransientToolError("the warehouse did not answer")
    return 7
'''


def test_run_retries_and_shares_results_through_a_cache_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shop_tools.py").write_text(TOOLS)
    monkeypatch.chdir(tmp_path)
    ask = lambda n: reply(None, call("stock", {"item": "pens"}, id=f"s{n}"))
    options = ["--model", "m", "--tools", "shop_tools:stock", "--no-builtin", "--no-trace", "--json",
               "--retry", "3", "--cache-db", str(tmp_path / "cache.db"), "--tool-concurrency", "2"]  # fmt: skip
    for script in ([ask(1), ask(2), reply("7 pens.")], [ask(1), reply("7 pens.")]):
        with ChatServer(script) as server:
            done = CliRunner().invoke(app, ["run", "Pens in stock?", "--base-url", server.base_url, *options])
        assert done.exit_code == 0, done.output
        result = json.loads(done.output)
        assert [json.loads(m["content"])["result"] for m in result["messages"] if m["role"] == "tool"] == [
            7
        ] * (len(script) - 1)
    # the first call failed once and was tried again; every later call was a hit, in either run
    assert (tmp_path / "calls.txt").read_text().split() == ["pens", "pens"]
    sys.modules.pop("shop_tools", None)


def test_serve_takes_the_same_options_for_the_loop_it_serves(tmp_path: Path) -> None:
    import httpx

    from tests.serving import served

    options = ["--tool-concurrency", "2", "--retry", "2", "--cache-db", str(tmp_path / "cache.db")]
    with served(str(tmp_path / "runs.db"), *options) as (base, _), httpx.Client(base_url=base) as client:
        done = client.post(
            "/v1/chat/completions", json={"messages": [{"role": "user", "content": "add 2 3"}]}
        )
        assert done.status_code == 200, done.text
        assert done.json()["choices"][0]["message"]["content"].startswith("done: ")
    assert (tmp_path / "cache.db").exists()  # the shared cache was opened for the served loop


def test_a_cache_db_that_is_no_file_path_is_refused_and_makes_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(
        app,
        [
            "run",
            "hi",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--cache",
            "--cache-db",
            "mysql://host/db",
        ],
    )
    assert (done.exit_code, done.output) == (
        2,
        "error: result cache mysql://host/db: an address of an unknown kind (mysql://): give a SQLite file path\n",
    )
    assert list(tmp_path.iterdir()) == []
