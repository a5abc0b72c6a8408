"""A change that acts on few requests, measured in a paired run: with it, and without it where it acted.

    flock /tmp/minloop-bench.lock .venv/bin/python benchmarks/paired.py --split test \\
        --groups not_found --where minloop.small.evidence:unserved --out unserved-test.jsonl
    .venv/bin/python benchmarks/paired.py --report unserved-test.jsonl

``--where MODULE:NAME`` names the predicate that decides where the change acts (it returns true
there), as the module that calls it looks it up: ``minloop.small.evidence:unserved`` is the
evidence check's test that every call failed or found nothing, after which an answer that does
not say so is replaced. Every request of the split (``agent_set.py``; only the groups
``--groups`` names, when given) runs once through ``Loop(LocalModel(), menu, max_steps=6)`` as
the code is; where the predicate returned true, the request runs again with the predicate held
to false: the code without the change. The requests it did not act on took the same path in both
arms, so they count once for both; only the others run twice, one arm right after the other, and
the KV-cache noise of two arms taking turns over a whole split does not enter. Answers are judged
by ``judge.py``; for the test split only counts are printed, never a request or an answer.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from agent_eval import run
from agent_set import group_names, items

from minloop import Loop


def measure(where: str, split: str, groups: list[str] | None, out: Path, seed: int) -> None:
    from minloop.models.local import LocalModel

    module_name, _, name = where.partition(":")
    module = importlib.import_module(module_name)
    predicate: Callable[..., Any] = getattr(module, name)
    acted: list[bool] = []

    def watched(*args: Any, **kwargs: Any) -> Any:
        value = predicate(*args, **kwargs)
        acted.append(bool(value))
        return value

    model = LocalModel()
    Loop(model, [], max_steps=2).run_sync("Hello")  # untimed: loads the weights
    for index, item in enumerate(items(split, seed)):
        if groups and item.group not in groups:
            continue
        acted.clear()
        setattr(module, name, watched)
        row: dict[str, Any] = {"index": index, "where": where, "with": run(item, model)}
        row["acted"] = any(acted)
        if row["acted"]:
            setattr(module, name, lambda *args, **kwargs: False)
            row["without"] = run(item, model)
        setattr(module, name, predicate)
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{index:3d} {item.language} {item.group:12s} acted={row['acted']!s:5s} "
              f"right={row['with']['right']!s:5s}/{row.get('without', row['with'])['right']!s:5s}", flush=True)  # fmt: skip


def report(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    print(f"where: {', '.join(dict.fromkeys(r['where'] for r in rows))}; {len(rows)} requests")
    for arm in ("with", "without"):
        runs = [r.get(arm, r["with"]) for r in rows]
        acted = [r.get(arm, r["with"]) for r in rows if r["acted"]]
        print(
            f"{arm:>7s} the change: right {sum(x['right'] for x in runs)}/{len(runs)}, "
            f"over-refusals {sum(x['over_refusal'] for x in runs)}, "
            f"invented values {sum(bool(x['invented']) for x in runs)}, "
            f"median {statistics.median(x['seconds'] for x in runs):.1f} s; "
            f"acted on {len(acted)}, right {sum(x['right'] for x in acted)}, "
            f"mean {statistics.mean(x['seconds'] for x in acted) if acted else 0:.1f} s"
        )
    changed = Counter(
        (
            r["with"]["group"],
            r["with"]["language"],
            "right only with it" if r["with"]["right"] else "right only without",
        )
        for r in rows
        if r["acted"] and r["with"]["right"] != r["without"]["right"]
    )
    for (group, language, which), n in sorted(changed.items()):
        print(f"  {group} {language}: {n} {which}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--where", help="MODULE:NAME, the predicate that is true where the change acts")
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--groups", type=group_names, help="only these groups: --groups=two_step")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=Path("paired.jsonl"))
    parser.add_argument("--report", type=Path, help="print the figures of a finished run and stop")
    args = parser.parse_args()
    if args.report is None:
        if not args.where or ":" not in args.where:
            parser.error("--where MODULE:NAME is needed for a run")
        measure(args.where, args.split, args.groups, args.out, args.seed)
    report(args.report or args.out)


if __name__ == "__main__":
    main()
