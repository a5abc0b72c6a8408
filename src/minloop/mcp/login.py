"""Logging in to a server reached by URL: OAuth through the ``mcp`` SDK's providers, the tokens kept
in this process's memory only (never in a transcript, a run store, a trace or a log)."""

from __future__ import annotations

from typing import Any

__all__ = ["MemoryTokens", "client_credentials"]


class MemoryTokens:
    """The SDK's ``TokenStorage``, in memory: what a provider obtained lives as long as it does."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    def __repr__(self) -> str:  # never the tokens themselves
        return f"MemoryTokens({'a token' if self.tokens is not None else 'no token'})"

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


def client_credentials(
    url: str, client_id: str, client_secret: str, *, issuer: str, scope: str | None = None
) -> Any:
    """An ``auth=`` for ``MCPServer(url, auth=...)``: OAuth's client-credentials grant through the
    SDK's ``ClientCredentialsOAuthProvider``. The server's protected-resource metadata leads to its
    authorization server, which must be ``issuer``; a token is asked for on the first request and
    again when it has expired or the server refuses it."""
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

    return ClientCredentialsOAuthProvider(
        url, MemoryTokens(), client_id, client_secret, scope=scope, issuer=issuer
    )
