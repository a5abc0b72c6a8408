"""What a run store keeps, and the protocol every store follows.

A stored run is one ``runs`` row (its status, who drives it and until when, the tools it was
started with, its state at the last step boundary, its result once it ended) and the rows of
the step in progress: the model's reply, once it came, and each tool call with where it got to
(``pending`` a decision, ``decided``, ``started``, ``finished`` with its outcome). Resuming is
running the loop again from the last step boundary with the recorded reply and outcomes. A call
whose server asked a question keeps the question and the server's state in its outcome
(``{"asked": ...}``) from the moment the answer came, so that a resume sends only the next round.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from ..questions import Asking, Question, UserAnswer

__all__ = [
    "CallRecord",
    "EventBatch",
    "PendingCall",
    "Phase",
    "RunRow",
    "RunStore",
    "SharedRunStore",
    "StoredRun",
    "Verdict",
    "digest",
    "ended_steps",
]

SCHEMA_VERSION = 2  # 2: the transcript and steps are appended as entries
Phase: TypeAlias = Literal["pending", "decided", "started", "finished"]
ENDED = frozenset({"success", "max_steps_exceeded", "budget_exceeded", "output_invalid", "model_error",
                   "timeout", "cancelled", "context_overflow"})  # fmt: skip


def ended_steps(result: Mapping[str, Any]) -> int:
    """The steps a run's end document (``RunResult.to_dict()``) records: a run's row counts them
    when it ends, the last step included (no step begins after it to write its state)."""
    steps = result.get("steps")
    return len(steps) if isinstance(steps, list) else 0


def digest(arguments: str) -> str:
    """A short digest of a call's arguments (a JSON text), the same in any key order or spacing:
    a decision names the arguments it was made on with it."""
    try:
        text = json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        text = arguments
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Verdict:
    """A decision on a call that waits for one: run it (``approve``); do not (``approve=False``,
    with a ``reason`` the model reads); run it with other ``arguments`` (an edit,
    ``Verdict.edit``); or give ``result`` in the tool's place (``Verdict.respond``: the tool
    does not run, the model reads the result as the call's). For a call whose server asked
    questions, ``answers`` by question key. ``digest`` names the arguments the decision was made
    on (``PendingCall.digest``; filled in when recorded); ``by`` whom and ``at`` when (seconds
    since the epoch)."""

    approve: bool
    reason: str | None = None
    by: str | None = None
    at: float | None = None
    answers: Mapping[str, UserAnswer] | None = None
    arguments: dict[str, Any] | None = None
    result: Any = None
    digest: str | None = None

    @classmethod
    def edit(cls, arguments: dict[str, Any], reason: str | None = None, *, by: str | None = None,
             digest: str | None = None) -> Verdict:  # fmt: skip
        """Run the call with ``arguments`` instead of the model's."""
        return cls(True, reason, by, arguments=arguments, digest=digest)

    @classmethod
    def respond(cls, result: Any, *, by: str | None = None, digest: str | None = None) -> Verdict:
        """Do not run the call; the model reads ``result`` as what it returned."""
        return cls(False, None, by, result=result, digest=digest)

    @property
    def kind(self) -> Literal["approve", "edit", "deny", "respond", "answer"]:
        if self.answers is not None:
            return "answer"
        if self.result is not None:
            return "respond"
        if not self.approve:
            return "deny"
        return "approve" if self.arguments is None else "edit"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"approve": self.approve, "reason": self.reason, "by": self.by, "at": self.at}
        if self.answers is not None:
            out["answers"] = {k: a.to_dict() for k, a in self.answers.items()}
        extra = {"arguments": self.arguments, "result": self.result, "digest": self.digest}
        return {**out, **{k: v for k, v in extra.items() if v is not None}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        answers = data.get("answers")
        return cls(data["approve"], data.get("reason"), data.get("by"), data.get("at"),
                   None if answers is None else {k: UserAnswer.of(a) for k, a in answers.items()},
                   data.get("arguments"), data.get("result"), data.get("digest"))  # fmt: skip


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call waiting for a decision: ``why`` is the kind of wait, ``"approval"`` (its tool
    needs one), ``"in_doubt"`` (it started before a crash and may or may not have run) or
    ``"question"`` (its server asked the user the ``questions``; the decision is their answers).
    ``digest`` names its arguments: a decision made on them may give it."""

    call_id: str
    name: str
    arguments: str
    step: int
    why: Literal["approval", "in_doubt", "question"] = "approval"
    questions: tuple[Question, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """As a listing shows it: a page's host, never its whole address."""
        out = {"call_id": self.call_id, "name": self.name, "arguments": self.arguments, "step": self.step,
               "why": self.why}  # fmt: skip
        if self.questions:
            out["questions"] = [q.shown() for q in self.questions]
        return out

    @property
    def digest(self) -> str:
        return digest(self.arguments)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """Where one call of the step in progress got to."""

    step: int
    call_id: str
    name: str
    arguments: str
    phase: Phase
    verdict: Verdict | None = None
    outcome: dict[str, Any] | None = (
        None  # {"value": ...}, {"failure": {"code", "message", "details"}}, {"asked": ...}
    )
    why: str | None = None

    @property
    def asking(self) -> Asking | None:
        """What the call's server asked last, when it asked."""
        asked = (self.outcome or {}).get("asked")
        return None if asked is None else Asking.from_dict(asked)

    def pending(self) -> PendingCall:
        asking = self.asking
        questions = () if asking is None else asking.questions
        why: Any = self.why or "approval"
        return PendingCall(self.call_id, self.name, self.arguments, self.step, why, questions)


@dataclass(frozen=True, slots=True)
class RunRow:
    """A run as ``minloop runs`` lists it."""

    run_id: str
    status: str
    created: float
    updated: float
    owner: str | None = None
    lease_until: float | None = None
    steps: int = 0
    prompt: str = ""
    pending: int = 0
    tag: str | None = None


@dataclass(frozen=True, slots=True)
class StoredRun:
    """Everything a resume needs: the row, the tools, the state at the last step boundary, the
    reply of the step in progress (if it came) and its calls."""

    row: RunRow
    schema: int
    tools: Mapping[str, str]
    state: dict[str, Any]
    reply: dict[str, Any] | None = None
    calls: Sequence[CallRecord] = field(default_factory=tuple)
    result: dict[str, Any] | None = None
    version: int = 0  # grows with every change: a resume takes the run only at the version it read

    @property
    def pending(self) -> list[PendingCall]:
        """The calls waiting for a decision (none once the run has ended, cancelled or not)."""
        if self.row.status in ENDED:
            return []
        return [c.pending() for c in self.calls if c.phase == "pending"]


@dataclass(frozen=True, slots=True)
class EventBatch:
    """Events of one run for the store (each a JSON document), numbered from ``first``, written
    by the ``owner`` that drives the run (whose lease then lasts until ``lease_until``). ``end``:
    the run's status and result, written with them when the run ended or paused."""

    run_id: str
    owner: str
    lease_until: float
    first: int
    events: Sequence[str]
    end: tuple[str, dict[str, Any]] | None = None


class RunStore(Protocol):
    """Where runs live between processes. Every write names the ``owner`` that drives the run;
    a write by anyone else raises ``RunConflictError`` and changes nothing."""

    def create(self, run_id: str, owner: str, lease_until: float, tools: Mapping[str, str],
               state: dict[str, Any], prompt: str, tag: str | None = None) -> bool: ...  # fmt: skip

    def load(self, run_id: str) -> StoredRun: ...

    def claim(self, run_id: str, owner: str, lease_until: float, seen: int,
              verdicts: Mapping[str, Verdict] = ...) -> None: ...  # fmt: skip

    def renew(self, run_id: str, owner: str, lease_until: float) -> None: ...

    def put_reply(
        self, run_id: str, owner: str, lease_until: float, step: int, reply: dict[str, Any]
    ) -> None: ...

    def put_call(self, run_id: str, owner: str, lease_until: float, record: CallRecord) -> None: ...

    def checkpoint(
        self, run_id: str, owner: str, lease_until: float, step: int, state: dict[str, Any]
    ) -> None: ...

    def finish(self, run_id: str, owner: str, status: str, result: dict[str, Any]) -> None: ...

    def decide(self, run_id: str, verdicts: Mapping[str, Verdict]) -> None: ...

    def runs(self, limit: int = 100, tag: str | None = None) -> list[RunRow]: ...

    def close(self) -> None: ...


class SharedRunStore(RunStore, Protocol):
    """What workers serving the same runs need of a store beyond ``RunStore``: the events of
    runs, requests to cancel them, and the runs nobody drives any more."""

    def row(self, run_id: str) -> RunRow: ...

    def write_events(self, batches: Sequence[EventBatch], kept_for: float) -> list[str]: ...

    def read_events(self, run_id: str, after: int) -> tuple[str, list[tuple[int, dict[str, Any]]]]: ...

    def last_event(self, run_id: str) -> int: ...

    def forget_events(self, now: float, kept_for: float = ...) -> int: ...

    def request_cancel(self, run_id: str, by: str | None = ..., reason: str | None = ...) -> None: ...

    def cancel_asked(self, run_id: str) -> tuple[str | None, str | None] | None: ...

    def cancels(self, owner: str) -> list[str]: ...

    def cancel_paused(self, run_id: str, seen: int, result: dict[str, Any], event: dict[str, Any],
                      kept_for: float) -> None: ...  # fmt: skip

    def release(self, owner: str) -> None: ...

    def running(self, limit: int = 100) -> list[RunRow]: ...
