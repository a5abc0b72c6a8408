"""The streaming rows of ``overhead.py``: a streamed run (``loop.stream``) against a raw httpx
streaming loop on the same mock server, which answers a request with ``"stream": true`` as
server-sent events: the answer in 8 text pieces, a call as its id and name then its arguments in
6-character pieces, then the usage; and the ``add`` tool both halves call. Run through
``overhead.py --streaming-only``."""

from __future__ import annotations

import argparse
import functools
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

OVERHEAD = str(Path(__file__).with_name("overhead.py"))  # the stream workers run there


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    }
]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


STREAM_CONTENDERS = ("httpx-stream", "minloop-stream")
STREAMED = re.compile(rb'"stream":\s*true')
ANSWER_PIECES = ("The ", "sums ", "are ", "in: ", "every ", "round ", "is ", "done.")


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "model": "mock",
        "choices": choices,
        **extra,
    }


@functools.cache
def sse_reply(rounds_asked: int, rounds_done: int) -> bytes:
    chunks = [_chunk({"role": "assistant", "content": ""})]
    if rounds_done >= rounds_asked:
        chunks += [_chunk({"content": piece}) for piece in ANSWER_PIECES]
    else:
        opening = {"index": 0, "id": f"call_{rounds_done}", "type": "function", "function": {"name": "add"}}
        chunks.append(_chunk({"tool_calls": [opening]}))
        args = json.dumps({"a": rounds_done, "b": 1})
        chunks += [
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i : i + 6]}}]})
            for i in range(0, len(args), 6)
        ]
    chunks.append(_chunk({}, "stop" if rounds_done >= rounds_asked else "tool_calls"))
    chunks.append(_chunk(None, usage={"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}))
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def httpx_stream_contender(base: str) -> Any:
    """The raw loop, streaming: parse ``data:`` lines, put calls together by index."""
    import httpx

    client = httpx.AsyncClient(
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=100), timeout=60
    )
    body = {"model": "mock", "tools": TOOLS, "stream": True, "stream_options": {"include_usage": True}}

    async def reply(messages: list[dict[str, Any]], clock: dict[str, float]) -> dict[str, Any]:
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        async with client.stream(
            "POST", f"{base}/chat/completions", json={**body, "messages": messages}
        ) as resp:
            resp.raise_for_status()
            async for line in resp.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                for choice in json.loads(line[6:])["choices"]:
                    delta = choice["delta"]
                    if delta.get("content"):
                        clock.setdefault("first", time.perf_counter())
                        text.append(delta["content"])
                    for frag in delta.get("tool_calls") or ():
                        call = calls.setdefault(frag["index"], {"id": "", "name": "", "arguments": ""})
                        fn = frag.get("function") or {}
                        call["id"] += frag.get("id") or ""
                        call["name"] += fn.get("name") or ""
                        call["arguments"] += fn.get("arguments") or ""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for _, c in sorted(calls.items())
            ]
        return message

    async def run() -> int:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Add things."}]
        clock = {"start": time.perf_counter()}
        for step in range(1, 20):
            message = await reply(messages, clock)
            messages.append(message)
            if not message.get("tool_calls"):
                run.first_delta.append(clock["first"] - clock["start"])  # type: ignore[attr-defined]
                return step
            for call in message["tool_calls"]:
                result = add(**json.loads(call["function"]["arguments"]))
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": json.dumps({"result": result})}
                )
        raise RuntimeError("no answer")

    run.first_delta = []  # type: ignore[attr-defined]
    return run


def minloop_stream_contender(base: str) -> Any:
    from minloop import Loop, tool
    from minloop.layers.streaming import TextDelta
    from minloop.models.openai import OpenAIModel

    loop = Loop(
        OpenAIModel("mock", base_url=base, max_retries=0), [tool(add_async, name="add")], max_steps=20
    )

    async def run() -> int:
        start, first = time.perf_counter(), None
        async with loop.stream("Add things.") as events:
            async for event in events:
                if first is None and isinstance(event, TextDelta):
                    first = time.perf_counter()
        result = events.result
        assert result is not None and result.status == "success" and first is not None, result
        run.first_delta.append(first - start)  # type: ignore[attr-defined]
        return len(result.steps)

    run.first_delta = []  # type: ignore[attr-defined]
    return run


async def measure_stream(name: str, base: str, runs: int) -> dict[str, float]:
    run = httpx_stream_contender(base) if name == "httpx-stream" else minloop_stream_contender(base)
    for _ in range(10):  # warm: imports, connection, caches
        await run()
    run.first_delta.clear()
    wall, cpu, steps = time.perf_counter(), time.process_time(), 0
    for _ in range(runs):
        steps += await run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "ms_per_step": wall * 1000 / steps,
        "cpu_ms_per_step": cpu * 1000 / steps,
        "first_delta_ms": statistics.median(run.first_delta) * 1000,
    }


def stream_worker(name: str, port: int, rounds: int, runs: int) -> dict[str, float]:
    cmd = [sys.executable, OVERHEAD, "--stream-worker", name, "--port", str(port), "--rounds", str(rounds)]
    done = subprocess.run([*cmd, "--runs", str(runs)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def stream_bench(port: int, args: argparse.Namespace) -> None:
    """Per-step time and time to the first text delta (median per run), streamed, sequential runs."""
    print(
        f"\nstreaming, {args.runs} sequential runs, best of {args.repeats}:\n"
        f"{'N':>2} {'contender':<15} {'ms/step':>8} {'x httpx':>8} {'CPU ms/step':>12} "
        f"{'first text ms':>14} {'x httpx':>8}"
    )
    for rounds in (0, 1, 8):
        best: dict[str, dict[str, float]] = {}
        for _ in range(args.repeats):
            for name in STREAM_CONTENDERS:
                got = stream_worker(name, port, rounds, args.runs)
                old = best.get(name, got)
                best[name] = {k: min(v, old[k]) for k, v in got.items()}
        base = best["httpx-stream"]
        for name in STREAM_CONTENDERS:
            b = best[name]
            print(
                f"{rounds:>2} {name:<15} {b['ms_per_step']:>8.3f} {b['ms_per_step'] / base['ms_per_step']:>7.2f}x "
                f"{b['cpu_ms_per_step']:>12.3f} {b['first_delta_ms']:>14.3f} "
                f"{b['first_delta_ms'] / base['first_delta_ms']:>7.2f}x"
            )
