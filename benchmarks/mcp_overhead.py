"""What minloop adds per MCP tool call, against the bare ``mcp`` client session.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/mcp_overhead.py [--calls 300] [--repeats 5]

One server process, one connection: ``MCPServer`` opens it, and both contenders call the same
tool with the same arguments over that same session, side by side:

* ``bare``: ``session.call_tool(name, arguments)``, the SDK's own call (it checks the result
  against the tool's output schema too),
* ``tool fn``: the minloop tool's own callable (the request and the result's conversion, no
  contract checks), to show where the difference goes,
* ``minloop``: the call as a ``Loop`` executes it (``minloop.execute.execute_calls``): JSON
  arguments parsed and checked against the input schema, the timeout, the call, the structured
  result checked against the output schema, redaction, the JSON the model reads.

Servers: ``mcp-server-time`` (Python, stdio, ``get_current_time`` with an output schema) and
``@modelcontextprotocol/server-everything`` (Node, stdio, ``get-sum``). Each figure is the
median per-call time of the best of ``--repeats`` batches of ``--calls`` calls, batches taken
round-robin over the contenders so background load hits them alike. Goal: minloop <= 1.10x bare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from minloop.execute import ExecContext, execute_calls
from minloop.fallback import ask_for_clarification
from minloop.log import run_logger
from minloop.mcp import MCPServer
from minloop.messages import ToolCall
from minloop.redact import Redactor

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


async def batch(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    """The median seconds per call over ``calls`` calls."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def measure(
    command: list[str], tool: str, arguments: dict[str, Any], calls: int, repeats: int
) -> dict[str, Any]:
    async with MCPServer(command) as server:
        session = server.session
        registry = {t.name: t for t in server.tools}
        ctx = ExecContext(registry, ask_for_clarification, "trc_bench", run_logger("trc_bench"),
                          repeat_limit=0, redact=Redactor())  # fmt: skip
        raw = json.dumps(arguments)

        async def bare() -> Any:
            return await session.call_tool(tool, arguments)

        async def tool_fn() -> Any:
            return await registry[tool].fn(**arguments)

        async def minloop() -> Any:
            (result,) = await execute_calls([ToolCall("c1", tool, raw)], ctx)
            assert result.error is None, result.content
            return result

        contenders = {"bare": bare, "tool fn": tool_fn, "minloop": minloop}
        for fn in contenders.values():  # warm up: imports, compiled validators, caches
            await batch(fn, 20)
        best = {name: float("inf") for name in contenders}
        for _ in range(repeats):
            for name, fn in contenders.items():
                best[name] = min(best[name], await batch(fn, calls))
        return {"server": server.name, "tool": tool, **best}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cases: list[tuple[list[str], str, dict[str, Any]]] = [
        ([sys.executable, "-m", "mcp_server_time"], "get_current_time", {"timezone": "Asia/Tokyo"}),
    ]
    node = shutil.which("node")
    if node and EVERYTHING.exists():
        cases.append(([node, str(EVERYTHING), "stdio"], "get-sum", {"a": 2, "b": 3}))
    else:
        print("(server-everything not installed: run bash scripts/setup.sh; measuring the time server only)")
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{args.calls} calls x best of {args.repeats}, median per call")  # fmt: skip
    print(f"{'server / tool':<42} {'bare mcp':>10} {'tool fn':>10} {'minloop':>10} {'added':>9} {'ratio':>7}")
    for command, tool, arguments in cases:
        row = asyncio.run(measure(command, tool, arguments, args.calls, args.repeats))
        added = row["minloop"] - row["bare"]
        label = f"{row['server']} / {row['tool']}"
        print(f"{label:<42} {row['bare'] * 1e6:>8.0f}us {row['tool fn'] * 1e6:>8.0f}us {row['minloop'] * 1e6:>8.0f}us "
              f"{added * 1e6:>7.0f}us {row['minloop'] / row['bare']:>6.3f}x")  # fmt: skip


if __name__ == "__main__":
    main()
