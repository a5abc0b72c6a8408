"""The small-model layers with each one removed in turn, side by side in one run.

    nice -n 5 .venv/bin/python benchmarks/ablation.py --sample 40 --out ablation.jsonl
    .venv/bin/python benchmarks/ablation.py --split test --sample 48 --out ablation-test.jsonl
    .venv/bin/python benchmarks/ablation.py --split test --groups one_call,two_step --arms all,-evidence
    .venv/bin/python benchmarks/ablation.py --report ablation.jsonl

Arms: ``all`` is ``LocalModel()`` (every layer of ``minloop.small.small_model_layers()``);
``-NAME`` is the same model with the layer NAME left out (``without=[NAME]``), one arm per
layer; ``+compact`` has every layer and writes the tools into the prompt without the
template's spaces (``compact_tools=True``); ``+breaks`` has every layer and gives the runtime the
decision's JSON schema beside the tools, as before ``grammar_of``, so that the model may write
its JSON over several lines; ``none`` is ``LocalModel().plain()``. The requests
are the development split of ``agent_set.py``, or its test split with ``--split test`` (the
rules were never written from it, and the run prints no request or answer of it, only counts),
only the groups ``--groups`` names when it is given, a random sample of those when ``--sample``
is given; each request runs through ``Loop(model, menu, max_steps=6)`` once per arm, the order
of the arms turning round from one request to the next, and is judged by ``judge.py`` (see
``agent_eval.py``). The table gives, per arm, group and language: right answers, over-refusals
(a request the tools serve, declined), answers with invented values, and the median seconds per
request; a layer earns its place where its arm (the others without it) loses answers.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from agent_eval import report, side_by_side
from agent_set import group_names, items

from minloop import Loop, Model
from minloop.small import LAYERS, small_model_layers


def arms() -> dict[str, Callable[[], Model]]:
    from minloop.models.local import LocalModel

    every: dict[str, Callable[[], Model]] = {"all": LocalModel}
    for name in LAYERS:
        every[f"-{name}"] = lambda name=name: LocalModel(layers=small_model_layers(without=[name]))  # type: ignore[misc]
    every["+compact"] = lambda: LocalModel(compact_tools=True)
    every["none"] = lambda: LocalModel().plain()

    class Breaks(LocalModel):  # the schema and the tools as they are: line breaks as the model likes
        def wire(self, body: dict[str, Any]) -> dict[str, Any]:
            return body

    every["+breaks"] = Breaks
    return every


def measure(
    out: Path,
    chosen: list[str],
    sample: int | None,
    seed: int,
    split: str = "dev",
    groups: list[str] | None = None,
) -> None:
    requests = [item for item in items(split, seed) if groups is None or item.group in groups]
    if sample is not None and sample < len(requests):
        requests = sorted(random.Random(seed).sample(requests, sample), key=requests.index)
    command = shlex.join([Path(sys.executable).name, *sys.argv])
    factories = arms()
    models = {arm: factories[arm]() for arm in chosen}
    Loop(models[chosen[0]], [], max_steps=2).run_sync("Hello")  # untimed: loads the weights (shared)
    side_by_side(requests, models, out, command=command)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--arms", type=lambda text: text.split(","), help="arms to run, by comma: --arms=all,-grounding,none"
    )
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--groups", type=group_names, help="only these groups: --groups=two_step")
    parser.add_argument("--sample", type=int, help="a random sample of this many requests of the split")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=Path("ablation.jsonl"))
    parser.add_argument("--report", type=Path, help="print the table of a finished run and stop")
    args = parser.parse_args()
    if args.report is None:
        measure(args.out, args.arms or list(arms()), args.sample, args.seed, args.split, args.groups)
    path = args.report or args.out
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for command in dict.fromkeys(row.get("command", "") for row in rows):
        print(f"command: {command}")
    report(path)


if __name__ == "__main__":
    main()
