"""A process that runs (or resumes) one durable run whose tool charges a card through a payment
service that honours idempotency keys, and may kill itself with SIGKILL inside the charge.

    python keyed_child.py STORE WORK start [--kill before|after]
    python keyed_child.py STORE WORK resume RUN_ID

The tool takes the call's ``CallKey`` and passes it to the service (a SQLite file,
``WORK/payments.db``, whose charges are unique by key), writing each key it was given to
``WORK/keys`` first. ``--kill before`` dies before the service records the charge, ``--kill
after`` right after. The run id goes to stdout at once; the result goes to WORK/result.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

from minloop import CallKey, Loop, ModelRequest, tool
from minloop.runs import open_store
from minloop.testing import FunctionModel


def pay(work: Path, key: str, amount: int) -> str:
    """The payment service: a charge is made once per key; a repeat returns the first one."""
    with sqlite3.connect(work / "payments.db") as db:
        db.execute("CREATE TABLE IF NOT EXISTS charges (key TEXT PRIMARY KEY, amount INTEGER)")
        db.execute("INSERT OR IGNORE INTO charges VALUES (?, ?)", (key, amount))
        (charged,) = db.execute("SELECT amount FROM charges WHERE key = ?", (key,)).fetchone()
    return f"charged {charged}"


def build(work: Path, store: Any, kill: str | None) -> Loop:
    @tool
    def charge(amount: int, key: CallKey) -> str:
        """Charge the card."""
        with open(work / "keys", "a", encoding="utf-8") as f:
            f.write(key + "\n")
        if kill == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        done = pay(work, key, amount)
        if kill == "after":
            os.kill(os.getpid(), signal.SIGKILL)
        return done

    def decide(request: ModelRequest) -> Any:
        if not any(m["role"] == "tool" for m in request.messages):
            args = json.dumps({"amount": 30})
            return {"role": "assistant", "content": None,
                    "tool_calls": [{"type": "function", "function": {"name": "charge", "arguments": args}}]}  # fmt: skip
        return "Charged 30."

    return Loop(FunctionModel(decide, name="plan"), [charge], store=store)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("work", type=Path)
    parser.add_argument("mode", choices=["start", "resume"])
    parser.add_argument("run_id", nargs="?")
    parser.add_argument("--kill", choices=["before", "after"])
    args = parser.parse_args()
    loop = build(args.work, open_store(args.store), args.kill)
    run = loop.iter("Charge 30.") if args.mode == "start" else loop.iter_resume(args.run_id)
    print(run.trace_id, flush=True)
    async for _ in run:
        pass
    assert run.result is not None
    out = {"status": run.result.status, "messages": run.result.messages}
    (args.work / "result.json").write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
