"""``minloop model-server``: llama.cpp's own OpenAI-compatible HTTP server on the bundled model (or
any GGUF), from the embedded runtime, as most people run a small local model. Nothing else is
installed or downloaded: a loop reaches it through ``OpenAIModel`` at ``http://HOST:PORT/v1``."""

from __future__ import annotations

import os
import socket
import time
import urllib.request
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..exceptions import MinloopError, MissingDependencyError
from ..factory import LOCAL_MODELS
from .serve import loopback
from .view import err

__all__ = ["model_server_command"]

STARTUP = 300  # seconds the server may take to load the weights and answer /health


def model_server_command(
    model: Annotated[str, typer.Option(help="'local' (the bundled 1.5B) or 'local-0.5b' (smaller, faster).")] = "local",
    gguf: Annotated[Path | None, typer.Option(help="Serve this GGUF file instead of a bundled model.")] = None,
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback needs --api-key.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to bind.")] = 8080,
    ctx: Annotated[int, typer.Option(min=512, help="Context window in tokens.")] = 8192,
    threads: Annotated[int | None, typer.Option(min=1, help="CPU threads (default: every core).")] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Reply length cap for requests that name none.")] = None,
    api_key: Annotated[list[str] | None, typer.Option(envvar="MINLOOP_MODEL_SERVER_KEY", help="Key a request must carry as its bearer token (repeatable).")] = None,
) -> None:  # fmt: skip
    """Serve a local model over HTTP with llama.cpp's own server (the OpenAI Chat Completions API)."""
    keys = [k for k in api_key or [] if k.strip()]
    if not loopback(host) and not keys:
        err.print(f"[bold red]error:[/] binding {host} serves other machines: give --api-key", soft_wrap=True)
        raise typer.Exit(2)
    try:
        path = _weights(model, gguf)
        server = _start(path, host, port, ctx, threads or os.cpu_count() or 1, max_tokens, keys)
    except MinloopError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    where = f"[{host}]" if ":" in host else host
    print(f"llama.cpp's server on http://{where}:{port}/v1 serving {path.name} (Ctrl-C stops it)", flush=True)
    try:
        while server is not None:
            time.sleep(3600)
    except KeyboardInterrupt:
        return


def _weights(model: str, gguf: Path | None) -> Path:
    """The GGUF to serve: the file given (checked), or the bundled model (found and verified)."""
    try:
        from ..models.local.gguf import check_gguf, ensure_gguf
    except ImportError as exc:
        raise MinloopError(str(MissingDependencyError(f"the embedded runtime ({exc.name})", "pip install 'minloop[local]'"))) from None  # fmt: skip
    if gguf is not None:
        return check_gguf(gguf)
    if model not in LOCAL_MODELS:
        raise MinloopError(f"--model {model!r}: the bundled models are {', '.join(sorted(LOCAL_MODELS))}")
    return ensure_gguf(LOCAL_MODELS[model])


def _start(
    path: Path, host: str, port: int, ctx: int, threads: int, max_tokens: int | None, keys: list[str]
) -> Any:
    """llama.cpp's server on ``host:port``, once it answers ``/health``."""
    try:
        import xllamacpp
    except ImportError:
        raise MinloopError(str(MissingDependencyError("the embedded runtime (xllamacpp)", "pip install 'minloop[local]'"))) from None  # fmt: skip
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx, params.n_parallel, params.use_jinja = ctx, 1, True  # the model's own template, with tools
    params.hostnames, params.port, params.verbosity = [host], port, -1
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
    params.api_keys = keys
    if max_tokens is not None:
        params.n_predict = max_tokens
    _free(host, port)
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as exc:  # llama.cpp says only "Failed to init server"
        raise MinloopError(f"llama.cpp's server could not start with {path}: {exc}") from None
    near = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)  # a wildcard is reached on loopback
    health = f"http://{f'[{near}]' if ':' in near else near}:{port}/health"
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(health, timeout=1) as reply:
                if reply.status == 200:
                    return server
        except OSError:
            time.sleep(0.2)
    raise MinloopError(
        f"llama.cpp's server did not answer on {host}:{port} within {STARTUP} s (is the port taken?)"
    )


def _free(host: str, port: int) -> None:
    """Raise, naming the port, when something already listens there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise MinloopError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
