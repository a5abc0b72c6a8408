"""The default trace store: one SQLite file, one small transaction per event.

``SQLiteSink`` writes every ``Event`` of a run as it happens; ``TraceStore`` reads runs back as
``Trace`` objects (the run's summary, its events, and its steps folded from them). The file is
``$MINLOOP_TRACE_DB``, else ``$XDG_DATA_HOME/minloop/traces.db``, else
``~/.local/share/minloop/traces.db`` (``default_path()``).

The database is in WAL mode with ``synchronous=NORMAL``: each event is committed on its own, so
a process killed mid-run (even by SIGKILL) leaves every event written so far readable. A power
cut may lose the last few commits. Two tables::

    events(id, trace_id, kind, step, time, data)   one row per event, data as JSON, indexed by trace_id
    runs(trace_id, started, ended, status, ...)    one row per run, rewritten at run_start, step_end, run_end

A run whose process died keeps ``status = 'running'``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Self

from ..exceptions import MinloopError, StoreError
from ..layers.tracing import Event
from .reading import TraceCall, TraceStep, fold_step, step_dict
from .sqlfile import check_ours, check_path, sqlite_error

__all__ = [
    "RunSummary",
    "SQLiteSink",
    "Trace",
    "TraceCall",
    "TraceStep",
    "TraceStore",
    "decision_text",
    "default_path",
]

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    trace_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    step INTEGER NOT NULL,
    time REAL NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_trace ON events (trace_id, id);
CREATE TABLE IF NOT EXISTS runs (
    trace_id TEXT PRIMARY KEY,
    started REAL NOT NULL,
    ended REAL,
    status TEXT NOT NULL,
    model TEXT NOT NULL,
    steps INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    duration REAL,
    error TEXT,
    prompt TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started);
"""
WHAT = "trace database"
RUN_KINDS = frozenset({"run_start", "run_resumed", "step_end", "run_end"})


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """``$MINLOOP_TRACE_DB``, else ``$XDG_DATA_HOME/minloop/traces.db``, else ``~/.local/share/...``."""
    env = os.environ if env is None else env
    if env.get("MINLOOP_TRACE_DB"):
        return Path(env["MINLOOP_TRACE_DB"]).expanduser()
    data_home = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else Path.home() / ".local" / "share"
    return data_home / "minloop" / "traces.db"


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One line of ``minloop trace ls``. ``status`` is ``running`` until the run ends (or forever,
    if its process died); ``duration`` is the time to the last completed step until then."""

    trace_id: str
    started: float
    ended: float | None = None
    status: str = "running"
    model: str = ""
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    duration: float | None = None
    error: str | None = None
    prompt: str = ""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "total_tokens": self.total_tokens}


RUN_FIELDS = tuple(f.name for f in fields(RunSummary))
RUN_COLUMNS = ", ".join(RUN_FIELDS)
UPSERT_RUN = (
    f"INSERT INTO runs ({RUN_COLUMNS}) VALUES ({', '.join('?' * len(RUN_FIELDS))}) ON CONFLICT (trace_id) "
    f"DO UPDATE SET {', '.join(f'{name} = excluded.{name}' for name in RUN_FIELDS[1:])}"
)


def advance(summary: RunSummary | None, event: Event) -> RunSummary:
    """The run's summary after ``event`` (the same rule for the sink and for a trace read back)."""
    s = summary or RunSummary(event.trace_id, event.time)
    d = event.data
    if event.kind == "run_start":
        prompt = _prompt_text(d.get("messages"))
        return replace(s, started=event.time, model=str(d.get("model", "")), prompt=prompt)
    if event.kind == "run_resumed":  # the run goes on (from its store): it has not ended
        return replace(s, ended=None, status="running", error=None)
    if event.kind == "step_end":
        usage = d.get("usage") or {}
        return replace(
            s,
            steps=event.step,
            duration=event.time - s.started,
            prompt_tokens=s.prompt_tokens + (usage.get("prompt_tokens") or 0),
            completion_tokens=s.completion_tokens + (usage.get("completion_tokens") or 0),
        )
    if event.kind == "run_end":
        usage = d.get("usage") or {}
        return replace(
            s,
            ended=event.time,
            status=str(d.get("status")),
            steps=d.get("steps", s.steps),
            duration=d.get("duration", s.duration),
            error=d.get("error"),
            prompt_tokens=usage.get("prompt_tokens", s.prompt_tokens),
            completion_tokens=usage.get("completion_tokens", s.completion_tokens),
        )
    return s


def _prompt_text(messages: Any) -> str:
    users = [m.get("content") for m in messages or () if isinstance(m, dict) and m.get("role") == "user"]
    text = users[-1] if users else ""
    return text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)


class SQLiteSink:
    """A ``TraceSink`` writing to one SQLite file (``default_path()`` when ``path`` is None).

    Thread-safe; one instance can serve many runs at once. ``close()`` it (or use ``with``).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        if path is not None:
            check_path(WHAT, os.fspath(path))
        self.path = Path(path) if path is not None else default_path()
        try:
            self._conn = _connect(self.path)
        except (sqlite3.Error, OSError) as exc:
            raise sqlite_error(WHAT, self.path, exc) from None
        self._lock = threading.Lock()
        self._runs: dict[str, RunSummary] = {}  # runs in progress, by trace id

    def emit(self, event: Event) -> None:
        """Write ``event`` (``StoreError`` if the file refuses it: nothing of it is written)."""
        with self._lock:
            try:
                self._write(event)
            except sqlite3.Error as exc:
                raise sqlite_error(WHAT, self.path, exc) from None

    def _write(self, event: Event) -> None:
        data = json.dumps(event.data, ensure_ascii=False, default=str)
        with self._conn:  # one transaction: the event and, if it moves the run, its summary
            self._conn.execute(
                "INSERT INTO events (trace_id, kind, step, time, data) VALUES (?, ?, ?, ?, ?)",
                (event.trace_id, event.kind, event.step, event.time, data),
            )
            if event.kind in RUN_KINDS:
                known = self._runs.get(event.trace_id)
                if known is None and event.kind != "run_start":  # a run resumed in this process
                    row = self._conn.execute(
                        f"SELECT {RUN_COLUMNS} FROM runs WHERE trace_id = ?", (event.trace_id,)
                    )
                    found = row.fetchone()
                    known = RunSummary(*found) if found else None
                summary = advance(known, event)
                if event.kind == "run_end":
                    self._runs.pop(event.trace_id, None)
                else:
                    self._runs[event.trace_id] = summary
                self._conn.execute(UPSERT_RUN, [getattr(summary, name) for name in RUN_FIELDS])

    def holds(self, trace_id: str) -> bool:
        """Whether the database has a run under ``trace_id`` (a new run draws another id)."""
        with self._lock:
            try:
                row = self._conn.execute("SELECT 1 FROM runs WHERE trace_id = ?", (trace_id,)).fetchone()
            except sqlite3.Error as exc:
                raise sqlite_error(WHAT, self.path, exc) from None
        return row is not None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _connect(path: Path) -> sqlite3.Connection:
    """The sink's connection, its tables made; a foreign or damaged file is refused before
    anything is written to it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout=5000")  # other processes may be reading or writing
        check_ours(WHAT, path, conn, {"events", "runs"})
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # in WAL: a commit survives a crash, not a power cut
        conn.executescript(SCHEMA)
    except BaseException:
        conn.close()
        raise
    return conn


@dataclass(frozen=True, slots=True)
class Trace:
    """A run read back: its summary, its raw events in order, and its steps."""

    run: RunSummary
    events: tuple[Event, ...]
    steps: tuple[TraceStep, ...]

    @property
    def trace_id(self) -> str:
        return self.run.trace_id

    @property
    def start(self) -> Mapping[str, Any]:
        """The ``run_start`` data: model, tools, max_steps, messages."""
        return next((e.data for e in self.events if e.kind == "run_start"), {})

    @property
    def end(self) -> Mapping[str, Any] | None:
        """The last ``run_end`` data (status, error, final_message, pending, ...), or None if the run
        never ended. A run that paused and was resumed has one ``run_end`` per part."""
        return next((e.data for e in reversed(self.events) if e.kind == "run_end"), None)

    @property
    def resumed(self) -> list[Mapping[str, Any]]:
        """Each ``run_resumed`` data, in order: the step it went on from, its status before, and
        the decisions taken (call, tool, the arguments asked, approve, reason, edited arguments,
        a result given in the tool's place, by whom, when)."""
        return [e.data for e in self.events if e.kind == "run_resumed"]

    @property
    def pending(self) -> list[Mapping[str, Any]]:
        """The calls a paused run waits on (empty unless its last part ended ``paused``)."""
        end = self.end or {}
        return list(end.get("pending") or ()) if end.get("status") == "paused" else []

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> Trace:
        events = tuple(events)
        if not events:
            raise MinloopError("a trace needs at least one event")
        summary: RunSummary | None = None
        for event in events:
            summary = advance(summary, event)
        assert summary is not None
        groups: dict[int, list[Event]] = {}
        for event in events:
            if event.kind == "run_resumed":  # the steps from here on were made again
                start = int(event.data.get("from_step", event.step))
                groups = {i: group for i, group in groups.items() if i < start}
            elif event.kind not in ("run_start", "run_end"):
                groups.setdefault(event.step, []).append(event)
        return cls(summary, events, tuple(fold_step(i, group) for i, group in sorted(groups.items())))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready document: the run, the start and end data, and every step in full."""
        start = dict(self.start)
        return {
            "run": self.run.to_dict(),
            "tools": start.get("tools", []),
            "max_steps": start.get("max_steps"),
            "messages": start.get("messages", []),
            "end": self.end,
            "steps": [step_dict(s) for s in self.steps],
        }


class TraceStore:
    """Reads a trace database: ``runs()`` for listings, ``trace(ref)`` for one run.

    ``ref`` is a full trace id, a unique prefix of one, or ``last`` (the most recent run).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        if not self.path.is_file():
            raise MinloopError(f"no trace database at {self.path} (runs record there unless --no-trace)")
        try:
            self._conn = sqlite3.connect(self.path.resolve().as_uri() + "?mode=rw", uri=True)
        except sqlite3.Error as exc:
            raise sqlite_error(WHAT, self.path, exc) from None
        self._rows("PRAGMA busy_timeout=5000")
        tables = {row[0] for row in self._rows("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"events", "runs"} <= tables:
            self._conn.close()
            raise StoreError(f"{WHAT} {self.path}", "the file is not a minloop trace database")

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise sqlite_error(WHAT, self.path, exc) from None

    def runs(self, *, status: str | None = None, limit: int = 20) -> list[RunSummary]:
        """The most recent runs first, optionally only those with ``status``."""
        where, args = ("WHERE status = ?", [status]) if status else ("", [])
        query = f"SELECT {RUN_COLUMNS} FROM runs {where} ORDER BY started DESC, rowid DESC LIMIT ?"
        rows = self._rows(query, [*args, limit])
        return [RunSummary(*row) for row in rows]

    def resolve(self, ref: str) -> str:
        if ref == "last":
            query = "SELECT trace_id FROM runs ORDER BY started DESC, rowid DESC LIMIT 1"
            rows = self._rows(query)
            if not rows:
                raise MinloopError(f"no runs in {self.path}")
            return str(rows[0][0])
        escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        found = [
            r[0]
            for r in self._rows(
                "SELECT DISTINCT trace_id FROM runs WHERE trace_id = ? OR trace_id LIKE ? ESCAPE '\\' LIMIT 6",
                (ref, escaped + "%"),
            )
        ]
        if ref in found:
            return ref
        if len(found) == 1:
            return str(found[0])
        if not found:
            raise MinloopError(f"no trace {ref!r} in {self.path}")
        raise MinloopError(f"{ref!r} matches several traces: {', '.join(found[:5])}")

    def events(self, trace_id: str) -> list[Event]:
        rows = self._rows(
            "SELECT kind, trace_id, step, time, data FROM events WHERE trace_id = ? ORDER BY id", (trace_id,)
        )
        return [Event(kind, tid, step, time, json.loads(data)) for kind, tid, step, time, data in rows]

    def trace(self, ref: str) -> Trace:
        trace_id = self.resolve(ref)
        return Trace.from_events(self.events(trace_id))

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def decision_text(d: Mapping[str, Any]) -> str:
    """One decision of ``Trace.resumed`` in words: ``"transfer (c1) approved by ada: ok"``."""
    if d.get("answers") is not None:
        how = "answered (" + ", ".join(f"{k}: {a.get('action')}" for k, a in d["answers"].items()) + ")"
    elif d.get("result") is not None:
        how = f"answered in the tool's place ({json.dumps(d['result'], ensure_ascii=False)})"
    elif d.get("arguments") is not None:
        how = f"approved with the arguments {json.dumps(d['arguments'], ensure_ascii=False)} (asked: {d.get('asked')})"
    else:
        how = "approved" if d.get("approve") else "denied"
    by = f" by {d['by']}" if d.get("by") else ""
    return f"{d.get('tool')} ({d.get('call_id')}) {how}{by}" + (f": {d['reason']}" if d.get("reason") else "")
