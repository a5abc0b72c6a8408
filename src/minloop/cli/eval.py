"""``minloop eval bfcl``: the loop against a raw baseline on BFCL (see ``minloop.evals.bfcl_run``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..evals.bfcl import CATEGORIES, HELD_OUT
from ..evals.bfcl_run import CategoryScore, evaluate, total
from ..exceptions import MinloopError
from ..factory import build_model

__all__ = ["eval_bfcl_command"]


def table(title: str, scores: list[CategoryScore]) -> Table:
    t = Table(title=title, title_justify="left")
    for name in ("category", "items", "correct", "accuracy", "s/item", "errors"):
        t.add_column(name, justify="left" if name == "category" else "right")
    for s in [*scores, total(scores)]:
        t.add_row(
            s.category, str(s.items), str(s.correct), f"{s.accuracy:.1%}", f"{s.per_item:.2f}", str(s.errors)
        )
    return t


CATEGORIES_HELP = (
    f"Comma-separated categories: the non-live single-turn ones, or the held-out {', '.join(HELD_OUT)}."
)


def eval_bfcl_command(
    limit: Annotated[int, typer.Option(min=1, help="Items per category (the first N).")] = 50,
    spread: Annotated[
        bool, typer.Option("--spread", help="Take the N items evenly spaced over each category.")
    ] = False,
    raw: Annotated[bool, typer.Option(help="Also score the raw one-call baseline.")] = True,
    model: Annotated[
        str,
        typer.Option(help="'local' (embedded 1.5B), 'local-0.5b' (smaller, faster), or a remote model name."),
    ] = "local",
    categories: Annotated[str, typer.Option(help=CATEGORIES_HELP)] = ",".join(CATEGORIES),
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint for a remote model.")
    ] = None,
    max_steps: Annotated[int, typer.Option(min=1, help="Steps allowed to reach a valid tool step.")] = 3,
    out: Annotated[Path | None, typer.Option(help="Write every prediction and verdict here (JSONL).")] = None,
    text_calls: Annotated[
        bool, typer.Option(help="Read tool calls the model writes as text (--no-text-calls: answers).")
    ] = True,
) -> None:
    """Score the loop and a raw one-call baseline on BFCL with its own AST checker."""
    console = Console()
    chosen = [c.strip() for c in categories.split(",") if c.strip()]
    try:
        llm = build_model(model, base_url=base_url)

        def progress(category: str, arm: str, s: CategoryScore) -> None:
            console.print(f"[dim]{category:<18} {arm:<4} {s.correct}/{s.items} in {s.seconds:.0f}s[/]")

        plain = getattr(llm, "plain", None)
        report = asyncio.run(
            evaluate(
                llm,
                chosen,
                limit,
                max_steps,
                on_category=progress,
                raw=plain() if callable(plain) else None,
                spread=spread,
                arms=("loop", "raw") if raw else ("loop",),
                text_calls=text_calls,
            )
        )
    except MinloopError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    if out is not None:
        out.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in report.rows), encoding="utf-8"
        )
    console.print(table(f"minloop loop (max_steps={max_steps}) · {llm.name}", report.scores["loop"]))
    if raw:
        console.print(
            table(
                f"raw baseline (one call: no loop controls, no grounding) · {llm.name}", report.scores["raw"]
            )
        )
