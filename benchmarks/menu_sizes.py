"""The embedded model's decisions at real menu sizes, with and without tool selection.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/menu_sizes.py [--items 20] [--full 2] [--sizes 5,20,50] [--out decisions.jsonl]

Menus are built from BFCL's non-live categories (never the live ones): each request's own
functions plus distractor functions drawn from other items (a fixed seed per item; one
definition per name), up to 5, 20 and 50 tools. Every request is decided once per
configuration by ``LocalModel`` with its default decision policy; the prediction is scored by
BFCL's AST checker against the request's own answer (irrelevance items: correct when no
call is made). Printed per configuration: accuracy, prompt tokens, prompt tokens evaluated,
tokens generated, seconds per decision, and the ratio of seconds to the own-functions-only
baseline, all measured in the same run. Each configuration decides all its requests in a row, like a
process serving a stream of requests: the KV cache keeps only what consecutive prompts share
(the instruction and the template's tool header).

"default" is ``LocalModel()`` as it comes: menus of up to 32 tools are shown whole unless their
definitions take more than about 600 tokens. Without selection, 20 and 50-tool menus take tens
of seconds per decision (50 tools are ~6,000 tokens, over the default 4,096-token window, so
those runs use an 8,192 window); only the first ``--full`` items are decided that way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from minloop.evals.bfcl import Item, decode, load_checker, load_items, names_of, score, tool_spec
from minloop.messages import ToolCall, tool_calls_of
from minloop.models.base import ModelRequest
from minloop.models.local import LocalModel
from minloop.small.ranking import SELECT_ABOVE, SELECT_TOKENS, narrowed

CATEGORIES = {"simple_python": 2, "multiple": 2, "irrelevance": 1}  # sampling weights
POOL = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
SIZES = (5, 20, 50)


@dataclass
class Row:
    label: str
    correct: int = 0
    items: int = 0
    prompt: int = 0
    evaluated: int = 0
    generated: int = 0
    seconds: float = 0.0


def sample(n: int) -> list[Item]:
    """A fixed sample: evenly spaced items of each category, interleaved."""
    total = sum(CATEGORIES.values())
    groups = []
    for category, weight in CATEGORIES.items():
        items = load_items(category)
        want = max(1, n * weight // total)
        groups.append(items[:: max(1, len(items) // want)][:want])
    return [g[i] for i in range(max(map(len, groups))) for g in groups if i < len(g)]


def distinct(functions: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One definition per function name: BFCL repeats functions across items (1,917 definitions
    of 982 names), and a menu that offers two tools of one name is not a valid menu."""
    seen: dict[str, dict[str, Any]] = {}
    for f in functions:
        seen.setdefault(f["name"], f)
    return list(seen.values())


def menu(item: Item, size: int, pool: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The item's own functions plus distractors from other items, shuffled (seeded by the item id)."""
    rng = random.Random(item.id)
    own = {f["name"] for f in item.functions}
    others = [f for f in pool if f["name"] not in own]
    functions = item.functions + rng.sample(others, max(0, size - len(item.functions)))
    rng.shuffle(functions)
    return functions


class Narrowed:
    """The embedded model shown the tools the menu layer would show (``ranking.narrowed`` with
    its ``above``), called directly: one decision, no loop."""

    def __init__(self, model: LocalModel, above: int | None = SELECT_ABOVE) -> None:
        self.model, self.above = model, above

    def narrowed(self, request: ModelRequest) -> ModelRequest:
        return narrowed(request, self.above, SELECT_TOKENS)

    async def call(self, request: ModelRequest) -> Any:
        return await self.model.call(self.narrowed(request))

    def load(self) -> None:
        self.model.load()


async def decide(
    model: Narrowed, item: Item, functions: list[dict[str, Any]], check: Any, row: Row
) -> dict[str, Any]:
    specs = [tool_spec(f) for f in functions]
    started = time.perf_counter()
    # as a loop asks: with the answer check it will apply (an invented answer stops early)
    response = await model.call(ModelRequest(item.messages, specs, "auto"))
    seconds = time.perf_counter() - started
    row.seconds += seconds
    calls = [ToolCall.from_wire(c) for c in tool_calls_of(response.message) if isinstance(c, dict)]
    prediction = decode(calls, names_of(functions))
    correct, why = score(item, prediction, check)
    row.items += 1
    row.correct += correct
    row.prompt += response.usage.prompt_tokens
    row.evaluated += response.usage.evaluated_tokens or 0
    row.generated += response.usage.completion_tokens
    shown = [t["function"]["name"] for t in model.narrowed(ModelRequest(item.messages, specs)).tools]
    return {
        "id": item.id,
        "menu": row.label,
        "correct": correct,
        "why": why,
        "prediction": prediction,
        "shown": shown,
        "seconds": round(seconds, 2),
        "evaluated": response.usage.evaluated_tokens,
        "generated": response.usage.completion_tokens,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=20, help="requests in the sample")
    parser.add_argument(
        "--full", type=int, default=2, help="requests decided on 20/50 tools without selection"
    )
    parser.add_argument(
        "--sizes", default=",".join(map(str, SIZES)), help="menu sizes, comma-separated (default 5,20,50)"
    )
    parser.add_argument("--out", help="write one JSON line per decision here")
    args = parser.parse_args()

    items = sample(args.items)
    pool = distinct(f for category in POOL for item in load_items(category) for f in item.functions)
    check = load_checker()
    selected = Narrowed(LocalModel(prefix_cache=False), 0)
    whole = Narrowed(LocalModel(prefix_cache=False), None)
    wide = Narrowed(LocalModel(prefix_cache=False, n_ctx=8192), None)
    default = Narrowed(LocalModel(prefix_cache=False))  # narrows above 32 tools or ~600 tokens of definitions
    selected.load()
    configs: list[tuple[str, Narrowed, int | None, int]] = [("own functions only", whole, None, len(items))]
    sizes = [int(s) for s in args.sizes.split(",")]
    for size in sizes:
        configs.append((f"{size} tools, selection", selected, size, len(items)))
        full = len(items) if size <= 5 else args.full
        configs.append((f"{size} tools, whole menu", whole if size <= 20 else wide, size, full))
        if size <= SELECT_ABOVE:  # larger menus are always narrowed by default
            configs.append((f"{size} tools, default", default, size, len(items)))
    rows = {label: Row(label) for label, *_ in configs}
    records: list[dict[str, Any]] = []
    started = time.perf_counter()
    for (
        label,
        model,
        size,
        limit,
    ) in configs:  # one configuration over all items, as a process serving requests
        for item in items[:limit]:
            functions = item.functions if size is None else menu(item, size, pool)
            records.append(asyncio.run(decide(model, item, functions, check, rows[label])))
        print(
            f"{label}: {rows[label].items} decisions, {time.perf_counter() - started:.0f}s elapsed",
            flush=True,
        )
    report(rows, items)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def report(rows: dict[str, Row], items: list[Item]) -> None:
    kinds = ", ".join(f"{sum(i.category == c for i in items)} {c}" for c in CATEGORIES)
    print(f"\n{len(items)} requests ({kinds}); 0.5B, default decision policy, 2 threads")
    base = rows["own functions only"]
    base_s = base.seconds / base.items
    head = (
        f"{'menu':<24} {'items':>5} {'accuracy':>9} {'prompt tok':>10} {'evaluated':>9} {'generated':>9} "
        f"{'s/decision':>10} {'x own':>6}"
    )
    print(head)
    for row in rows.values():
        if not row.items:
            continue
        per = row.seconds / row.items
        print(
            f"{row.label:<24} {row.items:>5} {row.correct / row.items:>9.1%} {row.prompt / row.items:>10.0f} "
            f"{row.evaluated / row.items:>9.0f} {row.generated / row.items:>9.1f} {per:>10.2f} {per / base_s:>5.2f}x"
        )


if __name__ == "__main__":
    main()
