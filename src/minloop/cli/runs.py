"""``minloop runs``, ``minloop approve``, ``minloop answer`` and what ``minloop run`` prints when
a run pauses.

A run that needs a person's decision pauses in the run store (``runs.db`` beside the trace
database unless ``--store`` says otherwise); ``minloop approve RUN CALL`` records the decision,
``minloop answer RUN CALL`` the answers to a tool server's questions, and ``minloop resume RUN``
goes on with the run, in this process or on another machine that shares the store.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeAlias

import typer
from rich.text import Text

from ..exceptions import MinloopError
from ..questions import Asking, Question, UserAnswer, answers_for
from ..result import RunResult
from ..runs.cancel import cancel, trace_cancel
from ..runs.decisions import verdicts_of
from ..runs.open import open_store
from ..runs.records import PendingCall, RunStore, SharedRunStore, Verdict
from ..trace.sqlite import SQLiteSink, TraceStore, default_path
from .view import err, one_line, out, readable

__all__ = [
    "Run",
    "Setup",
    "Start",
    "answer_command",
    "approve_command",
    "asker",
    "cancel_command",
    "pause_hint",
    "runs_command",
]

Start: TypeAlias = Callable[[Any], AbstractAsyncContextManager[Any]]
Run: TypeAlias = Callable[[Any], Awaitable[RunResult]]
StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Run store: a SQLite file or a postgresql:// address (default: runs.db beside the trace database).",
    ),
]


@dataclass(frozen=True)
class Setup:
    """The options of ``minloop run`` that shape a run's model and tools: ``minloop resume``
    must be given the same ones."""

    model: str
    base_url: str | None
    api_key_env: str
    gguf: Path | None
    tools: list[str]
    builtin: bool
    root: Path
    max_steps: int
    trace_db: Path | None
    no_trace: bool
    yes: bool
    no_input: bool
    store: str | None
    mcp: list[str]
    mcp_headers: list[str] = field(default_factory=list)  # "Name: value", never printed
    mcp_resources: list[str] = field(default_factory=list)
    attached: dict[str, str] = field(default_factory=dict)  # the resources' texts, once read
    small_model: bool = False  # the small-model layers for a model that does not bring them

    def run_store(self) -> RunStore | None:
        """Where runs are kept: ``--store``, else ``runs.db`` beside the trace database (none
        with ``--no-trace`` and no ``--store``)."""
        if self.store:
            return open_store(self.store)
        if self.no_trace:
            return None
        return open_store(str(self.trace_db.parent / "runs.db") if self.trace_db else None)

    def resume_options(self) -> str:
        """The options ``minloop resume`` needs to rebuild this run's loop."""
        parts = [f"--model {self.model}"] if self.model != "local" else []
        parts += [f"--base-url {self.base_url}"] if self.base_url else []
        parts += [f"--api-key-env {self.api_key_env}"] if self.api_key_env != "OPENAI_API_KEY" else []
        parts += [f"--gguf {_q(str(self.gguf))}"] if self.gguf else []
        parts += [f"--tools {_q(t)}" for t in self.tools]
        parts += ["--no-builtin"] if not self.builtin else []
        parts += [f"--root {_q(str(self.root))}"] if self.root != Path(".") else []
        parts += [f"--max-steps {self.max_steps}"] if self.max_steps != 6 else []
        parts += [f"--trace-db {_q(str(self.trace_db))}"] if self.trace_db else []
        parts += [f"--store {_q(self.store)}"] if self.store else []
        parts += [f"--mcp {_q(m)}" for m in self.mcp]
        parts += [f"--mcp-header {_q(h.partition(':')[0] + ': ...')}" for h in self.mcp_headers]
        parts += ["--small-model"] if self.small_model else []
        return " ".join(parts)


def _q(text: str) -> str:
    return (
        text
        if text and all(c.isalnum() or c in "-_./:=@" for c in text)
        else "'" + text.replace("'", "'\\''") + "'"
    )


def pause_hint(setup: Setup, result: RunResult) -> None:
    """What a paused run waits for, and the commands that decide and go on."""
    for p in result.pending:
        why = {"in_doubt": "may or may not have run before a crash", "question": "its server asks"}
        out.print(Text.assemble("  ⏸ ", (p.name, "bold yellow"),
                                f"({readable(p.arguments)}) · {p.call_id} · {why.get(p.why, 'needs approval')}"
                                f" · digest {p.digest}"))  # fmt: skip
        for q in p.questions:
            what = (
                f"fields: {json.dumps(q.schema, ensure_ascii=False)}"
                if q.kind == "form"
                else f"a page on {q.host}"
            )
            out.print(f"      ? {q.server} ({q.key}): {q.message} · {what}", soft_wrap=True, markup=False)
    store = f" --store {_q(setup.store)}" if setup.store else ""
    store += f" --trace-db {_q(str(setup.trace_db))}" if setup.trace_db and not setup.store else ""
    asked = [p for p in result.pending if p.why == "question"]
    if asked:
        out.print(f"to answer:  minloop answer {result.trace_id} {asked[0].call_id}{store} --json '{{...}}'   "
                  "(or --decline, --cancel)", soft_wrap=True, markup=False)  # fmt: skip
    if len(asked) < len(result.pending):
        first = next(p.call_id for p in result.pending if p.why != "question")
        out.print(
            f"to approve: minloop approve {result.trace_id} {first}{store}   "
            "(or --deny --reason TEXT, --args JSON, --respond TEXT)",
            soft_wrap=True,
        )
    options = setup.resume_options()
    out.print(
        f"then:       minloop resume {result.trace_id}{' ' + options if options else ''}", soft_wrap=True
    )


def runs_command(
    store: StoreOption = None,
    trace_db: Annotated[Path | None, typer.Option(help="The trace database runs.db sits beside.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many runs to list.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON.")] = False,
) -> None:
    """List stored runs, paused ones first: id, status, steps, calls waiting, last change, prompt."""
    with one_line():
        rows = _open(store, trace_db).runs(limit=limit)
    rows.sort(key=lambda r: (r.status != "paused", -r.updated))
    if as_json:
        keys = ("run_id", "status", "steps", "pending", "created", "updated", "owner", "prompt")
        sys.stdout.write(
            json.dumps([{k: getattr(r, k) for k in keys} for r in rows], ensure_ascii=False, indent=2) + "\n"
        )
        return
    if not rows:
        out.print("no stored runs")
        return
    for r in rows:
        style = "yellow" if r.status in ("paused", "running") else "green" if r.status == "success" else "red"
        waiting = f" · {r.pending} waiting" if r.pending else ""
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.updated))
        prompt = r.prompt.replace("\n", " ")
        out.print(Text.assemble((r.run_id, "bold"), "  ", (f"{r.status:<17}", style),
                                f" {r.steps} steps{waiting} · {when} · {prompt[:70]}"), soft_wrap=True)  # fmt: skip


def approve_command(
    run_id: Annotated[str, typer.Argument(help="The paused run.")],
    calls: Annotated[
        list[str], typer.Argument(help="The call ids to decide (see `minloop runs` or the paused run).")
    ],
    deny: Annotated[bool, typer.Option("--deny", help="Deny the calls instead of approving them.")] = False,
    reason: Annotated[str | None, typer.Option(help="Why: the model reads it with a denial.")] = None,
    args: Annotated[
        str | None, typer.Option("--args", help="Run the call with these arguments instead (a JSON object).")
    ] = None,
    respond: Annotated[
        str | None, typer.Option(help="Do not run the call: the model reads this text as its result.")
    ] = None,
    digest: Annotated[
        str | None, typer.Option(help="The digest of the arguments decided on (refused if they changed).")
    ] = None,
    by: Annotated[str | None, typer.Option(help="Who decides (default: the user name).")] = None,
    store: StoreOption = None,
    trace_db: Annotated[Path | None, typer.Option(help="The trace database runs.db sits beside.")] = None,
) -> None:
    """Record a decision on a paused run's calls (approve, deny, edit the arguments, or answer in
    the tool's place); `minloop resume RUN` then goes on with it."""
    with one_line():
        verdict = _verdict(deny, reason, args, respond, digest)
        verdicts = verdicts_of(dict.fromkeys(calls, verdict), by or getpass.getuser())
        _open(store, trace_db).decide(run_id, verdicts)
    word, tail = {"approve": ("approved", ""), "deny": ("denied", ""), "edit": ("approved", " with the arguments given"),
                  "respond": ("answered", " in the tool's place"), "answer": ("answered", "")}[verdict.kind]  # fmt: skip
    out.print(
        f"{word} {', '.join(calls)} of {run_id}{tail}; go on with: minloop resume {run_id}", soft_wrap=True
    )


def _verdict(
    deny: bool, reason: str | None, args: str | None, respond: str | None, digest: str | None
) -> Verdict:
    if sum((deny, args is not None, respond is not None)) > 1:
        raise MinloopError("give one of --deny, --args and --respond: a decision is one of them")
    if respond is not None:
        return Verdict.respond(respond, digest=digest)
    if args is None:
        return Verdict(not deny, reason, digest=digest)
    try:
        edited = json.loads(args)
    except ValueError as exc:
        raise MinloopError(f"--args is not valid JSON: {exc}") from None
    if not isinstance(edited, dict):
        raise MinloopError(
            f"--args must be a JSON object of the call's arguments, not {type(edited).__name__}"
        )
    return Verdict.edit(edited, reason, digest=digest)


def answer_command(
    run_id: Annotated[str, typer.Argument(help="The paused run.")],
    call: Annotated[str, typer.Argument(help="The call whose server asked (see the paused run).")],
    given: Annotated[
        str | None,
        typer.Option(
            "--json",
            help="The answer as a JSON object: the form's fields, or by question key "
            "when the server asked several questions.",
        ),
    ] = None,
    decline: Annotated[bool, typer.Option("--decline", help="Decline the questions.")] = False,
    cancel: Annotated[bool, typer.Option("--cancel", help="Dismiss the questions without a choice.")] = False,
    show_url: Annotated[
        bool, typer.Option("--show-url", help="Print the whole address of a page the server asks to visit.")
    ] = False,
    by: Annotated[str | None, typer.Option(help="Who answers (default: the user name).")] = None,
    store: StoreOption = None,
    trace_db: Annotated[Path | None, typer.Option(help="The trace database runs.db sits beside.")] = None,
) -> None:
    """Answer the questions a tool's server asked in a paused run (accept with --json, or --decline
    or --cancel); `minloop resume RUN` then sends the answers."""
    with one_line():
        opened = _open(store, trace_db)
    try:
        pending = _asked(opened, run_id, call)
        if show_url:
            for q in pending.questions:
                out.print(f"{q.key}: {q.url or '(not a page)'}", soft_wrap=True, markup=False)
            return
        answers = answers_for(Asking(pending.questions, None), _given(pending, given, decline, cancel))
        opened.decide(run_id, {call: Verdict(True, None, by or getpass.getuser(), time.time(), answers)})
    except (MinloopError, ValueError) as exc:
        err.print(Text.assemble(("error:", "bold red"), f" {exc}"), soft_wrap=True)
        raise typer.Exit(2) from None
    word = {True: "declined", False: "cancelled" if cancel else "answered"}[decline]
    out.print(f"{word} {call} of {run_id}; go on with: minloop resume {run_id}", soft_wrap=True)


def asker(no_input: bool) -> Callable[[Question], Awaitable[UserAnswer | None]]:
    """Ask a tool server's question on the terminal; with nobody to ask (``--no-input`` or no
    terminal), no answer: the run pauses for ``minloop answer`` (without a store the model
    reads ``ERR_TOOL_INPUT_REQUIRED``)."""

    async def ask_user(question: Question) -> UserAnswer | None:
        if no_input or not sys.stdin.isatty():
            return None
        return await asyncio.to_thread(_ask_on_terminal, question)

    return ask_user


def _ask_on_terminal(q: Question) -> UserAnswer:
    """A page's whole address to open (to this user only, never stored), or a form's fields as
    JSON, asked again until they fit; an empty line declines."""
    err.print(Text.assemble((f"{q.server} asks: ", "bold"), q.message), soft_wrap=True)
    if q.kind == "url":
        err.print(f"open {q.url}", soft_wrap=True, markup=False)
        return UserAnswer("accept" if typer.confirm("Done?", default=False, err=True) else "decline")
    shown = json.dumps(q.schema, ensure_ascii=False)
    while True:
        text = typer.prompt(
            f"fields {shown} as JSON (empty: decline)", default="", show_default=False, err=True
        )
        if not text.strip():
            return UserAnswer("decline")
        try:
            return answers_for(Asking((q,), None), UserAnswer(content=json.loads(text)))[q.key]
        except ValueError as exc:
            err.print(Text(str(exc), "red"), soft_wrap=True)


def _asked(store: RunStore, run_id: str, call: str) -> PendingCall:
    found = [p for p in store.load(run_id).pending if p.why == "question"]
    for p in found:
        if p.call_id == call:
            return p
    waiting = ", ".join(p.call_id for p in found) or "none"
    raise MinloopError(
        f"run {run_id}: no call {call} waits for answers to its server's questions (waiting: {waiting})"
    )


def _given(pending: PendingCall, given: str | None, decline: bool, cancel: bool) -> Any:
    if decline + cancel + (given is not None) > 1:
        raise MinloopError("give one of --json, --decline and --cancel")
    if decline or cancel:
        return UserAnswer("decline" if decline else "cancel")
    if given is None:
        return UserAnswer()
    try:
        content = json.loads(given)
    except ValueError as exc:
        raise MinloopError(f"--json: not JSON: {exc}") from None
    if not isinstance(content, dict):
        raise MinloopError(f"--json: give a JSON object, not {type(content).__name__}")
    if len(pending.questions) == 1:
        return UserAnswer(content=content)
    return {k: UserAnswer(content=v if isinstance(v, dict) else None) for k, v in content.items()}


def cancel_command(
    run_id: Annotated[str, typer.Argument(help="The run to cancel (see `minloop runs`).")],
    reason: Annotated[str | None, typer.Option(help="Why: kept in the run's result and trace.")] = None,
    by: Annotated[str | None, typer.Option(help="Who cancels (default: the user name).")] = None,
    store: StoreOption = None,
    trace_db: Annotated[Path | None, typer.Option(help="The trace database runs.db sits beside.")] = None,
) -> None:
    """Cancel a run that has not ended: a paused one at once, a running one (in any process) at
    its next step boundary. A cancelled run cannot be resumed."""
    who = by or getpass.getuser()
    with one_line():
        runs = _open(store, trace_db)
        done = cancel(runs, run_id, by=who, reason=reason)
    if done == "cancelled":
        out.print(f"cancelled {run_id}; it cannot be resumed", soft_wrap=True)
        try:
            _trace_end(trace_db, run_id, runs.row(run_id).steps, who, reason)
        except MinloopError as exc:  # the run is cancelled all the same
            err.print(
                Text.assemble(("warning:", "bold yellow"), f" the trace does not say so: {exc}"),
                soft_wrap=True,
            )
    else:
        out.print(
            f"asked {run_id} to cancel: the process driving it stops it at its next step", soft_wrap=True
        )


def _trace_end(trace_db: Path | None, run_id: str, steps: int, by: str, reason: str | None) -> None:
    """The cancel in the run's trace, if the trace database holds the run."""
    path = trace_db or default_path()
    if not path.is_file():
        return
    with TraceStore(path) as traces:
        if not traces.events(run_id):
            return
    with SQLiteSink(path) as sink:
        trace_cancel([sink], run_id, steps, by, reason)


def _open(store: str | None, trace_db: Path | None) -> SharedRunStore:
    return open_store(store or (str(trace_db.parent / "runs.db") if trace_db else None))
