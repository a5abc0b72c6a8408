"""The ASGI app: ``create_app(loop, store, token=...)`` (Starlette; run it with uvicorn).

``POST /runs`` {"prompt"} starts a run and answers its id at once (with ``Accept:
text/event-stream``, its events instead, its address in ``Location``); ``GET /runs/{id}`` its
status, pending calls and result; ``GET /runs/{id}/events`` its events as server-sent events
(``Last-Event-ID`` resumes after the last one seen); ``GET /runs/{id}/pending``;
``POST /runs/{id}/calls/{call_id}/approve`` or ``/deny`` (a decision, then the run goes on);
``POST /runs/{id}/calls/{call_id}/answer`` {"content"} or {"action": "decline"} (the answer to
a tool server's questions; {"answers": {KEY: {...}}} for several), then the run goes on;
``POST /runs/{id}/resume``; ``POST /runs/{id}/cancel``; ``POST /v1/chat/completions``.
With tokens every request needs ``Authorization: Bearer TOKEN``, and sees only the runs
started with its own token. Any worker sharing the store answers any of these for any run.
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..exceptions import RunConflictError, RunError, RunMismatchError, RunNotFoundError, StoreError
from ..runs.records import SharedRunStore, Verdict
from ..runs.shared import KEPT_FOR
from ..standard import Loop
from .bodies import (
    AnswerBody,
    ApproveBody,
    BadRequest,
    CancelBody,
    DecisionBody,
    ResumeBody,
    StartBody,
    bearer,
    read_body,
)
from .chat import chat_completions
from .errors import error, http_error, server_error, shown
from .events import EventStream
from .journal import TERMINAL, follow
from .runs import Runs

__all__ = ["create_app", "tokens_of"]

LONGEST_ID = 200  # characters: a longer run or call id, or one with control characters, is no id given here
LAST_EVENT = 10**18  # a longer Last-Event-ID counts as this one: past the end of any run

Handler = Callable[[Request, Runs, str | None], Awaitable[Response]]
logger = logging.getLogger("minloop.serve")


def create_app(loop: Loop, store: SharedRunStore, *, token: str | Sequence[str] | None = None,
               url: str = "http://127.0.0.1:8000", lease_scan: float | None = 5.0,
               kept_for: float = KEPT_FOR) -> Starlette:  # fmt: skip
    """An ASGI app serving ``loop``; its runs live in ``store`` (any worker sharing it serves them).
    ``token``: the bearer token (or tokens) a request must carry; each sees only its own runs. An
    empty or blank token is no token.
    ``url``: where clients reach the server (the A2A agent card names it). ``lease_scan``:
    seconds between looks for runs whose worker stopped, to resume them (``None``: never).
    ``kept_for``: seconds the events of an ended run are kept in the store."""
    tokens = tokens_of(token)
    runs_: list[Runs] = []

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        runs_.append(Runs(loop, store, lease_scan=lease_scan, kept_for=kept_for))
        runs_[0].begin()
        yield
        await runs_[0].close()

    def route(path: str, handler: Handler, method: str) -> Route:
        async def endpoint(request: Request) -> Response:
            try:
                given = bearer(request)
                if tokens and not any(_same(given, t) for t in tokens):
                    raise BadRequest(401, "this server needs 'Authorization: Bearer <token>'")
                _check_ids(request)
                return await handler(request, runs_[0], given)
            except BadRequest as exc:
                return error(exc.status, exc.message)
            except RunNotFoundError as exc:
                return error(
                    404, f"run {shown(exc.run_id)}: no run with this id{' for this token' if tokens else ''}"
                )
            except (RunConflictError, RunMismatchError) as exc:
                return error(409, _said(exc))
            except RunError as exc:
                return error(400, _said(exc))
            except StoreError as exc:
                return _store_failed(exc)

        return Route(path, endpoint, methods=[method])

    routes = [
        route("/runs", _start, "POST"),
        route("/runs/{run_id}", _state, "GET"),
        route("/runs/{run_id}/events", _events, "GET"),
        route("/runs/{run_id}/pending", _pending, "GET"),
        route("/runs/{run_id}/calls/{call_id}/approve", _approve, "POST"),
        route("/runs/{run_id}/calls/{call_id}/deny", _deny, "POST"),
        route("/runs/{run_id}/calls/{call_id}/answer", _answer, "POST"),
        route("/runs/{run_id}/resume", _resume, "POST"),
        route("/runs/{run_id}/cancel", _cancel, "POST"),
        route("/v1/chat/completions", chat_completions, "POST"),
    ]
    from .a2a import a2a_routes

    routes += a2a_routes(runs_, url)
    handlers = {HTTPException: http_error, Exception: server_error}
    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(_Guard, tokens=tokens)],
                     exception_handlers=handlers)  # fmt: skip


def _store_failed(exc: StoreError) -> Response:
    """503: the server's log names the store and what failed; a client is told no path."""
    logger.error("%s", exc)
    return error(503, "the run store failed; try again later")


def tokens_of(token: str | Sequence[str] | None) -> list[str]:
    """The real tokens among ``token``: each stripped, the empty and blank ones dropped."""
    given = [token] if isinstance(token, str) else list(token or ())
    return [t.strip() for t in given if t.strip()]


class _Guard:
    """The bearer token for the A2A endpoint (its card stays public, as the protocol expects)."""

    def __init__(self, app: ASGIApp, tokens: list[str]) -> None:
        self.app, self.tokens = app, tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.tokens and scope["type"] == "http" and scope["path"].startswith("/a2a"):
            given = bearer(Request(scope))
            if not any(_same(given, t) for t in self.tokens):
                await error(401, "this server needs 'Authorization: Bearer <token>'")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _check_ids(request: Request) -> None:
    """A 404 for a run or call id in the path that this server cannot have given."""
    for name in ("run_id", "call_id"):
        given = request.path_params.get(name, "")
        if not given.isprintable():
            raise BadRequest(404, f"{name}: no such id (it holds control characters)")
        if len(given) > LONGEST_ID:
            raise BadRequest(404, f"{name} {shown(given)}: no such id")


def _same(given: str | None, token: str) -> bool:
    """Whether the token a request carries is ``token`` (in constant time, whatever its characters)."""
    return hmac.compare_digest((given or "").encode("utf-8", "replace"), token.encode())


def _said(exc: RunError) -> str:
    """A run error's message, the run's id in it cut short."""
    return f"run {shown(exc.run_id)}: {str(exc).removeprefix(f'run {exc.run_id}: ')}"


async def _start(request: Request, runs: Runs, token: str | None) -> Response:
    body = await read_body(request, StartBody)
    run_id = runs.start(body.prompt, token)
    if "text/event-stream" in request.headers.get("accept", ""):  # its events in this response
        return _stream(runs, run_id, 0, {"Location": f"/runs/{run_id}"})
    return JSONResponse({"run_id": run_id, "status": "running"}, status_code=202)


async def _state(request: Request, runs: Runs, token: str | None) -> Response:
    return JSONResponse(runs.state(request.path_params["run_id"], token))


async def _pending(request: Request, runs: Runs, token: str | None) -> Response:
    return JSONResponse(runs.state(request.path_params["run_id"], token)["pending"])


async def _events(request: Request, runs: Runs, token: str | None) -> Response:
    run_id = request.path_params["run_id"]
    last = request.headers.get("last-event-id", "0")
    if not re.fullmatch(r"\s*[0-9]+\s*", last):
        raise BadRequest(400, "Last-Event-ID must be the number of an event this stream sent")
    runs.check(run_id, token)  # an unknown run answers as JSON, before the stream starts
    digits = last.strip().lstrip("0") or "0"
    return _stream(runs, run_id, LAST_EVENT if len(digits) > 18 else int(digits))


def _stream(runs: Runs, run_id: str, after: int, headers: dict[str, str] | None = None) -> Response:
    return EventStream(follow(runs.journal, run_id, after), TERMINAL, headers or {})


async def _decide(request: Request, runs: Runs, token: str | None, verdict: Verdict) -> Response:
    run_id, call_id = request.path_params["run_id"], request.path_params["call_id"]
    runs.resume(run_id, token, {call_id: verdict})
    return JSONResponse({"run_id": run_id, "status": "running"}, status_code=202)


async def _approve(request: Request, runs: Runs, token: str | None) -> Response:
    return await _decide(request, runs, token, (await read_body(request, ApproveBody)).verdict())


async def _deny(request: Request, runs: Runs, token: str | None) -> Response:
    body = await read_body(request, DecisionBody)
    return await _decide(request, runs, token, Verdict(False, body.reason, by="http", digest=body.digest))


async def _answer(request: Request, runs: Runs, token: str | None) -> Response:
    body = await read_body(request, AnswerBody)
    run_id, call_id = request.path_params["run_id"], request.path_params["call_id"]
    runs.resume(run_id, token, {call_id: body.decision()})
    return JSONResponse({"run_id": run_id, "status": "running"}, status_code=202)


async def _resume(request: Request, runs: Runs, token: str | None) -> Response:
    body = await read_body(request, ResumeBody)
    decisions = {k: Verdict(v, by="http") for k, v in body.decisions.items()}
    runs.resume(request.path_params["run_id"], token, decisions)
    return JSONResponse({"run_id": request.path_params["run_id"], "status": "running"}, status_code=202)


async def _cancel(request: Request, runs: Runs, token: str | None) -> Response:
    body = await read_body(request, CancelBody)
    status = runs.cancel(request.path_params["run_id"], token, by=body.by or "http", reason=body.reason)
    return JSONResponse({"run_id": request.path_params["run_id"], "status": status}, status_code=202)
