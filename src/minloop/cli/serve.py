"""``minloop serve``: the loop as an HTTP service (``minloop.serve``), run by uvicorn."""

from __future__ import annotations

import copy
import importlib
import ipaddress
import os
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ..exceptions import MinloopError, MissingDependencyError
from ..factory import build_model, build_tools
from ..small import small_model_layers
from ..standard import Loop
from .calls import CacheDbOpt, CacheOpt, ConcurrencyOpt, RetryOpt, call_keywords
from .view import err

GRACE = 5  # seconds a stopped server lets requests finish
# Seconds an idle connection stays open: longer than clients and load balancers keep theirs
# (httpx 5, a load balancer 60), so the server never closes one as a request is sent on it.
KEEP_ALIVE = 75


def serve_command(
    model: Annotated[str, typer.Option(help="'local' (embedded), or a remote model name.")] = "local",
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint for a remote model.")] = None,
    api_key_env: Annotated[str, typer.Option(help="Environment variable holding the API key.")] = "OPENAI_API_KEY",
    tools: Annotated[list[str] | None, typer.Option("--tools", help="Tools: 'module:function' or a .py file.")] = None,
    builtin: Annotated[bool, typer.Option(help="Offer the built-in tools (calculator, clock, files).")] = True,
    root: Annotated[Path, typer.Option(help="Directory the file tools may read.")] = Path("."),
    max_steps: Annotated[int, typer.Option(min=1, help="Step budget of each run.")] = 6,
    loop: Annotated[str | None, typer.Option(help="Serve this Loop object instead: 'module:name'.")] = None,
    store: Annotated[str | None, typer.Option(help="Run store: a SQLite path or postgresql://...")] = None,
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback needs a token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to bind.")] = 8000,
    url: Annotated[str | None, typer.Option(help="Where clients reach this server (for the A2A agent card).")] = None,
    token: Annotated[list[str] | None, typer.Option(envvar="MINLOOP_TOKEN", help="Bearer token a request must carry (repeat it for several clients; or MINLOOP_TOKEN, space-separated); each sees only its own runs.")] = None,
    lease_scan: Annotated[float, typer.Option(min=0, help="Seconds between looks for runs whose worker stopped, to resume them (0: never).")] = 5.0,
    tool_concurrency: ConcurrencyOpt = None,
    retry: RetryOpt = None,
    cache: CacheOpt = False,
    cache_db: CacheDbOpt = None,
    small_model: Annotated[bool, typer.Option("--small-model", help="Give a small model behind --base-url the embedded model's controls (minloop.small).")] = False,
) -> None:  # fmt: skip
    """Serve one loop over HTTP: runs with events, approvals and resume, and /v1/chat/completions."""
    try:
        import uvicorn

        from ..runs.open import open_store
        from ..serve import create_app
    except ImportError as exc:
        raise SystemExit(
            str(MissingDependencyError(f"the server ({exc.name})", "pip install 'minloop[serve]'"))
        ) from None
    from ..serve.app import tokens_of

    real = tokens_of(token)
    if not loopback(host) and not real:
        blank = " (an empty or blank token is no token)" if token else ""
        err.print(f"[bold red]error:[/] binding {host} serves other machines: give --token or MINLOOP_TOKEN{blank}",
                  soft_wrap=True)  # fmt: skip
        raise typer.Exit(2)
    if token and not real:
        err.print("[yellow]warning:[/] the token given is empty, and an empty token is no token: "
                  "this server asks for none", soft_wrap=True)  # fmt: skip
    try:
        served = _load(loop) if loop else Loop(build_model(model, base_url=base_url, api_key_env=api_key_env),
                                               build_tools([*(["builtins"] if builtin else []), *(tools or [])], root),
                                               max_steps)  # fmt: skip
        asked = {k: v for k, v in call_keywords(tool_concurrency, retry, cache, cache_db).items() if v}
        asked |= {"layers": [*served.layers, *small_model_layers()]} if small_model else {}
        served = replace(served, **asked) if asked else served
        app = create_app(served, open_store(store), token=real, url=url or f"http://{host}:{port}",
                         lease_scan=lease_scan or None)  # fmt: skip
    except (MinloopError, OSError) as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    level = os.environ.get("MINLOOP_LOG_LEVEL", "warning")
    # Stopped, it lets requests finish for a few seconds, then closes event streams (their clients
    # reconnect elsewhere) and leaves its runs to the other workers.
    uvicorn.run(app, host=host, port=port, log_level=level, timeout_graceful_shutdown=GRACE,
                timeout_keep_alive=KEEP_ALIVE, log_config=_logging(level))  # fmt: skip


def _logging(level: str) -> dict[str, Any]:
    """uvicorn's logging, with minloop's own records (a run that failed, a store write that
    failed) written beside uvicorn's, at the same level."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["minloop"] = {"handlers": ["default"], "level": level.upper(), "propagate": False}
    return config


def loopback(host: str) -> bool:
    """Whether ``host`` is reached only from this machine (``localhost`` or a loopback address)."""
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve to any interface


def _load(spec: str) -> Loop:
    module, _, name = spec.partition(":")
    try:
        found = getattr(importlib.import_module(module), name or "loop")
    except (ImportError, AttributeError) as exc:
        raise MinloopError(f"--loop {spec}: cannot load it ({exc})") from None
    if not isinstance(found, Loop):
        raise MinloopError(f"--loop {spec} is a {type(found).__name__}, not a minloop Loop")
    return found
