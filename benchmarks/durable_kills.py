"""Kill durable runs at random moments and resume them: counts what really happened.

    .venv/bin/python benchmarks/durable_kills.py [--kills 200] [--store sqlite|postgres] [--seed 1]

Each run is tests/servers/durable_child.py's (look up the balance, charge 30, notify and look
up the receipt at once, answer), its model and tools taking ``--delay`` seconds each so that a
kill lands anywhere: in a model call, inside a tool before or after its side effect, between
steps, in a store write, or after the last step before the run's end is written. The process is
killed with SIGKILL at a random moment after the run started, resumed in a new process (which
may be killed again, up to three times a run), and finally resumed to its end. Runs take turns
at four ways of charging: with no approval needed; approved in the process (``approve=``);
paused and approved by a person through the API (``loop.resume`` with the decision); paused
and approved by a person through the command line (``minloop approve``). A resume that follows
a person's decision is killed within its first three delays, where the approved charge runs.
Every tool appends a line to a file as its side effect, so the files say what ran. Printed, for
each way: kills, runs, how they ended, charges and notices made twice, final answers given twice
and runs stuck (all three must be 0), calls reported in doubt, and lookups made again (allowed:
the lookup is safe to repeat).
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


WAYS = ("no approval", "approved in process", "approved by API", "approved by CLI")
FINAL = "Charged 30; the receipt is r-1."


def launch(store: str, counts: Path, args: list[str], delay: float, way: str) -> subprocess.Popen[str]:
    env = {**os.environ, "DURABLE_DELAY": str(delay)}
    if way != "no approval":
        env |= {
            "DURABLE_APPROVE": "charge",
            "DURABLE_APPROVER": "yes" if way == "approved in process" else "no",
        }
    return subprocess.Popen([sys.executable, str(CHILD), store, str(counts), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def approve_by_cli(store: str, run_id: str) -> None:
    cli = [sys.executable, "-c", "from minloop.cli import main; main()"]
    done = subprocess.run([*cli, "approve", run_id, "call_2_1", "--store", store, "--by", "bench"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"minloop approve failed for {run_id}: {done.stderr or done.stdout}")


def one_run(
    store: str, counts: Path, rng: random.Random, delay: float, kills_left: int, way: str
) -> tuple[int, dict]:
    """Start, kill, approve and resume one run; the kills made and its end."""
    kills, run_id, args, window, most = 0, None, ["start"], 10 * delay, 3  # the run takes about 9 delays
    while True:
        proc = launch(store, counts, args, delay, way)
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the run id, once the run is taken: the kill is timed from here
        run_id = run_id or line.split()[0]
        if kills < most and kills < kills_left:
            time.sleep(rng.uniform(0.0, window))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
        code = proc.wait(timeout=60)
        args, window = ["resume", run_id], 10 * delay
        if code == 0:
            result = json.loads((counts / "result.json").read_text())
            if result["status"] != "paused":
                return kills, result
            if way == "approved by API":  # a person decides; the resume records it
                args += ["--decide", "call_2_1=yes"]
            else:
                approve_by_cli(store, run_id)
            window, most = 3 * delay, kills + 1  # the approved charge runs first: aim one more kill at it
            continue
        stderr = proc.stderr.read() if proc.stderr else ""
        if code == 1 and "the run has ended" in stderr:
            return kills, stored_result(store, run_id)  # killed after the end was stored
        if code != -signal.SIGKILL:
            raise RuntimeError(f"run {run_id} failed: {stderr}")


def stored_result(store: str, run_id: str) -> dict:
    from minloop.runs import open_store

    opened = open_store(store)
    try:
        return dict(opened.load(run_id).result or {})
    finally:
        opened.close()


def lines(counts: Path, name: str) -> list[str]:
    return (counts / name).read_text().split("\n")[:-1] if (counts / name).exists() else []


def tally_run(tally: Counter, counts: Path, kills: int, result: dict) -> None:
    tally["kills"] += kills
    tally["runs"] += 1
    tally[f"ended {result['status']}"] += 1
    messages = result["messages"]
    tally["in doubt"] += sum(m["role"] == "tool" and "ERR_TOOL_IN_DOUBT" in m["content"] for m in messages)
    tally["charged twice"] += len(lines(counts, "charge")) > 1
    tally["notified twice"] += len(lines(counts, "notify")) > 1
    tally["final answers twice"] += (
        sum(m["role"] == "assistant" and m.get("content") == FINAL for m in messages) > 1
    )
    tally["lookups made again"] += max(0, len(lines(counts, "lookup")) - 2)


ROWS = ("kills", "runs", "ended success", "charged twice", "notified twice", "final answers twice", "stuck",
        "in doubt", "lookups made again")  # fmt: skip


def report(store: str, tallies: dict[str, Counter], took: float) -> int:
    total = sum(tallies.values(), Counter())
    print(f"{store} store · {total['kills']} kills over {total['runs']} runs in {took:.0f} s\n")
    heads = [*WAYS, "all"]
    print(f"{'charging:':<22}" + "".join(f"{h.removeprefix('approved '):>13}" for h in heads))
    for row in ROWS:
        print(f"{row:<22}" + "".join(f"{(tallies.get(h) or total)[row]:>13}" for h in heads))
    bad = total["charged twice"] + total["notified twice"] + total["final answers twice"] + total["stuck"]
    print(f"\nduplicate side effects: {total['charged twice'] + total['notified twice']} · final answers twice: "
          f"{total['final answers twice']} · runs stuck: {total['stuck']}")  # fmt: skip
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--store", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--delay", type=float, default=0.02, help="seconds each model call and tool takes")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tallies: dict[str, Counter] = {way: Counter() for way in WAYS}
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        if args.store == "postgres":
            from tests.servers.postgres import PostgresServer

            store = stack.enter_context(PostgresServer()).dsn
        else:
            store = os.path.join(tmp, "runs.db")
        started, made = time.perf_counter(), 0
        while made < args.kills:
            way = WAYS[sum(t["runs"] + t["stuck"] for t in tallies.values()) % len(WAYS)]
            counts = Path(tempfile.mkdtemp(dir=tmp))
            try:
                kills, result = one_run(store, counts, rng, args.delay, args.kills - made, way)
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                print(f"stuck: {exc}", file=sys.stderr)
                tallies[way]["stuck"] += 1
                if sum(t["stuck"] for t in tallies.values()) >= 10:
                    break
                continue
            made += kills
            tally_run(tallies[way], counts, kills, result)
        took = time.perf_counter() - started
    sys.exit(1 if report(args.store, tallies, took) else 0)


if __name__ == "__main__":
    main()
