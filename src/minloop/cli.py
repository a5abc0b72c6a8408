"""The ``minloop`` command line: ``minloop run "PROMPT"`` on the embedded model or any endpoint."""

from __future__ import annotations

import asyncio
import importlib
import json
import sqlite3
import sys
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from .exceptions import MinloopError
from .loop import Loop
from .models.base import Model
from .result import RunResult, Step
from .tools import Tool, tool
from .context import ContextPolicy
from .batch import batch_command, build_model, build_tools
from .doctor import doctor_command
from .evals.bfcl_run import eval_bfcl_command
from .messages import ToolCall
from .trace.cli import replay, trace_app
from .trace.sqlite import SQLiteSink

app = typer.Typer(add_completion=False, no_args_is_help=True, help="The minimal agent loop.")
app.add_typer(trace_app, name="trace")
app.command("replay")(replay)
app.command("doctor")(doctor_command)
app.command("batch")(batch_command)
eval_app = typer.Typer(no_args_is_help=True, help="Score the loop on public benchmarks.")
eval_app.command("bfcl")(eval_bfcl_command)
app.add_typer(eval_app, name="eval")
out = Console()
err = Console(stderr=True)
EXIT_CODES = {"success": 0}


@app.callback()
def _root() -> None:
    """minloop: receive, decide, execute, inject."""


@app.command()
def run(
    prompt: Annotated[str, typer.Argument(help="What to ask.")],
    model: Annotated[str, typer.Option(help="'local' (embedded 0.5B), 'local-1.5b', or a remote model name.")] = "local",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint for a remote model.")] = None,
    api_key_env: Annotated[str, typer.Option(help="Environment variable holding the API key.")] = "OPENAI_API_KEY",
    gguf: Annotated[Path | None, typer.Option(help="Run this GGUF file instead of the bundled model.")] = None,
    tools: Annotated[list[str] | None, typer.Option("--tools", help="Extra tools as module:attr (repeatable).")] = None,
    builtin: Annotated[bool, typer.Option(help="Offer the built-in tools (calculator, clock, files).")] = True,
    root: Annotated[Path, typer.Option(help="Directory the file tools may read.")] = Path("."),
    max_steps: Annotated[int, typer.Option(min=1, help="Step budget.")] = 6,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as one JSON document.")] = False,
    trace_db: Annotated[Path | None, typer.Option(help="Record the trace here (default: $MINLOOP_TRACE_DB, else "
                                                        "~/.local/share/minloop/traces.db).")] = None,
    no_trace: Annotated[bool, typer.Option("--no-trace", help="Do not record the trace.")] = False,
    time_budget: Annotated[float | None, typer.Option(min=0.001, help="Seconds the whole run may take.")] = None,
    window: Annotated[int | None, typer.Option(help="Token window for the context policy (default: the "
                                                    "embedded model's own; remote models: none).")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Approve every call to a tool that needs approval.")] = False,
) -> None:
    """Run one agent loop and show each step as it happens; the trace is recorded for `minloop trace`."""
    try:
        chosen = _model(model, base_url, api_key_env, gguf)
        toolset = _tools(tools or [], builtin, root)
        store = None if no_trace else SQLiteSink(trace_db)
        window = window or getattr(chosen, "context_window", None)
        loop = Loop(chosen, toolset, max_steps=max_steps, sinks=[store] if store else [], time_budget=time_budget,
                    approve=_approver(yes), context=ContextPolicy(window=window) if window else None)
    except (MinloopError, OSError, sqlite3.Error) as exc:
        err.print(f"[bold red]error:[/] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    try:
        result = asyncio.run(_drive(loop, prompt, live=not as_json))
    finally:
        if store is not None:
            store.close()
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        _show_result(result)
        if store is not None:
            out.print(f"[dim]trace recorded in {store.path} · minloop trace show {result.trace_id}[/]", soft_wrap=True)
    raise typer.Exit(EXIT_CODES.get(result.status, 1))


async def _drive(loop: Loop, prompt: str, *, live: bool) -> RunResult:
    run = loop.iter(prompt)
    if live:
        out.print(f"[dim]{run.trace_id} · model {loop.model.name} · tools {', '.join(loop.registry)}[/]")
    async for step in run:
        if live:
            _show_step(step)
    assert run.result is not None
    return run.result


def _model(name: str, base_url: str | None, api_key_env: str, gguf: Path | None) -> Model:
    if gguf is not None:
        from .models.local import LocalModel

        return LocalModel(path=gguf)
    return build_model(name, base_url=base_url, api_key_env=api_key_env)


def _tools(specs: list[str], builtin: bool, root: Path) -> list[Tool]:
    return build_tools([*(["builtins"] if builtin else []), *specs], str(root))


def load_tools(spec: str) -> list[Tool]:
    """``module:attr`` where attr is a Tool, a function, or a list of them."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise MinloopError(f"--tools {spec!r}: expected module:attr, e.g. my_tools:get_weather")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise MinloopError(f"--tools {spec!r}: cannot import {module_name!r}: {exc}") from None
    finally:
        sys.path.pop(0)
    if not hasattr(module, attr):
        raise MinloopError(f"--tools {spec!r}: module {module_name!r} has no attribute {attr!r}")
    value = getattr(module, attr)
    items = value if isinstance(value, list | tuple) else [value]
    if not all(isinstance(i, Tool) or callable(i) for i in items):
        raise MinloopError(f"--tools {spec!r}: expected a tool, a function or a list of them")
    return [i if isinstance(i, Tool) else tool(i) for i in items]


def _approver(yes: bool) -> Callable[[ToolCall], Awaitable[bool]]:
    """Ask y/N on the terminal for each call needing approval; deny when nobody can answer."""

    async def approve(call: ToolCall) -> bool:
        if yes:
            return True
        if not sys.stdin.isatty():
            err.print(f"[yellow]denied[/] {call.name}: it needs approval and stdin is not a terminal (use --yes)")
            return False
        question = f"Allow {call.name}({call.arguments})?"
        return bool(await asyncio.to_thread(typer.confirm, question, default=False, err=True))

    return approve


def _show_step(step: Step) -> None:
    usage = step.usage
    head = Text.assemble((f"step {step.index} ", "bold"), (step.decision, "cyan"))
    head.append(f"  model {step.model_latency:.2f}s · {usage.prompt_tokens}+{usage.completion_tokens} tok")
    if usage.evaluated_tokens is not None:
        head.append(f" ({usage.evaluated_tokens} evaluated)")
    if step.control and step.control.startswith("Answer the user directly"):
        head.append("  [decay: tools off]", "yellow")
    out.print(head)
    ctx = step.context
    if ctx is not None and ctx.mode != "full":
        out.print(Text(f"  context {ctx.mode}: {ctx.rounds_summarised} round(s) summarised, {ctx.results_shrunk} "
                       f"result(s) shrunk, {ctx.tokens_before} -> {ctx.tokens_after} of {ctx.window} tokens", "yellow"))
    for call, result in zip(step.tool_calls, step.results, strict=True):
        out.print(Text.assemble("  → ", (call.name, "bold green"), f"({call.arguments})"))
        body = json.loads(result.content)
        body.pop("trace_id", None)
        style = "red" if result.error else "dim"
        label = f"{result.error} " if result.error else ""
        out.print(Text(f"    ← {label}{json.dumps(body, ensure_ascii=False)[:300]}  ({result.latency * 1000:.0f} ms)", style=style))


def _show_result(result: RunResult) -> None:
    style = "green" if result.ok else "red"
    body = result.output or result.error or "(no answer)"
    subtitle = f"{len(result.steps)} steps · {result.usage.total_tokens} tokens · {result.duration:.2f}s"
    out.print(Panel(body, title=f"[{style}]{result.status}[/] · {result.trace_id}", subtitle=subtitle))


def main() -> None:
    app()
