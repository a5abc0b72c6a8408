"""Context management under a token budget: ``Loop(..., context=ContextPolicy())``.

A context policy is a pure function from the transcript (plus the window) to the list actually
sent; the stored transcript stays complete. ``ContextPolicy`` (the default shape):

* below ``summarize_at`` of the window (after reserving ``reserve`` tokens for the reply),
  everything is sent;
* above it, **summary mode**: the pinned part (leading system messages and the first user
  message) and the last ``keep_steps`` steps stay whole, and older steps become one
  compact message ("step 1: get_weather({"city": "Beijing"}) -> {...}");
* if still over, the oldest kept tool results are shrunk (valid JSON, marked), oldest first;
  then kept steps join the summary (oldest first, the latest step always stays), then the
  summary drops its oldest lines;
* if even the pinned part with the latest step does not fit, ``ContextOverflowError`` ends the
  run with status ``context_overflow`` instead of a provider error.

A step is an assistant message with its tool results, so no policy here ever separates a call
from its result. ``WindowPolicy`` is the plain sliding window (``deque(maxlen=...)``),
pair-safe, for comparison. Token counts come from the model when it can count exactly
(``count_tokens``, the embedded model) and otherwise from ``estimate_tokens`` calibrated on the
provider's reported ``usage`` (``minloop.layers.tokens``). ``ContextFitting`` is the layer
that applies a policy to every model call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from ..exceptions import ContextOverflowError, MinloopError
from ..layer import CallModel, Layer
from ..messages import Message
from ..models.base import ModelRequest
from ..state import Prompt, Reply, RunState
from .tokens import Counter, estimate_tokens, tokens_of

__all__ = [
    "ContextFitting",
    "ContextPolicy",
    "ContextReport",
    "Counter",
    "Policy",
    "WindowPolicy",
    "estimate_tokens",
]
SHRUNK = "[shrunk to fit the context window]"
NO_WINDOW = (
    "ContextPolicy needs a token window: give ContextPolicy(window=...), or a model that states its "
    "window (OpenAIModel(..., context_window=...); the embedded model knows its own)"
)


@dataclass(frozen=True, slots=True)
class ContextReport:
    """What the policy did for one model call."""

    mode: str  # "full" | "summary" | "window"
    window: int
    tokens_before: int
    tokens_after: int
    steps_summarised: int = 0
    results_shrunk: int = 0


class Policy(Protocol):
    @property
    def window(self) -> int | None: ...

    def apply(
        self, messages: Sequence[Message], count: Counter, window: int | None
    ) -> tuple[list[Message], ContextReport]: ...


@dataclass(frozen=True)
class ContextPolicy:
    window: int | None = None  # None: the model's own window (``context_window``)
    keep_steps: int = 2
    summarize_at: float = 0.75  # the design document switches at 12000 of 16384
    reserve: int = 512  # tokens left for the reply
    shrink_chars: int = 240
    summary_chars: int = 160
    summary_role: str = "system"
    task_summary: bool = False

    def apply(
        self, messages: Sequence[Message], count: Counter, window: int | None
    ) -> tuple[list[Message], ContextReport]:
        if not window:
            raise MinloopError(NO_WINDOW)
        limit = window - self.reserve
        before = count(messages)
        head = [task_summary(messages)] if self.task_summary else []
        pinned, rounds = split_steps(messages)
        if before <= self.summarize_at * limit:
            sent = pinned + head + [m for r in rounds for m in r]
            return sent, ContextReport("full", window, before, count(sent) if head else before)
        if count(pinned + head) > limit:
            raise ContextOverflowError(
                f"the pinned messages (system + first user message) need {count(pinned + head)} tokens "
                f"but the window leaves {limit}"
            )
        split = max(len(rounds) - self.keep_steps, 0)
        old, kept = list(rounds[:split]), [list(r) for r in rounds[split:]]
        shrunk = omitted = 0

        def build() -> list[Message]:
            summary = (
                summarise(old[omitted:], self.summary_chars, self.summary_role, omitted) if old else None
            )
            return pinned + head + ([summary] if summary else []) + [m for r in kept for m in r]

        sent = build()
        while count(sent) > limit:  # shrink results, fold kept steps into the summary, drop its oldest lines
            if _shrink_oldest(kept, self.shrink_chars):
                shrunk += 1
            elif len(kept) > 1:
                old.append(kept.pop(0))
            elif omitted < len(old):
                omitted += 1
            else:
                break
            sent = build()
        after = count(sent)
        if after > limit:
            raise ContextOverflowError(
                f"the pinned messages and the latest step need {after} tokens even with every earlier "
                f"step summarised away and results shrunk; the window leaves {limit}"
            )
        return sent, ContextReport("summary", window, before, after, len(old), shrunk)


@dataclass(frozen=True)
class WindowPolicy:
    """A sliding window over whole steps, like ``deque(maxlen=...)``: the pinned messages plus
    the last steps that fit in ``max_messages``. Needs no token window."""

    window: int | None = None
    max_messages: int = 6

    def apply(
        self, messages: Sequence[Message], count: Counter, window: int | None
    ) -> tuple[list[Message], ContextReport]:
        before = count(messages)
        pinned, rounds = split_steps(messages)
        kept: list[list[Message]] = []
        for r in reversed(rounds):  # whole steps only: never a call without its result
            if sum(map(len, kept)) + len(r) > self.max_messages and kept:
                break
            kept.insert(0, list(r))
        sent = pinned + [m for r in kept for m in r]
        return sent, ContextReport("window", window or 0, before, count(sent), len(rounds) - len(kept))


class ContextFitting(Layer):
    """Sends what ``policy`` keeps of the transcript under ``window`` tokens (the stored
    transcript stays whole); the report goes to ``Step.context``."""

    def __init__(self, policy: Policy, window: int | None) -> None:
        self.policy = policy
        self.window = window

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        sent, report = self.policy.apply(prompt.messages, tokens_of(run, prompt.tools).count, self.window)
        return replace(prompt, messages=sent, context=report)

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        reply = await call(request)
        tokens_of(run, request.tools).calibrate(request.messages, reply.response.usage.prompt_tokens)
        return reply


def split_steps(messages: Sequence[Message]) -> tuple[list[Message], list[list[Message]]]:
    """(pinned, rounds): leading system messages and the first user message; then each
    assistant message with its results (any other message is a step of its own)."""
    msgs = list(messages)
    first_user = next((i for i, m in enumerate(msgs) if m.get("role") == "user"), len(msgs) - 1)
    rounds: list[list[Message]] = []
    for m in msgs[first_user + 1 :]:
        if m.get("role") in ("tool", "function") and rounds:
            rounds[-1].append(m)
        else:
            rounds.append([m])
    return msgs[: first_user + 1], rounds


def task_summary(messages: Sequence[Message], chars: int = 120) -> Message:
    """A deterministic "task; information gathered; still to do" message."""
    pinned, rounds = split_steps(messages)
    task = next((m.get("content") for m in reversed(pinned) if m.get("role") == "user"), "")
    gathered: list[str] = []
    failed: list[str] = []
    for r in rounds:
        for res in r[1:]:
            body = _without_trace(res.get("content") or "")
            (failed if '"code":"ERR_' in body else gathered).append(
                f"{res.get('name')}: {_clip(body, chars)}"
            )
    todo = (
        "retry or work around: " + "; ".join(failed)
        if failed
        else "answer the task if the information suffices"
    )
    text = f"Task: {_clip(str(task), 2 * chars)}\nInformation gathered: {'; '.join(gathered) or 'none yet'}\nStill to do: {todo}"
    return {"role": "system", "content": text}


def summarise(
    rounds: Sequence[Sequence[Message]], chars: int, role: str = "system", omitted: int = 0
) -> Message:
    """One message naming what each older step asked and what its tools returned; the first
    ``omitted`` steps (left out of ``rounds`` to fit the window) are counted, not described."""
    lines = [f"steps 1-{omitted}: left out to fit the context window"] if omitted else []
    for number, r in enumerate(rounds, omitted + 1):
        head = r[0]
        if head.get("role") == "user":
            lines.append(f"step {number}: user asked {_clip(str(head.get('content')), chars)!r}")
            continue
        calls = {c["id"]: c["function"] for c in head.get("tool_calls") or []}
        parts = [
            f"{calls.get(res.get('tool_call_id'), {}).get('name', res.get('name'))}"
            f"({_clip(calls.get(res.get('tool_call_id'), {}).get('arguments', ''), 80)}) -> "
            f"{_clip(_without_trace(res.get('content') or ''), chars)}"
            for res in r[1:]
        ]
        text = head.get("content") if not parts else "; ".join(parts)
        lines.append(f"step {number}: {_clip(str(text), chars)}")
    return {"role": role, "content": "Summary of earlier steps:\n" + "\n".join(lines)}


def _shrink_oldest(rounds: list[list[Message]], chars: int) -> bool:
    for r in rounds:
        for i, m in enumerate(r[1:], 1):
            content = m.get("content") or ""
            if SHRUNK not in content and len(content) > chars:
                r[i] = {**m, "content": json.dumps({"partial": _clip(content, chars), "note": SHRUNK})}
                return True
    return False


def _without_trace(content: str) -> str:
    try:
        data = json.loads(content)
    except ValueError:
        return content
    if isinstance(data, dict):
        data.pop("trace_id", None)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 3] + "..."
