"""What ``minloop run`` shows: the model's text as it is written, each step as it ends, then the answer."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from ..decision import DECAY_TEXT, is_standard_control
from ..exceptions import MinloopError
from ..layers.streaming import StepEnd, StreamEvent, TextDelta
from ..result import RunResult, Step
from ..tools import Tool

__all__ = ["LiveView", "err", "fail", "one_line", "out", "show_result", "show_step"]

out = Console(emoji=False)
err = Console(stderr=True, emoji=False)


def fail(exc: BaseException | str) -> typer.Exit:
    """Print ``error: ...`` on one line of stderr; the exit (code 2) for the caller to raise."""
    err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
    return typer.Exit(2)


@contextmanager
def one_line() -> Iterator[None]:
    """A ``MinloopError`` in the block (a store that fails, a run that cannot be changed) ends
    the command with one ``error:`` line and exit code 2, no traceback."""
    try:
        yield
    except MinloopError as exc:
        raise fail(exc) from None


def show_step(step: Step, registry: Mapping[str, Tool] | None = None) -> None:
    usage = step.usage
    head = Text.assemble((f"step {step.index} ", "bold"), (step.decision, "cyan"))
    head.append(f"  model {step.model_latency:.2f}s · {usage.prompt_tokens}+{usage.completion_tokens} tok")
    if usage.evaluated_tokens is not None:
        head.append(f" ({usage.evaluated_tokens} evaluated)")
    if step.control and step.control.endswith(DECAY_TEXT):
        head.append("  [decay: tools off]", "yellow")
    out.print(head)
    # why the last reply was not accepted
    if step.control and step.control != DECAY_TEXT and not is_standard_control(step.control):
        out.print(Text(f"  note: {step.control.removesuffix(DECAY_TEXT).strip()}", "yellow"))
    if step.decision == "unfinished":
        out.print(Text(f"  not accepted: {str(step.message.get('content'))[:300]}", "yellow"))
    ctx = step.context
    if ctx is not None and ctx.mode != "full":
        out.print(
            Text(
                f"  context {ctx.mode}: {ctx.steps_summarised} step(s) summarised, {ctx.results_shrunk} "
                f"result(s) shrunk, {ctx.tokens_before} -> {ctx.tokens_after} of {ctx.window} tokens",
                "yellow",
            )
        )
    for call, result in zip(step.tool_calls, step.results, strict=True):
        known = (registry or {}).get(call.name)
        where = f"  @ {known.server}" if known is not None and known.server else ""
        out.print(
            Text.assemble(
                "  → ", (call.name, "bold green"), f"({readable(call.arguments)})", (where, "magenta")
            )
        )
        body = json.loads(result.content)
        body.pop("trace_id", None)
        style = "red" if result.error else "dim"
        label = f"{result.error} " if result.error else ""
        out.print(
            Text(
                f"    ← {label}{json.dumps(body, ensure_ascii=False)[:300]}  ({result.latency * 1000:.0f} ms)",
                style=style,
            )
        )


def show_result(result: RunResult) -> None:
    style = "green" if result.ok else "red"
    body = Text(result.output or result.error or "(no answer)")
    if result.forced_by:
        body.append(f"\n\nanswer asked for at the limit: {result.error}", "yellow")
    cost = f" · cost {result.cost:.6g}" if result.cost is not None else ""
    subtitle = (
        f"{len(result.steps)} steps · {result.model_calls} model calls · {result.tool_calls} tool calls · "
        f"{result.usage.total_tokens} tokens{cost} · {result.duration:.2f}s"
    )
    out.print(Panel(body, title=f"[{style}]{result.status}[/] · {result.trace_id}", subtitle=subtitle))


class LiveView:
    """Shows a streamed run: text as it arrives (dimmed while the step may still call tools),
    each step's summary when it ends, and when an answer check put a statement in place of the
    text just shown, that the text was not accepted."""

    def __init__(self, registry: Mapping[str, Tool] | None = None) -> None:
        self.writing = False
        self.registry = registry
        self.text = ""

    def __call__(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            if not self.writing:
                out.print("  ", end="")
                self.writing = True
            self.text += event.text
            out.print(event.text, end="", markup=False, highlight=False, soft_wrap=True)
            return
        if self.writing:
            out.print()
            self.writing = False
        if isinstance(event, StepEnd):
            show_step(event.record, self.registry)
            answer = event.record.message.get("content") if event.record.decision == "answer" else None
            if isinstance(answer, str) and self.text.strip() and self.text.strip() != answer.strip():
                out.print(Text("  not accepted: the text above was replaced by the answer below", "yellow"))
            self.text = ""


def readable(arguments: str) -> str:
    """Arguments as JSON with their own characters (东京, not \\u4e1c\\u4eac)."""
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False)
    except ValueError:
        return arguments
