"""What a server's question costs: one MCP call that asks once and is answered, three ways.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/mcp_questions.py [--runs 40] [--repeats 3]

One asking server process (tests/servers/mcp_asking.py, protocol 2026-07-28, stdio), one
connection, its tool ``book`` (asks a date, then books). Side by side:

* ``bare``: the SDK session sends the call, gets the question and sends the second round with
  the answer and the state (two requests, nothing else),
* ``ask_user``: a ``Loop`` run (a scripted model: the call, then an answer) whose ``ask_user``
  answers in the process,
* ``store``: the same run with a SQLite run store and no ``ask_user``: it pauses (the question
  and state written first), then ``resume`` with the answer sends the second round and ends.

Each figure is the median per run of the best of ``--repeats`` batches of ``--runs`` runs,
batches taken round-robin so background load hits them alike.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from minloop import Loop, UserAnswer
from minloop.mcp import MCPServer
from minloop.runs import SQLiteRunStore
from minloop.testing import ScriptedModel, call, reply

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "servers" / "mcp_asking.py"
ANSWER = {"date": "2026-12-24", "seats": 2}


def script() -> ScriptedModel:
    return ScriptedModel([reply(None, call("book", {"city": "Paris"}, id="c1")), "Booked."])


async def batch(run: Callable[[], Awaitable[Any]], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def main(runs: int, repeats: int) -> None:
    from mcp import types

    async with MCPServer([sys.executable, str(SERVER), "/dev/null", "stdio"], name="asking") as server:
        session = server.session
        store = SQLiteRunStore(Path(tempfile.mkdtemp()) / "runs.db")

        async def bare() -> None:
            first = await session.call_tool("book", {"city": "Paris"}, allow_input_required=True)
            answer = {"when": types.ElicitResult(action="accept", content=ANSWER)}
            done = await session.call_tool("book", {"city": "Paris"}, allow_input_required=True,
                                           input_responses=answer, request_state=first.request_state)  # fmt: skip
            assert isinstance(done, types.CallToolResult) and not done.is_error

        async def ask_user() -> None:
            loop = Loop(script(), server.tools, ask_user=lambda q: UserAnswer(content=ANSWER))
            assert (await loop.run("Book Paris")).status == "success"

        async def stored() -> None:
            loop = Loop(script(), server.tools, store=store)
            paused = await loop.run("Book Paris")
            done = await loop.resume(paused.trace_id, {"c1": UserAnswer(content=ANSWER)})
            assert (paused.status, done.status) == ("paused", "success")

        contenders = {"bare": bare, "ask_user": ask_user, "store": stored}
        for run in contenders.values():  # warm up
            await run()
        best = {name: float("inf") for name in contenders}
        for _ in range(repeats):
            for name, run in contenders.items():
                best[name] = min(best[name], await batch(run, runs))
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{runs} runs x best of {repeats}, median per run")  # fmt: skip
    print(f"{'way':<10} {'ms':>8} {'vs bare':>8}")
    for name, seconds in best.items():
        print(f"{name:<10} {seconds * 1000:8.2f} {seconds / best['bare']:7.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.repeats))
