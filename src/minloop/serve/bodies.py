"""Request bodies, read under a size limit and validated: anything wrong is a 4xx that says what."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request

__all__ = ["BadRequest", "ChatBody", "DecisionBody", "ResumeBody", "StartBody", "bearer", "read_body"]

MAX_BODY = 1_000_000  # bytes
MAX_PROMPT = 100_000  # characters

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


class ResumeBody(_Strict):
    decisions: dict[str, bool] = Field(default_factory=dict)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: Any = None


class ChatBody(BaseModel):
    """A Chat Completions request: fields a client commonly sends and the loop does not use
    (temperature, user, ...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = "minloop"
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


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
        data = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(400, f"the request body is not JSON: {exc}") from None
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors())
        raise BadRequest(422, f"the request body is not valid: {problems}") from None
