"""The result cache: a read-only tool's repeated call is answered from its first result (marked
in the trace, read by the model as a new call's), within a run or across runs for a lifetime."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from minloop import Loop, MinloopError, SQLiteRunStore, tool
from minloop.exceptions import StoreError
from minloop.layers import RecordingSink, SQLiteResultCache
from minloop.testing import FunctionModel, ScriptedModel, call, reply

from .conftest import content, masked


def counted(**options: Any) -> tuple[Any, list[str]]:
    calls: list[str] = []

    @tool(name="weather", **options)
    def weather(city: str, unit: str = "C") -> dict[str, Any]:
        """The weather in a city."""
        calls.append(city)
        return {"city": city, "temp": 18, "unit": unit}

    return weather, calls


def twice() -> ScriptedModel:
    """The same call twice, its arguments in another order and spacing the second time."""
    first = reply(None, call("weather", '{"city": "Paris", "unit": "C"}', id="w1"))
    second = reply(None, call("weather", '{"unit":"C","city":"Paris"}', id="w2"))
    return ScriptedModel([first, second, "18 C in Paris."])


def test_the_second_identical_read_only_call_is_a_hit() -> None:
    weather, calls = counted(read_only=True)
    sink = RecordingSink()
    result = Loop(twice(), [weather], cache=True, sinks=[sink]).run_sync("Weather in Paris?")
    assert calls == ["Paris"]
    said = content(city="Paris", temp=18, unit="C")
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "Weather in Paris?"},
        reply(None, call("weather", '{"city": "Paris", "unit": "C"}', id="w1")),
        {"role": "tool", "tool_call_id": "w1", "name": "weather", "content": said},
        reply(None, call("weather", '{"unit":"C","city":"Paris"}', id="w2")),
        {"role": "tool", "tool_call_id": "w2", "name": "weather", "content": said},
        {"role": "assistant", "content": "18 C in Paris."},
    ]
    hits = [(e.step, e.data) for e in sink.events if e.kind == "tool_cache_hit"]
    assert hits == [(2, {"id": "w2", "name": "weather", "shared": False})]


def test_what_the_model_reads_is_the_same_with_the_cache_and_without() -> None:
    weather, _ = counted(read_only=True)
    on = Loop(twice(), [weather], cache=True).run_sync("Weather in Paris?")
    off = Loop(twice(), [weather]).run_sync("Weather in Paris?")
    assert masked(on.messages, on.trace_id) == masked(off.messages, off.trace_id)


def test_a_tool_that_is_not_read_only_is_never_cached() -> None:
    weather, calls = counted(idempotent=True)
    sink = RecordingSink()
    Loop(twice(), [weather], cache=True, sinks=[sink]).run_sync("Weather in Paris?")
    assert calls == ["Paris", "Paris"]
    assert not [e for e in sink.events if e.kind == "tool_cache_hit"]


def test_a_tool_that_needs_approval_is_never_cached() -> None:
    weather, calls = counted(read_only=True, needs_approval=True)
    Loop(twice(), [weather], cache=True, approve=lambda c: True).run_sync("Weather in Paris?")
    assert calls == ["Paris", "Paris"]


def test_the_cache_is_the_runs_own_by_default() -> None:
    weather, calls = counted(read_only=True)
    asked = lambda request: (
        reply(None, call("weather", {"city": "Paris"})) if len(request.messages) < 2 else "18 C."
    )
    loop = Loop(FunctionModel(asked), [weather], cache=True)
    loop.run_sync("Weather in Paris?")
    loop.run_sync("And now?")
    assert calls == ["Paris", "Paris"]


def test_a_failed_call_is_not_stored() -> None:
    calls: list[int] = []

    @tool(read_only=True)
    def weather(city: str) -> str:
        """The weather in a city."""
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("no route to the weather service")
        return "sunny"

    again = [reply(None, call("weather", {"city": "Oslo"}, id=f"w{n}")) for n in (1, 2)]
    result = Loop(ScriptedModel([*again, "Sunny."]), [weather], cache=True).run_sync("Oslo?")
    assert calls == [1, 1]
    assert [r.error for s in result.steps for r in s.results] == ["ERR_TOOL_FAILED", None]


def test_a_shared_cache_serves_other_runs_for_its_lifetime(tmp_path: Path) -> None:
    weather, calls = counted(read_only=True)
    store = SQLiteResultCache(tmp_path / "cache.db", lifetime=0.5)
    one = lambda: ScriptedModel([reply(None, call("weather", {"city": "Rome"}, id="w1")), "Warm."])
    sink = RecordingSink()
    first = Loop(one(), [weather], cache=store).run_sync("Rome?")
    second = Loop(one(), [weather], cache=store, sinks=[sink]).run_sync("Rome?")
    assert calls == ["Rome"]
    assert [e.data["shared"] for e in sink.events if e.kind == "tool_cache_hit"] == [True]
    assert masked(first.messages, first.trace_id) == masked(second.messages, second.trace_id)
    reopened = SQLiteResultCache(tmp_path / "cache.db", lifetime=0.5)  # another process's view
    assert reopened.get("weather", '{"city":"Rome"}') == '{"city": "Rome", "temp": 18, "unit": "C"}'
    time.sleep(0.6)
    Loop(one(), [weather], cache=store).run_sync("Rome?")
    assert calls == ["Rome", "Rome"]
    store.close()
    reopened.close()


def test_a_cache_that_cannot_be_used_says_so(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"^result cache .*: the file cannot be opened \(unable to open"):
        SQLiteResultCache(tmp_path)  # a directory
    (tmp_path / "notes.txt").write_text("not a database")
    with pytest.raises(StoreError, match=r"^result cache .*notes.txt: the file is not a SQLite database"):
        SQLiteResultCache(tmp_path / "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "not a database"  # nothing written to it
    with SQLiteRunStore(tmp_path / "runs.db"):
        pass
    with pytest.raises(
        StoreError, match=r"runs.db: the file is a SQLite database of something else \(tables: minloop_"
    ):
        SQLiteResultCache(tmp_path / "runs.db")
    with pytest.raises(
        StoreError, match=r"notes.txt/c.db: its folder cannot be made: a part of its path is a file"
    ):
        SQLiteResultCache(tmp_path / "notes.txt" / "c.db")
    with pytest.raises(
        StoreError, match=r"an address of an unknown kind \(mysql://\): give a SQLite file path$"
    ):
        SQLiteResultCache("mysql://host/db")
    made = SQLiteResultCache(tmp_path / "new" / "folder" / "c.db")  # its folder is made, as a run store's
    made.put("weather", '{"city":"Rome"}', "18")
    assert made.get("weather", '{"city":"Rome"}') == "18"
    made.close()
    with pytest.raises(MinloopError, match="lifetime must be > 0"):
        SQLiteResultCache(tmp_path / "c.db", lifetime=0)
    with pytest.raises(MinloopError, match="cache= takes True or a result cache"):
        Loop(ScriptedModel(["x"]), cache="cache.db")  # type: ignore[arg-type]
