"""Per-step figures of the embedded model: prompt tokens, tokens actually evaluated (the rest
come from the KV cache), generated tokens, seconds; and the wall time of whole runs.

    .venv/bin/python benchmarks/local_steps.py [--model qwen2.5-coder-0.5b] [--runs 3]

The first run of a process pays for the tool definitions in the prompt; later runs share that
prefix in the KV cache. Target: a two-step tool run (call + answer) in <= 3 s with the model
loaded, and later steps evaluating only their new tokens.
"""

from __future__ import annotations

import argparse
import time

from minloop import Loop
from minloop.builtins import calculator, current_time
from minloop.models.local import LocalModel

PROMPTS = [
    "What is 1234 * 5678?",
    "What time is it in Asia/Tokyo?",
    "What is (17 + 5) * 3?",
    "What is 2 to the power of 20?",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--runs", type=int, default=len(PROMPTS))
    args = parser.parse_args()

    model = LocalModel(args.model)
    started = time.perf_counter()
    model.load()
    print(f"model {args.model}: loaded in {time.perf_counter() - started:.2f}s, {model.threads} threads")
    loop = Loop(model, [calculator, current_time], max_steps=4)
    print(
        f"{'run':>3} {'step':>4} {'decision':<10} {'prompt':>6} {'evaluated':>9} {'generated':>9} {'seconds':>7}"
    )
    walls = []
    for i, prompt in enumerate((PROMPTS * 4)[: args.runs], 1):
        started = time.perf_counter()
        result = loop.run_sync(prompt)
        walls.append(time.perf_counter() - started)
        for step in result.steps:
            u = step.usage
            print(
                f"{i:>3} {step.index:>4} {step.decision:<10} {u.prompt_tokens:>6} {u.evaluated_tokens or 0:>9} "
                f"{u.completion_tokens:>9} {step.model_latency:>7.2f}"
            )
        calls = [c.name for s in result.steps for c in s.tool_calls]
        print(
            f"    run {i}: {result.status}, {len(result.steps)} steps, tools {calls}, {walls[-1]:.2f}s wall: {result.output!r}"
        )
    warm = walls[1:] or walls
    print(
        f"\nfirst run {walls[0]:.2f}s wall; later runs mean {sum(warm) / len(warm):.2f}s wall (target <= 3 s)"
    )


if __name__ == "__main__":
    main()
