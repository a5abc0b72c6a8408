"""When does a reader see the embedded model's answer? Time to the first text delta against the
time to the whole answer, streamed runs on the bundled 0.5B model (run it under the CPU lock).

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/local_stream.py

One warm-up run, then each prompt once: the system prompt and the tools are in the KV cache,
the user's message is new, as in a conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from minloop import Loop, tool
from minloop.layers.streaming import TextDelta
from minloop.models.local import LocalModel

PROMPTS = (
    "Say hello to Ada in one short sentence.",
    "Explain in two sentences what a unit test is.",
    "用两句话解释什么是单元测试。",
    "Name three colours of the rainbow.",
    "What is the capital of France? Answer in one sentence.",
)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def timed(loop: Loop, prompt: str) -> tuple[float, float, int]:
    """Seconds to the first text delta, seconds to the end, and the number of deltas."""
    start, first, deltas = time.perf_counter(), None, 0
    async with loop.stream(prompt) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                first = first or time.perf_counter()
                deltas += 1
    assert events.result is not None and events.result.status == "success", events.result
    return (first or time.perf_counter()) - start, time.perf_counter() - start, deltas


async def main() -> None:
    loop = Loop(LocalModel(max_tokens=96), [add])
    loop.model.load()  # type: ignore[attr-defined]
    await timed(loop, "Hi.")  # warm: the system prompt and the tools are in the KV cache from here on
    print(f"{os.cpu_count()} cores, LocalModel(max_tokens=96), tools offered: add\n")
    print(f"{'prompt':<48} {'first text s':>12} {'whole s':>8} {'deltas':>7}")
    firsts, wholes = [], []
    for prompt in PROMPTS:
        first, whole, deltas = await timed(loop, prompt)
        firsts.append(first)
        wholes.append(whole)
        print(f"{prompt[:46]:<48} {first:>12.2f} {whole:>8.2f} {deltas:>7}")
    print(f"{'median':<48} {statistics.median(firsts):>12.2f} {statistics.median(wholes):>8.2f}")


if __name__ == "__main__":
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    asyncio.run(main())
