"""What recording a trace in SQLite costs per step.

Runs the same scripted loop (a tool call per step, then an answer) with no sink and with the
SQLite sink, and prints the per-step time of each side by side, their ratio, and the added time
per step and per event. The scripted model answers instantly, so this is the sink's cost
against the loop's own bookkeeping: the worst case. A real model step takes milliseconds to
seconds; compare the added time with that.

    .venv/bin/python benchmarks/trace_overhead.py [--steps 10] [--runs 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from minloop import Loop, tool
from minloop.layers.tracing import Event, TraceSink
from minloop.testing import ScriptedModel, call, reply
from minloop.trace.sqlite import SQLiteSink


@tool
async def lookup(key: str) -> dict[str, str]:
    """Look a key up."""
    return {"key": key, "value": key.upper() * 20}


class Counter:
    """A sink that keeps nothing: what events cost without storage (building and redacting them)."""

    def __init__(self) -> None:
        self.events = 0

    def emit(self, event: Event) -> None:
        self.events += 1


class Timed:
    """Wraps a sink and adds up the time spent inside its ``emit``."""

    def __init__(self, sink: TraceSink) -> None:
        self.sink = sink
        self.seconds = 0.0
        self.events = 0

    def emit(self, event: Event) -> None:
        started = time.perf_counter()
        self.sink.emit(event)
        self.seconds += time.perf_counter() - started
        self.events += 1


def one_run(steps: int, sinks: list[TraceSink]) -> None:
    turns = [reply(None, call("lookup", {"key": f"k{i}"})) for i in range(steps - 1)] + ["done"]
    result = Loop(ScriptedModel(turns), [lookup], max_steps=steps, sinks=sinks).run_sync("look up every key")
    assert result.status == "success" and len(result.steps) == steps


def per_step(steps: int, runs: int, make_sinks: Callable[[], list[TraceSink]]) -> float:
    """Seconds per step over ``runs`` runs of ``steps`` steps."""
    sinks = make_sinks()
    started = time.perf_counter()
    for _ in range(runs):
        one_run(steps, sinks)
    return (time.perf_counter() - started) / (runs * steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    counter = Counter()
    with tempfile.TemporaryDirectory() as tmp, SQLiteSink(Path(tmp) / "traces.db") as sqlite_sink:
        timed = Timed(sqlite_sink)
        one_run(args.steps, [timed])  # warm up every path
        times: dict[str, list[float]] = {"no sink": [], "null sink": [], "SQLite sink": []}
        for _ in range(args.repeats):  # interleaved, so load drift hits every side alike
            times["no sink"].append(per_step(args.steps, args.runs, list))
            times["null sink"].append(per_step(args.steps, args.runs, lambda: [counter]))
            times["SQLite sink"].append(per_step(args.steps, args.runs, lambda: [timed]))
    events_per_step = timed.events / (args.steps * (args.runs * args.repeats + 1))
    inside = timed.seconds / timed.events
    median = {name: statistics.median(values) for name, values in times.items()}
    print(
        f"scripted run: {args.steps} steps x {args.runs} runs, median of {args.repeats} repeats; "
        f"{events_per_step:.1f} events per step"
    )
    for name, seconds in median.items():
        print(f"  {name:<12} {seconds * 1e6:>8.0f} us per step   x{seconds / median['no sink']:.2f}")
    print(
        f"SQLite sink vs no sink: x{median['SQLite sink'] / median['no sink']:.2f} per step, "
        f"+{(median['SQLite sink'] - median['no sink']) * 1e6:.0f} us per step"
    )
    print(
        f"time inside SQLiteSink.emit: {inside * 1e6:.0f} us per event, "
        f"{inside * events_per_step * 1e6:.0f} us per step (one committed transaction per event)"
    )


if __name__ == "__main__":
    main()
