"""Resuming a stored run: ``resume(loop, run_id, decisions)``.

The run is read from the loop's store and checked before anything changes: it must exist, not
have ended, be held by no live process, have been started with the tools this loop has (same
names, same schemas), and every decision must be for a call that waits for one. Then the run is
taken (exactly one of two processes resuming it at once gets it), the decisions are recorded,
and the loop drives it on from its last step boundary.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..driver import LoopRun
from ..exceptions import MinloopError, RunConflictError, RunMismatchError
from ..layer import Layer
from ..layers.tracing import mark_resumed
from ..loop import BaseLoop
from ..questions import Asking, UserAnswer, answers_for
from ..tools import Tool
from .checkpoint import rebuild
from .durable import Durable
from .records import ENDED, CallRecord, PendingCall, StoredRun, Verdict

__all__ = ["Decisions", "fingerprint", "resume", "verdicts_of"]

Decisions = Mapping[str, "bool | Verdict | UserAnswer | Mapping[str, UserAnswer]"]
"""Decisions by call id: ``True`` (run it), ``False`` (do not), or a ``Verdict`` with a reason.
For a call whose server asked questions: a ``UserAnswer`` for every question, or answers by
question key (``True`` accepts, ``False`` declines them all)."""


def fingerprint(tools: Mapping[str, Tool]) -> dict[str, str]:
    """Each tool's name and a digest of the schema the model sees, marked ``~`` for a tool whose
    source may change it during a run (an MCP server's)."""
    digest = lambda t: hashlib.sha256(json.dumps(t.spec(), sort_keys=True).encode()).hexdigest()[:16]
    return {name: "~" * (t.source is not None) + digest(t) for name, t in tools.items()}


def durable_of(loop: BaseLoop) -> Durable:
    found = [layer for layer in loop.stack.layers if isinstance(layer, Durable)]
    if not found:
        raise MinloopError("this loop has no run store: give it one, Loop(..., store=SQLiteRunStore())")
    return found[0]


def verdicts_of(decisions: Decisions | None, by: str | None, pending: Sequence[PendingCall] = (),
                run_id: str = "") -> dict[str, Verdict]:  # fmt: skip
    """The decisions as verdicts; those on a call whose server asked (one of ``pending``) carry
    the answers, checked against the questions (``RunConflictError`` says what does not fit)."""
    now = time.time()
    asked = {p.call_id: p for p in pending if p.why == "question"}
    out: dict[str, Verdict] = {}
    for call_id, d in (decisions or {}).items():
        if call_id in asked:
            out[call_id] = _answered(
                run_id, asked[call_id], d, by or (d.by if isinstance(d, Verdict) else None), now
            )
        elif isinstance(d, Verdict):
            out[call_id] = Verdict(d.approve, d.reason, d.by or by, d.at or now)
        elif isinstance(d, bool):
            out[call_id] = Verdict(d, None, by, now)
        else:
            raise MinloopError(
                f"decision for {call_id}: give True, False or a Verdict, not {type(d).__name__}"
            )
    return out


def _answered(run_id: str, pending: PendingCall, given: Any, by: str | None, now: float) -> Verdict:
    if isinstance(given, Verdict):
        given = given.answers if given.answers is not None else given.approve
    try:
        answers = answers_for(Asking(pending.questions, None), given)
    except ValueError as exc:
        raise RunConflictError(run_id, f"call {pending.call_id} ({pending.name}): {exc}") from None
    return Verdict(True, None, by, now, answers)


def check(loop: BaseLoop, run_id: str, stored: StoredRun, verdicts: Mapping[str, Verdict]) -> None:
    """Everything that would stop the resume, before anything changes."""
    status = stored.row.status
    if status == "cancelled":
        said = (stored.result or {}).get("error") or "the run was cancelled"
        raise RunConflictError(run_id, f"{said}; a cancelled run cannot be resumed")
    if status in ENDED:
        raise RunConflictError(run_id, f"the run has ended ({status}); there is nothing to resume")
    ours = fingerprint(loop.registry)
    # a server's tools may come and go between two steps: only those of the calls in flight must stay
    in_flight = {p.name for p in stored.pending} | {c.name for c in stored.calls}
    kept = [n for n in stored.tools if not stored.tools[n].startswith("~") or n in in_flight]
    missing = sorted(n for n in kept if n not in ours)
    changed = sorted(n for n in kept if n in ours and ours[n].lstrip("~") != stored.tools[n].lstrip("~"))
    if missing or changed:
        parts = [
            f"missing {', '.join(missing)}" if missing else "",
            f"changed schema: {', '.join(changed)}" if changed else "",
        ]
        raise RunMismatchError(
            run_id, "the resuming loop lacks the run's tools (" + "; ".join(filter(None, parts)) + ")"
        )
    waiting = {p.call_id for p in stored.pending}
    unknown = sorted(set(verdicts) - waiting)
    if unknown:
        raise RunConflictError(run_id, f"no call {', '.join(unknown)} is waiting for a decision "
                                       f"(waiting: {', '.join(sorted(waiting)) or 'none'})")  # fmt: skip


def resume(loop: BaseLoop, run_id: str, decisions: Decisions | None = None, *, by: str | None = None,
           layers: Sequence[Layer] = ()) -> LoopRun:  # fmt: skip
    """The stored run ``run_id``, taken by this process and ready to drive from where it was."""
    durable = durable_of(loop)
    stored = durable.store.load(run_id)
    verdicts = verdicts_of(decisions, by, stored.pending, run_id)
    check(loop, run_id, stored, verdicts)
    state = rebuild(loop, run_id, stored.state)
    r = durable.of(state)
    durable.store.claim(run_id, r.owner, time.time() + durable.lease, stored.version, verdicts)
    r.resumed = True
    r.reply = stored.reply
    r.scrubbed = set((stored.reply or {}).get("scrubbed") or ())
    for c in stored.calls:
        v = verdicts.get(c.call_id)
        r.calls[(c.step, c.call_id)] = c if v is None else _decided(c, v)
    r.snapshots.of(state)  # what is stored is already redacted: the next writes add to it
    mark_resumed(state, _resumed(stored, verdicts))
    return loop.drive(state, layers)


def _decided(record: CallRecord, verdict: Verdict) -> CallRecord:
    return replace(record, phase="decided", verdict=verdict)


def _resumed(stored: StoredRun, verdicts: Mapping[str, Verdict]) -> dict[str, Any]:
    names = {c.call_id: c.name for c in stored.calls}
    recorded = {c.call_id: c.verdict for c in stored.calls if c.phase == "decided" and c.verdict is not None}
    verdicts = {**recorded, **verdicts}  # decided beforehand (``minloop approve``) or now
    return {
        "from_step": int(stored.row.steps) + 1,
        "status_before": stored.row.status,
        "decisions": [{"call_id": k, "tool": names.get(k), **v.to_dict()} for k, v in verdicts.items()],
    }
