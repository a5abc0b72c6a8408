"""Who drives a run: ``host:pid:start`` of the process, and whether that process still lives.

On the same host a process that has exited (or whose pid now belongs to another process, told
apart by its start time) holds nothing, whatever its lease says; on another host only the
lease's end can tell.
"""

from __future__ import annotations

import os
import socket
import time
from functools import cache
from pathlib import Path

from .records import RunRow

__all__ = ["owner_alive", "stalled", "this_process"]


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot, or "" where /proc cannot tell."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return ""
    return fields[19] if len(fields) > 19 else ""


def this_process() -> str:
    """This process, as a run's owner (a forked child is an owner of its own)."""
    return _owner(os.getpid())


@cache
def _owner(pid: int) -> str:
    return f"{socket.gethostname()}:{pid}:{_start_time(pid)}"


def owner_alive(owner: str) -> bool:
    """Whether the process ``owner`` names may still be running."""
    host, _, rest = owner.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return True  # another machine: only its lease can tell
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not start or _start_time(pid) in ("", start)


def stalled(row: RunRow, now: float | None = None) -> bool:
    """Whether ``row`` is a run nobody drives any more: it was running, and the process that
    drove it has exited or its lease ran out. A worker resumes such runs; ``claim`` still makes
    sure only one worker gets each."""
    if row.status != "running":
        return False
    if row.owner is None or row.lease_until is None:
        return True
    return row.lease_until < (time.time() if now is None else now) or not owner_alive(row.owner)
