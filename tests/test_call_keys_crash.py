"""The call's key across a real crash: a run killed with SIGKILL inside a charge, resumed in a
new process, repeats the call in doubt with the same key, and the payment service, keyed by it,
charges once. The child process is tests/servers/keyed_child.py."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from minloop.execute import call_key

CHILD = Path(__file__).parent / "servers" / "keyed_child.py"


def child(store: str, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHILD), store, str(work), *args], env=os.environ.copy(), capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_charge_in_doubt_is_repeated_with_its_key_and_made_once(
    store_address: str, tmp_path: Path, when: str
) -> None:
    killed = child(store_address, tmp_path, "start", "--kill", when)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    run_id = killed.stdout.split()[0]
    resumed = child(store_address, tmp_path, "resume", run_id)
    assert resumed.returncode == 0, resumed.stderr

    keys = (tmp_path / "keys").read_text().split()
    assert keys == [call_key(run_id, 1, "call_1_1")] * 2  # the same key before the kill and after
    with sqlite3.connect(tmp_path / "payments.db") as db:
        assert db.execute("SELECT key, amount FROM charges").fetchall() == [(keys[0], 30)]
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == "success"
    [charged] = [m["content"] for m in result["messages"] if m["role"] == "tool"]
    assert json.loads(charged)["result"] == "charged 30"  # repeated, not reported in doubt
    assert result["messages"][-1] == {"role": "assistant", "content": "Charged 30."}
