"""The embedded model with a user's own tools: each candidate policy side by side, in one run.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/user_tools_dev.py --out user_tools.jsonl
    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/user_tools_dev.py --set held-out --out user_tools.jsonl
    .venv/bin/python benchmarks/user_tools_dev.py --report user_tools.jsonl

Runs every request of ``user_tools_set.py`` (90, half Chinese, over the ten tools of
``user_tools.py``: the development set the policy was shaped on), or with ``--set held-out``
of ``other_tools_set.py`` (62, half Chinese, over the eleven tools of ``other_tools.py``: written
before the policy's second round and never tuned on), through ``Loop``, once per candidate
(``--arms``; the order of the candidates turns round from one request to the next; one untimed
request per model first loads it; ``--threads`` sets the runtime's threads). Each answer is
judged by rules of its own, independent of the model's evidence check:

* right: for a request a tool answers, a tool returned a result, every fact of the item is in the answer (a pattern, or a
  number equal to the item's rounded as the answer writes it) and every number in it is in the
  request or a tool result (or is one of the item's facts, for arithmetic); for a request no tool
  can serve, the answer says it cannot (or that nothing was found) and states no number absent
  from the request and the results;
* replaced: the answer is the evidence check's plain statement, not the model's own words (for a
  request a tool answers, never right, though it may quote the tool's values);
* in language: a Chinese request's answer is written in Chinese (more Chinese characters than
  English words of its own, the words copied from the request and the results aside), an
  English request's has no Chinese of its own;
* trace ids: answers that show a run's trace id (``trc_...``).

Lines are appended to ``--out`` as they finish (``--start``, ``--stop`` run a part); the report
prints, per group and language and candidate: right, replaced, in language, tool calls per
request, and seconds per request (median and 90th percentile).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import other_tools
import other_tools_set
import user_tools
import user_tools_set
from judge import _LABEL, DECLINE, has_fact, judge
from user_tools_set import GROUPS, Item

from minloop import Loop, Model, ModelRequest, RunResult
from minloop.decision import Replacement
from minloop.layer import CallModel, Layer
from minloop.models.local import LocalModel
from minloop.small import EvidenceCheck
from minloop.state import Prompt, Reply, RunState


class Recording(Layer):
    """The evidence check's layer, remembering whether its check replaced the model's answer."""

    def __init__(self, inner: EvidenceCheck) -> None:
        self.inner = inner
        self.replaced = False

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        prompt = await self.inner.before_model(run, prompt)
        own = prompt.answer_check
        if own is None:
            return prompt

        def recorded(text: str, messages: Sequence[Any]) -> Any:
            verdict = own(text, messages)
            self.replaced = self.replaced or isinstance(verdict, Replacement)
            return verdict

        return replace(prompt, answer_check=recorded)

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        return await self.inner.wrap_model(run, request, call)


THREADS: list[int | None] = [None]  # --threads: the runtime's threads (None: every core)


SMALL = "qwen2.5-coder-0.5b"  # the default is the 1.5B


def candidates() -> dict[str, Callable[[], Model]]:
    """The policies compared, by name (each built once, on first use)."""
    threads = THREADS[0]
    return {
        "0.5b-plain": lambda: LocalModel(SMALL, threads=threads).plain(),
        "0.5b": lambda: LocalModel(SMALL, threads=threads),
        "1.5b-plain": lambda: LocalModel("qwen2.5-coder-1.5b", threads=threads).plain(),
        "1.5b": lambda: LocalModel("qwen2.5-coder-1.5b", threads=threads),
    }


SETS: dict[str, tuple[list[Any], list[Item]]] = {
    "dev": (user_tools.TOOLS, user_tools_set.ITEMS),
    "held-out": (other_tools.TOOLS, other_tools_set.ITEMS),
}


def run_one(
    model: Model, request: str, tools: Sequence[Any] = user_tools.TOOLS
) -> tuple[RunResult, float, bool]:
    check = next((layer for layer in getattr(model, "layers", ()) if isinstance(layer, Recording)), None)
    if check is not None:
        check.replaced = False
    started = time.perf_counter()
    result = Loop(model, list(tools), max_steps=6).run_sync(request)
    replaced = check is not None and check.replaced
    return result, time.perf_counter() - started, replaced


def build(name: str, made: dict[str, Model]) -> Model:
    if name not in made:
        model = candidates()[name]()
        if getattr(model, "layers", ()):  # the evidence check, recording whether it replaced an answer
            model.layers = tuple(  # type: ignore[attr-defined]
                Recording(layer) if isinstance(layer, EvidenceCheck) else layer for layer in model.layers
            )
        run_one(model, "What's the weather in Madrid?")  # untimed: loads the weights, fills the caches
        made[name] = model
    return made[name]


def measure(out: Path, start: int, stop: int, arms: list[str], which: str = "dev") -> None:
    made: dict[str, Model] = {}
    tools, items = SETS[which]
    for index in range(start, min(stop, len(items))):
        group, language, request, facts = items[index]
        turn = index % len(arms)
        for arm in arms[turn:] + arms[:turn]:
            model = build(arm, made)
            result, seconds, replaced = run_one(model, request, tools)
            row = {
                "set": which,
                "index": index,
                "arm": arm,
                "group": group,
                "language": language,
                "request": request,
                "answer": result.output,
                "status": result.status,
                "seconds": round(seconds, 2),
                "replaced": replaced,
                "calls": [[c.name, c.arguments] for s in result.steps for c in s.tool_calls],
                "errors": [r.error for s in result.steps for r in s.results if r.error],
                "prompt": sum(s.usage.prompt_tokens for s in result.steps),
                "generated": sum(s.usage.completion_tokens for s in result.steps),
                **judge(result, group, language, request, facts),
            }
            # the check's plain statement quotes what the tools gave, but is no answer
            row["right"] = row["right"] and not (replaced and group in ("one_call", "two_step"))
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            print(
                f"{index:2d} {arm:10s} {language} {group:12s} right={row['right']!s:5s} {seconds:5.1f}s "
                f"{request[:36]!r} -> {str(result.output)[:80]!r}",
                flush=True,
            )


def relabelled(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` judged again without counting the number in a label ("PM2.5") as invented: the
    judge did until the held-out set's first run."""
    labels = {float(m) for m in _LABEL.findall(row["answer"] or "")}
    extra = [n for n in row["invented"] if n not in labels]
    if extra == row["invented"]:
        return row
    facts = SETS[row.get("set", "dev")][1][row["index"]][3]
    answer = row["answer"] or ""
    if row["group"] in ("one_call", "two_step"):
        served = len(row["calls"]) > len(row["errors"])
        right = served and not extra and not row["replaced"] and all(has_fact(answer, f) for f in facts)
    else:
        right = bool(DECLINE.search(answer)) and not extra
    return {**row, "invented": extra, "right": right}


def report(path: Path, arms: list[str] | None = None) -> None:
    """The table of each request set in ``path``: the development set, then the held-out one."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [relabelled(json.loads(line)) for line in lines if line.strip()]
    for which in SETS:
        chosen = [r for r in rows if r.get("set", "dev") == which]
        if chosen:
            print(f"\n{which} set ({len(SETS[which][1])} requests):")
            table(chosen, arms or list(dict.fromkeys(r["arm"] for r in chosen)))


def table(rows: list[dict[str, Any]], names: list[str]) -> None:
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for group in (row["group"], "all"):
            for language in (row["language"], "both"):
                cells[(row["arm"], group, language)].append(row)
    print(f"{len(rows)} runs; each cell: " + " | ".join(names))
    head = ["group", "lang", "n", "right", "replaced", "in language", "calls/req", "s median", "s p90"]
    print("  ".join(f"{h:>{w}s}" for h, w in zip(head, (12, 4, 3, 24, 24, 24, 18, 18, 18))))
    for group in (*GROUPS, "all"):
        for language in ("en", "zh", "both"):
            per = [cells.get((arm, group, language), []) for arm in names]
            if not any(per):
                continue
            n = max(len(p) for p in per)
            cols = [
                " | ".join(_share(p, "right") for p in per),
                " | ".join(_share(p, "replaced") for p in per),
                " | ".join(_share(p, "in_language") for p in per),
                " | ".join(f"{_calls(p):.1f}" for p in per),
                " | ".join(f"{_quantile(p, 0.5):.1f}" for p in per),
                " | ".join(f"{_quantile(p, 0.9):.1f}" for p in per),
            ]
            line = [f"{group:>12s}", f"{language:>4s}", f"{n:3d}"]
            print("  ".join(line + [f"{c:>{w}s}" for c, w in zip(cols, (24, 24, 24, 18, 18, 18))]))
    for arm in names:
        every = cells.get((arm, "all", "both"), [])
        print(f"{arm}: trace ids in answers {sum(r['trace_id'] for r in every)} of {len(every)}")


def _share(rows: list[dict[str, Any]], key: str) -> str:
    return f"{100 * sum(bool(r[key]) for r in rows) / len(rows):.0f}%" if rows else "-"


def _calls(rows: list[dict[str, Any]]) -> float:
    return sum(len(r["calls"]) for r in rows) / len(rows) if rows else 0.0


def _quantile(rows: list[dict[str, Any]], q: float) -> float:
    seconds = sorted(r["seconds"] for r in rows)
    if not seconds:
        return 0.0
    if q == 0.5:
        return statistics.median(seconds)
    return seconds[min(len(seconds) - 1, round(q * (len(seconds) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=Path("user_tools.jsonl"))
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--stop", type=int, default=10_000)
    parser.add_argument("--set", choices=sorted(SETS), default="dev", help="the request set to run")
    parser.add_argument(
        "--arms", nargs="+", choices=sorted(candidates()), default=["0.5b-before", "0.5b", "1.5b"]
    )
    parser.add_argument("--threads", type=int, help="the runtime's threads (default: every core)")
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    THREADS[0] = args.threads
    if args.report:
        report(args.report)
    else:
        measure(args.out, args.start, args.stop, args.arms, args.set)
        report(args.out, args.arms)


if __name__ == "__main__":
    main()
