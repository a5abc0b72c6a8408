"""The served loop under load, against the floor for serving it.

Drives ``minloop serve`` (uvicorn, a SQLite run store) over loopback HTTP with 50 and 200
concurrent runs of the scripted model's two-step run (one tool call, then the answer), three
ways: ``POST /v1/chat/completions`` (one request a run); ``POST /runs`` then its event stream
until ``RunEnd`` (two requests a run); ``POST /runs`` asking for its events in the same response
(one request a run). The floor is a minimal hand-written Starlette endpoint, also under uvicorn
in its own process, that awaits the same loop (same model, tools and store) in-process and
returns its result. Prints runs/s and p50/p99 latency per run, errors, lost runs (a run the
store does not hold as ended), the CPU time per run of the server process and of this client,
and the ratio of the floor's throughput to each way's. Goal: within 1.3x of the floor, no
errors, no lost run.

    flock /tmp/minloop-cpu.lock env PYTHONPATH=src:. .venv/bin/python benchmarks/serve_load.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.serving import free_port, served

PROMPT = "add 2 3"
LIMIT = 60  # seconds a run may take before it counts as an error
# What a failed run raises here (running past LIMIT raises TimeoutError, an OSError).
BROKEN = (OSError, ValueError, KeyError, IndexError, asyncio.IncompleteReadError)


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
        return JSONResponse({"status": result.status, "answer": result.output, "run_id": result.trace_id})

    return Starlette(routes=[Route("/run", run, methods=["POST"])])


class Connection:
    """One keep-alive HTTP/1.1 connection, as lean as a load generator needs: it costs a small
    part of what the server spends on a request, so the figures measure the server (a pooled
    HTTP client at 200 connections spends more per request than the server does)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, base: str) -> Connection:
        host, port = base.removeprefix("http://").split(":")
        return cls(*await asyncio.open_connection(host, int(port)))

    async def send(
        self, method: str, path: str, body: Any = None, accept: str = "application/json"
    ) -> dict[str, str]:
        """Send a request; returns the response's status (as ``:status``) and headers."""
        data = b"" if body is None else json.dumps(body).encode()
        self.writer.write(f"{method} {path} HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)  # fmt: skip
        status = (await self.reader.readline()).split(b" ", 2)[1].decode()
        headers = {":status": status}
        while (line := await self.reader.readline()) != b"\r\n":
            name, _, value = line.decode().partition(":")
            headers[name.lower()] = value.strip()
        return headers

    async def chunks(self, headers: dict[str, str]) -> Any:
        """The body, a chunk at a time."""
        if "content-length" in headers:
            yield await self.reader.readexactly(int(headers["content-length"]))
            return
        while size := int(await self.reader.readline(), 16):
            yield (await self.reader.readexactly(size + 2))[:-2]
        await self.reader.readline()

    async def json(self, method: str, path: str, body: Any = None) -> tuple[str, Any]:
        headers = await self.send(method, path, body)
        return headers[":status"], json.loads(b"".join([c async for c in self.chunks(headers)]))

    async def events(self, headers: dict[str, str]) -> bool:
        """Read an event stream to its end; whether its RunEnd says success."""
        body = b"".join([c async for c in self.chunks(headers)])
        _, found, rest = body.rpartition(b"event: RunEnd\ndata: ")
        return bool(found) and json.loads(rest.split(b"\n", 1)[0])["result"]["status"] == "success"


async def by_floor(c: Connection) -> str | None:
    status, answer = await c.json("POST", "/run", {"prompt": PROMPT})
    return str(answer["run_id"]) if status == "200" and answer["status"] == "success" else None


async def by_chat(c: Connection) -> str | None:
    status, answer = await c.json(
        "POST", "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": PROMPT}]}
    )
    ok = status == "200" and answer["choices"][0]["message"]["content"].startswith("done:")
    return str(answer["minloop"]["run_id"]) if ok else None


async def by_runs(c: Connection) -> str | None:
    status, started = await c.json("POST", "/runs", {"prompt": PROMPT})
    if status != "202":
        return None
    run_id = str(started["run_id"])
    return run_id if await c.events(await c.send("GET", f"/runs/{run_id}/events")) else None


async def by_runs_streamed(c: Connection) -> str | None:
    headers = await c.send("POST", "/runs", {"prompt": PROMPT}, accept="text/event-stream")
    ok = headers[":status"] == "200" and await c.events(headers)
    return headers["location"].rsplit("/", 1)[-1] if ok else None


Way = Callable[[Connection], Awaitable["str | None"]]
WAYS: dict[str, Way] = {"chat completions": by_chat, "runs + events (2 req)": by_runs,
                        "runs, streamed (1 req)": by_runs_streamed}  # fmt: skip


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time used so far by the process ``pid`` (this one if None)."""
    if pid is None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def load(base: str, way: Way, concurrent: int, runs: int, pid: int) -> dict[str, Any]:
    """``runs`` runs, ``concurrent`` at a time: each of ``concurrent`` clients runs one after the other."""
    connections = [await Connection.open(base) for _ in range(concurrent)]
    for c in connections:
        await way(c)  # warm
    times: list[float] = []
    ids: list[str] = []
    left = [runs]

    async def client(i: int) -> None:
        c = connections[i]
        while left[0] > 0:
            left[0] -= 1
            t = time.perf_counter()
            try:
                run_id = await asyncio.wait_for(way(c), LIMIT)
            except BROKEN:
                c.writer.close()
                run_id = None
                c = connections[i] = await Connection.open(base)
            times.append(time.perf_counter() - t)
            ids.append(run_id or "")

    cpu = cpu_seconds(pid), cpu_seconds()
    start = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(concurrent)))
    wall = time.perf_counter() - start
    server, here = cpu_seconds(pid) - cpu[0], cpu_seconds() - cpu[1]
    for c in connections:
        c.writer.close()
    times.sort()
    return {"rps": runs / wall, "p50": statistics.median(times) * 1000, "ids": [i for i in ids if i],
            "p99": times[min(len(times) - 1, int(len(times) * 0.99))] * 1000, "errors": ids.count(""),
            "server": server / runs * 1000, "client": here / runs * 1000}  # fmt: skip


def lost(store: str, ids: list[str]) -> int:
    """Runs answered as done that the store does not hold as ended with success."""
    from minloop.runs import open_store

    runs = open_store(store)
    try:
        return sum(runs.row(i).status != "success" for i in ids)
    finally:
        runs.close()


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
    parser.add_argument("--runs", type=int, default=5, help="runs per level, as a multiple of the level")
    args = parser.parse_args()
    if args.floor:
        import uvicorn

        uvicorn.run(floor_app(args.floor), host="127.0.0.1", port=args.port, log_level="warning")  # type: ignore[arg-type]
        return
    where = Path(tempfile.mkdtemp())
    base, floor = start_floor(str(where / "floor.db"))
    try:
        with served(str(where / "served.db")) as (served_base, server):
            print(f"{'level':>5} {'way':<22} {'runs/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'errors':>6} {'lost':>4} "
                  f"{'server ms/run':>13} {'client ms/run':>13} {'floor/it':>8}")  # fmt: skip
            for level in (50, 200):
                n = level * args.runs
                rows = {"floor (in-process)": asyncio.run(load(base, by_floor, level, n, floor.pid))}
                rows["floor (in-process)"]["lost"] = lost(
                    str(where / "floor.db"), rows["floor (in-process)"]["ids"]
                )
                for name, way in WAYS.items():
                    rows[name] = asyncio.run(load(served_base, way, level, n, server.pid))
                    rows[name]["lost"] = lost(str(where / "served.db"), rows[name]["ids"])
                top = rows["floor (in-process)"]["rps"]
                for name, r in rows.items():
                    print(f"{level:>5} {name:<22} {r['rps']:>7.1f} {r['p50']:>7.1f} {r['p99']:>7.1f} {r['errors']:>6} "
                          f"{r['lost']:>4} {r['server']:>13.2f} {r['client']:>13.2f} {top / r['rps']:>7.2f}x")  # fmt: skip
    finally:
        floor.terminate()
        floor.wait(10)


if __name__ == "__main__":
    main()
