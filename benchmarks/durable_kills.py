"""Kill durable runs at random moments and resume them: counts what really happened.

    .venv/bin/python benchmarks/durable_kills.py [--kills 200] [--store sqlite|postgres] [--seed 1]

Each run is tests/servers/durable_child.py's (look up the balance, charge 30, notify and look
up the receipt at once, answer), its model and tools taking ``--delay`` seconds each so that a
kill lands anywhere: in a model call, inside a tool before or after its side effect, between
steps, or in a store write. The process is killed with SIGKILL at a random moment after the run
started, resumed in a new process (which may be killed again, up to three times a run), and
finally resumed to its end. Every tool appends a line to a file as its side effect, so the
files say what ran. Printed: kills, runs, how they ended, charges and notices made twice (must
be 0), calls reported in doubt, and lookups made again (allowed: the lookup is safe to repeat).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = HERE.parent / "tests" / "servers" / "durable_child.py"
sys.path.insert(0, str(HERE.parent))  # tests.servers.postgres


def launch(store: str, counts: Path, args: list[str], delay: float) -> subprocess.Popen[str]:
    env = {**os.environ, "DURABLE_DELAY": str(delay)}
    return subprocess.Popen([sys.executable, str(CHILD), store, str(counts), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def one_run(store: str, counts: Path, rng: random.Random, delay: float, kills_left: int) -> tuple[int, dict]:
    """Start, kill and resume one run; the kills made and its end."""
    kills, run_id, args = 0, None, ["start"]
    while True:
        proc = launch(store, counts, args, delay)
        assert proc.stdout is not None
        run_id = run_id or proc.stdout.readline().split()[0]
        if kills < 3 and kills < kills_left:
            time.sleep(rng.uniform(0.0, 10 * delay))  # the run takes about 9 delays
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
        code = proc.wait(timeout=60)
        if code == 0:
            return kills, json.loads((counts / "result.json").read_text())
        if code == 1 and proc.stderr and "the run has ended" in proc.stderr.read():
            return kills, stored_result(store, run_id)  # killed after the end was stored
        if code != -signal.SIGKILL:
            raise RuntimeError(f"run {run_id} failed: {proc.stderr.read() if proc.stderr else ''}")
        args = ["resume", run_id]


def stored_result(store: str, run_id: str) -> dict:
    from minloop.runs import open_store

    opened = open_store(store)
    try:
        return dict(opened.load(run_id).result or {})
    finally:
        opened.close()


def lines(counts: Path, name: str) -> list[str]:
    return (counts / name).read_text().split("\n")[:-1] if (counts / name).exists() else []


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--store", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--delay", type=float, default=0.02, help="seconds each model call and tool takes")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng, tally, statuses = random.Random(args.seed), Counter(), Counter()
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        if args.store == "postgres":
            from tests.servers.postgres import PostgresServer

            store = stack.enter_context(PostgresServer()).dsn
        else:
            store = os.path.join(tmp, "runs.db")
        started = time.perf_counter()
        while tally["kills"] < args.kills:
            counts = Path(tempfile.mkdtemp(dir=tmp))
            kills, result = one_run(store, counts, rng, args.delay, args.kills - tally["kills"])
            tally["kills"] += kills
            tally["runs"] += 1
            statuses[result["status"]] += 1
            doubt = [
                m for m in result["messages"] if m["role"] == "tool" and "ERR_TOOL_IN_DOUBT" in m["content"]
            ]
            tally["in doubt"] += len(doubt)
            tally["charged twice"] += len(lines(counts, "charge")) > 1
            tally["notified twice"] += len(lines(counts, "notify")) > 1
            tally["lookups made again"] += max(0, len(lines(counts, "lookup")) - 2)
        took = time.perf_counter() - started
    print(f"{args.store} store · {tally['kills']} kills over {tally['runs']} runs in {took:.0f} s")
    print("runs ended: " + ", ".join(f"{k} {v}" for k, v in statuses.items()))
    for key in ("charged twice", "notified twice", "in doubt", "lookups made again"):
        print(f"{key:<20}{tally[key]:>6}")
    duplicates = tally["charged twice"] + tally["notified twice"]
    print(f"duplicate side effects: {duplicates}")
    sys.exit(1 if duplicates else 0)


if __name__ == "__main__":
    main()
