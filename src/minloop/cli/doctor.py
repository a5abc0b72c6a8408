"""``minloop doctor FILE``: lint a saved transcript and explain how to fix each problem."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from ..doctor import Finding, diagnose, load_transcript

__all__ = ["doctor_command"]


def doctor_command(
    file: Annotated[
        Path, typer.Argument(help="A JSON list of messages, or the output of `minloop run --json`.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as one JSON document.")] = False,
) -> None:
    """Check a saved transcript against the transcript rules and explain how to fix each problem."""
    try:
        messages = load_transcript(file)
    except (OSError, ValueError, RecursionError) as exc:
        problem = Text.assemble(("error:", "bold red"), f" cannot read {file}: {exc}")
        Console(stderr=True).print(problem, soft_wrap=True)
        raise typer.Exit(2) from None
    findings = diagnose(messages)
    count = len(messages) if isinstance(messages, list) else 0
    if as_json:
        doc = {"file": str(file), "messages": count, "findings": [asdict(f) for f in findings]}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    elif not findings:
        Console().print(Text.assemble(("ok", "green"), f" {file}: {count} messages, no findings"))
    else:
        Console().print(_report(file, count, findings))
    raise typer.Exit(1 if findings else 0)


def _report(file: Path, count: int, findings: list[Finding]) -> Group:
    head = Text.assemble((f"{len(findings)} finding(s)", "bold red"), f" in {file} ({count} messages)")
    parts: list[Text | Table] = [head]
    for f in findings:  # Text, not markup: problems and fixes hold brackets such as tool_calls[0]
        where = "transcript" if f.index is None else f"message {f.index}"
        parts.append(Text.assemble("\n", (where, "bold"), "  ", (f.rule, "bold yellow")))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column()
        grid.add_row("  problem", Text(f.problem))
        grid.add_row("  fix", Text(f.fix, "green"))
        parts.append(grid)
    return Group(*parts)
