"""The generated request set (``agent_set.py``) through the loop, one or more models side by side.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/agent_eval.py --split test --arms local plain
    .venv/bin/python benchmarks/agent_eval.py --report agent_eval.jsonl

Each request runs through ``Loop(model, menu, max_steps=6)`` once per arm (the order of the
arms turns round from one request to the next; one untimed request per arm first loads the
model). Arms: ``local`` is ``LocalModel()`` as a user gets it; ``plain`` is
``LocalModel().plain()``, the model without the small-model controls; ``local-0.5b`` the smaller
model. An answer is judged by ``judge.py``. The report prints, per arm, group and language:
right, over-refusals (a request the tools serve, declined), invented values (numbers no tool
and no request gave) and seconds per request.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from agent_set import GROUPS, Item, items, tools_of
from judge import DECLINE, judge

from minloop import Loop, Model

ARMS: dict[str, Callable[[], Model]] = {}


def _arms() -> dict[str, Callable[[], Model]]:
    from minloop.models.local import LocalModel

    return {
        "local": lambda: LocalModel(),
        "plain": lambda: LocalModel().plain(),
        "local-0.5b": lambda: LocalModel("qwen2.5-coder-0.5b"),
    }


def run(item: Item, model: Model) -> dict[str, Any]:
    started = time.perf_counter()
    result = Loop(model, tools_of(item), max_steps=6).run_sync(item.request)
    seconds = time.perf_counter() - started
    verdict = judge(result, item.group, item.language, item.request, item.facts)
    answer = result.output or ""
    served = item.group in ("one_call", "two_step")
    return {
        "split": item.split,
        "domain": item.domain,
        "group": item.group,
        "language": item.language,
        "request": item.request,
        "answer": answer,
        "status": result.status,
        "seconds": round(seconds, 2),
        "calls": [[c.name, c.arguments] for s in result.steps for c in s.tool_calls],
        "errors": [r.error for s in result.steps for r in s.results if r.error],
        "over_refusal": served and not verdict["right"] and bool(DECLINE.search(answer)),
        **verdict,
    }


def measure(
    split: str, arms: list[str], out: Path, limit: int | None, seed: int, sample: int | None = None
) -> None:
    every = items(split, seed)
    picked = sorted(random.Random(seed).sample(range(len(every)), sample)) if sample else range(len(every))
    chosen = [every[i] for i in picked][:limit]  # a random sample of the split, in its order
    factories = _arms()
    models: dict[str, Model] = {}
    for arm in arms:
        models[arm] = factories[arm]()
        Loop(models[arm], [], max_steps=2).run_sync("Hello")  # untimed: loads the weights
    side_by_side(chosen, models, out)


def side_by_side(requests: list[Item], models: dict[str, Model], out: Path, **extra: Any) -> None:
    """Each request through every model, the order of the arms turning round from one request to
    the next; one row per run appended to ``out`` (with ``extra``). A test split's requests and
    answers are never printed, only how each was judged."""
    arms = list(models)
    for index, item in enumerate(requests):
        turn = index % len(arms)
        for arm in arms[turn:] + arms[:turn]:
            row = {"arm": arm, "index": index, **extra, **run(item, models[arm])}
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            shown = "" if item.split == "test" else f" {item.request[:40]!r} -> {row['answer'][:60]!r}"
            print(f"{index:3d} {arm:13s} {item.language} {item.group:12s} right={row['right']!s:5s} "
                  f"{row['seconds']:5.1f}s{shown}", flush=True)  # fmt: skip


def report(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    cells: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for group in (row["group"], "all"):
            for language in (row["language"], "both"):
                cells[(row["split"], row["arm"], group, language)].append(row)
    for split in sorted({r["split"] for r in rows}):
        arms = list(dict.fromkeys(r["arm"] for r in rows if r["split"] == split))
        print(f"\n{split} split; each cell: " + " | ".join(arms))
        print(f"{'group':>12s} {'lang':>4s} {'n':>4s}  {'right':>22s}  {'over-refusals':>22s}  {'invented':>22s}  "
              f"{'s median':>18s}")  # fmt: skip
        for group in (*GROUPS, "all"):
            for language in ("en", "zh", "both"):
                per = [cells.get((split, arm, group, language), []) for arm in arms]
                if not any(per):
                    continue
                n = max(len(p) for p in per)
                right = " | ".join(_count(p, lambda r: r["right"]) for p in per)
                refused = " | ".join(_count(p, lambda r: r["over_refusal"]) for p in per)
                made_up = " | ".join(_count(p, lambda r: bool(r["invented"])) for p in per)
                median = " | ".join(
                    f"{statistics.median(r['seconds'] for r in p):.1f}" if p else "-" for p in per
                )
                print(
                    f"{group:>12s} {language:>4s} {n:4d}  {right:>22s}  {refused:>22s}  {made_up:>22s}  {median:>18s}"
                )


def _count(rows: list[dict[str, Any]], test: Callable[[dict[str, Any]], bool]) -> str:
    return f"{sum(bool(test(r)) for r in rows)}/{len(rows)}" if rows else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--arms", nargs="+", default=["local"])
    parser.add_argument("--out", type=Path, default=Path("agent_eval.jsonl"))
    parser.add_argument("--limit", type=int, help="only the first N requests of the split")
    parser.add_argument("--sample", type=int, help="N requests spread evenly over the split")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--report", type=Path, help="print the table of a finished run and stop")
    args = parser.parse_args()
    if args.report:
        report(args.report)
        return
    measure(args.split, args.arms, args.out, args.limit, args.seed, args.sample)
    report(args.out)


if __name__ == "__main__":
    main()
