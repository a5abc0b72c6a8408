"""The run store's SQL, shared by SQLite and PostgreSQL.

Three tables::

    minloop_runs(run_id, status, schema_version, version, created, updated, owner, lease_until,
                 steps, prompt, tag, tools, state, reply_step, reply, result)
    minloop_calls(run_id, step, call_id, name, arguments, phase, verdict, outcome, why)
    minloop_entries(run_id, kind, seq, body)

A run's transcript and steps are appended to ``minloop_entries`` (``kind`` "message" or "step",
numbered from 0) as the run goes, and ``state`` holds the rest of its state at the last step
boundary: a step boundary writes what is new, whatever the length of the run. The call rows of
steps before the boundary are read as gone, and deleted when the run stops.

Every write by the process driving a run is conditional on ``owner``: a process that lost the
run (its lease ran out and another took it) changes nothing and is told so. ``version`` grows
with every change of a run, so a resume that read version N takes the run only if it is still N.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, ClassVar

from ..exceptions import RunConflictError, RunCorruptError, RunNotFoundError
from ..schemas import closed, problems
from .decisions import Fits, settle
from .owner import owner_alive
from .records import ENDED, SCHEMA_VERSION, CallRecord, RunRow, StoredRun, Verdict, ended_steps
from .shared import CHUNK, SharedSQL, _chunks, shared_tables

__all__ = ["SQLRunStore"]

RUN_COLUMNS = (
    "run_id, status, schema_version, version, created, updated, owner, lease_until, steps, prompt, tag, "
    "tools, state, reply_step, reply, result"
)
CALL_COLUMNS = "step, call_id, name, arguments, phase, verdict, outcome, why"
CALL_UPSERT = (
    "ON CONFLICT (run_id, step, call_id) DO UPDATE SET phase = excluded.phase, verdict = excluded.verdict, "
    "outcome = excluded.outcome, why = excluded.why"
)
OWNED = "UPDATE minloop_runs SET lease_until = ?, version = version + 1, updated = ? WHERE run_id = ? AND owner = ?"


def tables(real: str) -> list[str]:
    """The DDL, with ``real`` the name of the floating-point type."""
    return [
        f"""CREATE TABLE IF NOT EXISTS minloop_runs (
            run_id TEXT PRIMARY KEY, status TEXT NOT NULL, schema_version INTEGER NOT NULL,
            version INTEGER NOT NULL, created {real} NOT NULL, updated {real} NOT NULL, owner TEXT,
            lease_until {real}, steps INTEGER NOT NULL, prompt TEXT NOT NULL, tag TEXT, tools TEXT NOT NULL,
            state TEXT NOT NULL, reply_step INTEGER, reply TEXT, result TEXT)""",
        """CREATE TABLE IF NOT EXISTS minloop_calls (
            run_id TEXT NOT NULL, step INTEGER NOT NULL, call_id TEXT NOT NULL, name TEXT NOT NULL,
            arguments TEXT NOT NULL, phase TEXT NOT NULL, verdict TEXT, outcome TEXT, why TEXT,
            PRIMARY KEY (run_id, step, call_id))""",
        """CREATE TABLE IF NOT EXISTS minloop_entries (
            run_id TEXT NOT NULL, kind TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
            PRIMARY KEY (run_id, kind, seq))""",
        "CREATE INDEX IF NOT EXISTS minloop_runs_by_update ON minloop_runs (updated)",
        *shared_tables(real),
    ]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class SQLRunStore(SharedSQL):
    """A run store over one DB-API connection. ``execute(sql, params)`` runs one statement (with
    ``?`` placeholders) and returns its cursor; ``transaction()`` groups statements. Safe to
    share between threads and tasks of one process. ``writes_in_with``: the database takes an
    UPDATE inside a WITH (PostgreSQL), so that the writes of a call or a step boundary are one
    statement, one round trip to the server."""

    writes_in_with: ClassVar[bool] = False

    def __init__(self, execute: Callable[[str, tuple[Any, ...]], Any],
                 transaction: Callable[[bool], AbstractContextManager[Any]], where: str) -> None:  # fmt: skip
        self._execute = execute
        self._transaction = transaction
        self.where = where
        self._lock = threading.RLock()

    def _one(self, sql: str, *params: Any) -> Any:
        with self._lock:
            return self._execute(sql, params)

    def _check_owned(self, run_id: str, owner: str, cursor: Any, rows: int) -> None:
        if cursor.rowcount != rows:
            raise RunConflictError(run_id, f"this process no longer drives the run (owner {owner})")

    def _owned(self, run_id: str, owner: str, sql: str, *params: Any) -> None:
        """An UPDATE of ``run_id`` that only its owner may make (``sql`` ends in its WHERE)."""
        cursor = self._execute(f"{sql} AND owner = ?", (*params, run_id, owner))
        if cursor.rowcount != 1:
            raise RunConflictError(run_id, f"this process no longer drives the run (owner {owner})")

    def create(self, run_id: str, owner: str, lease_until: float, tools: Mapping[str, str],
               state: dict[str, Any], prompt: str, tag: str | None = None) -> bool:  # fmt: skip
        """Record a new run; False (nothing written) when the store already holds ``run_id``."""
        now = time.time()
        with self._lock, self._transaction(False):
            cursor = self._execute(
                f"INSERT INTO minloop_runs ({RUN_COLUMNS}) VALUES (?, 'running', ?, 1, ?, ?, ?, ?, 0, ?, ?, ?, ?, NULL, NULL, NULL) "
                "ON CONFLICT (run_id) DO NOTHING",
                (run_id, SCHEMA_VERSION, now, now, owner, lease_until, prompt, tag, _dumps(dict(tools)), _dumps(_rest(state))),
            )  # fmt: skip
            if cursor.rowcount != 1:
                return False
            self._append(run_id, state)
        return True

    def _append(self, run_id: str, state: dict[str, Any]) -> None:
        """Add the messages and steps new in ``state`` (``Snapshots.added``; a whole state starts
        at 0) to the run's entries."""
        rows = [(run_id, *row) for row in _entries(state)]
        for part in _chunks(rows):
            self._execute(
                "INSERT INTO minloop_entries (run_id, kind, seq, body) VALUES "
                + ", ".join(["(?, ?, ?, ?)"] * len(part)) + " ON CONFLICT (run_id, kind, seq) DO UPDATE SET body = excluded.body",
                tuple(value for row in part for value in row),
            )  # fmt: skip

    def load(self, run_id: str) -> StoredRun:
        row = self._one(f"SELECT {RUN_COLUMNS} FROM minloop_runs WHERE run_id = ?", run_id).fetchone()
        if row is None:
            raise RunNotFoundError(run_id, f"no run with this id in {self.where}")
        calls = self._one(f"SELECT {CALL_COLUMNS} FROM minloop_calls WHERE run_id = ? ORDER BY step", run_id)
        entries = self._one(
            "SELECT kind, body FROM minloop_entries WHERE run_id = ? ORDER BY kind, seq", run_id
        )
        return _stored(run_id, row, calls.fetchall(), entries.fetchall())

    def claim(self, run_id: str, owner: str, lease_until: float, seen: int,
              verdicts: Mapping[str, Verdict] = {}) -> None:  # fmt: skip
        """Take the run to drive it, if it is still at version ``seen`` and nobody alive holds it;
        record ``verdicts`` (by call id) on its pending calls in the same transaction."""
        with self._lock, self._transaction(True):
            got = self._execute(
                "SELECT status, version, owner, lease_until FROM minloop_runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if got is None:
                raise RunNotFoundError(run_id, f"no run with this id in {self.where}")
            status, version, holder, until = got
            if status in ENDED:
                raise RunConflictError(run_id, f"the run has ended ({status}); there is nothing to resume")
            if version != seen:
                raise RunConflictError(run_id, _changed(status, holder, owner))
            if (
                holder
                and holder != owner
                and until is not None
                and until > time.time()
                and owner_alive(holder)
            ):
                raise RunConflictError(run_id, f"another process is driving the run ({holder})")
            taken = self._execute(
                "UPDATE minloop_runs SET status = 'running', owner = ?, lease_until = ?, version = version + 1, "
                "updated = ? WHERE run_id = ? AND version = ?",
                (owner, lease_until, time.time(), run_id, seen),
            )
            if taken.rowcount != 1:  # another resume took it between our read and our write
                raise RunConflictError(run_id, _changed("running", None, owner))
            for call_id, verdict in verdicts.items():
                self._execute(
                    "UPDATE minloop_calls SET phase = 'decided', verdict = ? WHERE run_id = ? AND call_id = ? AND phase = 'pending'",
                    (_dumps(verdict.to_dict()), run_id, call_id),
                )  # fmt: skip
            self._upgrade(run_id)

    def _upgrade(self, run_id: str) -> None:
        """A run written by an earlier minloop, its whole transcript in its state, made one whose
        transcript and steps are entries (the writes that follow append to them)."""
        schema, state = self._execute(
            "SELECT schema_version, state FROM minloop_runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        if schema >= 2:
            return
        whole = json.loads(state)
        self._append(run_id, {**whole, "first_message": 0, "first_step": 0})
        self._execute("UPDATE minloop_runs SET schema_version = ?, state = ? WHERE run_id = ?",
                      (SCHEMA_VERSION, _dumps(_rest(whole)), run_id))  # fmt: skip

    def decide(self, run_id: str, verdicts: Mapping[str, Verdict]) -> None:
        """Record decisions on a stopped run's pending calls, without resuming it (a run is
        stopped when it paused, or when the process that drove it died while it waited)."""
        with self._lock, self._transaction(True):
            got = self._execute(
                "SELECT status, owner, lease_until, tools FROM minloop_runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if got is None:
                raise RunNotFoundError(run_id, f"no run with this id in {self.where}")
            status, holder, until, tools = got
            calls = [_call(c) for c in self._execute(
                f"SELECT {CALL_COLUMNS} FROM minloop_calls WHERE run_id = ? ORDER BY step", (run_id,))]  # fmt: skip
            held = holder is not None and until is not None and until > time.time() and owner_alive(holder)
            waits = status == "paused" or (
                status == "running" and not held and any(c.phase == "pending" for c in calls)
            )
            if not waits:
                raise RunConflictError(run_id, f"only a paused run takes decisions; this one is {status}")
            settled = settle(run_id, calls, verdicts, _fits(json.loads(tools)))
            for call_id, verdict in settled.items():
                self._execute(
                    "UPDATE minloop_calls SET phase = 'decided', verdict = ? WHERE run_id = ? AND call_id = ? AND phase = 'pending'",
                    (_dumps(verdict.to_dict()), run_id, call_id),
                )  # fmt: skip
            self._execute("UPDATE minloop_runs SET version = version + 1, updated = ? WHERE run_id = ?",
                          (time.time(), run_id))  # fmt: skip

    def renew(self, run_id: str, owner: str, lease_until: float) -> None:
        with self._lock:
            self._owned(
                run_id, owner, "UPDATE minloop_runs SET lease_until = ? WHERE run_id = ?", lease_until
            )

    def put_reply(
        self, run_id: str, owner: str, lease_until: float, step: int, reply: dict[str, Any]
    ) -> None:
        with self._lock:
            self._owned(
                run_id, owner,
                "UPDATE minloop_runs SET reply_step = ?, reply = ?, lease_until = ?, version = version + 1, "
                "updated = ? WHERE run_id = ?",
                step, _dumps(reply), lease_until, time.time(),
            )  # fmt: skip

    def put_call(self, run_id: str, owner: str, lease_until: float, record: CallRecord) -> None:
        verdict = None if record.verdict is None else _dumps(record.verdict.to_dict())
        outcome = None if record.outcome is None else _dumps(record.outcome)
        values = (
            record.step,
            record.call_id,
            record.name,
            record.arguments,
            record.phase,
            verdict,
            outcome,
            record.why,
        )
        if self.writes_in_with:  # one statement: one round trip to the server
            with self._lock:
                cursor = self._execute(
                    f"WITH owned AS ({OWNED} RETURNING run_id) INSERT INTO minloop_calls (run_id, {CALL_COLUMNS}) "
                    "SELECT run_id, ?::integer, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text FROM owned "
                    f"{CALL_UPSERT}",
                    (lease_until, time.time(), run_id, owner, *values),
                )  # fmt: skip
            self._check_owned(run_id, owner, cursor, 1)
            return
        with self._lock, self._transaction(False):
            self._owned(
                run_id, owner,
                "UPDATE minloop_runs SET lease_until = ?, version = version + 1, updated = ? WHERE run_id = ?",
                lease_until, time.time(),
            )  # fmt: skip
            self._execute(
                f"INSERT INTO minloop_calls (run_id, {CALL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) {CALL_UPSERT}",
                (run_id, *values),
            )

    def checkpoint(
        self, run_id: str, owner: str, lease_until: float, step: int, state: dict[str, Any]
    ) -> None:
        """The state after ``step`` (with what is new: ``Snapshots.added``); the rows of that step
        are no longer needed."""
        entries = _entries(state)
        if self.writes_in_with and 0 < len(entries) <= CHUNK:  # one statement: one round trip
            with self._lock:
                cursor = self._execute(
                    f"WITH owned AS ({OWNED.replace('SET ', 'SET state = ?, steps = ?, reply_step = NULL, reply = NULL, ')} "
                    "RETURNING run_id) INSERT INTO minloop_entries (run_id, kind, seq, body) SELECT owned.run_id, "
                    f"v.kind, v.seq, v.body FROM owned, (VALUES {', '.join(['(?::text, ?::integer, ?::text)'] * len(entries))}) "
                    "AS v(kind, seq, body) ON CONFLICT (run_id, kind, seq) DO UPDATE SET body = excluded.body",
                    (_dumps(_rest(state)), step, lease_until, time.time(), run_id, owner, *(v for e in entries for v in e)),
                )  # fmt: skip
            self._check_owned(run_id, owner, cursor, len(entries))
            return
        with self._lock, self._transaction(False):
            self._owned(
                run_id, owner,
                "UPDATE minloop_runs SET state = ?, steps = ?, reply_step = NULL, reply = NULL, lease_until = ?, "
                "version = version + 1, updated = ? WHERE run_id = ?",
                _dumps(_rest(state)), step, lease_until, time.time(),
            )  # fmt: skip
            self._append(run_id, state)

    def finish(self, run_id: str, owner: str, status: str, result: dict[str, Any]) -> None:
        """The run ended (or paused): its result; nobody drives it any more. The rows of calls
        before its last step boundary go (decisions stay: a second one is told who decided, and
        when)."""
        with self._lock, self._transaction(False):
            self._owned(
                run_id, owner,
                "UPDATE minloop_runs SET status = ?, result = ?, steps = CASE WHEN steps < ? THEN ? ELSE steps END, "
                "owner = NULL, lease_until = NULL, version = version + 1, updated = ? WHERE run_id = ?",
                status, _dumps(result), ended_steps(result), ended_steps(result), time.time(),
            )  # fmt: skip
            self._execute(
                "DELETE FROM minloop_calls WHERE run_id = ? AND verdict IS NULL AND step <= "
                "(SELECT steps FROM minloop_runs WHERE run_id = ?)", (run_id, run_id),
            )  # fmt: skip

    def runs(self, limit: int = 100, tag: str | None = None) -> list[RunRow]:
        """Runs, paused ones first, then the most recently changed."""
        where = "" if tag is None else "WHERE tag = ?"
        sql = (
            "SELECT run_id, status, created, updated, owner, lease_until, steps, prompt, tag, "
            "(SELECT COUNT(*) FROM minloop_calls c WHERE c.run_id = r.run_id AND c.phase = 'pending' AND c.step > r.steps "
            "AND r.status = 'paused') "
            f"FROM minloop_runs r {where} ORDER BY CASE WHEN status = 'paused' THEN 0 ELSE 1 END, updated DESC LIMIT ?"
        )  # fmt: skip
        rows = self._one(sql, *([] if tag is None else [tag]), limit).fetchall()
        return [RunRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[9], r[8]) for r in rows]


def _changed(status: str, holder: str | None, owner: str) -> str:
    """What the loser of two resumes (or of a resume and a decision) is told."""
    if status == "running" and holder and holder != owner:
        return (f"another process resumed the run while this one was reading it, and drives it now "
                f"({holder}); nothing was changed here")  # fmt: skip
    return (
        "the run changed while it was being resumed (another process resumed it or recorded a "
        "decision); nothing was changed here: read it again and retry"
    )


def _fits(tools: Any) -> Fits:
    """Checks edited arguments against the parameters the run's tools were stored with."""

    def fits(name: str, arguments: dict[str, Any]) -> str | None:
        entry = tools.get(name) if isinstance(tools, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("parameters"), dict):
            return None  # an older row: the resuming loop checks them against the tool
        found = problems(closed(entry["parameters"]), arguments, f"tool {name!r} parameters")
        return "; ".join(f"{p['loc']}: {p['msg']}" for p in found) or None

    return fits


def _entries(state: dict[str, Any]) -> list[tuple[str, int, str]]:
    """The new messages and steps of ``state`` as entries: (kind, number, JSON)."""
    return [(kind, first + i, _dumps(body)) for kind, key, first in (
                ("message", "messages", state.get("first_message", 0)), ("step", "steps", state.get("first_step", 0)))
            for i, body in enumerate(state.get(key) or ())]  # fmt: skip


def _rest(state: dict[str, Any]) -> dict[str, Any]:
    """The state without its messages and steps (they are entries)."""
    return {k: v for k, v in state.items() if k not in ("messages", "steps", "first_message", "first_step")}


def _stored(run_id: str, row: Any, calls: list[Any], entries: list[Any]) -> StoredRun:
    _, status, schema, version, created, updated, owner, until, steps, prompt, tag, tools, state, reply_step, reply, result = row  # fmt: skip
    if not isinstance(schema, int) or schema > SCHEMA_VERSION:
        raise RunCorruptError(run_id, f"the row was written by a newer minloop (format {schema}, this one reads {SCHEMA_VERSION})")  # fmt: skip
    try:
        records = tuple(r for c in calls if (r := _call(c)).step > steps or r.verdict is not None)
        pending = sum(r.phase == "pending" for r in records)
        whole = json.loads(state)
        if schema >= 2:  # the transcript and steps are entries
            whole["messages"] = [json.loads(b) for kind, b in entries if kind == "message"]
            whole["steps"] = [json.loads(b) for kind, b in entries if kind == "step"]
        stored = StoredRun(
            RunRow(run_id, status, created, updated, owner, until, steps, prompt, pending, tag),
            schema, json.loads(tools), whole,
            None if reply is None else {**json.loads(reply), "step": reply_step},
            records, json.loads(result) if result else None, version,
        )  # fmt: skip
    except (ValueError, TypeError, KeyError) as exc:
        raise RunCorruptError(run_id, f"a stored row cannot be read: {type(exc).__name__}: {exc}") from None
    if not isinstance(stored.state, dict) or not isinstance(stored.state.get("messages"), list):
        raise RunCorruptError(run_id, "the stored state has no message list")
    return stored


def _call(row: Any) -> CallRecord:
    step, call_id, name, arguments, phase, verdict, outcome, why = row
    v = json.loads(verdict) if verdict else None
    return CallRecord(step, call_id, name, arguments, phase, Verdict.from_dict(v) if v else None,
                      json.loads(outcome) if outcome else None, why)  # fmt: skip
