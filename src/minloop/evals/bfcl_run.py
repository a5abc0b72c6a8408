"""``minloop eval bfcl``: the loop against a raw baseline on BFCL's non-live single-turn categories.

Both arms get the same model, the same messages and the same tool specs.

* **raw**: the model is called once; the calls in its reply are the prediction. For the
  embedded model this is the same weights and constrained decision without minloop's decision
  policy (no argument grounding, no gate).
* **loop**: a ``Loop`` over placeholder tools (strictly validated, executing nothing), driven
  with ``.iter()`` and stopped at the first *valid* tool round, whose calls are the prediction;
  an answer means "no call". An invalid round (blank reply, unknown tool, arguments that fail
  the schema) goes back to the model as the loop always does, within ``max_steps``; with
  ``max_steps=1`` the prediction is strictly the first round's. A run that ends without a
  valid tool round predicts no call.

Each arm runs a whole category before the other, so neither reuses the other's KV cache.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from ..exceptions import MinloopError, ModelError
from ..loop import Loop
from ..messages import ToolCall, tool_calls_of
from ..models.base import Model, ModelRequest
from .bfcl import CATEGORIES, HELD_OUT, Item, decode, load_checker, load_items, names_of, placeholder_tool, score

__all__ = ["Arm", "CategoryScore", "eval_bfcl_command", "evaluate", "predict_loop", "predict_raw"]

Arm = Literal["loop", "raw"]
Prediction = list[dict[str, Any]] | None


@dataclass
class CategoryScore:
    category: str
    items: int = 0
    correct: int = 0
    errors: int = 0  # the model call failed
    seconds: float = 0.0

    @property
    def accuracy(self) -> float:
        return self.correct / self.items if self.items else 0.0

    @property
    def per_item(self) -> float:
        return self.seconds / self.items if self.items else 0.0


@dataclass
class Report:
    max_steps: int
    scores: dict[Arm, list[CategoryScore]] = field(default_factory=lambda: {"loop": [], "raw": []})
    rows: list[dict[str, Any]] = field(default_factory=list)  # one per item and arm


async def predict_loop(model: Model, item: Item, max_steps: int) -> Prediction:
    loop = Loop(model, [placeholder_tool(f) for f in item.functions], max_steps=max_steps)
    run = loop.iter(item.messages)
    async for step in run:
        if step.decision == "tool_calls" and step.valid:
            return decode(step.tool_calls, names_of(item.functions))
        if step.decision == "answer":
            return []
    if run.result is not None and run.result.status == "model_error":
        raise ModelError(run.result.error or "model error")
    return []


async def predict_raw(model: Model, item: Item) -> Prediction:
    specs = [placeholder_tool(f).spec() for f in item.functions]  # the very specs the loop sends
    response = await model.call(ModelRequest(item.messages, specs, "auto"))
    calls = [ToolCall.from_wire(c) for c in tool_calls_of(response.message) if isinstance(c, dict)]
    return decode(calls, names_of(item.functions))


async def run_arm(arm: Arm, model: Model, items: list[Item], max_steps: int,
                  check: Callable[..., dict[str, Any]], rows: list[dict[str, Any]]) -> CategoryScore:
    result = CategoryScore(items[0].category if items else "")
    for item in items:
        started = time.perf_counter()
        error = None
        try:
            prediction = await (predict_loop(model, item, max_steps) if arm == "loop" else predict_raw(model, item))
            correct, why = score(item, prediction, check)
        except MinloopError as exc:
            prediction, correct, why, error = None, False, "", f"{type(exc).__name__}: {exc}"
            result.errors += 1
        result.seconds += time.perf_counter() - started
        result.items += 1
        result.correct += correct
        rows.append({"id": item.id, "arm": arm, "correct": correct, "prediction": prediction, "why": why,
                     "error": error})
    return result


async def evaluate(model: Model, categories: list[str], limit: int | None, max_steps: int = 3,
                   on_category: Callable[[str, Arm, CategoryScore], None] | None = None,
                   raw: Model | None = None) -> Report:
    """Score both arms on each category (the first ``limit`` items of each). The raw arm calls
    ``raw`` (default: ``model``): for the embedded model, the same weights without minloop's
    decision policy (``LocalModel.plain()``)."""
    check = load_checker()
    load = getattr(model, "load", None)
    if callable(load):
        await asyncio.to_thread(load)  # weights load outside the timed items
    report = Report(max_steps)
    for category in categories:
        items = load_items(category, limit)
        for arm in ("loop", "raw"):
            chosen = model if arm == "loop" else raw or model
            scored = await run_arm(arm, chosen, items, max_steps, check, report.rows)  # type: ignore[arg-type]
            report.scores[arm].append(scored)  # type: ignore[index]
            if on_category is not None:
                on_category(category, arm, scored)  # type: ignore[arg-type]
    return report


def total(scores: list[CategoryScore]) -> CategoryScore:
    return CategoryScore("all", sum(s.items for s in scores), sum(s.correct for s in scores),
                         sum(s.errors for s in scores), sum(s.seconds for s in scores))


def table(title: str, scores: list[CategoryScore]) -> Any:
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for name in ("category", "items", "correct", "accuracy", "s/item", "errors"):
        t.add_column(name, justify="left" if name == "category" else "right")
    for s in [*scores, total(scores)]:
        t.add_row(s.category, str(s.items), str(s.correct), f"{s.accuracy:.1%}", f"{s.per_item:.2f}", str(s.errors))
    return t


CATEGORIES_HELP = ("Comma-separated categories: the non-live single-turn ones, or the held-out "
                   f"{', '.join(HELD_OUT)}.")


def eval_bfcl_command(
    limit: Annotated[int, typer.Option(min=1, help="Items per category (the first N).")] = 50,
    model: Annotated[str, typer.Option(help="'local' (embedded 0.5B), 'local-1.5b', or a remote model name.")] = "local",
    categories: Annotated[str, typer.Option(help=CATEGORIES_HELP)] = ",".join(CATEGORIES),
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint for a remote model.")] = None,
    max_steps: Annotated[int, typer.Option(min=1, help="Loop rounds allowed to reach a valid tool round.")] = 3,
    out: Annotated[Path | None, typer.Option(help="Write every prediction and verdict here (JSONL).")] = None,
) -> None:
    """Score the loop and a raw one-call baseline on BFCL with its own AST checker."""
    from rich.console import Console

    from ..batch import build_model

    console = Console()
    chosen = [c.strip() for c in categories.split(",") if c.strip()]
    try:
        llm = build_model(model, base_url=base_url)

        def progress(category: str, arm: str, s: CategoryScore) -> None:
            console.print(f"[dim]{category:<18} {arm:<4} {s.correct}/{s.items} in {s.seconds:.0f}s[/]")

        plain = getattr(llm, "plain", None)
        report = asyncio.run(evaluate(llm, chosen, limit, max_steps, on_category=progress,
                                      raw=plain() if callable(plain) else None))
    except MinloopError as exc:
        console.print(f"[bold red]error:[/] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    if out is not None:
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in report.rows), encoding="utf-8")
    console.print(table(f"minloop loop (max_steps={max_steps}) · {llm.name}", report.scores["loop"]))
    console.print(table(f"raw baseline (one call: no loop controls, no grounding) · {llm.name}", report.scores["raw"]))
