"""Chat Completions over HTTP.

``OpenAIModel`` posts to any OpenAI-compatible ``/chat/completions`` endpoint with httpx (a
plain POST is several times cheaper per step than the official SDK on loopback; see
``benchmarks/overhead.py``). Transient failures (connection errors, a body cut off or not a
Chat Completion, 408/409/429/5xx) are retried with exponential backoff and jitter, honouring
``Retry-After``, at most ``max_retries`` times. ``OpenAIClientModel`` wraps a caller's own
``openai.AsyncOpenAI``.
Both can stream (``stream``, see ``minloop.models.sse``); a stream is retried only while none of
it was delivered.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import httpx

from ..exceptions import ModelError, ModelHTTPError, TranscriptError
from ..guard import ensure_not_in_tool
from ..messages import Message
from .base import ModelRequest, ModelResponse, Usage
from .runaway import whole_reply
from .send import Sender
from .unparsed import recovered, unparsed_text
from .written import calls_as_text

if TYPE_CHECKING:
    from .base import ModelDelta

# Streaming (``.sse``, ``..streaming``) is imported on the first ``stream`` call: most runs never stream.

__all__ = ["OpenAIClientModel", "OpenAIModel", "parse_completion", "request_body"]

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
MAX_TOKENS = 4096  # the default cap of one reply: far above an agent's answer, far below a runaway
CAPS = ("max_tokens", "max_completion_tokens", "n_predict")  # the names servers give the cap
UNPARSED = "the server could not parse the model's tool call, asked twice"
ToolsOff: TypeAlias = Literal["text", "omit", "tool_choice"]


class OpenAIModel:
    """A model behind an OpenAI-compatible Chat Completions endpoint.

    The key is read from ``api_key`` or the environment variable ``api_key_env`` (default
    ``OPENAI_API_KEY``); no key means no ``Authorization`` header (local servers).
    ``extra_body`` is merged into every request (``temperature``, ``seed``, ...).
    ``structured_output`` (default on) says the endpoint takes ``response_format`` with a JSON
    schema; turn it off for one that does not, and a typed run puts the schema in the prompt.
    ``context_window`` (tokens) is the model's window, used by ``ContextPolicy`` when it names
    none. ``timeout`` is seconds per HTTP request (connect, send and each read), not per run.
    ``tools_off``: how a call with tools off (the answer at a limit, after decay) is sent: by
    default (``"text"``) without the tools, and with the transcript's calls and results written
    as text in the assistant's turns (``written.calls_as_text``): llama.cpp's server, given
    ``tool_choice: "none"``, still shows the tools to the model, and a small model shown its own
    calls goes on writing them. ``"omit"`` leaves the transcript as it is; ``"tool_choice"`` sends
    the tools with ``tool_choice: "none"`` (for a provider that wants the tools whenever the
    transcript holds calls).

    ``max_tokens`` (default ``MAX_TOKENS``; ``None``: none) caps one reply: it is sent as
    ``max_tokens`` (to ``api.openai.com`` as ``max_completion_tokens``), unless ``extra_body``
    names a cap of its own, which is then the cap; and it is held on this side too, for a server
    that ignores it: a stream is closed once the reply passes it, a whole reply that passed it is
    marked. A reply that writes again what it just wrote (``minloop.models.runaway``) is stopped
    there, streamed or not. Such a reply comes back with ``ModelResponse.stopped`` saying why.
    A server that answers it could not parse the model's tool call (Ollama's HTTP 500 "error
    parsing tool call") is read by ``minloop.models.unparsed``: the call in the error's text is
    the reply when it calls a registered tool, else the request is sent once more.

    Retries: a connection error, a response whose body is cut off or is not a Chat Completion
    (even with status 200), and statuses 408/409/429/5xx are tried again up to ``max_retries``
    times (so at most ``max_retries + 1`` requests), waiting ``backoff * 2**attempt`` seconds
    (0.5 s, 1 s, 2 s, ... with jitter, never more than ``max_backoff``), or exactly what the
    server's ``Retry-After`` asks. A ``Retry-After`` longer than ``max_backoff`` is not
    shortened: the call fails at once with ``ModelHTTPError`` saying how long the server
    asked to wait (the run ends with ``model_error``), rather than retrying earlier than asked.
    Other 4xx statuses are not retried.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.openai.com/v1",
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        extra_body: dict[str, Any] | None = None,
        context_window: int | None = None,
        structured_output: bool = True,
        tools_off: ToolsOff = "text",
        max_tokens: int | None = MAX_TOKENS,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = model
        self.max_tokens = max_tokens
        self.tools_off: ToolsOff = tools_off
        self.structured_output = structured_output
        self.context_window = context_window
        self.url = base_url.rstrip("/") + "/chat/completions"
        key = api_key if api_key is not None else os.environ.get(api_key_env)
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.extra_body = dict(extra_body or {})
        self._transport = transport
        self._sender: Sender | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIModel({self.name!r}, url={self.url!r})"

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        body = request_body(self.name, request, self.extra_body, self.tools_off)
        if self.max_tokens is not None and not any(key in body for key in CAPS):
            key = "max_completion_tokens" if "//api.openai.com/" in self.url else "max_tokens"
            body[key] = self.max_tokens
        return body

    async def call(self, request: ModelRequest) -> ModelResponse:
        ensure_not_in_tool(self.name)
        payload = self.payload(request)
        body, sender, unparsed = _encoded(payload), self._sender_for_loop(), False
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                resp = await sender.post(body)
            except httpx.TransportError as exc:
                if last:
                    raise ModelError(f"cannot reach {self.url}: {type(exc).__name__}: {exc}") from exc
                await asyncio.sleep(self._delay(attempt, None))
                continue
            if resp.status_code < 400:
                try:
                    return whole_reply(parse_completion(resp.content, self.url), _cap(payload))
                except ModelError:  # cut off or not a completion: as transient as a dropped connection
                    if last:
                        raise
                    await asyncio.sleep(self._delay(attempt, None))
                    continue
            if (raw := unparsed_text(resp.text)) is not None:  # the server could not parse a call
                if found := self._unparsed(raw, request, resp.status_code, resp.text, unparsed or last):
                    return found
                unparsed = True  # asked once more at once: the model may write it right
                continue
            if last or resp.status_code not in RETRY_STATUSES:
                raise ModelHTTPError(resp.status_code, resp.text, url=self.url)
            await asyncio.sleep(self._wait(resp, attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, resp: httpx.Response, attempt: int) -> float:
        """Seconds to wait before retrying ``resp``; a ``Retry-After`` past ``max_backoff`` raises."""
        hinted = _retry_after_seconds(resp.headers.get("retry-after"))
        if hinted is not None and hinted > self.max_backoff:
            note = (
                f"the server asked to wait {hinted:g} s before retrying (Retry-After), longer than "
                f"max_backoff={self.max_backoff:g} s; not retrying sooner than asked. Raise "
                "max_backoff to wait that long"
            )
            raise ModelHTTPError(resp.status_code, resp.text, url=self.url, note=note)
        return self._delay(attempt, resp.headers.get("retry-after"))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """The reply as server-sent events: deltas as they arrive, then the whole ``ModelResponse``.

        Connection errors and retryable statuses are retried as in ``call`` while nothing was
        delivered; a stream cut or stalled (no data for ``timeout`` seconds) after that, or a
        malformed line, raises ``ModelError``. A reply that runs away (``max_tokens``, a repeat)
        is stopped: the stream is closed, which stops the server too.
        """
        from .sse import ChatStream, stream_body, stream_failure

        ensure_not_in_tool(self.name)
        payload = stream_body(self.payload(request))
        body, sender, unparsed = _encoded(payload), self._sender_for_loop(), False
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            chat = ChatStream(self.url, _cap(payload))
            try:
                async with sender.stream(body) as resp:
                    if resp.status_code < 400 and "json" in resp.headers.get("content-type", ""):
                        yield whole_reply(parse_completion(await resp.aread(), self.url), _cap(payload))
                        return  # a server that does not stream
                    if resp.status_code < 400:
                        async for line in resp.aiter_lines():  # to the end: the connection is reused
                            for delta in chat.feed_line(line) if not chat.done else ():
                                yield delta
                            if chat.runaway or chat.unparsed is not None:
                                break  # closing the stream stops the server's generation
                        if chat.unparsed is None:
                            yield chat.response()
                            return
                        raw: str | None = chat.unparsed
                        status, text = 200, chat.unparsed
                    else:
                        await resp.aread()
                        raw, status, text = unparsed_text(resp.text), resp.status_code, resp.text
                    if raw is not None:  # the server could not parse a call
                        final = unparsed or last or chat.delivered
                        if (found := self._unparsed(raw, request, status, text, final)) is not None:
                            yield found
                            return
                        unparsed, delay = True, 0.0
                    elif last or resp.status_code not in RETRY_STATUSES:
                        raise ModelHTTPError(resp.status_code, resp.text, url=self.url)
                    else:
                        delay = self._wait(resp, attempt)
            except httpx.TransportError as exc:
                if chat.delivered or last:
                    raise ModelError(stream_failure(exc, chat, self.timeout)) from exc
                delay = self._delay(attempt, None)
            await asyncio.sleep(delay)

    def _unparsed(
        self, raw: str, request: ModelRequest, status: int, body: str, final: bool
    ) -> ModelResponse | None:
        """The calls in the text of a tool call the server could not parse, or ``None`` to ask once
        more; ``ModelHTTPError`` when it is not to be asked again (``final``)."""
        if (found := recovered(raw, request)) is not None:
            return found
        if final:
            raise ModelHTTPError(status, body, url=self.url, note=UNPARSED)
        return None

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        hinted = _retry_after_seconds(retry_after)
        if hinted is not None:
            return min(hinted, self.max_backoff)
        return min(self.backoff * 2**attempt, self.max_backoff) * random.uniform(0.5, 1.0)

    def _sender_for_loop(self) -> Sender:
        loop = asyncio.get_running_loop()  # a pooled client belongs to one event loop
        if self._sender is None or self._client_loop is not loop:
            client = httpx.AsyncClient(
                headers={"Content-Type": "application/json", **self._headers},
                timeout=self.timeout,
                transport=self._transport,
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=100),
            )
            self._sender, self._client_loop = Sender(client, self.url), loop
        return self._sender

    async def aclose(self) -> None:
        if self._sender is not None:
            await self._sender.client.aclose()
            self._sender = None


def request_body(
    model: str, request: ModelRequest, extra: dict[str, Any], tools_off: ToolsOff = "text"
) -> dict[str, Any]:
    """The Chat Completions request body (for httpx, or keyword arguments for the SDK). A call
    with ``tool_choice="none"`` goes without its tools, its calls and results written as text,
    unless ``tools_off`` says otherwise (see ``OpenAIModel``)."""
    body: dict[str, Any] = {"model": model, "messages": list(request.messages), **extra}
    if request.tools and (request.tool_choice != "none" or tools_off == "tool_choice"):
        body["tools"] = list(request.tools)
        body["tool_choice"] = request.tool_choice
    elif request.tool_choice == "none" and tools_off == "text":
        body["messages"] = calls_as_text(request.messages)
    if request.output_schema is not None:
        from ..layers.output import response_format

        body["response_format"] = response_format(request.output_schema)
    return body


_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _encoded(body: dict[str, Any]) -> bytes:
    try:
        return _COMPACT.encode(body).encode()
    except (TypeError, ValueError) as exc:
        raise TranscriptError(
            None, "not_json_serialisable", f"the request cannot be sent as JSON: {exc}"
        ) from None


def parse_completion(raw: bytes | str | dict[str, Any], url: str = "") -> ModelResponse:
    """The assistant message and usage of a Chat Completion (``stopped`` when the server cut it at
    its length limit); ``ModelError`` if it is not one."""
    try:
        data = json.loads(raw) if isinstance(raw, bytes | str) else raw
        message = dict(data["choices"][0]["message"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        text = raw[:200] if isinstance(raw, bytes | str) else str(raw)[:200]
        raise ModelError(
            f"malformed Chat Completion from {url or 'model'}: {type(exc).__name__}: {text!r}"
        ) from None
    message["role"] = "assistant"
    usage = data.get("usage") or {}
    return ModelResponse(
        message=_normalize(message),
        usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
        stopped="length" if data["choices"][0].get("finish_reason") == "length" else None,
    )


def _normalize(message: Message) -> Message:
    """String arguments, and no empty fields (``"refusal": null``, ``"annotations": []``): the
    message a stream reassembles has none, and a run's trace is the same streamed or not."""
    for key in [k for k, v in message.items() if k not in ("role", "content") and v in (None, [])]:
        del message[key]
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and not isinstance(fn.get("arguments"), str):
                fn["arguments"] = json.dumps(fn.get("arguments") or {})
    return message


def _cap(body: dict[str, Any]) -> int | None:
    """The reply's length cap a request body names, if any."""
    caps = [body[key] for key in CAPS if isinstance(body.get(key), int) and body[key] > 0]
    return min(caps) if caps else None


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, parsed.timestamp() - time.time())


class OpenAIClientModel:
    """Adapter for a caller's own ``openai.AsyncOpenAI`` client (their auth, proxies, retries).
    ``tools_off`` as for ``OpenAIModel``; other keywords are merged into every request."""

    structured_output = True

    def __init__(self, client: Any, model: str, *, tools_off: ToolsOff = "text", **extra_body: Any) -> None:
        self.client = client
        self.name = model
        self.tools_off: ToolsOff = tools_off
        self.extra_body = extra_body

    async def call(self, request: ModelRequest) -> ModelResponse:
        ensure_not_in_tool(self.name)
        try:
            completion = await self.client.chat.completions.create(
                **request_body(self.name, request, self.extra_body, self.tools_off)
            )
        except Exception as exc:  # the SDK's own error types; keep the cause
            raw = unparsed_text(getattr(exc, "body", None) or str(exc))  # the SDK retried it already
            if raw is not None and (found := recovered(raw, request)) is not None:
                return found  # a call the server could not parse (see ``OpenAIModel``)
            raise ModelError(f"{type(exc).__name__}: {exc}") from exc
        return parse_completion(completion.model_dump(exclude_none=True))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta | ModelResponse]:
        """The reply streamed through the SDK (``stream=True``), reassembled as ``OpenAIModel`` does."""
        from .sse import ChatStream, stream_body

        ensure_not_in_tool(self.name)
        chat = ChatStream(self.name)
        body = stream_body(request_body(self.name, request, self.extra_body, self.tools_off))
        try:
            chunks = await self.client.chat.completions.create(**body)
            async for chunk in chunks:
                for delta in chat.feed(chunk.model_dump(exclude_none=True)):
                    yield delta
        except ModelError:
            raise
        except Exception as exc:  # the SDK's own error types; keep the cause
            raise ModelError(f"{type(exc).__name__}: {exc}") from exc
        yield chat.response()
