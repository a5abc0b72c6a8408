"""Durable runs: ``Durable``, the layer that writes a run to its store as it goes.

It records the run when it starts, the model's reply as soon as it comes, each tool call
before it runs and when it finishes (with its outcome), and the state at every step boundary.
A call to a tool that needs approval, with no decision at hand, pauses the run (status
``paused``, the calls in ``RunResult.pending``) before anything of that step runs. A resumed
run (``minloop.runs.resume``) goes through the same hooks: a recorded reply is used instead of
a new model call, a recorded outcome instead of running the call again, and a call that started
but never finished is *in doubt* (``in_doubt``), approved or not: run again only if its tool is
safe to repeat (idempotent, read-only, or taking the call's ``CallKey``, the same on the
repeat), otherwise reported to the model as ``ERR_TOOL_IN_DOUBT`` (or, with
``in_doubt="pause"``, left for a person). A step's state (what is new in it) is written when
the next step begins, once every layer has had its say: a run killed after its last step
finishes on resume from that step's recorded reply, without calling the model again.

A call whose server asks the user a question (``minloop.questions``) is recorded with the
question and the server's state before anything else happens; then ``ask_user`` answers it, or
the run pauses with the call pending (``why="question"``) until ``resume`` brings the answers.
The call is made again with them and the state: a first round is never sent twice. A later
round that may or may not have reached the server before a crash is sent again only if the tool
is safe to repeat, otherwise reported in doubt.

Store rows hold only what the redactor leaves: a call whose arguments held a secret cannot be
run after a resume (``ERR_TOOL_NOT_STORED``), and a resumed run reads its transcript redacted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar, Literal

from pydantic_core import to_jsonable_python

from ..decision import CallTools, Decision
from ..exceptions import RunConflictError
from ..execute import ToolFailure, check_output, parse_arguments
from ..layer import CallModel, Execute, Layer, StopRun
from ..layers.approval import DENIED, Approver, ask
from ..messages import ToolCall
from ..models.base import ModelRequest, ModelResponse, Usage
from ..questions import MAX_ROUNDS, Answered, Answerer, Asked, Asking, UserAnswer, answering, ask_all
from ..result import RunResult, Step
from ..state import Continue, Outcome, Prompt, Reply, RunState, Stop
from ..tools import Tool
from .cancel import cancelled_text
from .checkpoint import Snapshots, scrubber
from .decisions import edited, stands
from .owner import this_process
from .records import CallRecord, PendingCall, RunStore, Verdict, digest

__all__ = ["IN_DOUBT", "NOT_STORED", "Durable", "in_doubt"]

IN_DOUBT = (
    "this call may or may not have happened: the process running it stopped before it returned. "
    "Check before repeating it"
)
NOT_STORED = (
    "this call was not run: its arguments held a secret, which is never stored, and the run was "
    "resumed from its store. Make the call again if it is still needed"
)


@dataclass
class _Run:
    """What the layer keeps for one run."""

    owner: str
    snapshots: Snapshots
    resumed: bool = False
    created: bool = False  # the run's row is in the store
    boundary: int = 0  # the steps the stored state holds
    reply: dict[str, Any] | None = None  # the step in progress's recorded reply
    calls: dict[tuple[int, str], CallRecord] = field(default_factory=dict)
    scrubbed: set[str] = field(default_factory=set)  # calls of that reply whose arguments were redacted
    pending: list[PendingCall] = field(default_factory=list)
    lost: bool = False


class Durable(Layer):
    """Writes each run to ``store``; decides approvals (``approve``, sync or async, returning
    ``True``, ``False``, or ``None`` for no decision: the run pauses). ``tools`` is the
    fingerprint of the loop's tools (``minloop.runs.resume.fingerprint``), checked when a run is
    resumed.
    ``finish``, when set, writes a run's end instead of ``store.finish`` (a server writes it
    together with the run's last events). ``ask_user`` answers a tool server's questions
    (``None``: the run pauses for them)."""

    approves: ClassVar[bool] = True
    finish: Callable[[str, str, str, dict[str, Any]], None] | None = None

    def __init__(self, store: RunStore, tools: dict[str, Any], *, approve: Approver | None = None,
                 redact: Callable[[Any], Any] | None = None, lease: float = 30.0,
                 in_doubt: Literal["report", "pause"] = "report", tag: str | None = None,
                 ask_user: Answerer | None = None) -> None:  # fmt: skip
        self.store, self.tools, self.approve, self.redact = store, tools, approve, redact
        self._scrub = scrubber(redact)
        self.lease, self.in_doubt, self.tag, self.ask_user = lease, in_doubt, tag, ask_user

    def of(self, run: RunState) -> _Run:
        return run.local(self, lambda: _Run(this_process(), Snapshots(self.redact)))

    def _until(self) -> float:
        return time.time() + self.lease

    def _write(self, run: RunState, r: _Run, write: Callable[..., None], *args: Any) -> None:
        if r.lost:
            raise StopRun("cancelled", "another process took this run over")
        try:
            write(run.trace_id, r.owner, *args)
        except RunConflictError:
            r.lost = True
            raise StopRun("cancelled", "another process took this run over") from None

    def reserve(self, run: RunState) -> bool:
        """Record the new run under its id, unless the store holds that id already."""
        r = self.of(run)
        prompt = next((m.get("content") for m in reversed(run.messages) if m.get("role") == "user"), "")
        state = r.snapshots.added(run)
        r.created = self.store.create(
            run.trace_id, r.owner, self._until(), self.tools, state, str(self.redact_(prompt)), self.tag
        )
        return r.created

    def start(self, run: RunState) -> None:
        r = self.of(run)
        if not (r.resumed or r.created or self.reserve(run)):
            raise RunConflictError(run.trace_id, "the store already holds a run with this id")

    def redact_(self, value: Any) -> Any:
        return self._scrub(value)

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        r = self.of(run)
        if r.reply is not None and r.reply.get("step") == run.index:
            recorded = r.reply
            return Reply(ModelResponse(recorded["message"], Usage(**recorded["usage"])), recorded["latency"])
        reply = await self._renewing(run, r, call(request))
        message = reply.response.message
        stored = self.redact_(message)
        scrubbed = [c.get("id") for c, s in zip(message.get("tool_calls") or (), stored.get("tool_calls") or ())
                    if c != s]  # fmt: skip
        body = {
            "message": stored,
            "usage": asdict(reply.response.usage),
            "latency": reply.latency,
            "scrubbed": scrubbed,
        }
        self._write(run, r, self.store.put_reply, self._until(), run.index, body)
        return reply

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        self._checkpoint(run, self.of(run))
        return prompt

    def _checkpoint(self, run: RunState, r: _Run) -> None:
        """Write the state after the steps taken, with what is new since it was last written, if
        the store does not hold it yet."""
        if len(run.steps) > r.boundary:
            self._write(run, r, self.store.checkpoint, self._until(), len(run.steps), r.snapshots.added(run))
            r.boundary = len(run.steps)

    async def after_model(self, run: RunState, reply: Reply, decision: Decision) -> Decision:
        if not isinstance(decision, CallTools):
            return decision
        r = self.of(run)
        waiting = [p for c in decision.calls if (p := await self._pending(run, r, c)) is not None]
        if waiting:
            for record in waiting:
                self._write(run, r, self.store.put_call, self._until(), record)
            r.pending = [p.pending() for p in waiting]
            names = ", ".join(f"{p.name} ({p.call_id})" for p in waiting)
            raise StopRun("paused", f"waiting for a decision on {len(waiting)} call(s): {names}")
        return edited(decision, {c.id: r.calls.get((run.index, c.id)) for c in decision.calls})

    async def _pending(self, run: RunState, r: _Run, call: ToolCall) -> CallRecord | None:
        """The call's record as pending, when it needs a decision nobody has made."""
        tool = run.tools.get(call.name)
        if tool is None:
            return None
        record, arguments = r.calls.get((run.index, call.id)), self.redact_(call.arguments)
        if record is not None and record.why == "question":
            return record if record.phase == "pending" else None  # a question still unanswered
        doubt = in_doubt(record, tool)
        if doubt and self.in_doubt == "report":
            return None  # the call is reported in doubt when it would run
        if record is not None and not doubt and (record.phase == "finished" or stands(record, arguments)):
            return None
        if not (tool.needs_approval or doubt):
            return None
        try:
            parse_arguments(tool, call.arguments)
        except ToolFailure:
            return None  # the model reads what is wrong with the arguments; nobody is asked
        said = None if doubt else await ask(self.approve, call)
        if said is not None:
            verdict = Verdict(said, None, "approve callback", time.time(), digest=digest(arguments))
            decided = CallRecord(run.index, call.id, call.name, arguments, "decided", verdict, why="approval")
            r.calls[(run.index, call.id)] = decided
            self._write(run, r, self.store.put_call, self._until(), decided)
            return None
        return CallRecord(
            run.index, call.id, call.name, arguments, "pending", why="in_doubt" if doubt else "approval"
        )

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        r, key = self.of(run), (run.index, call.id)
        record = r.calls.get(key)
        if record is not None and record.phase == "finished" and record.outcome is not None:
            return _replayed(record.outcome)
        asked = None if record is None else record.asking
        base = CallRecord(run.index, call.id, call.name, self.redact_(call.arguments), "started",
                          None if record is None else record.verdict, None if asked is None else record.outcome,  # type: ignore[union-attr]
                          why=None if record is None else record.why)  # fmt: skip
        if record is not None and record.verdict is not None and record.verdict.kind == "respond":
            answer = record.verdict.result  # given in the tool's place: the tool does not run
            outcome = {"value": self.redact_(to_jsonable_python(answer, fallback=str))}
            self._write(
                run, r, self.store.put_call, self._until(), replace(base, phase="finished", outcome=outcome)
            )
            return answer
        try:
            self._admit(r, call, tool, record)
            self._write(run, r, self.store.put_call, self._until(), base)
            sent = None if asked is None else _answered(asked, base.verdict)
            payload = check_output(tool, await self._rounds(run, r, base, execute, sent))
        except ToolFailure as failure:
            outcome = {
                "failure": {"code": failure.code, "message": failure.message, "details": failure.details}
            }
            self._write(
                run, r, self.store.put_call, self._until(), replace(base, phase="finished", outcome=outcome)
            )
            raise
        outcome = {"value": self.redact_(to_jsonable_python(payload, fallback=str))}
        self._write(
            run, r, self.store.put_call, self._until(), replace(base, phase="finished", outcome=outcome)
        )
        return payload

    async def _rounds(self, run: RunState, r: _Run, base: CallRecord, execute: Execute,
                      sent: Answered | None) -> Any:  # fmt: skip
        """The call's value: ``execute()``, made again with the answers each time its server asks.
        A question is written to the store (with the state to echo) before it is answered; one
        left unanswered pauses the run."""
        while True:
            try:
                with answering(sent):
                    return await self._renewing(run, r, execute())
            except Asked as asked:
                asking = asked.asking
                if asking.round > MAX_ROUNDS:
                    raise Asked(asking, f" (it asked {MAX_ROUNDS} times already)") from None
                pending = replace(base, phase="pending", verdict=None, outcome={"asked": asking.to_dict()},
                                  why="question")  # fmt: skip
                self._write(run, r, self.store.put_call, self._until(), pending)
                answers = await ask_all(self.ask_user, asking)
                if answers is None:
                    r.pending.append(pending.pending())
                    raise StopRun("paused", f"waiting for the user's answers to {base.name} ({base.call_id}): "
                                            f"{asking.summary()}") from None  # fmt: skip
                verdict = Verdict(True, None, "ask_user callback", time.time(), answers)
                base = replace(pending, phase="started", verdict=verdict)
                self._write(run, r, self.store.put_call, self._until(), base)
                sent = _answered(asking, verdict)

    def _admit(self, r: _Run, call: ToolCall, tool: Tool, record: CallRecord | None) -> None:
        """Raise ``ToolFailure`` for a call that must not run now."""
        if record is not None and record.why == "question":
            if record.phase == "started" and not tool.repeatable:  # its last round may have been sent
                raise ToolFailure("ERR_TOOL_IN_DOUBT", IN_DOUBT)
            return
        if in_doubt(record, tool):
            raise ToolFailure("ERR_TOOL_IN_DOUBT", IN_DOUBT)
        verdict = None if record is None else record.verdict
        if verdict is not None and not verdict.approve:
            text = IN_DOUBT if record is not None and record.why == "in_doubt" else DENIED
            raise ToolFailure(
                "ERR_TOOL_IN_DOUBT" if text is IN_DOUBT else "ERR_TOOL_DENIED",
                text if not verdict.reason else f"{text} (the reason given: {verdict.reason})",
            )
        if call.id in r.scrubbed:
            raise ToolFailure("ERR_TOOL_NOT_STORED", NOT_STORED)
        if tool.needs_approval and not (verdict is not None and verdict.approve):
            raise ToolFailure("ERR_TOOL_DENIED", DENIED)  # a fallback tool, asked in the step itself

    async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
        r = self.of(run)  # the state is written when the next step begins (``before_model``)
        r.calls = {k: v for k, v in r.calls.items() if k[0] > step.index}
        r.reply = None
        asked = self._cancel_asked(run) if isinstance(outcome, Continue) else None
        return outcome if asked is None else Stop("cancelled", cancelled_text(*asked))

    def _cancel_asked(self, run: RunState) -> tuple[str | None, str | None] | None:
        """Who asked (in any process) to cancel the run and why, if someone did."""
        asked = getattr(self.store, "cancel_asked", None)
        return None if asked is None else asked(run.trace_id)  # type: ignore[no-any-return]

    def end(self, run: RunState, result: RunResult) -> RunResult:
        r = self.of(run)
        result = replace(result, pending=tuple(r.pending))
        if result.status in ("paused", "cancelled") and (asked := self._cancel_asked(run)) is not None:
            result = replace(result, status="cancelled", error=cancelled_text(*asked), pending=())
        if not r.lost:
            try:
                finish = self.finish or self.store.finish
                finish(run.trace_id, r.owner, result.status, self._document(run, r, result))
            except RunConflictError:
                r.lost = True
        return result

    def _document(self, run: RunState, r: _Run, result: RunResult) -> dict[str, Any]:
        """``result.to_dict()`` redacted, its messages and steps from the snapshots (each redacted
        once, as the run went), so that a run's end costs no more per step than its steps did."""
        if len(result.messages) != len(run.messages) or len(result.steps) != len(run.steps):
            return self.redact_(result.to_dict())  # type: ignore[no-any-return]
        state = r.snapshots.of(run)
        doc = self.redact_(replace(result, steps=(), messages=[]).to_dict())
        counts = {"usage": {**asdict(result.usage), "total_tokens": result.usage.total_tokens},
                  "model_calls": result.model_calls, "tool_calls": result.tool_calls, "cost": result.cost}  # fmt: skip
        return {**doc, **counts, "steps": state["steps"], "messages": state["messages"]}

    async def _renewing(self, run: RunState, r: _Run, work: Awaitable[Any]) -> Any:
        """``await work``, renewing the run's lease while it takes long."""
        loop = asyncio.get_running_loop()
        tasks: list[asyncio.Task[None]] = []

        def renew() -> None:
            tasks.append(loop.create_task(asyncio.to_thread(self._renew, run, r)))
            handle[0] = loop.call_later(self.lease / 3, renew)

        handle = [loop.call_later(self.lease / 3, renew)]
        try:
            return await work
        finally:
            handle[0].cancel()
            for task in tasks:
                task.cancel()

    def _renew(self, run: RunState, r: _Run) -> None:
        try:
            self.store.renew(run.trace_id, r.owner, self._until())
        except RunConflictError:
            r.lost = True


def _answered(asking: Asking, verdict: Verdict | None) -> Answered:
    """The next round of a call whose server asked: the recorded answers and state. A decision
    without answers (``minloop approve`` on such a call) accepts or declines every question."""
    if verdict is not None and verdict.answers is not None:
        answers = dict(verdict.answers)
    else:
        said = UserAnswer("accept" if verdict is None or verdict.approve else "decline")
        answers = {q.key: said for q in asking.questions}
    return Answered(asking.state, answers, asking.round + 1)


def in_doubt(record: CallRecord | None, tool: Tool) -> bool:
    """Whether a call may or may not have run before its process stopped, and may not simply be
    run again: it started and never finished (approved or not), or it waits for a person's
    decision on that (``in_doubt="pause"``), and its tool is not safe to repeat."""
    if record is None or tool.repeatable:
        return False
    return record.phase == "started" or (record.why == "in_doubt" and record.verdict is None)


def _replayed(outcome: dict[str, Any]) -> Any:
    """A recorded outcome, as the call gave it: its value, or its failure raised again."""
    failure = outcome.get("failure")
    if failure is not None:
        raise ToolFailure(failure["code"], failure["message"], **(failure.get("details") or {}))
    return outcome.get("value")
