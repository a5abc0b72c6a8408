"""A real large menu: the CLI's built-in tools plus MCP servers, narrowed or shown whole.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/large_menu.py --out large_menu.jsonl
    .venv/bin/python benchmarks/large_menu.py --report large_menu.jsonl

Runs every request of ``faithful_set.py`` (64, half Chinese) through ``Loop`` with the built-in
tools over the fixture folder plus the tools of ``--mcp`` servers (default: ``mcp-server-time``
and ``mcp-server-git``, 19 tools in all, ~2,200 tokens of definitions), once with the menu
narrowed to the tools that match the request (``ToolMenu(above=0)`` among the small-model layers) and once whole
(``ToolMenu(above=None)``), one after the other per request (the order alternates). The same menu
serves every request, as it does for an agent: the whole menu's prefix is evaluated by the first,
untimed request and kept (the time it took is printed), a narrowed menu differs from request to
request. Judged as ``faithful.py`` judges: the expected call made with the expected value (the
time server's ``get_current_time`` in the expected zone serves a clock request too), and no number
the request and the tool results do not give.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from faithful import _mean, _rate, record, write
from faithful_set import FILES, ITEMS, Expected

from minloop import Loop, RunResult
from minloop.builtins import default_tools
from minloop.mcp import connect
from minloop.models.local import LocalModel
from minloop.small import ToolMenu, small_model_layers
from minloop.small.ranking import menu_tokens
from minloop.tools import tool_specs

SERVERS = ["python -m mcp_server_time", "python -m mcp_server_git"]


async def measure(out: Path, servers: list[str], start: int, stop: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="large-menu-"))
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    menu = lambda above: [
        ToolMenu(above) if isinstance(layer, ToolMenu) else layer for layer in small_model_layers()
    ]
    models = {"selection": LocalModel(layers=menu(0)), "whole": LocalModel(layers=menu(None))}
    async with connect(*servers) as extra:
        tools = [*default_tools(root), *extra]
        print(f"{len(tools)} tools, ~{menu_tokens(tool_specs(tools))} tokens of definitions", flush=True)
        started = time.perf_counter()
        await Loop(models["whole"], tools, max_steps=6).run("What is 2 + 2?")
        print(f"first request, whole menu (fills the prefix cache): {time.perf_counter() - started:.1f} s")
        for index in range(start, min(stop, len(ITEMS))):
            _, language, request, expected = ITEMS[index]
            for arm in list(models) if index % 2 == 0 else list(models)[::-1]:
                started = time.perf_counter()
                result = await Loop(models[arm], tools, max_steps=6).run(request)
                seconds = time.perf_counter() - started
                row = record(index, arm, result, seconds)
                row["tool"] = row["tool"] or _time_server_ok(result, expected)
                write(out, row, f"{arm:9s} {language}")


def _time_server_ok(result: RunResult, expected: Expected) -> bool | None:
    """The time server's ``get_current_time`` serves a clock request as well as ``current_time``:
    right when it ran in the expected zone."""
    if expected is None or expected[0] != "current_time":
        return None if expected is None else False
    zone = f'"timezone": "{expected[2]}"'
    return any(
        call.name == "get_current_time" and not res.error and zone in res.content
        for step in result.steps
        for call, res in zip(step.tool_calls, step.results, strict=False)
    )


def report(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for language in (row["language"], "both"):
            cells[(row["arm"], language)].append(row)
    print(f"{len(rows)} runs; figures are selection | whole menu")
    print(
        f"{'lang':5s} {'n':>3s}  {'tool + values':>19s}  {'supported or declined':>23s}  {'s/request':>11s}"
    )
    for language in ("en", "zh", "both"):
        narrow, whole = cells.get(("selection", language), []), cells.get(("whole", language), [])
        if narrow and whole:
            print(
                f"{language:5s} {len(narrow):3d}  {_rate(narrow, 'tool'):>9s} | {_rate(whole, 'tool'):<9s}"
                f"  {_rate(narrow, 'faithful'):>11s} | {_rate(whole, 'faithful'):<11s}"
                f"  {_mean(narrow):5.1f} | {_mean(whole):<5.1f}"
            )
    narrow, whole = cells.get(("selection", "both"), []), cells.get(("whole", "both"), [])
    if narrow and whole:
        print(f"time per request, selection / whole: {_mean(narrow) / _mean(whole):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=Path("large_menu.jsonl"))
    parser.add_argument("--mcp", action="append", help="an MCP server's command line (repeatable)")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--stop", type=int, default=len(ITEMS))
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    if args.report:
        report(args.report)
        return
    asyncio.run(measure(args.out, args.mcp or SERVERS, args.start, args.stop))
    report(args.out)


if __name__ == "__main__":
    main()
