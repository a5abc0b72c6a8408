"""``Loop``: the four steps with the built-in layers, installed from keywords.

``Loop(model, tools, budget=..., output=..., context=..., answer_at_limit=..., approve=...,
sinks=..., store=..., layers=[...])`` is ``BaseLoop`` (``minloop.loop``) with these layers,
outermost first: tracing (``sinks``), the context policy (``context``), the model's own answer
check, typed output (``output``), the result cache (``cache``), retries (``retry``), the cap on concurrent tool calls
(``tool_concurrency``), durable runs (``store``, which also decides approvals), the
budget (``budget``), the answer at the limit (``answer_at_limit``), approval (for tools that
need it, without a store), a tool server's questions (``ask_user``, without a store), then the
caller's ``layers`` in their order. A keyword left at its default installs nothing and costs
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, cast

from .exceptions import MinloopError
from .layer import Layer
from .layers.answers import Answering
from .layers.approval import Approval, Approver
from .layers.context import NO_WINDOW, ContextFitting, ContextPolicy, Policy
from .layers.limit import AnswerAtLimit
from .layers.tracing import TraceSink, Tracing
from .loop import BaseLoop
from .messages import Message
from .models.base import Model
from .questions import Answerer
from .result import RunResult
from .tools import Tool

if TYPE_CHECKING:  # budgets, typed output, streaming and run stores load when a loop first uses them
    from .driver import LoopRun
    from .layers.budget import Budget
    from .layers.cache import ResultCache
    from .layers.concurrency import ConcurrencyCap
    from .layers.retry import Retry
    from .layers.streaming import LoopStream
    from .runs.records import RunStore, SharedRunStore
    from .runs.resume import Decisions

__all__ = ["Loop", "model_layers", "run", "run_sync", "standard_layers"]


@dataclass(frozen=True)
class Loop(BaseLoop):
    """A configured loop: ``await loop.run(prompt)``, ``loop.run_sync(prompt)``,
    ``loop.iter(prompt)`` or ``loop.stream(prompt)``.

    ``tool_choice`` is sent on the first call; a forced choice (``"required"`` or one tool's
    name) applies until the first tool step, then the loop goes back to ``"auto"`` so it can
    end. ``time_budget`` (seconds) bounds a whole run's wall time. ``approve`` decides on calls
    to tools marked ``needs_approval``; ``ask_user`` answers the questions a tool's server asks
    mid-call (``minloop.questions``). ``context`` (a ``ContextPolicy``) decides what of the
    transcript is sent under the model's window. ``sinks`` receive trace events after
    ``redact`` (which also scrubs secrets from tool results and log lines).

    ``output`` (a Pydantic model, a type, a JSON schema) types the answer
    (``minloop.layers.output``); ``budget`` caps tokens, calls and cost
    (``minloop.layers.budget``); ``answer_at_limit`` asks, tools off, for an answer at
    ``max_steps`` or the budget instead of stopping without one. A model may bring layers of its
    own (``model.layers``: the embedded model brings ``minloop.small``'s); they go inside the
    built-in ones, unless ``layers`` holds one of the same class. ``store`` (a run store,
    ``minloop.runs``) makes runs durable: a call needing approval with no decision pauses the
    run (as does a server's question ``ask_user`` leaves open), and ``resume`` goes on with it in
    any process that shares the store; ``in_doubt`` says
    what a resumed run does with a call that may or may not have run before a crash
    (``"report"`` it to the model, or ``"pause"`` for a person). ``layers`` are the caller's own
    (``minloop.layer``), inside the built-in ones. ``text_calls=False`` reads a reply's text as
    text even when it is a tool call written out (``minloop.textcalls``; the same as
    ``Controls(text_calls=False)``). ``tool_concurrency`` caps the tool calls of a run that run
    at once (a number, or a ``ConcurrencyCap`` with caps per tool; ``minloop.layers.concurrency``).
    ``retry`` tries a call that failed for a reason that may pass again, when its tool is safe to
    repeat (the most tries, or a ``Retry``; ``minloop.layers.retry``). ``cache`` answers a
    read-only tool's repeated call from its first result: ``True`` within a run, or a
    ``ResultCache`` shared across runs (``minloop.layers.cache``).
    """

    approve: Approver | None = None
    ask_user: Answerer | None = None
    context: Policy | None = None
    sinks: Sequence[TraceSink] = ()
    output: Any = None
    budget: Budget | None = None
    answer_at_limit: bool = False
    store: RunStore | None = None
    in_doubt: Literal["report", "pause"] = "report"
    text_calls: bool = True
    tool_concurrency: int | ConcurrencyCap | None = None
    retry: int | Retry | None = None
    cache: bool | ResultCache = False

    def __post_init__(self) -> None:
        if not self.text_calls:
            object.__setattr__(self, "controls", replace(self.controls, text_calls=False))
        super().__post_init__()

    def installed(self) -> list[Layer]:
        return [*standard_layers(self), *self.layers]

    def iter_resume(self, run_id: str, decisions: Decisions | None = None, *, by: str | None = None,
                    layers: Sequence[Layer] = ()) -> LoopRun:  # fmt: skip
        """Take the stored run ``run_id`` and drive it on from where it was, one step at a time.
        ``decisions`` (by call id: ``True``, ``False`` or a ``Verdict``) settle pending calls;
        ``by`` names who decided (the trace records it)."""
        from .runs.resume import resume

        return resume(self, run_id, decisions, by=by, layers=layers)

    async def resume(
        self, run_id: str, decisions: Decisions | None = None, *, by: str | None = None
    ) -> RunResult:
        """``iter_resume`` driven to the end: the run's result (it may pause again)."""
        run = self.iter_resume(run_id, decisions, by=by)
        async for _ in run:
            pass
        assert run.result is not None
        return run.result

    def resume_sync(
        self, run_id: str, decisions: Decisions | None = None, *, by: str | None = None
    ) -> RunResult:
        """Blocking ``resume``."""
        import asyncio

        return asyncio.run(self.resume(run_id, decisions, by=by))

    async def cancel(self, run_id: str, *, reason: str | None = None, by: str | None = None) -> str:
        """Cancel the stored run ``run_id`` wherever it is (``minloop.runs.cancel``): a paused run
        ends ``cancelled`` now (``"cancelled"``); one driven by a live process, this one or
        another, ends at its next step boundary (``"cancelling"``). ``by`` and ``reason`` go in
        its result and trace. An ended run raises ``RunConflictError``."""
        import asyncio

        return await asyncio.to_thread(self.cancel_sync, run_id, reason=reason, by=by)

    def cancel_sync(self, run_id: str, *, reason: str | None = None, by: str | None = None) -> str:
        """Blocking ``cancel``."""
        from .runs.cancel import cancel, trace_cancel
        from .runs.resume import durable_of

        store = cast("SharedRunStore", durable_of(self).store)  # both stores share runs
        done = cancel(store, run_id, by=by, reason=reason)
        if done == "cancelled":
            trace_cancel(self.sinks, run_id, store.load(run_id).row.steps, by, reason)
        return done

    def stream_resume(
        self, run_id: str, decisions: Decisions | None = None, *, by: str | None = None
    ) -> LoopStream:
        """``iter_resume``, watched as it happens (see ``stream``)."""
        from .layers.streaming import LoopStream

        return LoopStream(lambda layers: self.iter_resume(run_id, decisions, by=by, layers=layers))

    def stream(self, prompt: str | Sequence[Message]) -> LoopStream:
        """Start a run to watch as it happens: ``async with loop.stream(...) as events:
        async for event in events: ...`` (see ``minloop.layers.streaming``)."""
        from .layers.streaming import LoopStream

        return LoopStream(self, prompt)


def model_layers(model: Model, given: Sequence[Layer] = ()) -> list[Layer]:
    """The layers ``model`` brings (its ``layers`` attribute), but those of a class in ``given``."""
    taken = {type(layer) for layer in given}
    return [layer for layer in getattr(model, "layers", ()) if type(layer) not in taken]


def standard_layers(loop: Loop) -> list[Layer]:
    """The built-in layers ``loop``'s keywords ask for, outermost first."""
    layers: list[Layer] = []
    if loop.sinks:
        layers.append(Tracing(loop.sinks, loop.redact, loop.max_steps))
    if loop.context is not None:
        window = loop.context.window or getattr(loop.model, "context_window", None)
        if isinstance(loop.context, ContextPolicy) and not window:
            raise MinloopError(NO_WINDOW)
        layers.append(ContextFitting(loop.context, window))
    layers.extend(model_layers(loop.model, loop.layers))
    if loop.output is not None:
        from .layers.output import OutputSpec, TypedOutput

        structured = bool(getattr(loop.model, "structured_output", False))
        layers.append(TypedOutput(OutputSpec.of(loop.output), structured))
    layers.extend(call_layers(loop))
    if loop.store is not None:
        from .runs.durable import Durable
        from .runs.resume import fingerprint

        layers.append(Durable(loop.store, fingerprint(loop.registry), approve=loop.approve, redact=loop.redact,
                              in_doubt=loop.in_doubt, ask_user=loop.ask_user))  # fmt: skip
    if loop.budget is not None:
        from .layers.budget import Budget, Budgeting

        if not isinstance(loop.budget, Budget):
            raise MinloopError(
                f"budget= takes a Budget, got {type(loop.budget).__name__}: write "
                "budget=Budget(total_tokens=1000), for example"
            )
        layers.append(Budgeting(loop.budget, loop.budget.price_for(loop.model.name)))
    if loop.answer_at_limit:
        layers.append(AnswerAtLimit())
    tools = [*loop.registry.values(), loop.controls.fallback]
    if loop.store is None and any(t.needs_approval for t in tools):
        layers.append(Approval(loop.approve))
    if loop.store is None and loop.ask_user is not None:
        layers.append(Answering(loop.ask_user))
    return layers


def call_layers(loop: Loop) -> list[Layer]:
    """The layers around each tool call that ``loop``'s keywords ask for, outermost first."""
    layers: list[Layer] = []
    if loop.cache is not False:
        from .layers.cache import Caching

        layers.append(Caching(None if loop.cache is True else loop.cache))
    if loop.retry is not None:
        from .layers.retry import Retrying

        layers.append(Retrying(loop.retry))
    if loop.tool_concurrency is not None:
        from .layers.concurrency import ConcurrencyCap

        cap = loop.tool_concurrency
        if not isinstance(cap, ConcurrencyCap) and (not isinstance(cap, int) or isinstance(cap, bool)):
            raise MinloopError(
                f"tool_concurrency must be a whole number >= 1 or a ConcurrencyCap, got {cap!r}"
            )
        if not isinstance(cap, ConcurrencyCap) and cap < 1:
            raise MinloopError(f"tool_concurrency must be >= 1, got {cap}")
        layers.append(cap if isinstance(cap, ConcurrencyCap) else ConcurrencyCap(cap))
    return layers


async def run(prompt: str | Sequence[Message], *, model: Model, tools: Sequence[Tool | Callable[..., Any]] = (),
              max_steps: int = 10, **options: Any) -> RunResult:  # fmt: skip
    """``await minloop.run(prompt, model=..., tools=[...])``: one run with a throwaway ``Loop``."""
    return await Loop(model, tools, max_steps, **options).run(prompt)


def run_sync(prompt: str | Sequence[Message], *, model: Model, tools: Sequence[Tool | Callable[..., Any]] = (),
             max_steps: int = 10, **options: Any) -> RunResult:  # fmt: skip
    """Blocking ``run``."""
    return Loop(model, tools, max_steps, **options).run_sync(prompt)
