"""Counting a run's tokens, for the layers that need it (context fitting, budgets).

The embedded model counts exactly (``count_tokens``); for any other model the count is an
estimate (``estimate_tokens``), calibrated on the prompt tokens each reply reports. One
``Tokens`` per run is shared by every layer that counts (``tokens_of``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..messages import Message
from ..state import RunState

__all__ = ["Counter", "Tokens", "calibrate", "estimate_tokens", "tokens_of"]

Counter = Callable[[Sequence[Message]], int]


def estimate_tokens(messages: Sequence[Message]) -> int:
    """A network-free estimate: about 3.6 characters of JSON per token plus 4 per message.

    On this repository's sample transcripts (English prose, JSON tool results) it lands within
    ~15% of the Qwen2.5 tokenizer; the loop calibrates it against the provider's ``usage``.
    """
    chars = sum(len(m.get("content") or "") + len(json.dumps(m.get("tool_calls") or "")) for m in messages)
    return int(chars / 3.6) + 4 * len(messages)


def _tools_estimate(specs: Sequence[dict[str, Any]]) -> int:
    return int(len(json.dumps(list(specs))) / 3.6)


def calibrate(specs: Sequence[dict[str, Any]], sent: Sequence[Message], prompt_tokens: int) -> float:
    """The ratio of the provider's reported prompt tokens to our estimate for what was sent."""
    guess = estimate_tokens(sent) + _tools_estimate(specs)
    return prompt_tokens / guess if prompt_tokens > 0 and guess > 0 else 1.0


class Tokens:
    """A run's token counter: ``count(messages)`` for a request that offers ``specs``."""

    __slots__ = ("_exact", "_tools", "ratio", "specs")

    def __init__(self, model: Any, specs: Sequence[dict[str, Any]]) -> None:
        exact = getattr(model, "count_tokens", None)
        self._exact = exact if callable(exact) else None
        self.specs = specs
        self._tools = _tools_estimate(specs)
        self.ratio = 1.0  # provider tokens / our estimate, from the last reply's usage

    @property
    def exact(self) -> bool:
        return self._exact is not None

    def count(self, messages: Sequence[Message]) -> int:
        if self._exact is not None:
            return int(self._exact(messages, self.specs))
        return int((estimate_tokens(messages) + self._tools) * self.ratio)

    def calibrate(self, sent: Sequence[Message], prompt_tokens: int) -> None:
        """Learn from a reply's reported prompt tokens (nothing when it reports none)."""
        if prompt_tokens and self._exact is None:
            self.ratio = calibrate(self.specs, sent, prompt_tokens)


def tokens_of(run: RunState, specs: Sequence[dict[str, Any]]) -> Tokens:
    """The run's shared counter."""
    return run.local(Tokens, lambda: Tokens(run.model, specs))
