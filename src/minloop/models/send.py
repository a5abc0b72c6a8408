"""Requests sent straight to the connection pool of ``OpenAIModel``'s own client.

``OpenAIModel`` builds its ``httpx.AsyncClient`` itself and uses nothing that ``client.post``
adds on top of the pool for every request: an auth flow, redirects (a POST to an API follows
none), event hooks, merging the client's headers and cookies afresh. On loopback that layer is
about a fifth of a step (``benchmarks/overhead.py``). ``Sender`` keeps what the client would do:
the transport it would pick for the URL (its proxy mounts included), its headers and timeout,
cookies a server sets (kept in the client's jar and sent back), and the request on the response
and on a connection error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

__all__ = ["Sender"]


class Sender:
    """POSTs of JSON bodies to one URL through ``client``'s pool."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.client = client
        self.url = httpx.URL(url)
        self.headers = httpx.Headers(client.headers)
        self.extensions = {"timeout": client.timeout.as_dict()}
        pick = getattr(client, "_transport_for_url", None)  # httpx's own choice, proxies included
        self.transport = pick(self.url) if pick else None

    async def post(self, body: bytes) -> httpx.Response:
        """The whole response, read and closed."""
        if self.transport is None:
            return await self.client.post(self.url, content=body)
        response = await self._send(body)
        try:
            await response.aread()
        finally:
            await response.aclose()
        return response

    @asynccontextmanager
    async def stream(self, body: bytes) -> AsyncIterator[httpx.Response]:
        """The response open for reading; closed on leaving, which stops a server's generation."""
        if self.transport is None:
            async with self.client.stream("POST", self.url, content=body) as response:
                yield response
            return
        response = await self._send(body)
        try:
            yield response
        finally:
            await response.aclose()

    async def _send(self, body: bytes) -> httpx.Response:
        assert self.transport is not None
        cookies = self.client.cookies
        request = httpx.Request(
            "POST",
            self.url,
            content=body,
            headers=self.headers,
            cookies=cookies if len(cookies.jar) else None,
            extensions=self.extensions,
        )
        try:
            response = await self.transport.handle_async_request(request)
        except httpx.RequestError as exc:
            exc.request = request
            raise
        response.request = request
        if "set-cookie" in response.headers:
            cookies.extract_cookies(response)
        return response
