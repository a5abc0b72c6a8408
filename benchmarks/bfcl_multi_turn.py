"""BFCL's multi-turn base category through the loop, with the small-model layers and without.

    nice -n 5 .venv/bin/python benchmarks/bfcl_multi_turn.py --limit 10 --out bfcl_multi_turn.jsonl
    .venv/bin/python benchmarks/bfcl_multi_turn.py --report bfcl_multi_turn.jsonl

An item of ``multi_turn_base`` is one conversation of two to five user turns over stateful APIs
(a file system, a social network, a ticket desk, a trading bot...). Each item runs the real way:
its API instances are built from its ``initial_config`` by BFCL's own executor
(``execute_multi_turn_func_call``), every function of its classes' docs (less the item's
``excluded_function``) is a minloop tool with the doc's JSON schema (``minloop.evals.bfcl.tool_spec``)
whose call really runs on those instances, and one conversation goes on across the turns: turn k
appends the user's message to the transcript turn k-1 ended with and runs
``Loop(model, tools, max_steps=6)`` over the whole list. The calls that ran, per turn and per
step, as BFCL's call strings (``mv(source='a.pdf',destination='temp')``), go to BFCL's own
``multi_turn_checker``, which replays them and the ground truth on fresh instances and compares,
turn by turn, the instances' state and the calls' results. Steps without a call are left out, as
BFCL's runner leaves them out.

Arms: ``layers`` is ``LocalModel()`` (the small-model layers of ``minloop.small``); ``plain`` is
``LocalModel().plain()``; ``--model qwen2.5-coder-0.5b`` for a quick check; ``--n-ctx`` sets the
context window (LocalModel's 4,096 tokens by default: the schemas of an item's functions alone
take 3,000 to 5,000 tokens, so a model shown all of them in full may find the window full before
its first step). Each turn has at most 6 steps (BFCL allows 20 and then fails the whole item); a
turn that reaches the limit ends there and the next turn begins. The order of the arms turns
round from one item to the next; one untimed request first loads the weights. The table gives,
per arm, the items right, the median and mean seconds per item, the turns that ended with the
window full, and BFCL's error types; ``--out`` keeps, per item and arm, the calls, how each turn
ended and the whole transcript.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import shlex
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from minloop import Loop, Model, RunResult, Tool, tool_from_schema
from minloop.evals.bfcl import checker_imports, data_dir, tool_spec

CATEGORY = "multi_turn_base"
MAX_STEPS = 6
Calls = list[list[list[str]]]  # per turn, per step (with a call), the call strings


def load(limit: int | None = None) -> list[dict[str, Any]]:
    """The first ``limit`` items, each with its functions (``function``) and ``ground_truth``."""
    data = data_dir()
    path = sorted(data.glob(f"BFCL_v*_{CATEGORY}.json"))[-1]
    entries = _jsonl(path)[:limit]
    answers = {a["id"]: a["ground_truth"] for a in _jsonl(data / "possible_answer" / path.name)}
    with checker_imports():
        from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING as DOCS
    for entry in entries:
        assert "missed_function" not in entry, f"{entry['id']}: held-out functions belong to another category"
        excluded = set(entry.get("excluded_function") or ())
        docs = [d for c in entry["involved_classes"] for d in _jsonl(data / "multi_turn_func_doc" / DOCS[c])]
        entry["function"] = [d for d in docs if d["name"] not in excluded]
        entry["ground_truth"] = answers[entry["id"]]
    return entries


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def call_string(name: str, arguments: dict[str, Any]) -> str:
    """A call as BFCL's executor takes it, spelled as BFCL's own decoder spells it:
    ``cd(folder='document')``. Values are ``repr``s of JSON values, so they are literals."""
    return f"{name}({','.join(f'{key}={value!r}' for key, value in arguments.items())})"


@contextmanager
def fresh_instances() -> Iterator[None]:
    """Drop the API instances made in this block when it ends. BFCL's executor keeps each
    item's instances in its module's globals under the model name and the item id for the life
    of the process: a second run of an item under the same name would start from the state the
    first one left."""
    with checker_imports():
        from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    space = vars(multi_turn_utils)
    before = set(space)
    try:
        yield
    finally:
        for name in set(space) - before:
            del space[name]


class Session:
    """One item's API instances, built and driven by BFCL's executor, and the calls that ran."""

    def __init__(self, entry: dict[str, Any], arm: str) -> None:
        self.entry, self.model_name = entry, f"minloop_{arm}_live"
        self.ran: list[str] = []
        self.lock = threading.Lock()

    def tools(self) -> list[Tool]:
        return [self.tool(function) for function in self.entry["function"]]

    def tool(self, function: dict[str, Any]) -> Tool:
        spec = tool_spec(function)["function"]

        def run(**arguments: Any) -> Any:
            return self.execute(call_string(function["name"], arguments))

        return tool_from_schema(spec["name"], spec["description"], spec["parameters"], run)

    def execute(self, call: str) -> Any:
        """Run one call on the item's instances; a JSON object result is given back as one."""
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

        with self.lock:
            self.ran.append(call)
            [result], _ = execute_multi_turn_func_call(
                [call],
                self.entry["initial_config"],
                self.entry["involved_classes"],
                self.model_name,
                self.entry["id"],
            )
        try:
            value = json.loads(result)
        except ValueError:
            return result
        return value if isinstance(value, dict) else result


async def run_turn(loop: Loop, messages: list[Any], ran: list[str]) -> tuple[RunResult, list[list[str]]]:
    """One user turn through the loop, driven step by step: the calls that ran in each step."""
    steps: list[list[str]] = []
    done = len(ran)
    run = loop.iter(messages)
    async for _ in run:
        if len(ran) > done:
            steps.append(ran[done:])
            done = len(ran)
    assert run.result is not None
    return run.result, steps


def run_item(entry: dict[str, Any], model: Model, arm: str) -> dict[str, Any]:
    """One item through the loop, turn after turn on one transcript, and BFCL's verdict."""
    session = Session(entry, arm)
    loop = Loop(model, session.tools(), max_steps=MAX_STEPS)
    messages: list[Any] = []
    calls: Calls = []
    ends: list[str] = []
    started = time.perf_counter()
    with fresh_instances():
        for turn in entry["question"]:
            try:
                result, steps = asyncio.run(run_turn(loop, [*messages, *turn], session.ran))
            except Exception as exc:  # the model failed: the turns left get no calls
                ends.append(f"{type(exc).__name__}: {exc}"[:300])
                break
            messages = result.messages
            calls.append(steps)
            ends.append(result.status)
    seconds = time.perf_counter() - started
    calls += [[] for _ in range(len(entry["question"]) - len(calls))]
    verdict = check(entry, calls, arm)
    return {
        "id": entry["id"],
        "arm": arm,
        "valid": bool(verdict["valid"]),
        "error_type": verdict.get("error_type", ""),
        "error_message": str(verdict.get("error_message", ""))[:300],
        "seconds": round(seconds, 2),
        "calls": calls,
        "ends": ends,
        "transcript": messages,
    }


def check(entry: dict[str, Any], calls: Calls, arm: str) -> dict[str, Any]:
    """BFCL's ``multi_turn_checker`` on ``calls``: valid, or the error type and message."""
    with checker_imports():
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    if len(calls) != len(entry["ground_truth"]):
        raise ValueError(f"{entry['id']}: {len(calls)} turns of calls for {len(entry['ground_truth'])} turns")
    with fresh_instances():
        try:
            return multi_turn_checker(calls, entry["ground_truth"], entry, CATEGORY, f"minloop_{arm}")
        except Exception as exc:  # the checker's own assertions
            return {"valid": False, "error_type": f"checker: {type(exc).__name__}", "error_message": str(exc)}


def ground_truth_calls(entry: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The ground truth's calls per turn as names and arguments (positional ones named by the doc)."""
    order = {d["name"]: list(d["parameters"].get("properties", {})) for d in entry["function"]}
    turns = []
    for turn in entry["ground_truth"]:
        parsed = []
        for text in turn:
            node = ast.parse(text, mode="eval").body
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), text
            arguments = dict(zip(order[node.func.id], (ast.literal_eval(a) for a in node.args), strict=False))
            arguments |= {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            parsed.append({"name": node.func.id, "arguments": arguments})
        turns.append(parsed)
    return turns


def arms(model: str, n_ctx: int | None) -> dict[str, Callable[[], Model]]:
    from minloop.models.local import LocalModel

    window = {} if n_ctx is None else {"n_ctx": n_ctx}
    return {
        "layers": lambda: LocalModel(model, **window),
        "plain": lambda: LocalModel(model, **window).plain(),
    }


def measure(out: Path, chosen: list[str], limit: int, model: str, n_ctx: int | None) -> None:
    entries = load(limit)
    command = shlex.join([Path(sys.executable).name, *sys.argv])
    factories = arms(model, n_ctx)
    models = {arm: factories[arm]() for arm in chosen}
    Loop(models[chosen[0]], [], max_steps=2).run_sync("Hello")  # untimed: loads the weights (shared)
    for index, entry in enumerate(entries):
        turn = index % len(chosen)
        for arm in chosen[turn:] + chosen[:turn]:
            window = getattr(models[arm], "n_ctx", None)
            row = {**run_item(entry, models[arm], arm), "model": model, "n_ctx": window, "command": command}
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            print(f"{entry['id']:20s} {arm:6s} valid={row['valid']!s:5s} {row['seconds']:6.1f}s "
                  f"{row['error_type']} ends={row['ends']}", flush=True)  # fmt: skip


def report(rows: list[dict[str, Any]]) -> None:
    """Per arm (and model and window): items right, median and mean seconds per item, turns that
    ended with the context window full, and the checker's error types."""
    for command in dict.fromkeys(row.get("command", "") for row in rows):
        print(f"command: {command}")
    print(
        f"{'arm':7s} {'model':19s} {'window':>6s} {'right':>8s} {'median s':>8s} {'mean s':>7s} {'full':>5s}  errors"
    )
    for key in dict.fromkeys((row["arm"], row.get("model", ""), row.get("n_ctx")) for row in rows):
        mine = [row for row in rows if (row["arm"], row.get("model", ""), row.get("n_ctx")) == key]
        seconds = [row["seconds"] for row in mine]
        right = f"{sum(row['valid'] for row in mine)} of {len(mine)}"
        full = sum(end == "context_overflow" for row in mine for end in row["ends"])
        errors = dict(Counter(row["error_type"] for row in mine if not row["valid"]))
        print(f"{key[0]:7s} {key[1]:19s} {key[2] or '':>6} {right:>8s} {statistics.median(seconds):8.1f} "
              f"{statistics.fmean(seconds):7.1f} {full:5d}  {errors}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--arms", nargs="+", choices=["layers", "plain"], default=["layers", "plain"])
    parser.add_argument("--limit", type=int, default=10, help="the first N items of the category")
    parser.add_argument(
        "--model", default="qwen2.5-coder-1.5b", choices=["qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"]
    )
    parser.add_argument("--n-ctx", type=int, help="the model's context window (default: LocalModel's own)")
    parser.add_argument("--out", type=Path, default=Path("bfcl_multi_turn.jsonl"))
    parser.add_argument("--report", type=Path, help="print the table of a finished run and stop")
    args = parser.parse_args()
    if args.report is None:
        measure(args.out, args.arms, args.limit, args.model, args.n_ctx)
    path = args.report or args.out
    report([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()])


if __name__ == "__main__":
    main()
