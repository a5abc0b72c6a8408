"""What minloop adds per step, against hand-written loops, on a local mock Chat Completions server.

    .venv/bin/python benchmarks/overhead.py [--runs 100] [--concurrent 1000] [--repeats 3]

Contenders, each measured in its own subprocess (so peak RSS is its own):

* ``httpx``: a raw loop posting with ``httpx.AsyncClient`` (the baseline),
* ``httpx-thread``: the same loop running its tool with ``asyncio.to_thread``, as a loop must
  to keep a sync tool from blocking the event loop (the "x same tool" column compares
  ``minloop-sync`` with it; every other row with ``httpx``),
* ``openai``: the same loop over the official ``openai.AsyncOpenAI`` client,
* ``minloop``: ``Loop(OpenAIModel(...), [add])`` with an async tool,
* ``minloop-sync``: the same with a sync tool (minloop runs it in a daemon thread).

Streaming rows (``--streaming-only`` for just these): ``minloop-stream`` (``loop.stream``)
against ``httpx-stream`` (a raw loop reading server-sent events), N = 0, 1 and 8, per-step time
and the time from a run's start to its first text delta. Target: <= 1.15x per step.

Every run makes N tool rounds (N = 1 and 8) and then gets an answer: N + 1 model calls, the
steps. Sequential: ``--runs`` runs one after another. Concurrent: ``--concurrent`` runs at
once. Each figure is the best of ``--repeats`` measurements, taken round-robin over the
contenders so background load hits them alike. The server is an asyncio raw-socket HTTP/1.1
server in a separate process, replying from precomputed bytes. Targets: <= 1.15x raw httpx
per step at N = 1 and N = 8 (with the sync tool too), ``import minloop`` with its HTTP model
<= 1.1x the import of its own dependencies, peak RSS <= 60 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import subprocess
import sys
import time
from typing import Any, ClassVar

from overhead_stream import (
    STREAM_CONTENDERS,
    STREAMED,
    TOOLS,
    add,
    add_async,
    measure_stream,
    sse_reply,
    stream_bench,
)

CONTENDERS = ("httpx", "httpx-thread", "openai", "minloop", "minloop-sync")
SAME_TOOL = {"minloop-sync": "httpx-thread"}  # the raw loop that runs its tool the same way
_TOOL_ROLE = re.compile(rb'"role":\s*"tool"')


# -- the mock server -------------------------------------------------------------------------


def _response(message: dict[str, Any]) -> bytes:
    body = json.dumps(
        {
            "id": "chatcmpl-mock",
            "object": "chat.completion",
            "created": 0,
            "model": "mock",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
        }
    ).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _reply(rounds_asked: int, rounds_done: int) -> bytes:
    """A call to ``add`` while rounds remain (ids unique per transcript), then the answer."""
    if rounds_done >= rounds_asked:
        return _response({"content": "done"})
    call = {
        "id": f"call_{rounds_done}",
        "type": "function",
        "function": {"name": "add", "arguments": json.dumps({"a": rounds_done, "b": 1})},
    }
    return _response({"content": None, "tool_calls": [call]})


class MockChat(asyncio.Protocol):
    """``POST /n{N}/v1/chat/completions``: N tool rounds, then an answer. Keep-alive, pipelining-safe."""

    cache: ClassVar[dict[tuple[int, int], bytes]] = {}

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = self.buffer[:end].decode("latin-1")
            length = int(re.search(r"(?im)^content-length:\s*(\d+)", head).group(1))  # type: ignore[union-attr]
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            rounds = int(head.split(" ", 2)[1].split("/")[1][1:])
            key = (rounds, len(_TOOL_ROLE.findall(body)))
            if STREAMED.search(body):
                self.transport.write(sse_reply(*key))
                continue
            if key not in self.cache:
                self.cache[key] = _reply(*key)
            self.transport.write(self.cache[key])


async def serve() -> None:
    server = await asyncio.get_running_loop().create_server(MockChat, "127.0.0.1", 0, backlog=4096)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the parent closes stdin


# -- the contenders ---------------------------------------------------------------------------


def httpx_contender(base: str, threaded: bool = False) -> Any:
    import httpx

    client = httpx.AsyncClient(
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=100), timeout=60
    )

    async def run() -> int:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Add things."}]
        for step in range(1, 20):
            resp = await client.post(
                f"{base}/chat/completions", json={"model": "mock", "messages": messages, "tools": TOOLS}
            )
            resp.raise_for_status()
            message = resp.json()["choices"][0]["message"]
            messages.append(message)
            if not message.get("tool_calls"):
                return step
            for call in message["tool_calls"]:
                args = json.loads(call["function"]["arguments"])
                result = await asyncio.to_thread(add, **args) if threaded else add(**args)
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": json.dumps({"result": result})}
                )
        raise RuntimeError("no answer")

    return run


def openai_contender(base: str) -> Any:
    import openai

    client = openai.AsyncOpenAI(base_url=base, api_key="sk-mock", max_retries=0, timeout=60)

    async def run() -> int:
        messages: list[Any] = [{"role": "user", "content": "Add things."}]
        for step in range(1, 20):
            completion = await client.chat.completions.create(model="mock", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
            message = completion.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return step
            for call in message.tool_calls:
                result = add(**json.loads(call.function.arguments))
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"result": result})}
                )
        raise RuntimeError("no answer")

    return run


def minloop_contender(base: str, sync_tool: bool) -> Any:
    from minloop import Loop, tool
    from minloop.models.openai import OpenAIModel

    tools = [tool(add) if sync_tool else tool(add_async, name="add")]
    loop = Loop(OpenAIModel("mock", base_url=base, max_retries=0), tools, max_steps=20)

    async def run() -> int:
        result = await loop.run("Add things.")
        assert result.status == "success" and not any(s.errors for s in result.steps), result.error
        return len(result.steps)

    return run


def contender(name: str, base: str) -> Any:
    if name in ("httpx", "httpx-thread"):
        return httpx_contender(base, threaded=name == "httpx-thread")
    if name == "openai":
        return openai_contender(base)
    return minloop_contender(base, sync_tool=name == "minloop-sync")


async def measure(name: str, base: str, runs: int, concurrent: bool) -> dict[str, float]:
    run = contender(name, base)
    for _ in range(10):  # warm: imports, connection, caches
        await run()
    if concurrent:
        await asyncio.gather(*(run() for _ in range(min(runs, 100))))
    wall, cpu = time.perf_counter(), time.process_time()
    if concurrent:
        steps = sum(await asyncio.gather(*(run() for _ in range(runs))))
    else:
        steps = 0
        for _ in range(runs):
            steps += await run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "steps": steps,
        "ms_per_step": wall * 1000 / steps,
        "cpu_ms_per_step": cpu * 1000 / steps,
        "rss_mb": rss,
    }


# -- the driver -------------------------------------------------------------------------------


def worker(name: str, port: int, rounds: int, runs: int, concurrent: bool) -> dict[str, float]:
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        name,
        "--port",
        str(port),
        "--rounds",
        str(rounds),
        "--runs",
        str(runs),
        *(["--concurrent-mode"] if concurrent else []),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def import_ms(modules: str, repeats: int = 9) -> float:
    """Best wall time of ``import modules`` in a fresh interpreter, bytecode cached as after an install."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = f"import time; t = time.perf_counter(); import {modules}; print(time.perf_counter() - t)"
    run = [sys.executable, "-c", code]
    subprocess.run(run, capture_output=True, text=True, check=True, env=env)  # writes the bytecode caches
    times = [
        float(subprocess.run(run, capture_output=True, text=True, check=True, env=env).stdout)
        for _ in range(repeats)
    ]
    return min(times) * 1000


def bench(port: int, args: argparse.Namespace) -> None:
    print(
        f"{'N':>2} {'mode':<10} {'contender':<13} {'ms/step':>8} {'x httpx':>8} {'x same tool':>12} "
        f"{'CPU ms/step':>12} {'peak RSS MB':>12}"
    )
    modes = [("sequential", args.runs), (f"{args.concurrent} conc.", args.concurrent)][
        : 1 if args.sequential_only else 2
    ]
    for rounds in (1, 8):
        for mode, runs in modes:
            best: dict[str, dict[str, float]] = {}
            for _ in range(args.repeats):
                for name in CONTENDERS:
                    got = worker(name, port, rounds, runs, concurrent=mode != "sequential")
                    if name not in best or got["ms_per_step"] < best[name]["ms_per_step"]:
                        best[name] = {**got, "rss_mb": max(got["rss_mb"], best.get(name, got)["rss_mb"])}
            base = best["httpx"]["ms_per_step"]
            for name in CONTENDERS:
                b = best[name]
                same = b["ms_per_step"] / best[SAME_TOOL.get(name, "httpx")]["ms_per_step"]
                print(
                    f"{rounds:>2} {mode:<10} {name:<13} {b['ms_per_step']:>8.3f} {b['ms_per_step'] / base:>7.2f}x "
                    f"{same:>11.2f}x {b['cpu_ms_per_step']:>12.3f} {b['rss_mb']:>12.1f}"
                )
    print_imports()


IMPORTS = {
    "minloop + its HTTP model": "minloop, minloop.models.openai",
    "its dependencies (asyncio, pydantic, httpx)": "asyncio, httpx; from pydantic import BaseModel, create_model",
    "openai": "openai",
}


def print_imports() -> None:
    """Import time of minloop with its HTTP model against its own dependencies, side by side."""
    times = {label: import_ms(modules) for label, modules in IMPORTS.items()}
    base = times["its dependencies (asyncio, pydantic, httpx)"]
    print("\nimport time (best of 9, fresh interpreter each, bytecode cached):")
    for label, ms in times.items():
        print(f"  {label:<46} {ms:6.0f} ms  {ms / base:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=100, help="sequential runs per measurement")
    parser.add_argument("--concurrent", type=int, default=1000, help="concurrent runs per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sequential-only", action="store_true", help="skip the concurrent rows")
    parser.add_argument("--imports-only", action="store_true", help="only the import times")
    parser.add_argument("--streaming-only", action="store_true", help="only the streaming rows")
    parser.add_argument("--stream-worker", choices=STREAM_CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker", choices=CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--concurrent-mode", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve())
        return
    if args.imports_only:
        print_imports()
        return
    if args.stream_worker:
        base = f"http://127.0.0.1:{args.port}/n{args.rounds}/v1"
        print(json.dumps(asyncio.run(measure_stream(args.stream_worker, base, args.runs))))
        return
    if args.worker:
        base = f"http://127.0.0.1:{args.port}/n{args.rounds}/v1"
        print(json.dumps(asyncio.run(measure(args.worker, base, args.runs, args.concurrent_mode))))
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        print(
            f"mock server pid {server.pid} on 127.0.0.1:{port}; {os.cpu_count()} cores; best of {args.repeats}\n"
        )
        if not args.streaming_only:
            bench(port, args)
        stream_bench(port, args)
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
