"""Decisions on the calls a stopped run waits for: what a decision can be, and what is refused.

A decision (``Verdict``) approves a call, denies it (with a reason the model reads), edits its
arguments (the edited call runs) or answers in the tool's place (the tool does not run). It is
made on the arguments a person saw: ``settle`` refuses one that names other arguments (by their
digest), one for a call that is not waiting (saying how, by whom and when a call already decided
was decided), and an edit that does not fit the tool, before anything is written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..decision import CallTools
from ..exceptions import DecisionError, MinloopError, RunConflictError
from ..questions import Asking, UserAnswer, answers_for
from .records import CallRecord, PendingCall, Verdict, digest

__all__ = ["Decisions", "Fits", "edited", "said", "settle", "stands", "verdicts_of"]

Decisions = Mapping[str, "bool | Verdict | UserAnswer | Mapping[str, UserAnswer]"]
"""Decisions by call id: ``True`` (run it), ``False`` (do not), or a ``Verdict`` (with a reason,
other arguments, or a result given in the tool's place). For a call whose server asked
questions: a ``UserAnswer`` for every question, or answers by question key (``True`` accepts,
``False`` declines them all)."""

Fits = Callable[[str, dict[str, Any]], "str | None"]
"""``fits(tool_name, arguments)``: what is wrong with edited arguments for the tool, or ``None``."""


def verdicts_of(decisions: Decisions | None, by: str | None, pending: Sequence[PendingCall] = (),
                run_id: str = "") -> dict[str, Verdict]:  # fmt: skip
    """Each decision as a ``Verdict``, with who decided and when filled in; those on a call whose
    server asked (one of ``pending``) carry the answers, checked against the questions
    (``RunConflictError`` says what does not fit)."""
    now = time.time()
    asked = {p.call_id: p for p in pending if p.why == "question"}
    out: dict[str, Verdict] = {}
    for call_id, d in (decisions or {}).items():
        if call_id in asked:
            who = by or (d.by if isinstance(d, Verdict) else None)
            out[call_id] = _answered(run_id, asked[call_id], d, who, now)
            continue
        if isinstance(d, bool):
            d = Verdict(d)
        if not isinstance(d, Verdict):
            raise MinloopError(
                f"decision for {call_id}: give True, False or a Verdict, not {type(d).__name__}"
            )
        _check_shape(call_id, d)
        out[call_id] = replace(d, by=d.by or by, at=d.at or now)
    return out


def _answered(run_id: str, pending: PendingCall, given: Any, by: str | None, now: float) -> Verdict:
    if isinstance(given, Verdict):
        given = given.answers if given.answers is not None else given.approve
    try:
        answers = answers_for(Asking(pending.questions, None), given)
    except ValueError as exc:
        raise RunConflictError(run_id, f"call {pending.call_id} ({pending.name}): {exc}") from None
    return Verdict(True, None, by, now, answers)


def _check_shape(call_id: str, v: Verdict) -> None:
    if v.arguments is not None and not isinstance(v.arguments, dict):
        raise MinloopError(f"decision for {call_id}: edited arguments must be a JSON object (a dict), "
                           f"not {type(v.arguments).__name__}")  # fmt: skip
    if v.arguments is not None and (v.result is not None or not v.approve):
        raise MinloopError(f"decision for {call_id}: an edit runs the call, so it cannot also deny it "
                           "or answer in its place")  # fmt: skip


def settle(run_id: str, calls: Sequence[CallRecord], verdicts: Mapping[str, Verdict],
           fits: Fits | None = None) -> dict[str, Verdict]:  # fmt: skip
    """``verdicts`` as they are recorded (each with the digest of its call's arguments), if each
    is for a call that waits for a decision, names that call's arguments, and edits them into
    arguments that ``fits`` the tool; ``DecisionError`` otherwise."""
    waiting = {c.call_id: c for c in calls if c.phase == "pending"}
    out: dict[str, Verdict] = {}
    for call_id, verdict in verdicts.items():
        record = waiting.get(call_id)
        if record is None:
            raise DecisionError(run_id, _not_waiting(call_id, calls, sorted(waiting)))
        have = digest(record.arguments)
        if verdict.digest is not None and verdict.digest != have:
            raise DecisionError(
                run_id,
                f"the decision on {call_id} was made on other arguments (digest {verdict.digest}) than the "
                f"call's: {record.name}({record.arguments}), digest {have}; nothing was recorded",
            )
        problem = None if verdict.arguments is None or fits is None else fits(record.name, verdict.arguments)
        if problem is not None:
            edited = json.dumps(verdict.arguments, ensure_ascii=False)
            raise DecisionError(run_id, f"the edited arguments of {call_id} do not fit {record.name}: "
                                        f"{problem} (given: {edited}); nothing was recorded")  # fmt: skip
        out[call_id] = replace(verdict, digest=have)
    return out


def _not_waiting(call_id: str, calls: Sequence[CallRecord], waiting: list[str]) -> str:
    decided = [c for c in calls if c.call_id == call_id and c.verdict is not None]
    if decided:
        return f"call {call_id} was already decided: {said(decided[-1].verdict)}; a decision stands once made"  # type: ignore[arg-type]
    return f"no call {call_id} is waiting for a decision (waiting: {', '.join(waiting) or 'none'})"


def _actions(verdict: Verdict) -> str:
    """``when: accept, seats: decline``: what was said to each of a server's questions."""
    return ", ".join(f"{k}: {a.action}" for k, a in (verdict.answers or {}).items())


def said(verdict: Verdict) -> str:
    """How a decision reads: ``"approved by ada at 2026-12-05 15:40:12 UTC"``, and the like."""
    how = {
        "approve": "approved",
        "deny": "denied",
        "edit": f"approved with the arguments {json.dumps(verdict.arguments, ensure_ascii=False)}",
        "respond": "answered in the tool's place",
        "answer": f"answered ({_actions(verdict)})",
    }[verdict.kind]
    who = f" by {verdict.by}" if verdict.by else ""
    when = "" if verdict.at is None else time.strftime(" at %Y-%m-%d %H:%M:%S UTC", time.gmtime(verdict.at))
    why = f" (reason: {verdict.reason})" if verdict.reason else ""
    return f"{how}{who}{when}{why}"


def stands(record: CallRecord, arguments: str) -> bool:
    """Whether the call's recorded decision was made on these arguments."""
    v = record.verdict
    return v is not None and (v.digest is None or v.digest == digest(arguments))


def edited(decision: CallTools, records: dict[str, CallRecord | None]) -> CallTools:
    """The step's calls with the arguments a person's decision gave in place of the model's."""
    edits = {k: json.dumps(r.verdict.arguments, ensure_ascii=False) for k, r in records.items()
             if r is not None and r.verdict is not None and r.verdict.kind == "edit"}  # fmt: skip
    if not edits:
        return decision
    wire = [
        {**c, "function": {**c["function"], "arguments": edits[c["id"]]}} if c.get("id") in edits else c
        for c in decision.message.get("tool_calls") or ()
    ]
    message = {**decision.message, "tool_calls": wire} if wire else decision.message
    calls = tuple(replace(c, arguments=edits[c.id]) if c.id in edits else c for c in decision.calls)
    return replace(decision, message=message, calls=calls)
