"""A step boundary writes what is new, not the whole transcript: every message and step goes to
the store once, whatever the length of the run; and a run stored by an earlier minloop (its
whole transcript in its state) still resumes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from minloop import Loop, tool
from minloop.runs import SQLiteRunStore, open_store
from minloop.testing import ScriptedModel, call, reply

PROMPT = "Add up the numbers 1 to 30, one call at a time"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(needs_approval=True)
def pay(amount: int) -> str:
    """Pay."""
    return f"paid {amount}"


def test_every_message_and_step_is_written_once_however_long_the_run(tmp_path: Path) -> None:
    store = SQLiteRunStore(tmp_path / "runs.db")
    writes: list[tuple[str, tuple[Any, ...]]] = []
    inner = store._execute
    store._execute = lambda sql, params: writes.append((sql, params)) or inner(sql, params)  # type: ignore[method-assign]
    rounds = 30
    model = ScriptedModel([*(reply(None, call("add", {"a": n, "b": 1})) for n in range(rounds)), "465."])
    result = Loop(model, [add], max_steps=40, store=store).run_sync(PROMPT)
    assert (result.status, len(result.steps)) == ("success", rounds + 1)
    appended = [p for sql, p in writes if sql.startswith("INSERT INTO minloop_entries")]
    rows = [tuple(p[i : i + 3]) for p in appended for i in range(1, len(p), 4)]  # (kind, seq, body)
    keys = [(kind, seq) for kind, seq, _ in rows]
    assert len(keys) == len(set(keys))  # nothing written twice
    assert sorted(keys) == sorted(
        [("message", n) for n in range(len(result.messages) - 1)] + [("step", n) for n in range(rounds)]
    )  # all but the last step and its answer, which end in the result
    rewrites = [sql for sql, p in writes if any(PROMPT in str(v) for v in p) and "minloop_entries" not in sql]
    assert [sql.split()[0:3] for sql in rewrites] == [
        ["INSERT", "INTO", "minloop_runs"],
        ["UPDATE", "minloop_runs", "SET"],
    ]
    assert "result = ?" in rewrites[1]  # the prompt is written with the run, then in its result: never again
    stored = open_store(str(tmp_path / "runs.db")).load(result.trace_id)
    assert stored.state["messages"] == result.messages[:-1] and len(stored.state["steps"]) == rounds


def test_a_run_stored_by_an_earlier_minloop_resumes_and_goes_on_appending(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    model = ScriptedModel(
        [reply(None, call("add", {"a": 1, "b": 2})), reply(None, call("pay", {"amount": 3})), "Paid 3."]
    )
    loop = Loop(model, [add, pay], store=open_store(str(path)))
    paused = loop.run_sync("Add 1 and 2, then pay that")
    with sqlite3.connect(path) as conn:  # as minloop wrote it before entries: the whole state in one row
        whole = open_store(str(path)).load(paused.trace_id).state
        conn.execute("UPDATE minloop_runs SET schema_version = 1, state = ? WHERE run_id = ?",
                     (json.dumps(whole), paused.trace_id))  # fmt: skip
        conn.execute("DELETE FROM minloop_entries")
    done = loop.resume_sync(paused.trace_id, {"call_2_1": True})
    assert (done.status, [m["role"] for m in done.messages]) == (
        "success", ["user", "assistant", "tool", "assistant", "tool", "assistant"],
    )  # fmt: skip
    with sqlite3.connect(path) as conn:
        [(schema,)] = conn.execute("SELECT schema_version FROM minloop_runs").fetchall()
        kinds = conn.execute(
            "SELECT kind, COUNT(*) FROM minloop_entries GROUP BY kind ORDER BY kind"
        ).fetchall()
    assert (schema, kinds) == (2, [("message", 5), ("step", 2)])
