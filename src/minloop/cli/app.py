"""The ``minloop`` command line: ``minloop run "PROMPT"`` on the embedded model or any endpoint,
and the other commands (batch, doctor, eval, replay, trace)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..exceptions import MinloopError
from ..factory import build_model, build_tools
from ..layers.budget import Budget
from ..layers.context import ContextPolicy, Policy
from ..mcp.content import attach
from ..messages import ToolCall
from ..result import RunResult
from ..small import small_model_layers
from ..standard import Loop
from ..trace.sqlite import SQLiteSink
from .batch import batch_command
from .calls import CacheDbOpt, CacheOpt, ConcurrencyOpt, RetryOpt, call_keywords
from .doctor import doctor_command
from .eval import eval_bfcl_command
from .mcp import McpHeaderOpt, McpResourceOpt, mcp_app, open_servers, parse_headers, read_resources
from .model_server import model_server_command
from .runs import (
    Run,
    Setup,
    Start,
    answer_command,
    approve_command,
    asker,
    cancel_command,
    pause_hint,
    runs_command,
)
from .serve import serve_command
from .trace import replay_command, trace_app
from .view import LiveView, err, out, readable, show_result

__all__ = ["app"]

app = typer.Typer(add_completion=False, no_args_is_help=True, help="The minimal agent loop.")
EXIT_CODES = {"success": 0, "budget_exceeded": 3, "paused": 4}


@app.callback()
def _root() -> None:
    """minloop: receive, decide, execute, inject."""


ModelOpt = Annotated[
    str,
    typer.Option(help="'local' (embedded 1.5B), 'local-0.5b' (smaller, faster), or a remote model name."),
]
BaseUrlOpt = Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint for a remote model.")]
KeyEnvOpt = Annotated[str, typer.Option(help="Environment variable holding the API key.")]
GgufOpt = Annotated[Path | None, typer.Option(help="Run this GGUF file instead of the bundled model.")]
ToolsOpt = Annotated[
    list[str] | None, typer.Option("--tools", help="Extra tools as module:attr (repeatable).")
]
SmallModelOpt = Annotated[
    bool,
    typer.Option(
        "--small-model",
        help="Give a small model behind --base-url the controls the embedded model has: grounding, "
        "the evidence check, answers in the user's language (minloop.small).",
    ),
]
BuiltinOpt = Annotated[bool, typer.Option(help="Offer the built-in tools (calculator, clock, files).")]
RootOpt = Annotated[Path, typer.Option(help="Directory the file tools may read.")]
StepsOpt = Annotated[int, typer.Option(min=1, help="Step budget.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the whole result as one JSON document.")]
TraceDbOpt = Annotated[
    Path | None,
    typer.Option(
        help="Record the trace here (default: $MINLOOP_TRACE_DB, else ~/.local/share/minloop/traces.db)."
    ),
]
NoTraceOpt = Annotated[bool, typer.Option("--no-trace", help="Do not record the trace.")]
TimeBudgetOpt = Annotated[float | None, typer.Option(min=0.001, help="Seconds the whole run may take.")]
WindowOpt = Annotated[
    int | None,
    typer.Option(
        help="Token window for the context policy (default: the embedded model's own; remote models: none)."
    ),
]
YesOpt = Annotated[bool, typer.Option("--yes", help="Approve every call to a tool that needs approval.")]
McpOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--mcp",
        help="Use an MCP server's tools: a command line (stdio) or an http(s) URL; 'PREFIX=...' puts PREFIX_ "
        "before its tool names. A leading 'python' is the Python running minloop. Repeatable.",
    ),
]
SchemaOpt = Annotated[
    Path | None,
    typer.Option(help="A JSON schema file (an object): the answer must be JSON that validates against it."),
]
MaxTokensOpt = Annotated[
    int | None, typer.Option(min=1, help="Token budget for the run (prompt + completion).")
]
MaxToolCallsOpt = Annotated[int | None, typer.Option(min=0, help="Tool-call budget for the run.")]
NoInputOpt = Annotated[
    bool,
    typer.Option(
        "--no-input",
        help="Never ask on the terminal: a call needing approval pauses the run for `minloop approve`.",
    ),
]
StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Run store: a SQLite file or a postgresql:// address (default: runs.db beside the trace database).",
    ),
]
AtLimitOpt = Annotated[
    bool, typer.Option(help="At the step or token limit, ask once more, tools off, for an answer.")
]


@app.command("run")
def run_command(
    prompt: Annotated[str, typer.Argument(help="What to ask.")],
    model: ModelOpt = "local",
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    gguf: GgufOpt = None,
    tools: ToolsOpt = None,
    builtin: BuiltinOpt = True,
    root: RootOpt = Path("."),
    max_steps: StepsOpt = 6,
    as_json: JsonOpt = False,
    trace_db: TraceDbOpt = None,
    no_trace: NoTraceOpt = False,
    time_budget: TimeBudgetOpt = None,
    window: WindowOpt = None,
    yes: YesOpt = False,
    no_input: NoInputOpt = False,
    store: StoreOpt = None,
    mcp: McpOpt = None,
    mcp_header: McpHeaderOpt = None,
    mcp_resource: McpResourceOpt = None,
    output_schema: SchemaOpt = None,
    max_tokens: MaxTokensOpt = None,
    max_tool_calls: MaxToolCallsOpt = None,
    answer_at_limit: AtLimitOpt = False,
    tool_concurrency: ConcurrencyOpt = None,
    retry: RetryOpt = None,
    cache: CacheOpt = False,
    cache_db: CacheDbOpt = None,
    small_model: SmallModelOpt = False,
) -> None:
    """Run one agent loop and show each step as it happens; the trace is recorded for `minloop trace`."""
    setup = Setup(model, base_url, api_key_env, gguf, tools or [], builtin, root, max_steps, trace_db,
                  no_trace, yes, no_input, store, mcp or [], mcp_header or [], mcp_resource or [],
                  small_model=small_model)  # fmt: skip
    extra = {"time_budget": time_budget, "window": window, "answer_at_limit": answer_at_limit,
             "output": output_schema,
             "budget": Budget(total_tokens=max_tokens, tool_calls=max_tool_calls),
             "calls": (tool_concurrency, retry, cache, cache_db)}  # fmt: skip
    text = lambda: attach(prompt, setup.attached)  # with the --mcp-resource texts, once read
    finish(setup, as_json, lambda loop: loop.stream(text()), lambda loop: loop.run(text()), extra)


@app.command("resume")
def resume_command(
    run_id: Annotated[str, typer.Argument(help="The run to go on with (see `minloop runs`).")],
    model: ModelOpt = "local",
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    gguf: GgufOpt = None,
    tools: ToolsOpt = None,
    builtin: BuiltinOpt = True,
    root: RootOpt = Path("."),
    max_steps: StepsOpt = 6,
    as_json: JsonOpt = False,
    trace_db: TraceDbOpt = None,
    yes: YesOpt = False,
    no_input: NoInputOpt = False,
    store: StoreOpt = None,
    mcp: McpOpt = None,
    mcp_header: McpHeaderOpt = None,
    small_model: SmallModelOpt = False,
) -> None:
    """Go on with a paused or interrupted run, with the decisions `minloop approve` recorded. Give the
    options that shaped the run's model and tools (the paused run printed them)."""
    setup = Setup(model, base_url, api_key_env, gguf, tools or [], builtin, root, max_steps, trace_db,
                  False, yes, no_input, store, mcp or [], mcp_header or [], small_model=small_model)  # fmt: skip
    finish(setup, as_json, lambda loop: loop.stream_resume(run_id), lambda loop: loop.resume(run_id), {})


def finish(setup: Setup, as_json: bool, start: Start, run: Run, extra: dict[str, Any]) -> None:
    """Build the loop ``setup`` describes, drive it (``start`` streamed, ``run`` whole), show the
    result and exit with its status's code."""
    trace, store, cache = None, None, None
    try:
        chosen = build_model(
            setup.model, base_url=setup.base_url, api_key_env=setup.api_key_env, gguf=setup.gguf
        )
        toolset = build_tools([*(["builtins"] if setup.builtin else []), *setup.tools], setup.root)
        trace = None if setup.no_trace else SQLiteSink(setup.trace_db)
        store = setup.run_store()
        if isinstance(extra.get("output"), Path):
            extra["output"] = _read_schema(extra["output"])
        if "calls" in extra:
            extra.update(call_keywords(*extra.pop("calls")))
            cache = extra["cache"] if hasattr(extra["cache"], "close") else None
        if setup.small_model:
            extra["layers"] = small_model_layers()  # the embedded model's own are not doubled
        window = extra.pop("window", None) or getattr(chosen, "context_window", None)
        policy: Policy | None = ContextPolicy(window=window) if window else None
        loop = Loop(chosen, toolset, setup.max_steps, sinks=[trace] if trace else [], context=policy,
                    approve=_approver(setup.yes, setup.no_input), ask_user=asker(setup.no_input), store=store,
                    **extra)  # fmt: skip
        servers: list[dict[str, Any]] = []  # what each MCP server settled on, for --json
        result = asyncio.run(_drive(loop, start, run, live=not as_json, setup=setup, opened=servers))
    except (MinloopError, OSError, sqlite3.Error) as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    finally:
        for opened in (trace, store, cache):
            if opened is not None:
                opened.close()
    if as_json:
        shown = {**result.to_dict(), **({"mcp_servers": servers} if servers else {})}
        sys.stdout.write(json.dumps(shown, ensure_ascii=False, indent=2) + "\n")
    else:
        show_result(result)
        if result.status == "paused":
            pause_hint(setup, result)
        if trace is not None:
            out.print(
                f"[dim]trace recorded in {trace.path} · minloop trace show {result.trace_id}[/]",
                soft_wrap=True,
            )
    raise typer.Exit(EXIT_CODES.get(result.status, 1))


def _read_schema(path: Path) -> dict[str, Any]:
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise MinloopError(f"{path}: not a JSON file: {exc}") from None
    if not isinstance(schema, dict):
        raise MinloopError(f"{path}: a JSON schema is a JSON object")
    return schema


async def _drive(
    loop: Loop,
    start: Start,
    run: Run,
    *,
    live: bool,
    setup: Setup | None = None,
    opened: list[Any] | None = None,
) -> RunResult:
    async with AsyncExitStack() as stack:
        if setup is not None and setup.mcp:
            loop, servers = await _with_mcp(loop, setup, stack)
            (opened if opened is not None else []).extend(s.about() for s in servers)
            setup.attached.update(await read_resources(servers, setup.mcp_resources))
        elif setup is not None and setup.mcp_resources:
            raise MinloopError("--mcp-resource reads from the --mcp servers: give the server with --mcp")
        if not live:
            return await run(loop)
        view = LiveView(loop.registry)
        async with start(loop) as events:
            out.print(
                f"[dim]{events.trace_id} · model {loop.model.name} · tools {', '.join(loop.registry)}[/]"
            )
            async for event in events:
                view(event)
        assert events.result is not None
        return events.result


async def _with_mcp(loop: Loop, setup: Setup, stack: AsyncExitStack) -> tuple[Loop, list[Any]]:
    """The loop with the MCP servers' tools added, and the servers (open until ``stack`` closes)."""
    from ..mcp.connect import check_names

    try:
        servers = await open_servers(setup.mcp, parse_headers(setup.mcp_headers), stack)
        extra = check_names(servers, reserved=loop.registry)
    except MinloopError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    return replace(loop, tools=[*loop.tools, *extra]), servers


def _approver(yes: bool, no_input: bool) -> Callable[[ToolCall], Awaitable[bool | None]]:
    """Ask y/N on the terminal for each call needing approval; with nobody to ask (``--no-input``
    or no terminal), no decision: the run pauses for ``minloop approve`` (denied without a store)."""

    async def approve(call: ToolCall) -> bool | None:
        if yes:
            return True
        if no_input or not sys.stdin.isatty():
            return None
        question = f"Allow {call.name}({readable(call.arguments)})?"
        return bool(await asyncio.to_thread(typer.confirm, question, default=False, err=True))

    return approve


def _register() -> None:
    """The other commands, after ``run`` so that ``minloop --help`` lists it first."""
    app.command("runs")(runs_command)
    app.command("approve")(approve_command)
    app.command("cancel")(cancel_command)
    app.command("answer")(answer_command)
    app.command("batch")(batch_command)
    app.command("doctor")(doctor_command)
    eval_app = typer.Typer(no_args_is_help=True, help="Score the loop on public benchmarks.")
    eval_app.command("bfcl")(eval_bfcl_command)
    app.add_typer(eval_app, name="eval")
    app.command("replay")(replay_command)
    app.command("serve")(serve_command)
    app.command("model-server")(model_server_command)
    app.add_typer(trace_app, name="trace")
    app.add_typer(mcp_app, name="mcp")


_register()
