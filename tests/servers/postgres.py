"""A real PostgreSQL server for the tests, from Debian's packages, in a temporary directory.

PostgreSQL refuses to run as root, so as root the cluster is made and started as the
``postgres`` user (``runuser``). It listens on 127.0.0.1 only, trusts local connections, and is
stopped by its pid.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["PostgresServer", "pg_bin"]


def pg_bin() -> Path | None:
    """The directory of ``initdb`` and ``postgres`` (Debian: /usr/lib/postgresql/<version>/bin)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """``with PostgresServer() as server: server.dsn``."""

    def __init__(self) -> None:
        binaries = pg_bin()
        if binaries is None:
            raise RuntimeError(
                "PostgreSQL is not installed (Debian package postgresql; scripts/setup.sh installs it)"
            )
        self.bin = binaries
        self.dir = Path(tempfile.mkdtemp(prefix="minloop-pg-"))
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _as_owner(self, *command: str) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", "postgres", "--", *command]
        return list(command)

    def start(self) -> PostgresServer:
        data = self.dir / "data"
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
        subprocess.run(self._as_owner(str(self.bin / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                                      "--no-sync", "-E", "UTF8"), check=True, capture_output=True)  # fmt: skip
        command = self._as_owner(
            str(self.bin / "postgres"), "-D", str(data), "-p", str(self.port), "-k", str(self.dir),
            "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=50",
        )  # fmt: skip
        with open(self.dir / "log", "wb") as log:  # the server keeps its own copy of the file
            self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                if self._ready():
                    return self
                time.sleep(0.05)
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError((self.dir / "log").read_text()) from None
                time.sleep(0.05)
        raise RuntimeError(f"PostgreSQL did not start: {(self.dir / 'log').read_text()}")

    def _ready(self) -> bool:
        """Whether the server takes connections (it listens a moment before it does)."""
        import psycopg

        try:
            psycopg.connect(self.dsn, connect_timeout=2).close()
        except psycopg.OperationalError:
            return False
        return True

    def stop(self) -> None:
        pid_file = self.dir / "data" / "postmaster.pid"
        if pid_file.exists():
            pid = int(pid_file.read_text().split()[0])
            try:
                os.kill(pid, signal.SIGINT)  # fast shutdown
            except ProcessLookupError:
                pass
        if self.process is not None:
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
