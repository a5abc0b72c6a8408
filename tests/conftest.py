from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

TID = "<trace_id>"


def masked(messages: list[dict[str, Any]], trace_id: str) -> list[dict[str, Any]]:
    """The transcript with the run's trace id replaced by a placeholder, for whole-list asserts."""
    return json.loads(json.dumps(messages).replace(trace_id, TID))


def conversation(
    request: str, *steps: tuple[str, dict[str, Any], str], first: int = 1
) -> list[dict[str, Any]]:
    """A user's request, then one call per step (tool name, arguments, result text), with ids
    ``c<first>``, ``c<first + 1>``..."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": request}]
    for n, (name, arguments, result) in enumerate(steps, first):
        call = {
            "id": f"c{n}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": result},
        ]
    return messages


def content(**fields: Any) -> str:
    """The JSON content minloop writes for a tool result (keys in insertion order)."""
    return json.dumps({**fields, "trace_id": TID}, ensure_ascii=False)


def repeated(tool: str, times: int = 2) -> str:
    """The result the loop writes for a call made once more after ``times`` identical ones."""
    return content(
        error=f"this exact call was already made {times} times; its result is above. Answer with it, "
        "or change the arguments",
        code="ERR_TOOL_REPEATED",
        tool=tool,
    )


@pytest.fixture(autouse=True)
def trace_db(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs record their traces in a temporary database, never in the home directory."""
    path = tmp_path_factory.mktemp("traces") / "traces.db"
    monkeypatch.setenv("MINLOOP_TRACE_DB", str(path))
    return path


@pytest.fixture(scope="session")
def local() -> Any:
    """The bundled embedded model, loaded once for the tests that run it."""
    from minloop.models.local import LocalModel

    model = LocalModel()
    model.load()
    return model


@pytest.fixture(scope="session")
def postgres() -> Any:
    """A real PostgreSQL server on 127.0.0.1 for the session (tests/servers/postgres.py)."""
    from .servers.postgres import PostgresServer

    with PostgresServer() as server:
        yield server


_databases = iter(range(1, 1_000_000))


@pytest.fixture(params=["sqlite", "postgres"])
def store_address(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's run store lives: a SQLite file, or a fresh database on the PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.db")
    return request.getfixturevalue("postgres_address")


@pytest.fixture
def postgres_address(postgres: Any) -> str:
    """A fresh, empty database on the session's PostgreSQL server."""
    import psycopg

    name = f"runs_{next(_databases)}"
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return str(postgres.dsn.rsplit("/", 1)[0] + f"/{name}")
