"""The ``ray`` engine of ``minloop batch``: the same tasks, run by Ray actors.

Each actor is an async ``TaskRunner`` (one per CPU of the cluster) that runs up to
``concurrency / actors`` tasks at once on its own event loop, so endpoint-bound tasks overlap
their waits. Models and tools are built inside the workers from the task dicts: nothing but
JSON crosses the wire. The driver keeps at most ``concurrency`` tasks in flight and writes each
result the moment it comes back, so a crash loses no finished result.

Without ``address`` Ray starts locally (``ray.init()``) with the current directory on the
workers' ``PYTHONPATH`` so ``module:attr`` tools resolve as they do locally; on a cluster,
tool modules must be importable on every node.
"""

from __future__ import annotations

import math
import os
from collections import deque
from typing import Any

from ..exceptions import MissingDependencyError
from .tasks import Record, ResultSink, Task, TaskRunner

__all__ = ["TaskActor", "run_on_ray"]


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray (the distributed engine)", "pip install 'minloop[ray]'") from None
    return ray


class TaskActor:
    """A worker process holding one ``TaskRunner`` (decorated with ``ray.remote`` at use)."""

    def __init__(self) -> None:
        self.runner = TaskRunner()

    async def run(self, task: Task) -> Record:
        return await self.runner.run(task)


def run_on_ray(tasks: list[Task], sink: ResultSink, *, concurrency: int, address: str | None) -> int:
    """Run ``tasks`` on Ray, writing each result to ``sink``. Returns how many could not run."""
    if not tasks:
        return 0
    ray = import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(**_init_options(address))
    try:
        actors = _start_actors(ray, len(tasks), concurrency)
        return _drive(ray, actors, tasks, sink, concurrency)
    finally:
        if started_here:
            ray.shutdown()


def _init_options(address: str | None) -> dict[str, Any]:
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "WARNING"}
    if address is not None:
        options["address"] = address
    else:
        path = os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)
        options["runtime_env"] = {"env_vars": {"PYTHONPATH": path}}
    return options


def _start_actors(ray: Any, tasks: int, concurrency: int) -> list[Any]:
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    count = max(1, min(cpus, tasks, concurrency))
    per_actor = math.ceil(concurrency / count)
    remote = ray.remote(num_cpus=1, max_concurrency=per_actor)(TaskActor)
    return [remote.remote() for _ in range(count)]


def _drive(ray: Any, actors: list[Any], tasks: list[Task], sink: ResultSink, concurrency: int) -> int:
    queue = deque(tasks)
    in_flight: dict[Any, Task] = {}
    failed = 0
    turn = 0
    while queue or in_flight:
        while queue and len(in_flight) < concurrency:
            task = queue.popleft()
            in_flight[actors[turn % len(actors)].run.remote(task)] = task
            turn += 1
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        for ref in ready:
            in_flight.pop(ref)
            try:
                record = ray.get(ref)
            except ray.exceptions.RayError:  # the worker died: not a result, retried on resume
                failed += 1
                continue
            sink.write(record)
    return failed
