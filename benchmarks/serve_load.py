"""The served loop under load, against the floor for serving it.

Drives ``minloop serve`` (uvicorn, a SQLite run store) over loopback HTTP with 50 and 200
concurrent runs of the scripted model's two-step run (one tool call, then the answer), two ways:
``POST /v1/chat/completions`` (one request a run) and ``POST /runs`` then its event stream until
``RunEnd``. The floor is a minimal hand-written Starlette endpoint, also under uvicorn in its own
process, that awaits the same loop (same model, tools and store) in-process and returns its
result. Prints runs/s and p50/p99 latency per run, errors, lost runs, and the ratio of the
floor's throughput to each served way. Goal: within 1.3x of the floor, no errors, no lost run.

    flock /tmp/minloop-cpu.lock env PYTHONPATH=src:. .venv/bin/python benchmarks/serve_load.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.serving import free_port, served

PROMPT = "add 2 3"


def floor_app(store: str) -> object:
    """The floor: one endpoint that runs the loop in-process and returns its result."""
    from dataclasses import replace

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from tests.servers.served import loop

    from minloop.runs import open_store

    durable = replace(loop, store=open_store(store))

    async def run(request: Request) -> JSONResponse:
        body = await request.json()
        result = await durable.run(body["prompt"])
        return JSONResponse({"status": result.status, "answer": result.output})

    return Starlette(routes=[Route("/run", run, methods=["POST"])])


async def by_floor(client: httpx.AsyncClient) -> bool:
    answer = await client.post("/run", json={"prompt": PROMPT})
    return answer.status_code == 200 and answer.json()["status"] == "success"


async def by_chat(client: httpx.AsyncClient) -> bool:
    answer = await client.post(
        "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": PROMPT}]}
    )
    return answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"].startswith("done:")


async def by_runs(client: httpx.AsyncClient) -> bool:
    started = await client.post("/runs", json={"prompt": PROMPT})
    if started.status_code != 202:
        return False
    async with client.stream("GET", f"/runs/{started.json()['run_id']}/events") as events:
        async for line in events.aiter_lines():
            if line.startswith("data: ") and '"type": "RunEnd"' in line:
                return bool(json.loads(line[6:])["result"]["status"] == "success")
    return False


async def load(
    base: str, way: Callable[[httpx.AsyncClient], Awaitable[bool]], concurrent: int, runs: int
) -> dict[str, float]:
    limits = httpx.Limits(max_connections=concurrent, max_keepalive_connections=concurrent)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        await way(client)  # warm
        gate, times, failures = asyncio.Semaphore(concurrent), [], 0

        async def one() -> None:
            nonlocal failures
            async with gate:
                t = time.perf_counter()
                try:
                    ok = await way(client)
                except httpx.HTTPError:
                    ok = False
                times.append(time.perf_counter() - t)
                failures += not ok

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(runs)))
        wall = time.perf_counter() - start
    times.sort()
    return {"rps": runs / wall, "p50": statistics.median(times) * 1000,
            "p99": times[min(len(times) - 1, int(len(times) * 0.99))] * 1000, "errors": failures}  # fmt: skip


def start_floor(store: str) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    process = subprocess.Popen([sys.executable, __file__, "--floor", store, "--port", str(port)], env=env)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            httpx.get(base, timeout=1)
            return base, process
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError("the floor server did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--floor")
    parser.add_argument("--port", type=int)
    parser.add_argument("--runs", type=int, default=2, help="runs per level, as a multiple of the level")
    args = parser.parse_args()
    if args.floor:
        import uvicorn

        uvicorn.run(floor_app(args.floor), host="127.0.0.1", port=args.port, log_level="warning")  # type: ignore[arg-type]
        return
    where = Path(tempfile.mkdtemp())
    base, floor = start_floor(str(where / "floor.db"))
    try:
        with served(str(where / "served.db")) as (served_base, _):
            print(
                f"{'level':>5} {'way':<20} {'runs/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6} {'floor/it':>8}"
            )
            for level in (50, 200):
                n = level * args.runs
                rows = {"floor (in-process)": asyncio.run(load(base, by_floor, level, n)),
                        "chat completions": asyncio.run(load(served_base, by_chat, level, n)),
                        "runs + events": asyncio.run(load(served_base, by_runs, level, n))}  # fmt: skip
                top = rows["floor (in-process)"]["rps"]
                for name, r in rows.items():
                    print(
                        f"{level:>5} {name:<20} {r['rps']:>8.1f} {r['p50']:>8.1f} {r['p99']:>8.1f} {r['errors']:>6.0f} {top / r['rps']:>7.2f}x"
                    )
    finally:
        floor.terminate()
        floor.wait(10)


if __name__ == "__main__":
    main()
