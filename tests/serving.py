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
    store: str, *options: str, counts: Path | None = None, log: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The base URL of a server running ``tests.servers.served:loop`` over ``store``, and its
    process; what it writes to stderr goes to ``log`` when given."""
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}",
        "SERVED_COUNTS": str(counts or ""),
    }
    command = [sys.executable, "-c", "from minloop.cli import main; main()", "serve", "--loop",
               "tests.servers.served:loop", "--store", store, "--port", str(port), "--url", f"http://127.0.0.1:{port}", *options]  # fmt: skip
    # read only if the server fails to start (or by the caller); a pipe could fill and block it
    stderr = open(log, "w+b") if log is not None else tempfile.TemporaryFile()  # noqa: SIM115 (closed below)
    process = subprocess.Popen(command, env=env, stderr=stderr)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{base}/runs/none", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    stderr.seek(0)
                    raise RuntimeError(f"the server did not start: {stderr.read()!r}") from None
                time.sleep(0.05)
        yield base, process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(10)
        stderr.close()
