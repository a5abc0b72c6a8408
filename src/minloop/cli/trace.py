"""``minloop trace ls | show | export`` and ``minloop replay``: stored runs on the command line.

Every command reads the default store (``minloop.trace.sqlite.default_path()``) unless
``--db`` names another file. ``ID`` is a full trace id, a unique prefix of one, or ``last``.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..exceptions import MinloopError
from ..factory import build_tools
from ..trace.sqlite import Trace, TraceCall, TraceStep, TraceStore, decision_text
from .view import readable

__all__ = ["replay_command", "trace_app"]

trace_app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Stored runs: list (or ls), show, export."
)
out = Console(emoji=False)
err = Console(stderr=True, emoji=False)
BAR_WIDTH = 24

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db", help="Trace database (default: $MINLOOP_TRACE_DB, else ~/.local/share/minloop/traces.db)."
    ),
]
IdArgument = Annotated[str, typer.Argument(metavar="ID", help="A trace id, a unique prefix, or 'last'.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of the rich view.")]


def _open(db: Path | None) -> TraceStore:
    try:
        return TraceStore(db)
    except MinloopError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None


def _load(db: Path | None, ref: str) -> Trace:
    with _open(db) as store:
        try:
            return store.trace(ref)
        except MinloopError as exc:
            err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
            raise typer.Exit(2) from None


@trace_app.command("ls")
def ls(
    status: Annotated[
        str | None, typer.Option(help="Only runs with this status (success, running, model_error, ...).")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many runs, most recent first.")] = 20,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """List recent runs: id, time, status, steps, tokens, duration."""
    with _open(db) as store:
        runs = store.runs(status=status, limit=limit)
    if as_json:
        sys.stdout.write(json.dumps([r.to_dict() for r in runs], ensure_ascii=False, indent=2) + "\n")
        return
    table = Table(box=None)
    status_width = max([6, *(len(r.status) for r in runs)])
    columns = (
        ("trace id", 23),
        ("started", 14),
        ("status", status_width),
        ("steps", 5),
        ("tokens", 6),
        ("duration", 8),
    )
    for name, width in columns:
        table.add_column(name, no_wrap=True, min_width=width)
    model_width = min(24, max([5, *(len(r.model) for r in runs)]))
    table.add_column("model", overflow="ellipsis", no_wrap=True, min_width=model_width, max_width=24)
    table.add_column("prompt", overflow="ellipsis", no_wrap=True, ratio=1)
    for r in runs:
        table.add_row(
            r.trace_id,
            _when(r.started, short=True),
            Text(r.status, _status_style(r.status)),
            str(r.steps),
            str(r.total_tokens),
            _seconds(r.duration),
            r.model,
            _clip(r.prompt, 40),
        )
    out.print(table if runs else "[dim]no runs[/]")


trace_app.command("list", help="List recent runs (the same as `minloop trace ls`).")(ls)


@trace_app.command("show")
def show(
    ref: IdArgument,
    db: DbOption = None,
    full: Annotated[bool, typer.Option(help="Do not shorten tool results and messages.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Show a run as a timeline: each step's decision, tool calls, results and latencies."""
    trace = _load(db, ref)
    if as_json:
        sys.stdout.write(json.dumps(trace.to_dict(), ensure_ascii=False, indent=2, default=str) + "\n")
        return
    limit = None if full else 600
    _print_header(trace)
    longest = max([1e-9, *(max(s.model_latency or 0.0, s.tool_latency or 0.0) for s in trace.steps)])
    for step in trace.steps:
        _print_step(step, longest, limit)
    _print_end(trace, limit)
    _print_runs_notes(trace)


@trace_app.command("export")
def export(
    ref: IdArgument,
    html: Annotated[Path | None, typer.Option("--html", help="Write a self-contained HTML report.")] = None,
    jsonl: Annotated[
        Path | None, typer.Option("--jsonl", help="Write the raw events, one JSON per line ('-' for stdout).")
    ] = None,
    db: DbOption = None,
) -> None:
    """Export a run as an HTML report and/or as JSON Lines events."""
    if html is None and jsonl is None:
        err.print("[bold red]error:[/] give --html FILE and/or --jsonl FILE")
        raise typer.Exit(2)
    trace = _load(db, ref)
    if html is not None:
        from ..trace.html import write_html

        write_html(trace, html)
        err.print(f"wrote {html}")
    if jsonl is not None:
        lines = "".join(
            json.dumps(
                {"kind": e.kind, "trace_id": e.trace_id, "step": e.step, "time": e.time, "data": e.data},
                ensure_ascii=False,
            )
            + "\n"
            for e in trace.events
        )
        if str(jsonl) == "-":
            sys.stdout.write(lines)
        else:
            jsonl.write_text(lines, encoding="utf-8")
            err.print(f"wrote {jsonl}")


def replay_command(
    ref: IdArgument,
    live_tools: Annotated[
        bool,
        typer.Option("--live-tools", help="Run the tools again instead of replaying their recorded results."),
    ] = False,
    tools: Annotated[
        list[str] | None,
        typer.Option("--tools", help="With --live-tools: extra tools as module:attr (repeatable)."),
    ] = None,
    builtin: Annotated[bool, typer.Option(help="With --live-tools: offer the built-in tools.")] = True,
    root: Annotated[Path, typer.Option(help="With --live-tools: directory the file tools read.")] = Path("."),
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Rerun a stored run with its recorded model turns (offline) and report the first divergence."""
    from ..trace.replay import replay_sync

    trace = _load(db, ref)
    try:
        toolset = (
            build_tools([*(["builtins"] if builtin else []), *(tools or [])], root) if live_tools else None
        )
        report = replay_sync(trace, tools=toolset)
    except (MinloopError, OSError) as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2, default=str) + "\n")
    else:
        _print_replay(report.to_dict())
    raise typer.Exit(0 if report.reproduced else 1)


def _print_header(trace: Trace) -> None:
    r = trace.run
    head = Text.assemble(("run ", "bold"), (r.trace_id, "bold"), "  ", (r.status, _status_style(r.status)))
    out.print(head)
    tools = ", ".join(trace.start.get("tools", [])) or "none"
    tokens = f"{r.total_tokens} tokens ({r.prompt_tokens}+{r.completion_tokens})"
    out.print(
        f"[dim]{_when(r.started)} · model {r.model} · tools {tools} · {r.steps} steps · {tokens} · "
        f"{_seconds(r.duration)}[/]"
    )
    for server in trace.start.get("servers", []):  # MCP servers: the protocol each settled on
        out.print(f"[dim]MCP server {escape(str(server.get('name')))} · {server.get('transport')} · "
                  f"protocol {server.get('protocol')}[/]", soft_wrap=True)  # fmt: skip
    out.print(Text.assemble(("prompt ", "bold"), _clip(r.prompt, 600)))


def _print_step(step: TraceStep, longest: float, limit: int | None) -> None:
    out.print()
    head = Text.assemble((f"step {step.index} ", "bold"), (step.decision or _unfinished(step), "cyan"))
    usage = step.usage or {}
    head.append(
        f"  {usage.get('prompt_tokens', 0)}+{usage.get('completion_tokens', 0)} tok · tool_choice "
        f"{step.tool_choice if isinstance(step.tool_choice, str) else json.dumps(step.tool_choice)}"
    )
    if step.decayed:
        head.append("  [decay: tools off]", "yellow")
    if step.valid is False:
        head.append("  [invalid round]", "red")
    out.print(head)
    out.print(_bar_line("model", step.model_latency, longest, "blue"))
    if step.calls:
        out.print(_bar_line("tools", step.tool_latency, longest, "green"))
    if step.model_error:
        out.print(Text(f"  ✗ model failed: {step.model_error}", "red"))
    said = (step.response or {}).get("content")
    if isinstance(said, str) and said:
        out.print(Text.assemble("  model said: ", (_clip(said, limit), "italic")))
    for call in step.calls:
        _print_call(call, limit)


def _print_call(call: TraceCall, limit: int | None) -> None:
    rerouted = f" (rerouted to {call.rerouted_to})" if call.rerouted_to else ""
    rerouted += f" @ {call.server}" if call.server else ""
    out.print(
        Text.assemble(
            "  → ",
            (call.name, "bold green"),
            f"({readable(call.arguments)}){rerouted}",
            (f"  {_ms(call.latency)}", "dim"),
        )
    )
    if call.content is None:
        out.print(Text("    ← (no result: the step did not finish)", "red"))
        return
    label = f"{call.error} " if call.error else ""
    out.print(Text(f"    ← {label}{_clip(call.content, limit)}", "red" if call.error else ""))


def _print_end(trace: Trace, limit: int | None) -> None:
    out.print()
    end = trace.end
    if end is None:
        out.print(Text("run did not end: its process stopped (or it is still running)", "yellow"))
        return
    final = (end.get("final_message") or {}).get("content")
    style = _status_style(str(end.get("status")))
    out.print(
        Text.assemble(
            ("end ", "bold"),
            (str(end.get("status")), style),
            f"  {end.get('error')}" if end.get("error") else "",
        )
    )
    if isinstance(final, str):
        out.print(Text.assemble(("final message: ", "bold"), _clip(final, limit)))


def _print_runs_notes(trace: Trace) -> None:
    """Where a resumed run went on and who decided what; the calls a paused run waits on."""
    for r in trace.resumed:
        decided = "; ".join(decision_text(d) for d in r.get("decisions") or ())
        line = f"resumed at step {r.get('from_step')} (it was {r.get('status_before')})"
        out.print(Text(line + (f" · {decided}" if decided else ""), "cyan"))
    for p in trace.pending:
        out.print(
            Text(
                f"waiting for a decision: {p.get('name')}({readable(str(p.get('arguments')))}) · {p.get('call_id')}",
                "yellow",
            )
        )
    if trace.pending:
        out.print(
            f"[dim]minloop approve {trace.trace_id} CALL [--deny --reason TEXT], then minloop resume {trace.trace_id}[/]"
        )


def _print_replay(doc: dict[str, Any]) -> None:
    mode = "live tools" if doc["live_tools"] else "recorded tool results"
    rec, rep = doc["recorded"], doc["replayed"]
    out.print(f"replay of [bold]{doc['trace_id']}[/] with {mode} (as {doc['replay_trace_id']})")
    out.print(
        f"  recorded: {rec['status']} after {rec['steps']} steps · "
        f"replayed: {rep['status']} after {rep['steps']} steps"
    )
    final = (rep["final_message"] or {}).get("content")
    out.print(Text.assemble("  final message: ", _clip(str(final), 300)))
    div = doc["divergence"]
    if div is None:
        out.print(Text("reproduced: no divergence", "bold green"))
        return
    out.print(Text(f"first divergence: {div['description']}", "bold red"))
    out.print(Text(f"  recorded: {_clip(json.dumps(div['recorded'], ensure_ascii=False, default=str), 600)}"))
    out.print(Text(f"  replayed: {_clip(json.dumps(div['replayed'], ensure_ascii=False, default=str), 600)}"))


def _bar_line(label: str, seconds: float | None, longest: float, color: str) -> Text:
    width = 0 if seconds is None else max(1, round(BAR_WIDTH * seconds / longest))
    pad = " " * (BAR_WIDTH - width + 1)
    return Text.assemble(f"  {label:<6}", ("█" * width, color), pad, (_ms(seconds), "dim"))


def _unfinished(step: TraceStep) -> str:
    return "model error" if step.model_error else "unfinished"


def _status_style(status: str) -> str:
    return "green" if status == "success" else "yellow" if status in ("running", "paused") else "red"


def _clip(text: str, limit: int | None) -> str:
    text = text.replace("\n", " ⏎ ") if limit is not None and limit < 100 else text
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def _when(epoch: float, *, short: bool = False) -> str:
    return datetime.fromtimestamp(epoch).strftime("%m-%d %H:%M:%S" if short else "%Y-%m-%d %H:%M:%S")


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _seconds(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds:.2f}s"
