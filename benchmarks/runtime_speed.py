"""How fast the embedded runtime evaluates prompts and generates, side by side for two builds.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/runtime_speed.py [--compare OTHER/bin/python] [--rounds 3]

Each interpreter (this one, and ``--compare``'s: another virtualenv with minloop and a
different ``xllamacpp`` build) runs a child process that loads the bundled model and decides
the same 8 requests over the CLI's built-in tools, each with a system message of its own so
that no request reuses another's KV cache: every decision evaluates its whole prompt
(~700 tokens), as a new menu does. The children take turns, ``--rounds`` times each. Printed
per build: the CPU features it was compiled for, prompt tokens per second, generated tokens
per second and seconds per decision (medians over every decision), and the ratios to the
first build. ``scripts/build_runtime.sh`` builds the runtime for a CPU with AVX-512 or AMX; a
virtualenv with the prebuilt wheel for comparison:

    python3 -m venv /tmp/prebuilt && /tmp/prebuilt/bin/pip install -e '.[local]'
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

REQUESTS = [
    "What is 1234 * 5678?",
    "What time is it in Tokyo?",
    "List the Python files in this folder.",
    "Which files mention coffee?",
    "Read notes.md and summarise it.",
    "现在东京几点了？",
    "What is 15% of 240?",
    "Who won the 2018 World Cup?",
]


def child(round_: int) -> None:
    """Decide every request once and print one JSON line per decision."""
    import xllamacpp

    from minloop.builtins import default_tools
    from minloop.models.base import ModelRequest
    from minloop.models.local import LocalModel
    from minloop.models.local.runtime import complete

    model = LocalModel(prefix_cache=False)
    server, lock = model._server()
    specs = [t.spec() for t in default_tools()]
    info = xllamacpp.get_system_info().split(":", 1)[-1]  # "CPU : SSE3 = 1 | AVX2 = 1 | ..."
    features = [f for f in info.split("|") if f.strip().endswith("= 1")]
    for i, text in enumerate(REQUESTS):
        messages = [
            {"role": "system", "content": f"Request {round_}.{i}. You are a helpful assistant."},
            {"role": "user", "content": text},
        ]
        body = model.wire(model.body(ModelRequest(messages, specs, "auto")))
        started = time.perf_counter()
        reply = complete(server, lock, body, None)
        seconds = time.perf_counter() - started
        timings = reply["timings"]
        row = {
            "features": " ".join(f.split("=")[0].strip() for f in features),
            "prompt_per_second": timings["prompt_per_second"],
            "predicted_per_second": timings["predicted_per_second"],
            "prompt_n": timings["prompt_n"],
            "seconds": seconds,
        }
        print(json.dumps(row), flush=True)


def measure(python: str, round_: int) -> list[dict[str, Any]]:
    done = subprocess.run(
        [python, __file__, "--child", str(round_)], capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compare", help="another virtualenv's python, with another xllamacpp build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    pythons = [sys.executable, *([args.compare] if args.compare else [])]
    rows: dict[str, list[dict[str, Any]]] = {p: [] for p in pythons}
    for round_ in range(args.rounds):
        for python in pythons:
            rows[python] += measure(python, round_)
    first: dict[str, float] = {}
    print(f"{'build':<40} {'prompt tok/s':>12} {'gen tok/s':>10} {'s/decision':>10}  ratio (s)")
    for python in pythons:
        got = rows[python]
        figures = {
            key: statistics.median(r[key] for r in got)
            for key in ("prompt_per_second", "predicted_per_second", "seconds")
        }
        first = first or figures
        print(
            f"{python[-40:]:<40} {figures['prompt_per_second']:>12.1f} {figures['predicted_per_second']:>10.1f}"
            f" {figures['seconds']:>10.2f}  {figures['seconds'] / first['seconds']:.2f}x"
        )
        print(
            f"  {len(got)} decisions, {statistics.mean(r['prompt_n'] for r in got):.0f} prompt tokens each;"
            f" built for: {got[0]['features']}"
        )


if __name__ == "__main__":
    main()
