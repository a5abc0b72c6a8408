"""What workers serving the same runs share in the store besides the runs: each run's events,
requests to cancel a run, and the runs still marked running (for a worker to find those that
nobody drives any more).

A run's events are numbered from 1 over its whole life and kept in batches (one row per
write). Only the process driving the run writes them; each write checks that it still does and
renews its lease, in one transaction for every run it has events of. The last events of a run
and its end (or pause) are one write, so whoever sees the run ended or paused finds all its
events. The events of an ended run are kept ``kept_for`` seconds, then ``forget_events`` drops
them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ..exceptions import RunConflictError, RunNotFoundError
from .records import ENDED, EventBatch, RunRow, ended_steps

__all__ = ["FINISH", "KEPT_FOR", "SharedSQL", "shared_tables"]

KEPT_FOR = 3600.0  # seconds the events of an ended run are kept, unless told otherwise
FINISH = (
    "UPDATE minloop_runs SET status = ?, result = ?, steps = CASE WHEN steps < ? THEN ? ELSE steps END, "
    "owner = NULL, lease_until = NULL, version = version + 1, updated = ? WHERE run_id = ? AND owner = ?"
)
ROW = "run_id, status, created, updated, owner, lease_until, steps, tag"
CHUNK = 200  # rows a statement names at most


def shared_tables(real: str) -> list[str]:
    """The DDL of the shared tables, with ``real`` the name of the floating-point type."""
    return [
        f"""CREATE TABLE IF NOT EXISTS minloop_events (
            run_id TEXT NOT NULL, first_event INTEGER NOT NULL, last_event INTEGER NOT NULL,
            events TEXT NOT NULL, kept_until {real}, PRIMARY KEY (run_id, first_event))""",
        "CREATE INDEX IF NOT EXISTS minloop_events_by_age ON minloop_events (kept_until)",
        f"CREATE TABLE IF NOT EXISTS minloop_cancels (run_id TEXT PRIMARY KEY, asked {real} NOT NULL, "
        "asked_by TEXT, reason TEXT)",
        "CREATE INDEX IF NOT EXISTS minloop_runs_by_status ON minloop_runs (status)",
    ]


# Columns added to a table after it was first released: a store an earlier version made gains
# them when it is opened (each may be NULL, so the rows it holds stay as they were).
LATER_COLUMNS = {"minloop_cancels": (("asked_by", "TEXT"), ("reason", "TEXT"))}


def later_columns(has: Callable[[str], set[str]] | None = None) -> list[str]:
    """The statements that add ``LATER_COLUMNS`` to an earlier version's tables: those that
    ``has(table)`` (the columns a table has) lacks, or with ``has`` None every one as ``ADD
    COLUMN IF NOT EXISTS`` (PostgreSQL)."""
    return [
        f"ALTER TABLE {table} ADD COLUMN {'IF NOT EXISTS ' if has is None else ''}{name} {kind}"
        for table, columns in LATER_COLUMNS.items()
        for name, kind in columns
        if has is None or name not in has(table)
    ]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _chunks(items: Sequence[Any]) -> list[Sequence[Any]]:
    return [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)]


def _row(r: Any) -> RunRow:
    return RunRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], "", 0, r[7])


class SharedSQL:
    """The shared tables' statements, for ``SQLRunStore``."""

    _execute: Callable[[str, tuple[Any, ...]], Any]
    _transaction: Callable[[bool], AbstractContextManager[Any]]
    _lock: threading.RLock
    where: str

    def _status(self, run_id: str) -> tuple[str, int]:
        got = self._execute("SELECT status, version FROM minloop_runs WHERE run_id = ?", (run_id,)).fetchone()
        if got is None:
            raise RunNotFoundError(run_id, f"no run with this id in {self.where}")
        return str(got[0]), int(got[1])

    def row(self, run_id: str) -> RunRow:
        """The run's row without its prompt, state or result (cheap to read)."""
        with self._lock:
            got = self._execute(f"SELECT {ROW} FROM minloop_runs WHERE run_id = ?", (run_id,)).fetchone()
        if got is None:
            raise RunNotFoundError(run_id, f"no run with this id in {self.where}")
        return _row(got)

    def write_events(self, batches: Sequence[EventBatch], kept_for: float) -> list[str]:
        """Write each batch whose run its ``owner`` still drives, with the run's end if it has
        one; returns the runs that another process has taken over (their batches are dropped)."""
        held: set[tuple[str, str]] = set()
        now = time.time()
        with self._lock, self._transaction(False):
            for owner in {b.owner for b in batches}:
                mine = [b for b in batches if b.owner == owner]
                lease = max(b.lease_until for b in mine)
                for part in _chunks([b.run_id for b in mine]):
                    held.update((owner, r[0]) for r in self._execute(
                        f"UPDATE minloop_runs SET lease_until = ? WHERE owner = ? AND run_id IN ({', '.join('?' * len(part))}) "
                        "RETURNING run_id", (lease, owner, *part)).fetchall())  # fmt: skip
            ours = [b for b in batches if (b.owner, b.run_id) in held]
            rows = [(b.run_id, b.first, b.first + len(b.events) - 1, "[" + ",".join(b.events) + "]")
                    for b in ours if b.events]  # fmt: skip
            for part in _chunks(rows):
                self._execute(
                    "INSERT INTO minloop_events (run_id, first_event, last_event, events) VALUES "
                    + ", ".join(["(?, ?, ?, ?)"] * len(part)),
                    tuple(value for row in part for value in row),
                )
            ends = [(b.run_id, b.owner, *b.end) for b in ours if b.end is not None]
            for run_id, owner, status, result in ends:
                taken = ended_steps(result)
                self._execute(FINISH, (status, _dumps(result), taken, taken, now, run_id, owner))
            self._ended([e[0] for e in ends if e[2] in ENDED], [e[0] for e in ends], now + kept_for)
        return [b.run_id for b in batches if (b.owner, b.run_id) not in held]

    def _ended(self, ended: Sequence[str], stopped: Sequence[str], until: float) -> None:
        """The events of the ``ended`` runs are kept ``until`` then; the cancel requests of the
        runs that ``stopped`` (ended or paused) are dropped."""
        for part in _chunks(ended):
            self._execute(
                f"UPDATE minloop_events SET kept_until = ? WHERE kept_until IS NULL AND run_id IN ({', '.join('?' * len(part))})",
                (until, *part),
            )
        for part in _chunks(stopped):
            self._execute(
                f"DELETE FROM minloop_cancels WHERE run_id IN ({', '.join('?' * len(part))})", tuple(part)
            )

    def read_events(self, run_id: str, after: int) -> tuple[str, list[tuple[int, dict[str, Any]]]]:
        """The run's status, then its events numbered after ``after``, in order (the status is
        read first: once it says the run is not running, every event of it is in the list)."""
        with self._lock:
            status, _ = self._status(run_id)
            rows = self._execute(
                "SELECT first_event, events FROM minloop_events WHERE run_id = ? AND last_event > ? "
                "ORDER BY first_event",
                (run_id, after),
            ).fetchall()
        found = [(first + i, e) for first, text in rows for i, e in enumerate(json.loads(text))]
        return status, [(n, e) for n, e in found if n > after]

    def last_event(self, run_id: str) -> int:
        """The number of the run's last stored event (0: none)."""
        with self._lock:
            got = self._execute("SELECT MAX(last_event) FROM minloop_events WHERE run_id = ?", (run_id,))
            return int(got.fetchone()[0] or 0)

    def forget_events(self, now: float, kept_for: float = KEPT_FOR) -> int:
        """Drop the events of runs that ended longer ago than they are kept (``kept_for``: for
        runs that ended without saying), and the cancel requests of runs no longer running."""
        with self._lock:
            gone = self._execute(
                "DELETE FROM minloop_events WHERE kept_until < ? OR (kept_until IS NULL AND EXISTS (SELECT 1 "
                "FROM minloop_runs r WHERE r.run_id = minloop_events.run_id AND r.status IN "
                f"({', '.join('?' * len(ENDED))}) AND r.updated < ?))",
                (now, *sorted(ENDED), now - kept_for),
            ).rowcount
            self._execute(
                "DELETE FROM minloop_cancels WHERE NOT EXISTS (SELECT 1 FROM minloop_runs r "
                "WHERE r.run_id = minloop_cancels.run_id AND r.status = 'running')",
                (),
            )
            return int(gone or 0)

    def request_cancel(self, run_id: str, by: str | None = None, reason: str | None = None) -> None:
        """Ask whoever drives the running run to cancel it (it does at its next check); ``by``
        whom and why (``reason``) go in its result."""
        with self._lock, self._transaction(True):
            status, _ = self._status(run_id)
            if status != "running":
                raise RunConflictError(
                    run_id, f"only a running or paused run can be cancelled; this one is {status}"
                )
            self._execute(
                "INSERT INTO minloop_cancels (run_id, asked, asked_by, reason) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (run_id) DO NOTHING",
                (run_id, time.time(), by, reason),
            )

    def cancel_asked(self, run_id: str) -> tuple[str | None, str | None] | None:
        """Who asked to cancel the run and why, if someone did."""
        with self._lock:
            got = self._execute("SELECT asked_by, reason FROM minloop_cancels WHERE run_id = ?", (run_id,))
            row = got.fetchone()
        return None if row is None else (row[0], row[1])

    def cancels(self, owner: str) -> list[str]:
        """The runs ``owner`` drives that someone asked to cancel."""
        with self._lock:
            return [r[0] for r in self._execute(
                "SELECT run_id FROM minloop_cancels c WHERE EXISTS (SELECT 1 FROM minloop_runs r "
                "WHERE r.run_id = c.run_id AND r.owner = ?)", (owner,)).fetchall()]  # fmt: skip

    def cancel_paused(self, run_id: str, seen: int, result: dict[str, Any], event: dict[str, Any],
                      kept_for: float) -> None:  # fmt: skip
        """End the run ``run_id`` that nobody drives (paused, or running with its process gone) as
        cancelled, if it is still at version ``seen``: its ``result``, and ``event`` after its
        stored events; its pending calls are dropped."""
        with self._lock, self._transaction(True):
            status, version = self._status(run_id)
            if status in ENDED:
                raise RunConflictError(
                    run_id, f"the run has already ended ({status}); there is nothing to cancel"
                )
            if version != seen:
                raise RunConflictError(run_id, "the run changed while it was being cancelled; try again")
            got = self._execute("SELECT MAX(last_event) FROM minloop_events WHERE run_id = ?", (run_id,))
            last = int(got.fetchone()[0] or 0)
            self._execute(
                "INSERT INTO minloop_events (run_id, first_event, last_event, events) VALUES (?, ?, ?, ?)",
                (run_id, last + 1, last + 1, _dumps([event])),
            )
            self._execute("DELETE FROM minloop_calls WHERE run_id = ? AND phase = 'pending'", (run_id,))
            now = time.time()
            taken = ended_steps(result)
            self._execute(
                FINISH.replace(" AND owner = ?", ""), ("cancelled", _dumps(result), taken, taken, now, run_id)
            )
            self._ended([run_id], [run_id], now + kept_for)

    def release(self, owner: str) -> None:
        """End the leases of the runs ``owner`` drives, for another process to take them now."""
        with self._lock:
            self._execute(
                "UPDATE minloop_runs SET lease_until = 0 WHERE owner = ? AND status = 'running'", (owner,)
            )

    def running(self, limit: int = 100) -> list[RunRow]:
        """Runs marked running, the longest unrenewed first (a lease scan reads them)."""
        with self._lock:
            rows = self._execute(
                f"SELECT {ROW} FROM minloop_runs WHERE status = 'running' ORDER BY lease_until LIMIT ?",
                (limit,),
            ).fetchall()
        return [_row(r) for r in rows]
