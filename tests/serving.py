"""``minloop serve`` in a subprocess on a free loopback port, for the server tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(
    store: str, *options: str, counts: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The base URL of a server running ``tests.servers.served:loop`` over ``store``, and its process."""
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        "SERVED_COUNTS": str(counts or ""),
    }
    command = [sys.executable, "-c", "from minloop.cli import main; main()", "serve", "--loop",
               "tests.servers.served:loop", "--store", store, "--port", str(port), "--url", f"http://127.0.0.1:{port}", *options]  # fmt: skip
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed below)  read only if the server fails to start; a pipe could fill and block it
    process = subprocess.Popen(command, env=env, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{base}/runs/none", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"the server did not start: {log.read()!r}") from None
                time.sleep(0.05)
        yield base, process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(10)
        log.close()
