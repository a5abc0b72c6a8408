"""The ``Model`` role: one Chat Completions call, nothing else.

A model receives a ``ModelRequest`` (messages, tool specs, tool_choice) and returns a
``ModelResponse`` holding one assistant message in the wire format plus token usage. Anything
that can do that is a model: a remote endpoint, an embedded GGUF, a script for tests.

A model that can hold its final answer to a JSON schema (structured output) says so with a
``structured_output = True`` attribute; for a typed run the loop then sets
``ModelRequest.output_schema``, and otherwise puts the schema in the prompt. The loop also
passes the answer check it will apply (``ModelRequest.answer_check``), so a model may stop
generating an answer the check is bound to replace.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from ..messages import Message

if TYPE_CHECKING:
    from ..streaming import ModelDelta

__all__ = ["Model", "ModelRequest", "ModelResponse", "StreamingModel", "ToolChoice", "Usage"]

ToolChoice: TypeAlias = Literal["auto", "none", "required"] | dict[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one call. ``evaluated_tokens`` is what a local runtime actually computed
    (prompt tokens minus those reused from its KV cache); ``None`` when unknown."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    evaluated_tokens: int | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        evaluated = None
        if self.evaluated_tokens is not None or other.evaluated_tokens is not None:
            evaluated = (self.evaluated_tokens or 0) + (other.evaluated_tokens or 0)
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            evaluated,
        )


@dataclass(frozen=True, slots=True)
class ModelRequest:
    messages: Sequence[Message]
    tools: Sequence[dict[str, Any]] = ()
    tool_choice: ToolChoice = "auto"
    output_schema: dict[str, Any] | None = None  # the final answer's JSON schema, for structured output
    answer_check: Callable[..., Any] | None = None  # the check the loop will apply to an answer


@dataclass(frozen=True, slots=True)
class ModelResponse:
    message: Message
    usage: Usage = field(default_factory=Usage)


@runtime_checkable
class Model(Protocol):
    """Anything with a ``name`` and an async ``call``.

    ``call`` raises ``ModelError`` when the call itself fails (network, HTTP status, payload
    that is not a Chat Completion). A reply the *loop* can handle (no content, unknown tool,
    bad arguments) is returned, not raised.
    """

    name: str

    async def call(self, request: ModelRequest) -> ModelResponse: ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also stream a reply: ``stream`` yields deltas as they are written
    (``minloop.streaming.TextDelta``, ``ToolCallStarted``, ``ArgumentsDelta``) and ends with
    the whole ``ModelResponse``, the same one ``call`` would return. It raises ``ModelError``
    as ``call`` does; a stream that breaks off is an error, never a shorter reply."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]: ...
