"""The embedded model's prompt prefix kept on disk, so a new process skips it.

Every request of an agent starts with the same system prompt and tool definitions: several
hundred tokens that take seconds to evaluate on a CPU. Within a process the runtime keeps them
in its KV cache; ``PrefixCache`` keeps them across processes. Before a request, the prefix (the
rendered prompt up to the first message after the leading system messages) is looked up on disk
by a key made of the model file's identity, the runtime version, the chat template and the exact
prefix tokens. On a hit the runtime's slot is restored from the file (milliseconds); on a miss
the prefix is evaluated alone and saved, then the request reuses it as usual.

Files live in one directory (``<cache dir>/prefix``): ``<key>.bin`` is the runtime's slot
file, ``<key>.json`` records its size and sha256. A file whose record is missing or does not
match is never handed to the runtime (llama.cpp aborts the process on some truncated files); it
is deleted and the prefix evaluated again. The directory is kept under ``max_bytes`` by deleting
the least recently used entries.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from .gguf import cache_dir

__all__ = ["MAX_BYTES", "MIN_TOKENS", "PrefixCache", "model_identity", "prefix_dir"]

MAX_BYTES = 512 * 2**20  # ~40 prefixes of 1,000 tokens for the 0.5B model (12 KB per token)
MIN_TOKENS = 64  # shorter prefixes take under a second to evaluate; not worth a file
Post = Callable[[str, dict[str, Any]], dict[str, Any]]


def prefix_dir() -> Path:
    """Where prefixes are kept: ``prefix`` in minloop's cache directory."""
    return cache_dir() / "prefix"


def model_identity(path: Path, template: str) -> str:
    """What the KV state of a prefix depends on besides its tokens: the model file (size, mtime,
    a hash of its first MiB), the runtime's version and the chat template."""
    st = path.stat()
    with path.open("rb") as f:
        head = hashlib.sha256(f.read(2**20)).hexdigest()[:16]
    chat = hashlib.sha256(template.encode()).hexdigest()[:16]
    return f"{st.st_size}:{st.st_mtime_ns}:{head}:{metadata.version('xllamacpp')}:{chat}"


@dataclass
class PrefixCache:
    """Saves and restores the KV state of prompt prefixes for one loaded model (one slot)."""

    directory: Path
    model: str  # the weights' ``model_identity``, the runtime version and the chat template
    max_bytes: int = MAX_BYTES
    current: str | None = field(default=None, init=False)  # the key whose prefix the slot holds
    hits: int = field(default=0, init=False)
    misses: int = field(default=0, init=False)

    def prepare(self, post: Post, complete: Callable[[dict[str, Any]], Any], body: dict[str, Any]) -> int:
        """Make the runtime's slot start with the request's prefix, from disk when possible.

        ``post`` reaches the runtime's HTTP endpoints, ``complete`` runs a raw completion; both
        must be called with the model's lock held. Returns the prompt tokens evaluated here.
        """
        try:
            tokens = self.prefix_tokens(post, body)
        except (OSError, KeyError, ValueError):  # the template or tokenizer endpoint failed: no caching
            tokens = []
        if len(tokens) < MIN_TOKENS:
            self.current = None  # this request's own prompt replaces whatever the slot held
            return 0
        key = self.key(tokens)
        if key == self.current:
            return 0
        evaluated = 0
        if self._restore(post, key, len(tokens)):
            self.hits += 1
        else:
            self.misses += 1
            reply = complete({"prompt": tokens, "n_predict": 0, "cache_prompt": True})
            evaluated = int(((reply or {}).get("timings") or {}).get("prompt_n") or 0)
            self._save(post, key, len(tokens))
        self.current = key
        return evaluated

    def prefix_tokens(self, post: Post, body: dict[str, Any]) -> list[int]:
        """The tokens of the rendered prompt before its first non-system message."""
        messages = body.get("messages") or []
        system = _leading_system(messages)
        if not system or len(system) == len(messages):
            return []
        tools = body.get("tools")
        full = post("/apply-template", {"messages": messages, "tools": tools})["prompt"]
        head = post("/apply-template", {"messages": system, "tools": tools})["prompt"]
        text = full[: _common(full, head)]
        shared = post("/tokenize", {"content": text, "parse_special": True})["tokens"]
        whole = post("/tokenize", {"content": full, "parse_special": True})["tokens"]
        return [int(t) for t in whole[: _common(shared, whole)]]

    def key(self, tokens: list[int]) -> str:
        blob = json.dumps([self.model, tokens], separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def _restore(self, post: Post, key: str, n_tokens: int) -> bool:
        data, record = self.directory / f"{key}.bin", self.directory / f"{key}.json"
        if not data.exists():
            return False
        if not _valid(data, record, n_tokens):
            self._drop(key)
            return False
        try:
            reply = post("/slots/0?action=restore", {"filename": data.name})
        except OSError:  # the runtime refused the file (HTTP 400): it is not a state it can read
            reply = {}
        if int(reply.get("n_restored") or 0) != n_tokens:
            self._drop(key)
            return False
        now = time.time()
        with contextlib.suppress(OSError):
            os.utime(data, (now, now))
        return True

    def _save(self, post: Post, key: str, n_tokens: int) -> None:
        temporary = f"{key}.tmp{os.getpid()}"
        try:
            reply = post("/slots/0?action=save", {"filename": temporary})
            if int(reply.get("n_saved") or 0) != n_tokens:
                return
            written = self.directory / temporary
            digest = _sha256(written)
            size = written.stat().st_size
            written.replace(self.directory / f"{key}.bin")
            record = {"tokens": n_tokens, "bytes": size, "sha256": digest, "model": self.model}
            (self.directory / f"{key}.json").write_text(json.dumps(record))
        except OSError:
            return
        finally:
            (self.directory / temporary).unlink(missing_ok=True)
        self.trim()

    def trim(self) -> None:
        """Delete the least recently used entries until the directory holds at most ``max_bytes``."""
        entries = []
        for data in self.directory.glob("*.bin"):
            with contextlib.suppress(OSError):
                entries.append((data.stat().st_mtime, data.stat().st_size, data.stem))
        total = sum(size for _, size, _ in entries)
        for _, size, key in sorted(entries):
            if total <= self.max_bytes:
                break
            self._drop(key)
            total -= size

    def _drop(self, key: str) -> None:
        for suffix in (".bin", ".json"):
            with contextlib.suppress(OSError):
                (self.directory / f"{key}{suffix}").unlink()
        if self.current == key:
            self.current = None


def _valid(data: Path, record: Path, n_tokens: int) -> bool:
    try:
        meta = json.loads(record.read_text())
        return (
            meta.get("tokens") == n_tokens
            and data.stat().st_size == meta.get("bytes")
            and _sha256(data) == meta.get("sha256")
        )
    except (OSError, ValueError, AttributeError):
        return False


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _leading_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        if message.get("role") != "system":
            break
        out.append(message)
    return out


def _common(a: Any, b: Any) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
