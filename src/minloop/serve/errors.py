"""What the server answers when a request cannot be served: always JSON,
``{"error": {"message": "...", "status": N}}``, with the HTTP status N.

A message says what is wrong and where (the field, the run), repeats at most ``ECHO``
characters of anything the client sent, and never names a file or the store's address. A wrong
path is a 404 and a wrong method a 405 (with ``Allow``), in the same shape. What fails on the
server's side is logged whole and answered 500 or 503 with no detail.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = ["ECHO", "LONGEST", "error", "http_error", "server_error", "shown"]

ECHO = 80  # characters of a client's input an error message repeats
LONGEST = 600  # characters of an error message at most


def shown(text: str, limit: int = ECHO) -> str:
    """``text`` as an error repeats it: cut to ``limit`` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def error(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    body = {"error": {"message": shown(message, LONGEST), "status": status}}
    return JSONResponse(body, status_code=status, headers=headers)


async def http_error(request: Request, exc: Exception) -> Response:
    """A path no route takes (404) or a method its route does not (405), as JSON."""
    assert isinstance(exc, HTTPException)
    where = f"{request.method} {shown(request.url.path)}"
    if exc.status_code == 404:
        return error(404, f"{where}: there is no such endpoint")
    if exc.status_code == 405:
        allowed = sorted(m.strip() for m in (exc.headers or {}).get("Allow", "").split(",") if m.strip())
        return error(
            405, f"{where}: this endpoint takes {', '.join(allowed) or 'another method'}", exc.headers
        )
    return error(exc.status_code, f"{where}: {exc.detail}", exc.headers)


async def server_error(request: Request, exc: Exception) -> Response:
    """Anything that escaped a handler: the server's fault, answered as JSON (the server's log
    holds the traceback)."""
    return error(500, "the server failed to answer this request; its log says why")
