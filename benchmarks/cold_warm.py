"""``minloop run`` in a new process, cold and warm: what the on-disk prefix cache saves.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/cold_warm.py [--pairs 3]

Each pair runs ``minloop run "What is 1234 * 5678? Use the calculator." --json`` twice, each
time in a new process: *cold* with an empty prefix cache, then *warm* (the first run left the
system prompt and tool definitions on disk). The bundled model is passed with ``--gguf`` and
``MINLOOP_CACHE_DIR`` points at a temporary directory, so only the prefix cache is cold: the
model file itself is the same, already assembled, in both runs. Printed: wall seconds of the
whole process, seconds of each model step, prompt tokens evaluated per step, the ratio warm /
cold, and whether both runs gave the right answer. Target: warm <= 8 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from minloop.models.local.gguf import ensure_gguf

PROMPT = "What is 1234 * 5678? Use the calculator."
MINLOOP = Path(sys.executable).with_name("minloop")


def run(cache: Path, gguf: Path) -> dict[str, Any]:
    env = {**os.environ, "MINLOOP_CACHE_DIR": str(cache)}
    command = [str(MINLOOP), "run", PROMPT, "--gguf", str(gguf), "--json", "--no-trace"]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    result = json.loads(done.stdout)
    steps = result["steps"]
    return {
        "wall": wall,
        "status": result["status"],
        "right": "7006652" in str((result.get("final_message") or {}).get("content")).replace(",", ""),
        "model": [s["model_latency"] for s in steps],
        "evaluated": [s["usage"]["evaluated_tokens"] for s in steps],
        "files": len(list((cache / "prefix").glob("*.bin"))),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    gguf = ensure_gguf("qwen2.5-coder-0.5b")
    rows: dict[str, list[dict[str, Any]]] = {"cold": [], "warm": []}
    print(
        f"{'run':<6} {'wall s':>7} {'model s per step':<20} {'evaluated per step':<20} {'status':<8} right files"
    )
    for _ in range(args.pairs):
        cache = Path(tempfile.mkdtemp(prefix="minloop-prefix-"))
        try:
            for kind in ("cold", "warm"):
                r = run(cache, gguf)
                rows[kind].append(r)
                model = " ".join(f"{s:.2f}" for s in r["model"])
                evaluated = " ".join(str(n) for n in r["evaluated"])
                print(
                    f"{kind:<6} {r['wall']:>7.2f} {model:<20} {evaluated:<20} {r['status']:<8} {r['right']!s:<5} {r['files']}"
                )
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    cold = statistics.median(r["wall"] for r in rows["cold"])
    warm = statistics.median(r["wall"] for r in rows["warm"])
    print(
        f"\nmedian wall: cold {cold:.2f} s, warm {warm:.2f} s, warm/cold {warm / cold:.2f}x (target warm <= 8 s)"
    )


if __name__ == "__main__":
    main()
