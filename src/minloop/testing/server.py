"""A real Chat Completions server on 127.0.0.1, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` with scripted replies in order: an assistant message
(wrapped into a completion), a full completion dict, a ``Fault`` (status, headers, raw body,
delay), or a function of the request body returning one of those. Requests are recorded.

A request with ``"stream": true`` gets the reply as server-sent events (``chunk_size``
characters of text or arguments per chunk, then the usage, then ``[DONE]``); a list of chunk
dicts is sent as is, and a ``Fault`` with ``stream`` breaks the stream on purpose: a malformed
line, a connection cut, or a stall of ``delay`` seconds, after ``after`` chunks of ``message``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from .sse import sse_chunks, write_events

__all__ = ["ChatServer", "Fault", "completion"]


@dataclass(frozen=True)
class Fault:
    """A non-standard answer: an HTTP error, a malformed or truncated body, or a delay."""

    status: int = 500
    body: bytes | str = b'{"error": {"message": "fault"}}'
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False  # announce a longer Content-Length than is sent
    stream: Literal["malformed", "cut", "stall"] | None = None  # break a streamed reply this way
    message: dict[str, Any] = field(default_factory=lambda: {"content": "This answer never ends well."})
    after: int = 3  # chunks of ``message`` sent before the stream breaks


Reply = dict[str, Any] | Fault | list[dict[str, Any]]
Script = Sequence[Reply | Callable[[dict[str, Any]], Reply]]


def completion(
    message: dict[str, Any], *, prompt_tokens: int = 10, completion_tokens: int = 5
) -> dict[str, Any]:
    """A Chat Completion wrapping one assistant message."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "loopback",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class ChatServer:
    """``with ChatServer([...]) as server: OpenAIModel("m", base_url=server.base_url)``.

    With ``repeat=True`` the script cycles forever (for benchmarks); otherwise a request past
    the end of the script gets HTTP 500 and is counted in ``overrun``.
    """

    def __init__(self, script: Script, *, repeat: bool = False, chunk_size: int = 4) -> None:
        self.script = list(script)
        self.repeat = repeat
        self.chunk_size = chunk_size
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.overrun = 0
        self._lock = threading.Lock()
        self._httpd = _Quiet(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        port = self._httpd.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply | None:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            self.headers.append(headers)
            if index >= len(self.script) and not self.repeat:
                self.overrun += 1
                return None
            item = self.script[index % len(self.script)]
        return item(body) if callable(item) else item


class _Quiet(ThreadingHTTPServer):
    """Says nothing when a client closes its connection (a stream it stopped reading)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_for(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else each loopback reply waits ~40 ms for a delayed ACK

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"_raw": raw.decode(errors="replace")}
            reply = server.next_reply(body, dict(self.headers))
            if reply is None:
                self._send(500, b'{"error": {"message": "script exhausted"}}')
            elif isinstance(reply, Fault) and reply.stream:
                chunks = sse_chunks(reply.message, server.chunk_size)
                write_events(self, chunks, broken=reply.stream, after=reply.after, delay=reply.delay)
            elif body.get("stream") and not isinstance(reply, Fault):
                write_events(self, reply if isinstance(reply, list) else _streamed(reply, server.chunk_size))
            elif isinstance(reply, list):
                self._send(500, b'{"error": {"message": "a list of chunks needs a streamed request"}}')
            elif isinstance(reply, Fault):
                time.sleep(reply.delay)
                data = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self._send(reply.status, data, reply.headers, reply.truncate)
            else:
                body = reply if "choices" in reply else completion(reply)
                self._send(200, json.dumps(body).encode())

        def _send(
            self, status: int, data: bytes, headers: dict[str, str] | None = None, truncate: bool = False
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data) + (50 if truncate else 0)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
                if truncate:
                    self.close_connection = True
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout tests)

        def log_message(self, *_: Any) -> None:
            pass

    return Handler


def _streamed(reply: dict[str, Any], size: int) -> list[dict[str, Any]]:
    """The chunks of a scripted reply: an assistant message, or a whole completion with its usage."""
    if "choices" not in reply:
        return sse_chunks(reply, size)
    usage = reply.get("usage") or {}
    counts = {k: int(usage[k]) for k in ("prompt_tokens", "completion_tokens") if k in usage}
    return sse_chunks(reply["choices"][0]["message"], size, **counts)
