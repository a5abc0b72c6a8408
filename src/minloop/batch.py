"""Batch runs: many tasks from a JSONL file, bounded concurrency, a resumable results file.

One task per line; every key but the input is optional::

    {"id": "t1", "prompt": "What is 6 * 7?", "tools": "builtins", "max_steps": 4}
    {"id": "t2", "messages": [{"role": "user", "content": "hi"}], "model": "gpt-4o-mini", "base_url": "..."}
    {"id": "t3", "prompt": "hi", "model": "scripted", "script": ["Hello!"], "tools": ["my_tools:add"]}

``model`` is ``local`` (the embedded 0.5B), ``local-1.5b``, ``scripted`` (plays ``script``: plain
strings or assistant messages, for tests and demos) or the name of a model behind an
OpenAI-compatible ``base_url``. ``tools`` is ``"builtins"`` (calculator, clock, read-only
files under ``root``), a ``module:attr`` spec, or a list of them. A task without ``id`` is
named by its line number.

Results are appended to the output file one JSON line per finished task, each written and
flushed as soon as its run ends, so an interrupted batch loses no finished result. Running
the same command again skips every task already in the file (resume). A task that cannot
run at all (bad tool spec, malformed transcript, a script that runs out) gets status
``error``. The per-task work lives in ``TaskRunner``, which both engines use: ``local``
(asyncio in this process) and ``ray`` (``minloop.batch_ray``).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

import typer

from .exceptions import MinloopError
from .loop import Loop
from .models.base import Model
from .result import RunResult
from .tools import Tool

__all__ = ["BatchSummary", "TaskRunner", "batch_command", "build_model", "read_tasks", "run_batch"]

Task: TypeAlias = dict[str, Any]
Record: TypeAlias = dict[str, Any]
Engine: TypeAlias = Literal["local", "ray"]
LOCAL_MODELS = {"local": "qwen2.5-coder-0.5b", "local-0.5b": "qwen2.5-coder-0.5b", "local-1.5b": "qwen2.5-coder-1.5b"}


def read_tasks(path: Path, defaults: Task | None = None) -> list[Task]:
    """The tasks of a JSONL file, each with an ``id`` and the ``defaults`` it does not override."""
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            task = json.loads(line)
        except ValueError as exc:
            raise MinloopError(f"{path}:{number}: not a JSON object: {exc}") from None
        if not isinstance(task, dict) or ("prompt" in task) == ("messages" in task):
            raise MinloopError(f"{path}:{number}: a task is a JSON object with either 'prompt' or 'messages'")
        task = {**(defaults or {}), **task, "id": str(task.get("id", number))}
        if task["id"] in seen:
            raise MinloopError(f"{path}:{number}: duplicate task id {task['id']!r}")
        seen.add(task["id"])
        tasks.append(task)
    return tasks


def finished_ids(out: Path) -> set[str]:
    """Ids already in a results file. A line torn by a crash mid-write is cut off first."""
    if not out.exists():
        return set()
    data = out.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        with out.open("r+b") as f:
            f.truncate(len(data))
    ids = set()
    for line in data.decode("utf-8").splitlines():
        try:
            ids.add(str(json.loads(line)["id"]))
        except (ValueError, KeyError, TypeError):
            continue  # not ours; keep it, but it names no finished task
    return ids


def build_model(spec: str, *, base_url: str | None = None, script: list[Any] | None = None,
                api_key_env: str = "OPENAI_API_KEY") -> Model:
    """A model from its CLI name: ``local``, ``local-1.5b``, ``scripted`` or an endpoint's model name."""
    if spec == "scripted":
        from .testing import ScriptedModel

        if not isinstance(script, list):
            raise MinloopError("model 'scripted' needs a 'script': a list of assistant turns")
        return ScriptedModel(script)
    if spec in LOCAL_MODELS and base_url is None:
        from .models.local import LocalModel

        return LocalModel(LOCAL_MODELS[spec])
    from .models.openai import OpenAIModel

    return OpenAIModel(spec, base_url=base_url or "https://api.openai.com/v1", api_key_env=api_key_env)


def build_tools(spec: str | list[str] | None, root: str = ".") -> list[Tool]:
    if spec is None:
        return []
    found: list[Tool] = []
    for item in [spec] if isinstance(spec, str) else spec:
        if item == "builtins":
            from .builtins import default_tools

            found.extend(default_tools(root))
        else:
            from .cli import load_tools  # lazily: cli imports this module

            found.extend(load_tools(item))
    return found


@dataclass
class TaskRunner:
    """Runs one task dict to one result record. Loops, endpoint models and tool lists are
    built once per configuration and reused; a scripted model is fresh for every task."""

    loops: dict[str, Loop] = field(default_factory=dict)
    tools: dict[str, list[Tool]] = field(default_factory=dict)

    async def run(self, task: Task) -> Record:
        started = time.perf_counter()
        try:
            loop = self.loop_for(task)
            prompt = task["prompt"] if "prompt" in task else task["messages"]
            result = await loop.run(prompt)
        except Exception as exc:  # noqa: BLE001 (one task's broken configuration never stops the batch)
            return error_record(task["id"], exc, time.perf_counter() - started)
        return result_record(task["id"], result)

    def loop_for(self, task: Task) -> Loop:
        config = {k: v for k, v in task.items() if k not in ("id", "prompt", "messages")}
        key = json.dumps(config, sort_keys=True, default=str)
        if key in self.loops:
            return self.loops[key]
        tools_key = json.dumps([task.get("tools"), task.get("root", ".")], default=str)
        if tools_key not in self.tools:
            self.tools[tools_key] = build_tools(task.get("tools"), task.get("root", "."))
        model = build_model(str(task.get("model", "local")), base_url=task.get("base_url"), script=task.get("script"))
        loop = Loop(model, self.tools[tools_key], max_steps=int(task.get("max_steps", 10)))
        if task.get("model") != "scripted":  # a script is used up by one run
            self.loops[key] = loop
        return loop

    async def aclose(self) -> None:
        for loop in self.loops.values():
            close = getattr(loop.model, "aclose", None)
            if close is not None:
                await close()


def result_record(task_id: str, result: RunResult) -> Record:
    usage = result.usage
    return {
        "id": task_id,
        "status": result.status,
        "output": result.output,
        "final_message": result.final_message,
        "trace_id": result.trace_id,
        "steps": len(result.steps),
        "tokens": {"prompt": usage.prompt_tokens, "completion": usage.completion_tokens, "total": usage.total_tokens},
        "duration": round(result.duration, 4),
        "error": result.error,
    }


def error_record(task_id: str, exc: BaseException, duration: float) -> Record:
    return {
        "id": task_id, "status": "error", "output": None, "final_message": None, "trace_id": None, "steps": 0,
        "tokens": {"prompt": 0, "completion": 0, "total": 0}, "duration": round(duration, 4),
        "error": f"{type(exc).__name__}: {exc}",
    }


class ResultSink:
    """Appends each record to the results file at once (written and flushed) and counts it."""

    def __init__(self, out: Path, total: int, on_record: Callable[[Record], None] | None = None) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        self.file = out.open("a", encoding="utf-8")
        self.total = total
        self.statuses: Counter[str] = Counter()
        self.on_record = on_record

    def write(self, record: Record) -> None:
        self.file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self.file.flush()  # in the OS from here on: a crash of this process cannot lose it
        self.statuses[record["status"]] += 1
        if self.on_record is not None:
            self.on_record(record)

    def close(self) -> None:
        os.fsync(self.file.fileno())
        self.file.close()


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


def run_batch(tasks: Path, out: Path, *, engine: Engine = "local", concurrency: int = 8, address: str | None = None,
              defaults: Task | None = None, on_record: Callable[[Record], None] | None = None,
              on_start: Callable[[int, int], None] | None = None) -> BatchSummary:
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
            from .batch_ray import run_on_ray

            not_run = run_on_ray(todo, sink, concurrency=concurrency, address=address)
        else:
            not_run = asyncio.run(run_local(todo, sink, concurrency))
    finally:
        sink.close()
    return BatchSummary(len(all_tasks), len(all_tasks) - len(todo), dict(sink.statuses), not_run)


def batch_command(
    tasks: Annotated[Path, typer.Argument(help="JSONL file, one task per line.", exists=True, dir_okay=False)],
    out: Annotated[Path, typer.Option(help="Results file (JSONL); tasks in it are skipped.")] = Path("results.jsonl"),
    engine: Annotated[str, typer.Option(help="'local' (asyncio in this process) or 'ray'.")] = "local",
    concurrency: Annotated[int, typer.Option(min=1, help="Tasks running at once.")] = 8,
    address: Annotated[str | None, typer.Option(help="Ray cluster address (default: start Ray locally).")] = None,
    model: Annotated[str, typer.Option(help="Model of tasks naming none: local, local-1.5b or a name.")] = "local",
    base_url: Annotated[str | None, typer.Option(help="Endpoint of tasks that name none.")] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Run many tasks from a JSONL file with bounded concurrency; resumable."""
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    bar = Progress(console=console, disable=not progress, transient=False)
    job = bar.add_task("tasks", total=None)
    defaults = {"model": model, **({"base_url": base_url} if base_url else {})}

    def started(total: int, todo: int) -> None:
        console.print(f"{total} tasks, {total - todo} already in {out}, {todo} to run on {engine}")
        bar.update(job, total=todo)

    try:
        with bar:
            summary = run_batch(tasks, out, engine=engine, concurrency=concurrency, address=address,  # type: ignore[arg-type]
                                defaults=defaults, on_start=started, on_record=lambda _: bar.advance(job))
    except MinloopError as exc:
        console.print(f"[bold red]error:[/] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    counts = ", ".join(f"{n} {status}" for status, n in sorted(summary.statuses.items())) or "nothing to run"
    console.print(f"{counts}; {summary.skipped} skipped; results in {out}")
    if not summary.complete:
        console.print(f"[yellow]{summary.not_run} task(s) did not run; run the same command again to retry them[/]")
        raise typer.Exit(1)
