"""A run's state at a step boundary as JSON, and a ``RunState`` rebuilt from it.

The state is what the steps carry from one to the next: the transcript, the steps recorded,
the seed's counters (invalid steps in a row, tool steps, the note for the next call, the calls
seen by the repetition guard) and the time spent so far. Everything the layers need is derived
from it again (a budget's spending from the steps, say).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from ..exceptions import RunCorruptError, TranscriptError
from ..execute import ExecContext
from ..log import run_logger
from ..loop import BaseLoop
from ..messages import check_transcript
from ..result import step_dict, step_of
from ..state import RunState

__all__ = ["Snapshots", "rebuild", "scrubber"]


class Snapshots:
    """Writes a run's state, redacting each message and step once (a transcript only grows):
    ``of`` the whole state, ``added`` only what is new since ``added`` was last asked, for a
    store that appends it."""

    def __init__(self, redact: Callable[[Any], Any] | None) -> None:
        self.redact = scrubber(redact)
        self.messages: list[Any] = []
        self.steps: list[Any] = []
        self.sent = (0, 0)  # messages and steps already handed out by ``added``

    def added(self, run: RunState) -> dict[str, Any]:
        """The state with only the messages and steps not handed out yet, and the number of the
        first of each (``first_message``, ``first_step``)."""
        state = self.of(run)
        (m, s), self.sent = self.sent, (len(self.messages), len(self.steps))
        return {
            **state,
            "messages": self.messages[m:],
            "steps": self.steps[s:],
            "first_message": m,
            "first_step": s,
        }

    def of(self, run: RunState) -> dict[str, Any]:
        self.messages.extend(self.redact(m) for m in run.messages[len(self.messages) :])
        self.steps.extend(self.redact(step_dict(s)) for s in run.steps[len(self.steps) :])
        seen = [[name, args, count] for (name, args), count in run.calls.seen.items()]
        return {
            "messages": self.messages,
            "steps": self.steps,
            "invalid_streak": run.invalid_streak,
            "tool_steps": run.tool_steps,
            "note": run.note,
            "seen": self.redact(seen),
            "elapsed": time.perf_counter() - run.started,
        }


def scrubber(redact: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    """``redact``, answering at once for a value whose JSON a ``Redactor`` finds clean (one pass
    over the text instead of a walk through every key and string)."""
    if redact is None:
        return lambda value: value
    clean = getattr(redact, "is_clean_json", None)
    if clean is None:
        return redact

    def scrub(value: Any) -> Any:
        return value if clean(json.dumps(value, ensure_ascii=False, default=str)) else redact(value)

    return scrub


def rebuild(loop: BaseLoop, run_id: str, state: dict[str, Any]) -> RunState:
    """The run as it was at its last step boundary, ready for ``loop.drive``."""
    try:
        messages = list(state["messages"])
        check_transcript(messages)
        steps = [step_of(d) for d in state["steps"]]
        seen = {(str(n), str(a)): int(c) for n, a, c in state.get("seen", [])}
        counters = int(state["invalid_streak"]), int(state["tool_steps"]), state.get("note")
        elapsed = float(state.get("elapsed", 0.0))
    except (KeyError, TypeError, ValueError, TranscriptError) as exc:
        raise RunCorruptError(
            run_id, f"the stored state cannot be read: {type(exc).__name__}: {exc}"
        ) from None
    c, log = loop.controls, run_logger(run_id)
    calls = ExecContext(
        loop.registry, c.fallback, run_id, log, seen, c.repeat_limit, c.max_result_chars, loop.redact
    )
    deadline = None if loop.time_budget is None else time.monotonic() + loop.time_budget
    run = RunState(messages, run_id, log, calls, loop.model, c, deadline, steps)
    run.invalid_streak, run.tool_steps, run.note = counters
    run.started = time.perf_counter() - elapsed
    return run
