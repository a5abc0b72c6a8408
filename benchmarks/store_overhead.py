"""What a run store costs per step: the same loop with no store, with the SQLite store and with
the PostgreSQL store, side by side in one run, on the local mock Chat Completions server.

    .venv/bin/python benchmarks/store_overhead.py [--runs 100] [--repeats 5] [--no-postgres]

Every run makes N tool rounds (N = 1, 8 and 32) and then answers: N + 1 steps, each written to the
store at its boundary and around its tool call. The server is benchmarks/overhead.py's mock
(a raw-socket HTTP/1.1 server in its own process); PostgreSQL is a real server started in a
temporary directory (tests/servers/postgres.py; Debian's packages), on 127.0.0.1. Each figure
is the best of ``--repeats``, taken round-robin over the contenders. Goals: the SQLite store adds
at most 1 ms per step and PostgreSQL at most 2 ms, at each N: a step boundary appends what is
new, so the cost per step does not grow with the length of the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests.servers.postgres

from minloop import Loop, tool
from minloop.models.openai import OpenAIModel
from minloop.runs import open_store


async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def contender(base: str, store: Any) -> Any:
    loop = Loop(OpenAIModel("mock", base_url=base, max_retries=0), [tool(add)], max_steps=40, store=store)

    async def run() -> int:
        result = await loop.run("Add things.")
        assert result.status == "success", result.error
        return len(result.steps)

    return run


async def per_step(run: Any, runs: int) -> float:
    for _ in range(5):
        await run()
    start, steps = time.perf_counter(), 0
    for _ in range(runs):
        steps += await run()
    return (time.perf_counter() - start) * 1000 / steps


def cpu_name() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


async def bench(port: int, stores: dict[str, Any], runs: int, repeats: int) -> None:
    print(f"{'store':<12}{'N':>3}{'ms/step':>10}{'+ms/step':>10}{'x none':>8}")
    for rounds in (1, 8, 32):
        base = f"http://127.0.0.1:{port}/n{rounds}/v1"
        runners = {name: contender(base, store) for name, store in stores.items()}
        best = {name: float("inf") for name in runners}
        for _ in range(repeats):
            for name, run in runners.items():
                best[name] = min(best[name], await per_step(run, runs))
        for name, ms in best.items():
            print(f"{name:<12}{rounds:>3}{ms:>10.3f}{ms - best['none']:>+10.3f}{ms / best['none']:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=100, help="sequential runs per measurement")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL row")
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, str(HERE / "overhead.py"), "--serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        stack.callback(server.kill)
        assert server.stdout is not None
        port = int(server.stdout.readline())
        stores: dict[str, Any] = {"none": None, "sqlite": open_store(os.path.join(tmp, "runs.db"))}
        if not args.no_postgres:
            from tests.servers.postgres import PostgresServer

            pg = stack.enter_context(PostgresServer())
            stores["postgres"] = open_store(pg.dsn)
        print(f"{cpu_name()}, {os.cpu_count()} cores · mock server on 127.0.0.1:{port} · "
              f"{args.runs} runs a measurement, best of {args.repeats}\n")  # fmt: skip
        asyncio.run(bench(port, stores, args.runs, args.repeats))


if __name__ == "__main__":
    main()
