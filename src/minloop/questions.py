"""A tool that asks: its server needs the user's input before the call can finish.

An MCP server of the current protocol may answer a call with questions (a form to fill in, with
a schema, or a page to visit) and an opaque state; the call is then made again with the answers
and the state echoed unchanged, and it may come back with new questions. The tool says so by
raising ``Asked`` (a ``ToolFailure`` with code ``ERR_TOOL_INPUT_REQUIRED``, what the model reads
when nobody can answer). Whoever can answer (``Loop(..., ask_user=fn)``, or a person
through a run store: the run pauses and ``resume`` carries the answers) runs the call again
inside ``answering(...)``, and the tool sends the next round with what ``answered()`` gives.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias
from urllib.parse import urlsplit

from .execute import ToolFailure
from .schemas import problems

__all__ = [
    "Answered",
    "Answerer",
    "Asked",
    "Asking",
    "Question",
    "UserAnswer",
    "answered",
    "answering",
    "answers_for",
    "ask_all",
]

Action: TypeAlias = Literal["accept", "decline", "cancel"]
MAX_ROUNDS = 10  # rounds of questions one call may ask in one process before it fails


@dataclass(frozen=True, slots=True)
class Question:
    """One thing a tool's ``server`` asks the user, under the server's ``key``: a ``form`` to
    fill in (``schema``, a flat JSON schema of what to give) or a ``url`` to visit (a payment or
    a login page; listings show only its ``host``)."""

    server: str
    key: str
    kind: Literal["form", "url"]
    message: str
    schema: dict[str, Any] | None = None
    url: str | None = None

    @property
    def host(self) -> str | None:
        return urlsplit(self.url).hostname if self.url else None

    def to_dict(self) -> dict[str, Any]:
        return {"server": self.server, "key": self.key, "kind": self.kind, "message": self.message,
                "schema": self.schema, "url": self.url}  # fmt: skip

    def shown(self) -> dict[str, Any]:
        """What a listing shows: a form's schema, a page's host (never the whole address)."""
        what = {"schema": self.schema} if self.kind == "form" else {"host": self.host}
        return {"server": self.server, "key": self.key, "kind": self.kind, "message": self.message, **what}


@dataclass(frozen=True, slots=True)
class UserAnswer:
    """The user's answer to a question: ``accept`` (a form's ``content``; for a page, that it was
    done), ``decline`` or ``cancel``. Each goes back to the server, which decides what follows."""

    action: Action = "accept"
    content: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "content": self.content}

    @classmethod
    def of(cls, data: Any) -> UserAnswer:
        if isinstance(data, UserAnswer):
            return data
        if not isinstance(data, Mapping) or data.get("action", "accept") not in (
            "accept",
            "decline",
            "cancel",
        ):
            raise ValueError(f"an answer is {{'action': 'accept' | 'decline' | 'cancel', 'content': {{...}}}}, not {data!r}")  # fmt: skip
        content = data.get("content")
        return cls(data.get("action", "accept"), None if content is None else dict(content))


@dataclass(frozen=True, slots=True)
class Asking:
    """One round of a call's questions: what the server asked and the ``state`` to echo."""

    questions: tuple[Question, ...]
    state: str | None
    round: int = 1

    @property
    def server(self) -> str:
        return self.questions[0].server if self.questions else ""

    def to_dict(self) -> dict[str, Any]:
        return {"questions": [q.to_dict() for q in self.questions], "state": self.state, "round": self.round}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Asking:
        questions = tuple(Question(**q) for q in data.get("questions") or ())
        return cls(questions, data.get("state"), int(data.get("round") or 1))

    def summary(self) -> str:
        return "; ".join(
            q.message if q.kind == "form" else f"{q.message} (a page on {q.host})" for q in self.questions
        )


@dataclass(frozen=True, slots=True)
class Answered:
    """What the next round of a call sends: the ``state`` echoed and the ``answers`` by key."""

    state: str | None
    answers: Mapping[str, UserAnswer] = field(default_factory=dict)
    round: int = 2


class Asked(ToolFailure):
    """Raised by a tool whose server asked for the user's input. Unanswered, the model reads it
    as ``ERR_TOOL_INPUT_REQUIRED``."""

    kept: ClassVar[bool] = True

    def __init__(self, asking: Asking, why: str = "") -> None:
        where = f"the server {asking.server!r}" if asking.server else "the tool"
        text = (
            f"{where} needs the user's input to finish this call ({asking.summary()}) and the user "
            f"cannot be asked in this run{why}. Tell the user what it needs; do not retry the call"
        )
        shown = [q.shown() for q in asking.questions]
        super().__init__("ERR_TOOL_INPUT_REQUIRED", text, questions=shown)
        self.asking = asking


_answered: ContextVar[Answered | None] = ContextVar("minloop_answered", default=None)


def answered() -> Answered | None:
    """The answers the call in progress sends, when it is a later round; ``None`` for a first call."""
    return _answered.get()


@contextmanager
def answering(sent: Answered | None) -> Iterator[None]:
    """Run a call with ``sent`` as its next round (``None``: a first call)."""
    token = _answered.set(sent)
    try:
        yield
    finally:
        _answered.reset(token)


Answerer: TypeAlias = Callable[[Question], "UserAnswer | Awaitable[UserAnswer | None] | None"]
"""``ask_user(question)``, sync or async: an ``UserAnswer``, or ``None`` for "not here" (with a run
store the run pauses; without one the model reads ``ERR_TOOL_INPUT_REQUIRED``)."""


async def ask_all(ask_user: Answerer | None, asking: Asking) -> dict[str, UserAnswer] | None:
    """Every question's answer from ``ask_user``, or ``None`` when one of them has none."""
    if ask_user is None:
        return None
    answers: dict[str, UserAnswer] = {}
    for question in asking.questions:
        got = ask_user(question)
        if inspect.isawaitable(got):
            got = await got
        if got is None:
            return None
        answers[question.key] = UserAnswer.of(got)
    return answers


def answers_for(asking: Asking, given: Any) -> dict[str, UserAnswer]:
    """The answers to every question of ``asking`` from what a person gave: one ``UserAnswer`` (or
    ``True``: accept, ``False``: decline) for all of them, or a mapping by question key. A
    form's accepted content must fit its schema. ``ValueError`` says what is wrong and where."""
    keys = [q.key for q in asking.questions]
    if isinstance(given, bool):
        given = UserAnswer("accept" if given else "decline")
    if isinstance(given, UserAnswer):
        answers = {k: given for k in keys}
    elif isinstance(given, Mapping):
        try:
            answers = {str(k): UserAnswer.of(v) for k, v in given.items()}
        except ValueError as exc:
            raise ValueError(f"answers by question key ({', '.join(keys)}): {exc}") from None
    else:
        raise ValueError(f"give a UserAnswer, True/False, or answers by question key ({', '.join(keys)}), "
                         f"not {type(given).__name__}")  # fmt: skip
    unknown, missing = sorted(set(answers) - set(keys)), [k for k in keys if k not in answers]
    if unknown or missing:
        said = [f"the questions asked now are {', '.join(keys)}"]
        said += [f"no question {', '.join(unknown)}"] if unknown else []
        said += [f"no answer to {', '.join(missing)}"] if missing else []
        raise ValueError("; ".join(said))
    for q in asking.questions:
        a = answers[q.key]
        if q.kind == "form" and a.action == "accept":
            wrong = problems(q.schema or {"type": "object"}, a.content or {}, f"question {q.key!r}")
            if wrong:
                where = "; ".join(f"{p['loc']}: {p['msg']}" for p in wrong)
                raise ValueError(f"the answer to {q.key!r} ({q.message}) does not fit its schema: {where}")
    return answers
