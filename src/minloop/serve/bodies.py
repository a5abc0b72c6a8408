"""Request bodies, read under a size limit and validated: anything wrong is a 4xx that says what."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request

from ..messages import loads, transcript_problems
from ..runs.records import Verdict
from .errors import shown

__all__ = [
    "AnswerBody",
    "ApproveBody",
    "BadRequest",
    "ChatBody",
    "DecisionBody",
    "ResumeBody",
    "StartBody",
    "bearer",
    "read_body",
]

MAX_BODY = 1_000_000  # bytes
MAX_PROMPT = 100_000  # characters
DEEPEST = 64  # levels of lists and objects in a body

Body = TypeVar("Body", bound=BaseModel)


class BadRequest(Exception):
    """A request the client must fix: ``status`` and a plain ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StartBody(_Strict):
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT)


class DecisionBody(_Strict):
    reason: str | None = Field(default=None, max_length=10_000)
    digest: str | None = Field(default=None, max_length=64)


class ApproveBody(DecisionBody):
    """An approval: as it stands, with ``arguments`` (an edit), or with a ``result`` given in the
    tool's place; ``digest`` names the arguments decided on."""

    arguments: dict[str, Any] | None = None
    result: Any = None

    def verdict(self) -> Verdict:
        if self.arguments is not None and self.result is not None:
            raise BadRequest(422, "arguments, result: give one of them (an edit runs the call, a result "
                                  "answers in its place)")  # fmt: skip
        if self.arguments is not None:
            return Verdict.edit(self.arguments, self.reason, by="http", digest=self.digest)
        if self.result is not None:
            return Verdict.respond(self.result, by="http", digest=self.digest)
        return Verdict(True, self.reason, by="http", digest=self.digest)


class AnswerOf(_Strict):
    action: Literal["accept", "decline", "cancel"] = "accept"
    content: dict[str, Any] | None = None


class AnswerBody(AnswerOf):
    """The answer to every question of a call, or ``answers`` by question key."""

    answers: dict[str, AnswerOf] | None = None

    def decision(self) -> Any:
        from ..questions import UserAnswer

        if self.answers is not None:
            return {k: UserAnswer(a.action, a.content) for k, a in self.answers.items()}
        return UserAnswer(self.action, self.content)


class CancelBody(_Strict):
    reason: str | None = Field(default=None, max_length=10_000)
    by: str | None = Field(default=None, max_length=200)


class ResumeBody(_Strict):
    decisions: dict[Annotated[str, Field(max_length=200)], bool] = Field(
        default_factory=dict, max_length=1000
    )


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: Any = None


class ChatBody(BaseModel):
    """A Chat Completions request: fields a client commonly sends and the loop does not use
    (temperature, user, ...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(default="minloop", max_length=200)
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False

    def problem(self) -> str | None:
        """What is wrong with the messages as a transcript, naming the message and field."""
        for i, message in enumerate(self.messages):
            if not isinstance(message.content, str | list | None):
                kind = _KINDS.get(type(message.content), "an object")
                return f"messages[{i}].content: must be a string, a list of content parts or null, not {kind}"
        problems = transcript_problems([m.model_dump(exclude_none=True) for m in self.messages])
        if not problems:
            return None
        index, _, detail = problems[0]
        return f"{'messages' if index is None else f'messages[{index}]'}: {detail}"


_KINDS = {bool: "true or false", int: "a number", float: "a number"}


def bearer(request: Request) -> str | None:
    """The token of ``Authorization: Bearer TOKEN``, if the request carries one."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


async def read_body(request: Request, kind: type[Body], limit: int = MAX_BODY) -> Body:
    """The body as ``kind``, or ``BadRequest`` (413 too large, 400 not JSON, 422 wrong fields)."""
    size = request.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > limit:
        raise BadRequest(413, f"the request body is over {limit} bytes")
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise BadRequest(413, f"the request body is over {limit} bytes")
    try:
        data = loads(bytes(raw) or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise BadRequest(400, f"the request body is not JSON: {shown(str(exc))}") from None
    problem = _untext(data)
    if problem is not None:
        raise BadRequest(400, f"the request body {problem}")
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{_where(e['loc'])}: {e['msg']}" for e in exc.errors()[:3])
        raise BadRequest(422, f"the request body is not valid: {problems}") from None


def _where(loc: tuple[int | str, ...]) -> str:
    """Where in the body a problem is, as ``messages[0].role``."""
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{shown(str(part), 40)}" for part in loc)
    return text.lstrip(".") or "body"


def _untext(data: Any) -> str | None:
    """What in ``data`` no run can keep, if anything: nesting deeper than ``DEEPEST`` levels, a
    NUL character (PostgreSQL cannot keep it) or a lone surrogate (UTF-8 cannot)."""
    stack = [(data, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if "\x00" in item or not (item.isascii() or _encodes(item)):
                return "holds a NUL character (\\u0000) or a lone surrogate (\\ud800 to \\udfff), which is no text"
        elif depth >= DEEPEST and isinstance(item, list | dict):
            return f"nests deeper than {DEEPEST} levels"
        elif isinstance(item, list):
            stack += [(value, depth + 1) for value in item]
        elif isinstance(item, dict):
            stack += [(key, depth + 1) for key in item] + [(value, depth + 1) for value in item.values()]
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True
