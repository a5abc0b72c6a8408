"""One task to one result record: reading task files, running a task, writing results."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from pydantic_core import to_jsonable_python

from ..exceptions import MinloopError
from ..factory import build_model, build_tools
from ..result import RunResult
from ..standard import Loop
from ..tools import Tool

__all__ = [
    "Record",
    "ResultSink",
    "Task",
    "TaskRunner",
    "error_record",
    "finished_ids",
    "read_tasks",
    "result_record",
]

Task: TypeAlias = dict[str, Any]
Record: TypeAlias = dict[str, Any]
Engine: TypeAlias = Literal["local", "ray"]


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
        except Exception as exc:
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
        model = build_model(
            str(task.get("model", "local")), base_url=task.get("base_url"), script=task.get("script")
        )
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
        "tokens": {
            "prompt": usage.prompt_tokens,
            "completion": usage.completion_tokens,
            "total": usage.total_tokens,
        },
        "model_calls": result.model_calls,
        "tool_calls": result.tool_calls,
        "cost": result.cost,
        "output_value": to_jsonable_python(result.output_value, fallback=str),
        "forced_by": result.forced_by,
        "duration": round(result.duration, 4),
        "error": result.error,
    }


def error_record(task_id: str, exc: BaseException, duration: float) -> Record:
    return {
        "id": task_id,
        "status": "error",
        "output": None,
        "final_message": None,
        "trace_id": None,
        "steps": 0,
        "tokens": {"prompt": 0, "completion": 0, "total": 0},
        "model_calls": 0,
        "tool_calls": 0,
        "cost": None,
        "output_value": None,
        "forced_by": None,
        "duration": round(duration, 4),
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
