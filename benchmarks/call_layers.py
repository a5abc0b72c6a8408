"""What each built-in layer around tool calls costs per step, off and on, side by side.

    .venv/bin/python benchmarks/call_layers.py [--runs 100] [--rounds 8] [--repeats 5]

Each run makes ``--rounds`` tool steps and then gets an answer from the mock Chat Completions
server of ``overhead.py`` (a separate process on 127.0.0.1), through ``OpenAIModel``. The tool
is an async ``add``, marked read-only so that every layer applies to it. Variants, measured in
one process, round-robin over ``--repeats`` rounds so background load hits them alike, best of
the repeats:

* ``off``: ``Loop(model, [add])``, none of them,
* ``tool_concurrency=8``, ``retry=3`` (no call fails: the cost of being ready to retry),
* ``cache=True`` (every call a miss: a lookup and a store), ``cache (hits)`` (the model asks
  the same call every step, so every call after the first is a hit),
* ``call key``: the tool takes a ``CallKey``,
* ``all``: the cap, retries and the cache at once.

Per-step wall and CPU time, and each against ``off``. A second table runs the same variants
with the model answered in-process (no HTTP): the loop's own CPU time per step, in which the
layers' cost shows plainly (over HTTP it is within the noise of a shared machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import overhead

from minloop import CallKey, Loop, tool
from minloop.models.openai import OpenAIModel


async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_keyed(a: int, b: int, key: CallKey) -> int:
    """Add two integers."""
    return a + b


class SameCall(OpenAIModel):
    """The mock server's replies with every call's arguments the same, so the cache hits."""

    async def call(self, request: Any) -> Any:
        response = await super().call(request)
        for c in response.message.get("tool_calls") or ():
            c["function"]["arguments"] = json.dumps({"a": 1, "b": 1})
        return response


class InProcess:
    """The mock server's script answered in-process: ``rounds`` calls to ``add``, then "done"."""

    name = "in-process"

    def __init__(self, rounds: int, same: bool = False) -> None:
        self.rounds, self.same = rounds, same

    async def call(self, request: Any) -> Any:
        from minloop import ModelResponse, Usage

        done = sum(1 for m in request.messages if m.get("role") == "tool")
        if done >= self.rounds:
            return ModelResponse({"role": "assistant", "content": "done"}, Usage(20, 5))
        args = json.dumps({"a": 1 if self.same else done, "b": 1})
        call = {"id": f"call_{done}", "type": "function", "function": {"name": "add", "arguments": args}}
        return ModelResponse({"role": "assistant", "content": None, "tool_calls": [call]}, Usage(20, 5))


def variants(base: str | None, rounds: int) -> dict[str, Loop]:
    if base is None:
        model: Any = InProcess(rounds)
        same: Any = InProcess(rounds, same=True)
    else:
        model = OpenAIModel("mock", base_url=base, max_retries=0)
        same = SameCall("mock", base_url=base, max_retries=0)
    plain = tool(add, read_only=True)
    return {
        "off": Loop(model, [plain], max_steps=20),
        "tool_concurrency=8": Loop(model, [plain], max_steps=20, tool_concurrency=8),
        "retry=3": Loop(model, [plain], max_steps=20, retry=3),
        "cache=True": Loop(model, [plain], max_steps=20, cache=True),
        "cache (hits)": Loop(same, [plain], max_steps=20, cache=True, controls=_no_repeat_guard()),
        "call key": Loop(model, [tool(add_keyed, name="add")], max_steps=20),
        "all": Loop(model, [plain], max_steps=20, tool_concurrency=8, retry=3, cache=True),
    }


def _no_repeat_guard() -> Any:
    from minloop import Controls

    return Controls(repeat_limit=0)  # the same call every step is the point here


async def measure(loop: Loop, runs: int) -> tuple[float, float]:
    wall, cpu, steps = time.perf_counter(), time.process_time(), 0
    for _ in range(runs):
        result = await loop.run("Add things.")
        assert result.status == "success", result.error
        steps += len(result.steps)
    return (time.perf_counter() - wall) * 1000 / steps, (time.process_time() - cpu) * 1000 / steps


async def bench(port: int, args: argparse.Namespace) -> None:
    for base, runs, unit in (
        (f"http://127.0.0.1:{port}/n{args.rounds}/v1", args.runs, "ms"),
        (None, 10 * args.runs, "us"),
    ):
        loops = variants(base, args.rounds)
        for loop in loops.values():  # warm: connections, caches
            await measure(loop, 10)
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.repeats):
            for name, loop in loops.items():
                got = await measure(loop, runs)
                best[name] = min(best.get(name, got), got)
        scale = 1 if unit == "ms" else 1000
        off_wall, off_cpu = best["off"]
        where = "over HTTP" if base else "the model in-process"
        print(f"\n{args.rounds} tool steps per run, {where}, {runs} runs, best of {args.repeats}")
        print(f"{'variant':<20} {unit + '/step':>8} {'x off':>7} {'CPU ' + unit + '/step':>12} {'x off':>7}")
        for name, (wall, cpu) in best.items():
            print(
                f"{name:<20} {wall * scale:>8.3f} {wall / off_wall:>6.2f}x {cpu * scale:>12.3f} {cpu / off_cpu:>6.2f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, overhead.__file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        asyncio.run(bench(port, args))
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
