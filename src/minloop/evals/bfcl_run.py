"""``minloop eval bfcl``: the loop against a raw baseline on BFCL's non-live single-turn categories.

Both arms get the same model, the same messages and the same tool specs.

* **raw**: the model is called once; the calls in its reply are the prediction. For the
  embedded model this is the same weights and constrained decision without minloop's decision
  policy (no argument grounding, no gate).
* **loop**: a ``Loop`` over placeholder tools (strictly validated, executing nothing), driven
  with ``.iter()`` and stopped at the first *valid* tool step, whose calls are the prediction;
  an answer means "no call". An invalid step (blank reply, unknown tool, arguments that fail
  the schema) goes back to the model as the loop always does, within ``max_steps``; with
  ``max_steps=1`` the prediction is strictly the first step's. A run that ends without a
  valid tool step predicts no call.

Each arm runs a whole category before the other, so neither reuses the other's KV cache.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..exceptions import MinloopError, ModelError
from ..messages import ToolCall, tool_calls_of
from ..models.base import Model, ModelRequest
from ..standard import Loop
from .bfcl import Item, decode, load_checker, load_items, names_of, placeholder_tool, score

__all__ = ["Arm", "CategoryScore", "evaluate", "predict_loop", "predict_raw"]

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


async def predict_loop(model: Model, item: Item, max_steps: int, text_calls: bool = True) -> Prediction:
    loop = Loop(
        model, [placeholder_tool(f) for f in item.functions], max_steps=max_steps, text_calls=text_calls
    )
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


async def run_arm(
    arm: Arm,
    model: Model,
    items: list[Item],
    max_steps: int,
    check: Callable[..., dict[str, Any]],
    rows: list[dict[str, Any]],
    text_calls: bool = True,
) -> CategoryScore:
    result = CategoryScore(items[0].category if items else "")
    for item in items:
        started = time.perf_counter()
        error = None
        try:
            prediction = await (
                predict_loop(model, item, max_steps, text_calls)
                if arm == "loop"
                else predict_raw(model, item)
            )
            correct, why = score(item, prediction, check)
        except MinloopError as exc:
            prediction, correct, why, error = None, False, "", f"{type(exc).__name__}: {exc}"
            result.errors += 1
        result.seconds += time.perf_counter() - started
        result.items += 1
        result.correct += correct
        rows.append(
            {
                "id": item.id,
                "arm": arm,
                "correct": correct,
                "prediction": prediction,
                "why": why,
                "error": error,
            }
        )
    return result


async def evaluate(
    model: Model,
    categories: list[str],
    limit: int | None,
    max_steps: int = 3,
    on_category: Callable[[str, Arm, CategoryScore], None] | None = None,
    raw: Model | None = None,
    *,
    spread: bool = False,
    arms: tuple[Arm, ...] = ("loop", "raw"),
    text_calls: bool = True,
) -> Report:
    """Score the arms on each category (the first ``limit`` items of each; with ``spread``,
    ``limit`` items spaced evenly over the category). The raw arm calls ``raw`` (default:
    ``model``): for the embedded model, the same weights without minloop's decision policy
    (``LocalModel.plain()``). ``text_calls=False``: the loop does not read calls written as text."""
    check = load_checker()
    load = getattr(model, "load", None)
    if callable(load):
        await asyncio.to_thread(load)  # weights load outside the timed items
    report = Report(max_steps)
    for category in categories:
        items = load_items(category, limit, spread=spread)
        for arm in arms:
            chosen = model if arm == "loop" else raw or model
            scored = await run_arm(arm, chosen, items, max_steps, check, report.rows, text_calls)  # type: ignore[arg-type]
            report.scores[arm].append(scored)  # type: ignore[index]
            if on_category is not None:
                on_category(category, arm, scored)  # type: ignore[arg-type]
    return report


def total(scores: list[CategoryScore]) -> CategoryScore:
    return CategoryScore(
        "all",
        sum(s.items for s in scores),
        sum(s.correct for s in scores),
        sum(s.errors for s in scores),
        sum(s.seconds for s in scores),
    )
