"""The llama.cpp runtime behind ``LocalModel``: loading a GGUF in-process with ``xllamacpp``,
chat completions on its single slot, and its own template and tokenizer endpoints."""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.request
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from typing import Any

from ...exceptions import ContextOverflowError, MissingDependencyError, ModelError, ModelLoadError
from .prefix_cache import PrefixCache, prefix_dir
from .stream import TEXT_SINK, streamed_completion

__all__ = [
    "ONE_LINE",
    "PROMPT_CACHE_MIB",
    "apply_template",
    "complete",
    "get",
    "grammar_of",
    "load",
    "post",
    "tokenize",
]

# llama.cpp keeps the KV state of prompts its one slot held before in this much memory, and
# restores the one sharing the longest prefix with a new prompt, so a decision after a translation
# finds its own prefix again (six Chinese requests, the 1.5B model: 3.7 s a request against 5.7 s).
PROMPT_CACHE_MIB = 1024
# llguidance's options for JSON on one line, with the separators the model writes by itself
ONE_LINE = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


def load(path: str, n_ctx: int, threads: int) -> Any:
    try:
        import xllamacpp
    except ImportError:
        raise MissingDependencyError(
            "xllamacpp (the embedded llama.cpp runtime)", "pip install 'minloop[local]'"
        ) from None
    params = xllamacpp.CommonParams()
    params.model.path = path
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.use_jinja = True
    params.cache_prompt = True
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.cache_ram_mib = PROMPT_CACHE_MIB  # prompts the slot held before, restored by prefix
    params.fit_params = False  # skips ~0.6 s of device-memory fitting on a CPU-only load
    params.verbosity = -1  # silent: llama.cpp would print ~15 lines per load and request
    prefix_dir().mkdir(parents=True, exist_ok=True)
    params.slot_save_path = f"{prefix_dir()}{os.sep}"  # joined with a file name as is
    try:
        return xllamacpp.Server(params)
    except Exception as exc:
        raise ModelLoadError(f"llama.cpp could not load {path}: {exc}") from exc


def complete(
    server: Any,
    lock: threading.Lock,
    body: dict[str, Any],
    cache: PrefixCache | None = None,
    *,
    whole: bool = False,
    watches: Sequence[Callable[[str], bool]] = (),
    raw: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """One chat completion. With ``cache``, the prompt's system-and-tools prefix comes from disk
    when kept; the answer is streamed to ``TEXT_SINK`` when one is set, unless ``whole``.
    Each of ``watches`` is given the answer's text as it grows, and ``raw`` every piece of the
    reply as generated; one returning True stops it."""
    sink = None if whole else TEXT_SINK.get()
    if watches:
        sink = _all([sink, *watches] if sink is not None else watches)
    if raw is not None and sink is None:
        sink = _all([])
    with lock:  # one slot: serialised calls keep the KV cache on the growing transcript
        try:
            primed = 0
            if cache is not None:  # the leading system messages (with the tools written in them)
                primed = cache.prepare(partial(post, server), server.handle_completions, body)
            if sink is None:
                reply = server.handle_chat_completions(body)
            else:
                reply = streamed_completion(server, body, sink, raw)
        except Exception as exc:
            raise ModelError(f"local model failed: {exc}") from exc
    if not isinstance(reply, dict) or "choices" not in reply:
        error = reply.get("error") if isinstance(reply, dict) else None
        if isinstance(error, dict) and error.get("type") == "exceed_context_size_error":
            raise ContextOverflowError(
                f"the prompt needs {error.get('n_prompt_tokens')} tokens; the window is {error.get('n_ctx')}"
            )
        raise ModelError(f"local model failed: {json.dumps(reply)[:300]}")
    if primed and isinstance(reply.get("timings"), dict):  # the prefix evaluated for the cache counts too
        reply["timings"]["prompt_n"] = int(reply["timings"].get("prompt_n") or 0) + primed
    return reply


def _all(sinks: Sequence[Callable[[str], bool]]) -> Callable[[str], bool]:
    return lambda piece: any([sink(piece) for sink in sinks])  # a list: every sink sees every piece


def get(server: Any, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(server.listening_address + path, timeout=30) as response:
        return json.loads(response.read())


def post(server: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """The runtime's own HTTP endpoints on 127.0.0.1 (template and tokenizer have no in-process call)."""
    request = urllib.request.Request(
        server.listening_address + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def apply_template(
    server: Any, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None
) -> str:
    """The prompt the model's chat template makes of ``messages`` and ``tools``."""
    return str(post(server, "/apply-template", {"messages": list(messages), "tools": tools})["prompt"])


def tokenize(server: Any, text: str) -> list[int]:
    """The model's tokens for a rendered prompt (its special tokens read as such)."""
    return [int(t) for t in post(server, "/tokenize", {"content": text, "parse_special": True})["tokens"]]


def grammar_of(schema: dict[str, Any]) -> str | None:
    """The replies ``schema`` allows, on one line: GBNF with one space at most between the parts,
    or for a runtime built with llguidance the schema with fixed separators (``ONE_LINE``);
    ``None`` for a schema it cannot convert (the runtime then says why)."""
    return _grammar(json.dumps(schema))


@lru_cache(maxsize=64)
def _grammar(schema: str) -> str | None:
    try:
        import xllamacpp

        written = str(xllamacpp.json_schema_to_grammar(schema))
        if written.startswith("%llguidance"):
            held = json.dumps({**json.loads(schema), "x-guidance": ONE_LINE})
            return str(xllamacpp.json_schema_to_grammar(held))
    except Exception:
        return None
    return re.sub(r"^space ::= .*$", 'space ::= " "?', written, count=1, flags=re.MULTILINE)
