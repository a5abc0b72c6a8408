"""The loaded weights behind ``LocalModel``, and what is kept once per loaded model: the runtime
server and its lock, the template's tool layout and the prefix cache."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from .gguf import ensure_gguf
from .prefix_cache import PrefixCache, model_identity, prefix_dir
from .render import Layout
from .runtime import apply_template, get, load

__all__ = ["Loaded"]

_SERVERS: dict[tuple[str, int, int], tuple[Any, threading.Lock]] = {}
_CACHES: dict[tuple[str, int, int], PrefixCache] = {}
_LAYOUTS: dict[tuple[str, int, int], Layout | None] = {}
_LOAD_LOCK = threading.Lock()


class Loaded:
    """The weights a model runs (``path``, else the bundled ``model``), loaded once per process and
    shared by every model with the same file and settings."""

    path: Path | None
    model: str
    n_ctx: int
    threads: int
    prefix_cache: bool
    _weights: str | None

    def load(self) -> Any:
        """Load the weights (once per process); returns the runtime server."""
        return self._server()[0]

    def _layout(self) -> Layout | None:
        """How the loaded model's template writes tools (once per loaded model)."""
        return self._per_model(_LAYOUTS, lambda server: Layout.of(partial(apply_template, server)))

    def _per_model(self, table: dict[tuple[str, int, int], Any], build: Callable[[Any], Any]) -> Any:
        """``table``'s entry for the loaded weights, built from the runtime server the first time."""
        key = self._key()
        server = self._server()[0]
        with _LOAD_LOCK:
            if key not in table:
                table[key] = build(server)
            return table[key]

    def _key(self) -> tuple[str, int, int]:
        """The loaded weights' key; the bundled file is found and verified once per instance."""
        if self._weights is None:
            self._weights = str(self.path or ensure_gguf(self.model))
        return (self._weights, self.n_ctx, self.threads)

    def _server(self) -> tuple[Any, threading.Lock]:
        key = self._key()
        with _LOAD_LOCK:
            if key not in _SERVERS:
                _SERVERS[key] = (load(*key), threading.Lock())
            return _SERVERS[key]

    def prefixes(self) -> PrefixCache | None:
        """The on-disk prefix cache of the loaded weights (one per loaded model); ``None`` when off."""
        if not self.prefix_cache:
            return None

        def build(server: Any) -> PrefixCache:
            template = str(get(server, "/props").get("chat_template"))
            return PrefixCache(prefix_dir(), model_identity(Path(self._key()[0]), template))

        cache: PrefixCache = self._per_model(_CACHES, build)
        return cache
