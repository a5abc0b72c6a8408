"""``minloop batch``: many tasks from a JSONL file, resumable."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from ..batch import run_batch
from ..exceptions import MinloopError

__all__ = ["batch_command"]


def batch_command(
    tasks: Annotated[
        Path, typer.Argument(help="JSONL file, one task per line.", exists=True, dir_okay=False)
    ],
    out: Annotated[Path, typer.Option(help="Results file (JSONL); tasks in it are skipped.")] = Path(
        "results.jsonl"
    ),
    engine: Annotated[str, typer.Option(help="'local' (asyncio in this process) or 'ray'.")] = "local",
    concurrency: Annotated[int, typer.Option(min=1, help="Tasks running at once.")] = 8,
    address: Annotated[
        str | None, typer.Option(help="Ray cluster address (default: start Ray locally).")
    ] = None,
    model: Annotated[
        str,
        typer.Option(help="Model of tasks naming none: local (the 1.5B), local-0.5b or a name."),
    ] = "local",
    base_url: Annotated[str | None, typer.Option(help="Endpoint of tasks that name none.")] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Run many tasks from a JSONL file with bounded concurrency; resumable."""
    console = Console(stderr=True)
    bar = Progress(console=console, disable=not progress, transient=False)
    job = bar.add_task("tasks", total=None)
    defaults = {"model": model, **({"base_url": base_url} if base_url else {})}

    def started(total: int, todo: int) -> None:
        console.print(f"{total} tasks, {total - todo} already in {out}, {todo} to run on {engine}")
        bar.update(job, total=todo)

    try:
        with bar:
            summary = run_batch(
                tasks,
                out,
                engine=engine,  # type: ignore[arg-type]
                concurrency=concurrency,
                address=address,
                defaults=defaults,
                on_start=started,
                on_record=lambda _: bar.advance(job),
            )
    except MinloopError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    counts = ", ".join(f"{n} {status}" for status, n in sorted(summary.statuses.items())) or "nothing to run"
    console.print(f"{counts}; {summary.skipped} skipped; results in {out}")
    if not summary.complete:
        console.print(
            f"[yellow]{summary.not_run} task(s) did not run; run the same command again to retry them[/]"
        )
        raise typer.Exit(1)
