"""A process that runs (or resumes) one durable run and may kill itself with SIGKILL at a chosen
moment, for the crash tests and the kill benchmark.

    python durable_child.py STORE COUNTS start [--kill POINT]
    python durable_child.py STORE COUNTS resume RUN_ID [--decide CALL=yes|no ...]

The run: look up the balance (idempotent), charge 30 (not idempotent), then notify and look up
the receipt at once, then answer. Every tool appends one line to ``COUNTS/<tool>`` as its side
effect, flushed to disk before it returns. Kill points: ``model:N`` (inside the model call of
step N), ``tool:NAME:before`` / ``tool:NAME:after`` (inside a tool, before or after its side
effect), ``step:N`` (after step N was checkpointed, before step N+1), ``write:K`` (inside the
K-th store transaction, before it commits; the first records the run). ``--delay S`` makes the model and the tools take S
seconds each, so that a kill from outside lands anywhere. The run id goes to stdout at once;
the result's status and messages go to COUNTS/result.json when the run ends.
``DURABLE_IN_DOUBT=pause`` pauses a resumed run at a call in doubt.
``DURABLE_APPROVE=charge`` makes charging need approval; ``DURABLE_APPROVER=yes`` approves it in
the process (the ``approve=`` callback), otherwise the run pauses for a person. Kill point ``end``:
after the last step was recorded, before the run's end is written. Every model call appends the
step's number to ``COUNTS/model``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from minloop import Final, Layer, Loop, ModelRequest, Outcome, Prompt, RunState, Step, Verdict, tool
from minloop.runs import open_store
from minloop.testing import FunctionModel

KILL = os.environ.get("DURABLE_KILL", "")
DELAY = float(os.environ.get("DURABLE_DELAY", "0"))
GUARDED = os.environ.get("DURABLE_APPROVE") == "charge"  # charging needs a person's approval
APPROVER = os.environ.get("DURABLE_APPROVER") == "yes"  # ... given in the process
IN_DOUBT = "pause" if os.environ.get("DURABLE_IN_DOUBT") == "pause" else "report"


def die(point: str) -> None:
    if point == KILL:
        os.kill(os.getpid(), signal.SIGKILL)


def effect(counts: Path, name: str, line: str) -> None:
    die(f"tool:{name}:before")
    with open(counts / name, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())
    die(f"tool:{name}:after")


def build(counts: Path, store: Any) -> Loop:
    @tool(idempotent=True)
    async def lookup(q: str) -> dict[str, Any]:
        """Look something up."""
        await asyncio.sleep(DELAY)
        effect(counts, "lookup", q)
        return {"q": q, "value": 500 if q == "balance" else "r-1"}

    @tool(needs_approval=GUARDED)
    async def charge(amount: int) -> str:
        """Charge the card."""
        await asyncio.sleep(DELAY)
        effect(counts, "charge", str(amount))
        return f"charged {amount}"

    @tool
    async def notify(text: str) -> str:
        """Tell the user."""
        await asyncio.sleep(DELAY)
        effect(counts, "notify", text)
        return "sent"

    async def decide(request: ModelRequest) -> Any:
        results = sum(m["role"] == "tool" for m in request.messages)
        step = sum(m["role"] == "assistant" for m in request.messages) + 1
        await asyncio.sleep(DELAY)
        die(f"model:{step}")
        with open(counts / "model", "a", encoding="utf-8") as f:
            f.write(f"{step}\n")
        plan: dict[int, Any] = {
            0: {"role": "assistant", "content": None, "tool_calls": [_call("lookup", {"q": "balance"})]},
            1: {"role": "assistant", "content": None, "tool_calls": [_call("charge", {"amount": 30})]},
            2: {"role": "assistant", "content": None,
                "tool_calls": [_call("notify", {"text": "charged 30"}), _call("lookup", {"q": "receipt"})]},
        }  # fmt: skip
        return plan.get(results, "Charged 30; the receipt is r-1.")

    class Killer(Layer):
        async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
            die(f"step:{run.index - 1}")
            return prompt

    approve = (lambda call: True) if APPROVER else None
    return Loop(FunctionModel(decide, name="plan"), [lookup, charge, notify], max_steps=6, store=store,
                layers=[Killer()], approve=approve, in_doubt=IN_DOUBT)  # fmt: skip


class Ender(Layer):
    """Outside every layer of the loop: dies once the last step is done, before the run's end is
    written."""

    async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
        if isinstance(outcome, Final):
            die("end")
        return outcome


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def watch_writes(store: Any) -> None:
    """Count the store's writes (its transactions, and the writes PostgreSQL makes in one
    statement); die inside the chosen transaction before it commits, or before the statement."""
    if not KILL.startswith("write:"):
        return
    target, seen, inside = int(KILL.split(":")[1]), [0], [0]
    inner, execute = store._transaction, store._execute

    class Dying:
        def __init__(self, exclusive: bool) -> None:
            self.cm = inner(exclusive)

        def __enter__(self) -> Any:
            inside[0] += 1
            return self.cm.__enter__()

        def __exit__(self, *exc: Any) -> Any:
            inside[0] -= 1
            seen[0] += 1
            if seen[0] == target and exc[0] is None:
                os.kill(os.getpid(), signal.SIGKILL)
            return self.cm.__exit__(*exc)

    def one_statement(sql: str, params: Any) -> Any:
        if sql.startswith("WITH owned") and not inside[0]:
            seen[0] += 1
            if seen[0] == target:
                os.kill(os.getpid(), signal.SIGKILL)
        return execute(sql, params)

    store._transaction, store._execute = Dying, one_statement


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("counts", type=Path)
    parser.add_argument("mode", choices=["start", "resume"])
    parser.add_argument("run_id", nargs="?")
    parser.add_argument("--decide", action="append", default=[])
    args = parser.parse_args()
    store = open_store(args.store)
    watch_writes(store)
    loop = build(args.counts, store)
    if args.mode == "start":
        run = loop.iter("Charge 30 for the order and tell me.", layers=[Ender()])
    else:
        decisions = {
            k: Verdict(v == "yes", None if v == "yes" else "not now")
            for k, v in (d.split("=") for d in args.decide)
        }
        run = loop.iter_resume(args.run_id, decisions, by="test", layers=[Ender()])
    print(run.trace_id, flush=True)
    async for _ in run:
        pass
    assert run.result is not None
    pending = [p.call_id for p in run.result.pending]
    out = {
        "status": run.result.status,
        "messages": run.result.messages,
        "error": run.result.error,
        "pending": pending,
    }
    (args.counts / "result.json").write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
