"""Resuming a stored run: ``resume(loop, run_id, decisions)``.

The run is read from the loop's store and checked before anything changes: it must exist, not
have ended, be held by no live process, have been started with the tools this loop has (same
names, same parameters), and every decision must be one ``decisions.settle`` accepts: for a call
that waits for one, on that call's arguments, with edited arguments that fit the tool. Then the
run is taken (exactly one of two processes resuming it at once gets it), the decisions are
recorded, and the loop drives it on from its last step boundary.
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
from ..execute import ToolFailure, checked_arguments
from ..layer import Layer
from ..layers.tracing import mark_resumed
from ..loop import BaseLoop
from ..tools import Tool
from .checkpoint import rebuild
from .decisions import Decisions, settle, verdicts_of
from .durable import Durable
from .records import ENDED, CallRecord, StoredRun, Verdict, digest

__all__ = ["Decisions", "fingerprint", "resume", "verdicts_of"]


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def fingerprint(tools: Mapping[str, Tool]) -> dict[str, Any]:
    """Each tool's name, its parameters' schema and a digest of it: what a resume compares (a
    changed description alone changes nothing) and what a decision's edit is checked against;
    ``changing`` marks a tool whose source may change it during a run (an MCP server's)."""
    out: dict[str, Any] = {}
    for name, t in tools.items():
        out[name] = {"digest": _sha(t.parameters()), "parameters": t.parameters()}
        if t.source is not None:
            out[name]["changing"] = True
    return out


def _changing(stored: Any) -> bool:
    return stored.startswith("~") if isinstance(stored, str) else bool(stored.get("changing"))


def _same(stored: Any, tool: Tool) -> bool:
    if isinstance(stored, str):  # written by an earlier minloop: a digest of the whole spec
        return stored.lstrip("~") in (_sha(tool.spec()), _sha(tool.parameters()))
    return isinstance(stored, Mapping) and stored.get("digest") == _sha(tool.parameters())


def durable_of(loop: BaseLoop) -> Durable:
    found = [layer for layer in loop.stack.layers if isinstance(layer, Durable)]
    if not found:
        raise MinloopError("this loop has no run store: give it one, Loop(..., store=SQLiteRunStore())")
    return found[0]


def check(
    loop: BaseLoop, run_id: str, stored: StoredRun, verdicts: Mapping[str, Verdict]
) -> dict[str, Verdict]:
    """Everything that would stop the resume, before anything changes; the verdicts to record."""
    status = stored.row.status
    if status == "cancelled":
        said = (stored.result or {}).get("error") or "the run was cancelled"
        raise RunConflictError(run_id, f"{said}; a cancelled run cannot be resumed")
    if status in ENDED:
        raise RunConflictError(run_id, f"the run has ended ({status}); there is nothing to resume")
    ours = loop.registry
    # a server's tools may come and go between two steps: only those of the calls in flight must stay
    in_flight = {p.name for p in stored.pending} | {c.name for c in stored.calls}
    kept = [n for n in stored.tools if not _changing(stored.tools[n]) or n in in_flight]
    missing = sorted(n for n in kept if n not in ours)
    changed = sorted(n for n in kept if n in ours and not _same(stored.tools[n], ours[n]))
    if missing or changed:
        parts = [
            f"missing {', '.join(missing)}" if missing else "",
            f"changed parameters: {', '.join(changed)}" if changed else "",
        ]
        raise RunMismatchError(
            run_id, "the resuming loop lacks the run's tools (" + "; ".join(filter(None, parts)) + ")"
        )
    _check_decided(run_id, stored)
    return settle(run_id, stored.calls, verdicts, lambda name, args: _misfit(ours.get(name), args))


def _misfit(tool: Tool | None, arguments: dict[str, Any]) -> str | None:
    if tool is None:
        return "the loop has no such tool"
    try:
        checked_arguments(tool, arguments)
    except ToolFailure as failure:
        return failure.message
    return None


def _check_decided(run_id: str, stored: StoredRun) -> None:
    """A decision recorded beforehand must be on the arguments the stored reply would run."""
    asked = {c.get("id"): (c.get("function") or {}).get("arguments", "{}")
             for c in ((stored.reply or {}).get("message") or {}).get("tool_calls") or ()}  # fmt: skip
    for c in stored.calls:
        v, arguments = c.verdict, asked.get(c.call_id)
        if (
            c.phase == "decided"
            and v
            and v.digest
            and arguments is not None
            and digest(arguments) != v.digest
        ):
            raise RunMismatchError(
                run_id, f"call {c.call_id} would run other arguments ({arguments}) than were decided on "
                f"(digest {v.digest}); nothing was run",
            )  # fmt: skip


def resume(loop: BaseLoop, run_id: str, decisions: Decisions | None = None, *, by: str | None = None,
           layers: Sequence[Layer] = ()) -> LoopRun:  # fmt: skip
    """The stored run ``run_id``, taken by this process and ready to drive from where it was."""
    durable = durable_of(loop)
    stored = durable.store.load(run_id)
    verdicts = check(loop, run_id, stored, verdicts_of(decisions, by, stored.pending, run_id))
    state = rebuild(loop, run_id, stored.state)
    r = durable.of(state)
    durable.store.claim(run_id, r.owner, time.time() + durable.lease, stored.version, verdicts)
    r.resumed = True
    r.boundary = len(state.steps)
    r.reply = stored.reply
    r.scrubbed = set((stored.reply or {}).get("scrubbed") or ())
    for c in stored.calls:
        v = verdicts.get(c.call_id) if c.phase == "pending" else None
        r.calls[(c.step, c.call_id)] = c if v is None else _decided(c, v)
    r.snapshots.added(state)  # what is stored is already redacted: the next writes add to it
    mark_resumed(state, _resumed(stored, verdicts))
    return loop.drive(state, layers)


def _decided(record: CallRecord, verdict: Verdict) -> CallRecord:
    return replace(record, phase="decided", verdict=verdict)


def _resumed(stored: StoredRun, verdicts: Mapping[str, Verdict]) -> dict[str, Any]:
    now = [c for c in stored.calls if c.step > stored.row.steps]
    calls = {c.call_id: c for c in now}
    recorded = {c.call_id: c.verdict for c in now if c.phase == "decided" and c.verdict is not None}
    verdicts = {**recorded, **verdicts}  # decided beforehand (``minloop approve``) or now
    decisions = []
    for k, v in verdicts.items():
        c = calls.get(k)
        decisions.append({"call_id": k, "tool": c and c.name, "asked": c and c.arguments, **v.to_dict()})
    return {
        "from_step": int(stored.row.steps) + 1,
        "status_before": stored.row.status,
        "decisions": decisions,
    }
