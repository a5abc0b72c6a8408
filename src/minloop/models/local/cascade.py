"""Two embedded models in turn: the small one decides, the larger one takes over what it cannot serve.

``Cascade()`` makes each decision with the bundled 0.5B model (``LocalModel("qwen2.5-coder-0.5b")``)
first. The 1.5B (``LocalModel()``, the default) makes that decision again, and every later decision
of the same request, when the small model

* abstains: it answers without a tool on its first decision after the user spoke (its call
  rested on values nobody gave, or it saw no tool that serves the request);
* calls a tool that is not offered, or with arguments its tool's schema refuses;
* writes an answer the evidence check would send back or replace.

So a request the small model serves costs what it costs alone, and the larger model's seconds
are spent where the small one fails. Both models keep their own decision policy; the evidence
check (``answer_check``) is the cascade's, shared by both. The small model's answer is streamed
once it is accepted, the larger model's as it is written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ...messages import Message
from ...schemas import problems
from ..base import ModelRequest, ModelResponse, TextDelta
from . import LocalModel, policy
from .evidence import EvidenceCheck
from .stream import TEXT_SINK, streamed_call

__all__ = ["Cascade"]

SMALL_MODEL = "qwen2.5-coder-0.5b"
_KEPT = 256  # requests taken over, remembered per cascade


class Cascade:
    """The small model first, the larger one when the small one fails (see the module)."""

    structured_output = True

    def __init__(
        self, small: LocalModel | None = None, large: LocalModel | None = None, *, threads: int | None = None
    ) -> None:
        self.small = small or LocalModel(SMALL_MODEL, threads=threads)
        self.large = large or LocalModel(threads=threads)
        self.name = f"{self.small.name}+{self.large.name}"
        self._menus: dict[str, list[dict[str, Any]]] = {}  # the tools offered, by the first user message
        self._judge = EvidenceCheck(resend_unused=False, menu=self._menu_of)
        self._taken: dict[str, int] = {}  # the transcripts taken over: digest -> length
        self.answer_check = self._judge

    @property
    def answer_check(self) -> Any:
        """The check a ``Loop`` applies to the final answer: the evidence check, in both models."""
        return self._answer_check

    @answer_check.setter
    def answer_check(self, check: Any) -> None:
        self._answer_check = self.small.answer_check = self.large.answer_check = check

    @property
    def context_window(self) -> int:
        return min(self.small.n_ctx, self.large.n_ctx)

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()) -> int:
        """Exact prompt tokens of a request (the two models share their tokenizer)."""
        return self.small.count_tokens(messages, tools)

    def load(self) -> Any:
        """Load both models' weights (once per process); returns the small model's runtime server."""
        self.large.load()
        return self.small.load()

    async def call(self, request: ModelRequest) -> ModelResponse:
        self._menus = {} if len(self._menus) >= _KEPT else self._menus
        self._menus[policy.opening(request.messages)] = list(request.tools)
        if self._taken_over(request.messages):
            return await self.large.call(request)
        sink, pieces = TEXT_SINK.get(), list[str]()

        def held(piece: str) -> bool:  # the small model's text waits for its verdict
            pieces.append(piece)
            return False

        token = TEXT_SINK.set(held if sink else None)
        try:
            response = await self.small.call(request)
        finally:
            TEXT_SINK.reset(token)
        if not self.fails(request, response.message):
            for piece in pieces:
                sink(piece) if sink is not None else None
            return response
        self._taken = {} if len(self._taken) >= _KEPT else self._taken
        self._taken[_digest(request.messages)] = len(request.messages)
        return await self.large.call(request)

    def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        """``call``, with the accepted answer's text yielded (see ``.stream``)."""
        return streamed_call(self.call, request)

    def fails(self, request: ModelRequest, message: Mapping[str, Any]) -> bool:
        """Whether the small model's ``message`` hands ``request`` to the larger model."""
        calls = message.get("tool_calls") or []
        if calls:
            return any(_refused(call, request.tools) for call in calls)
        text = message.get("content")
        if not isinstance(text, str) or not text.strip():
            return True
        _, called, _ = policy.since_user(request.messages)
        if request.tools and request.tool_choice == "auto" and not called:
            return True  # abstained
        return self._judge(text, request.messages) is not None

    def _taken_over(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` continue a transcript the larger model took over."""
        lengths = {n for n in self._taken.values() if n <= len(messages)}
        return any(_digest(messages[:n]) in self._taken for n in lengths)

    def _menu_of(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
        return self._menus.get(policy.opening(messages))


def _refused(call: Mapping[str, Any], tools: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``call`` names no offered tool, or its arguments break the tool's schema."""
    function = call.get("function") or {}
    offered = {t.get("function", {}).get("name"): t.get("function", {}) for t in tools}
    tool = offered.get(function.get("name"))
    if tool is None:
        return True
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return True
    schema = tool.get("parameters") or {"type": "object"}
    return not isinstance(arguments, dict) or bool(
        problems(schema, arguments, f"tool {function.get('name')!r}")
    )


def _digest(messages: Sequence[Message]) -> str:
    text = json.dumps(list(messages), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
