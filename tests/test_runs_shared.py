"""What serving workers share in a run store (SQLite and PostgreSQL): a run's events, written
only by the process driving it; cancel requests; runs nobody drives any more."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from minloop.exceptions import RunConflictError
from minloop.runs import CallRecord, open_store, stalled
from minloop.runs.records import EventBatch

STATE = {"messages": [{"role": "user", "content": "hi"}], "steps": [], "invalid_streak": 0, "tool_steps": 0}


def events(*numbers: int) -> list[str]:
    return [json.dumps({"type": "TextDelta", "text": f"part {n}", "step": 1}) for n in numbers]


def test_events_are_written_only_by_the_runs_owner_and_read_back_after_a_number(store_address: str) -> None:
    store = open_store(store_address)
    lease = time.time() + 30
    store.create("r1", "host:1:a", lease, {}, STATE, "hi", "token:x")
    lost = store.write_events(
        [
            EventBatch("r1", "host:1:a", lease, 1, events(1, 2, 3)),
            EventBatch("r1", "host:2:b", lease, 4, events(9)),
        ],
        kept_for=60,
    )
    assert lost == ["r1"]  # the batch of a process that does not drive the run is dropped
    assert store.last_event("r1") == 3
    status, found = store.read_events("r1", 1)
    assert (status, found) == ("running", [(2, json.loads(events(2)[0])), (3, json.loads(events(3)[0]))])
    end = {"status": "success", "steps": []}
    assert store.write_events([EventBatch("r1", "host:1:a", lease, 4, events(4), ("success", end))], 60) == []
    status, found = store.read_events("r1", 3)
    assert (status, [n for n, _ in found]) == ("success", [4])
    assert store.load("r1").result == end and store.row("r1").owner is None
    late = store.write_events([EventBatch("r1", "host:1:a", lease, 5, events(5))], 60)
    assert late == ["r1"] and store.last_event("r1") == 4  # nobody drives an ended run
    assert store.forget_events(time.time()) == 0  # kept for a minute
    assert store.forget_events(time.time() + 61) == 2 and store.read_events("r1", 0) == ("success", [])
    store.close()


def test_a_cancel_request_reaches_the_owner_and_a_paused_run_is_cancelled_with_its_last_event(
    store_address: str,
) -> None:
    store = open_store(store_address)
    lease = time.time() + 30
    store.create("going", "host:1:a", lease, {}, STATE, "hi", "token:x")
    store.request_cancel("going")
    store.request_cancel("going")  # asked twice, recorded once
    assert store.cancels("host:1:a") == ["going"] and store.cancels("host:2:b") == []
    store.create("pauses", "host:1:a", lease, {}, STATE, "hi", "token:x")
    store.request_cancel("pauses")
    store.write_events([EventBatch("pauses", "host:1:a", lease, 1, [], ("paused", {"status": "paused"}))], 60)
    assert store.cancels("host:1:a") == ["going"]  # a request for a run that paused first is dropped
    store.create("waits", "host:1:a", lease, {}, STATE, "hi", "token:x")
    store.put_call("waits", "host:1:a", lease, CallRecord(1, "c1", "delete", "{}", "pending", why="approval"))
    store.write_events(
        [EventBatch("waits", "host:1:a", lease, 1, events(1, 2), ("paused", {"status": "paused"}))], 60
    )
    with pytest.raises(
        RunConflictError, match="only a running or paused run can be cancelled; this one is paused"
    ):
        store.request_cancel("waits")
    seen = store.load("waits").version
    result: dict[str, Any] = {"status": "cancelled", "steps": []}
    end = {"type": "RunEnd", "step": 0, "result": result}
    with pytest.raises(RunConflictError, match="changed while it was being cancelled"):
        store.cancel_paused("waits", seen - 1, result, end, 60)
    store.cancel_paused("waits", seen, result, end, 60)
    stored = store.load("waits")
    assert (stored.row.status, stored.result, stored.pending) == ("cancelled", result, [])
    assert store.read_events("waits", 2) == ("cancelled", [(3, end)])
    with pytest.raises(RunConflictError, match=r"has already ended \(cancelled\)"):
        store.cancel_paused("waits", stored.version, result, end, 60)
    store.close()


def test_running_lists_runs_nobody_drives_and_release_hands_a_workers_runs_over(store_address: str) -> None:
    store = open_store(store_address)
    store.create("held", "host:1:a", time.time() + 30, {}, STATE, "hi", "token:x")
    store.create("expired", "host:2:b", time.time() - 1, {}, STATE, "hi", "token:x")
    assert sorted((r.run_id, stalled(r)) for r in store.running()) == [("expired", True), ("held", False)]
    store.release("host:1:a")
    assert all(stalled(r) for r in store.running())
    store.close()
