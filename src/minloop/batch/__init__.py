"""Batch runs: many tasks from a JSONL file, bounded concurrency, a resumable results file.

One task per line; every key but the input is optional::

    {"id": "t1", "prompt": "What is 6 * 7?", "tools": "builtins", "max_steps": 4}
    {"id": "t2", "messages": [{"role": "user", "content": "hi"}], "model": "gpt-4o-mini", "base_url": "..."}
    {"id": "t3", "prompt": "hi", "model": "scripted", "script": ["Hello!"], "tools": ["my_tools:add"]}

``model`` is ``local`` (the embedded 1.5B), ``local-0.5b`` (smaller, faster), ``scripted`` (plays ``script``: plain
strings or assistant messages, for tests and demos) or the name of a model behind an
OpenAI-compatible ``base_url``. ``tools`` is ``"builtins"`` (calculator, clock, read-only
files under ``root``), a ``module:attr`` spec, or a list of them. A task without ``id`` is
named by its line number.

Results are appended to the output file one JSON line per finished task, each written and
flushed as soon as its run ends, so an interrupted batch loses no finished result. Running
the same command again skips every task already in the file (resume). A task that cannot
run at all (bad tool spec, malformed transcript, a script that runs out) gets status
``error``. The per-task work lives in ``TaskRunner``, which both engines use: ``local``
(asyncio in this process) and ``ray`` (``minloop.batch.ray``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import MinloopError
from .tasks import Engine, Record, ResultSink, Task, TaskRunner, finished_ids, read_tasks

__all__ = ["BatchSummary", "TaskRunner", "finished_ids", "read_tasks", "run_batch", "run_local"]


@dataclass(frozen=True)
class BatchSummary:
    total: int  # tasks in the file
    skipped: int  # already in the results file
    statuses: dict[str, int]  # of the tasks run now
    not_run: int  # lost to engine failures (a Ray worker died); run again to retry them

    @property
    def complete(self) -> bool:
        return self.not_run == 0 and self.skipped + sum(self.statuses.values()) == self.total


async def run_local(tasks: Iterable[Task], sink: ResultSink, concurrency: int) -> int:
    """Run tasks in this process, at most ``concurrency`` at a time. Returns the number not run (0)."""
    runner = TaskRunner()
    queue = list(tasks)[::-1]

    async def worker() -> None:
        while queue:
            sink.write(await runner.run(queue.pop()))

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    finally:
        await runner.aclose()
    return 0


def run_batch(
    tasks: Path,
    out: Path,
    *,
    engine: Engine = "local",
    concurrency: int = 8,
    address: str | None = None,
    defaults: Task | None = None,
    on_record: Callable[[Record], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> BatchSummary:
    """Run every task of ``tasks`` not yet in ``out``.

    ``on_start(total, todo)`` and ``on_record(record)`` report progress.
    """
    if engine not in ("local", "ray"):
        raise MinloopError(f"unknown engine {engine!r}: expected 'local' or 'ray'")
    all_tasks = read_tasks(tasks, defaults)
    done = finished_ids(out)
    todo = [t for t in all_tasks if t["id"] not in done]
    if on_start is not None:
        on_start(len(all_tasks), len(todo))
    sink = ResultSink(out, len(todo), on_record)
    try:
        if engine == "ray":
            from .ray import run_on_ray

            not_run = run_on_ray(todo, sink, concurrency=concurrency, address=address)
        else:
            not_run = asyncio.run(run_local(todo, sink, concurrency))
    finally:
        sink.close()
    return BatchSummary(len(all_tasks), len(all_tasks) - len(todo), dict(sink.statuses), not_run)
