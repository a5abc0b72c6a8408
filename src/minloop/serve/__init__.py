"""Serving a loop over HTTP: ``create_app(loop, store)`` is an ASGI app (Starlette) that uvicorn or
any ASGI server runs; ``minloop serve`` starts it.

Runs are started, watched (server-sent events, the same typed events as ``loop.stream``, as
JSON), read, approved, denied, resumed and cancelled over plain HTTP; ``POST
/v1/chat/completions`` answers any Chat Completions client with the loop's final answer. Every
run lives in the run store, so any worker sharing the store can read, approve or resume it.
"""

from .app import create_app

__all__ = ["create_app"]
