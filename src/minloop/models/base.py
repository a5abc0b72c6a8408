"""The ``Model`` role: one Chat Completions call, nothing else.

A model receives a ``ModelRequest`` (messages, tool specs, tool_choice) and returns a
``ModelResponse`` holding one assistant message in the wire format plus token usage. Anything
that can do that is a model: a remote endpoint, an embedded GGUF, a script for tests.

A model that can hold its final answer to a JSON schema (structured output) says so with a
``structured_output = True`` attribute; for a typed run the loop then sets
``ModelRequest.output_schema``, and otherwise puts the schema in the prompt. The loop also
passes the answer check it will apply (``ModelRequest.answer_check``), so a model may stop
generating an answer the check is bound to replace. A layer may ask for more while the reply is
written (``ModelRequest.decoding``, a ``WhileDecoding``): a model that reads its reply as it
writes it (the embedded model) stops a call at its first refused value or an answer where the
layer says; any other model ignores it, and the layer checks the finished reply instead.

A model that stops a reply running away (repeating itself, or past a length cap) says so in
``ModelResponse.stopped`` (see ``minloop.models.runaway``).

A model that streams yields the pieces of its reply as they are written (``TextDelta``,
``ToolCallStarted``, ``ArgumentsDelta``), then the whole ``ModelResponse``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from ..messages import Message

__all__ = [
    "ArgumentsDelta",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "Stopped",
    "StreamingModel",
    "TextDelta",
    "ToolCallStarted",
    "ToolChoice",
    "Usage",
    "WhileDecoding",
    "deltas_of",
]

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
class WhileDecoding:
    """What a layer asks of a model while it writes its reply (see the module).

    ``refuse(tool, arguments)`` is given a call's arguments each time one more of them is
    complete; True stops the call there, and it is returned with the arguments read so far.
    ``stop(text)`` is given an answer's text as it grows; True ends the answer there.
    ``language`` ("en", "zh") is the language the answer is written in, from its first word.
    ``avoid`` are values a layer refused: a value is not to be written as one of them again.
    """

    refuse: Callable[[str, dict[str, Any]], bool] | None = None
    stop: Callable[[str], bool] | None = None
    language: str | None = None
    avoid: tuple[str, ...] = ()

    def adding(self, other: WhileDecoding) -> WhileDecoding:
        """Both asks: either's ``refuse`` or ``stop`` stops; ``other``'s language, if it names one."""
        refuse, stop = _either(self.refuse, other.refuse), _either(self.stop, other.stop)
        return WhileDecoding(refuse, stop, other.language or self.language, (*self.avoid, *other.avoid))


def _either(one: Callable[..., bool] | None, two: Callable[..., bool] | None) -> Callable[..., bool] | None:
    if one is None or two is None:
        return one or two
    return lambda *args: bool(one(*args)) | bool(two(*args))  # both read every piece


@dataclass(frozen=True, slots=True)
class ModelRequest:
    messages: Sequence[Message]
    tools: Sequence[dict[str, Any]] = ()
    tool_choice: ToolChoice = "auto"
    output_schema: dict[str, Any] | None = None  # the final answer's JSON schema, for structured output
    answer_check: Callable[..., Any] | None = None  # the check the loop will apply to an answer
    decoding: WhileDecoding | None = None  # what a layer asks while the reply is written

    def asking(self, decoding: WhileDecoding) -> ModelRequest:
        """This request with ``decoding`` asked too (beside what other layers asked)."""
        joined = decoding if self.decoding is None else self.decoding.adding(decoding)
        return replace(self, decoding=joined)


Stopped: TypeAlias = Literal["repeated", "length"]
"""Why a reply was stopped before its end (``minloop.models.runaway``): it began to repeat itself
(its text is cut where the repeat began), or it passed the length cap."""


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One assistant message and its usage; ``stopped`` says why the reply was stopped before its
    end, when it was."""

    message: Message
    usage: Usage = field(default_factory=Usage)
    stopped: Stopped | None = None


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
    (``TextDelta``, ``ToolCallStarted``, ``ArgumentsDelta`` above) and ends with
    the whole ``ModelResponse``, the same one ``call`` would return. It raises ``ModelError``
    as ``call`` does; a stream that breaks off is an error, never a shorter reply."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]: ...


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the assistant's text, as it is written."""

    text: str
    step: int = 0


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The model began a tool call: ``index`` is its place in the reply's ``tool_calls``."""

    index: int
    id: str | None
    name: str
    step: int = 0


@dataclass(frozen=True, slots=True)
class ArgumentsDelta:
    """A piece of the JSON arguments of the call at ``index``."""

    index: int
    text: str
    step: int = 0


ModelDelta: TypeAlias = TextDelta | ToolCallStarted | ArgumentsDelta


def deltas_of(
    message: Message, size: int | None = None, *, text: bool = True, skip: frozenset[int] = frozenset()
) -> Iterator[ModelDelta]:
    """The deltas a stream of ``message`` carries, in pieces of ``size`` characters (whole if None).

    ``text=False`` leaves the text out, ``skip`` the calls (by index) already announced.
    """
    content = message.get("content")
    if text and isinstance(content, str) and content:
        yield from (TextDelta(piece) for piece in _pieces(content, size))
    for index, raw in enumerate(message.get("tool_calls") or ()):
        if index in skip or not isinstance(raw, dict):
            continue
        fn = raw.get("function")
        fn = fn if isinstance(fn, dict) else {}
        yield ToolCallStarted(index, raw.get("id"), str(fn.get("name") or ""))
        arguments = fn.get("arguments")
        if isinstance(arguments, str) and arguments:
            yield from (ArgumentsDelta(index, piece) for piece in _pieces(arguments, size))


def _pieces(text: str, size: int | None) -> Iterator[str]:
    step = size if size and size > 0 else max(len(text), 1)
    return (text[i : i + step] for i in range(0, len(text), step))
