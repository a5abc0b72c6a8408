"""The cap on concurrent tool calls: never more than the cap at once, calls start in the order
they were made, results keep their order, and a cancelled run or stream holds no slot."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from minloop import Loop, MinloopError, tool
from minloop.layers import ConcurrencyCap
from minloop.layers.streaming import ToolCallFinished
from minloop.testing import ScriptedModel, call, reply

from .conftest import content, masked


class Gauge:
    """Counts the calls running now, the most at once, and the order in which they started."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.started: list[int] = []

    async def enter(self, n: int) -> None:
        self.started.append(n)
        self.now += 1
        self.most = max(self.most, self.now)

    def leave(self) -> None:
        self.now -= 1


def fan_out(count: int) -> dict[str, Any]:
    return reply(None, *(call("work", {"n": i}, id=f"c{i}") for i in range(count)))


def test_200_calls_under_a_cap_of_8_never_exceed_8_and_keep_their_order() -> None:
    gauge = Gauge()

    @tool
    async def work(n: int) -> int:
        """Work on n."""
        await gauge.enter(n)
        try:
            await asyncio.sleep(0.001 * (n % 3))  # calls end out of order
            return n * 10
        finally:
            gauge.leave()

    loop = Loop(ScriptedModel([fan_out(200), "done"]), [work], tool_concurrency=8)
    result = loop.run_sync("Work on 0 to 199.")
    assert gauge.most == 8
    assert gauge.started == list(range(200))
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "Work on 0 to 199."},
        fan_out(200),
        *(
            {"role": "tool", "tool_call_id": f"c{i}", "name": "work", "content": content(result=i * 10)}
            for i in range(200)
        ),
        {"role": "assistant", "content": "done"},
    ]


def test_a_cap_per_tool_holds_no_run_slot_while_it_waits() -> None:
    gauges = {"slow": Gauge(), "quick": Gauge(), "all": Gauge()}

    async def body(name: str, n: int) -> int:
        await gauges[name].enter(n)
        await gauges["all"].enter(n)
        try:
            await asyncio.sleep(0.002)
            return n
        finally:
            gauges[name].leave()
            gauges["all"].leave()

    @tool
    async def slow(n: int) -> int:
        """Slow."""
        return await body("slow", n)

    @tool
    async def quick(n: int) -> int:
        """Quick."""
        return await body("quick", n)

    calls = [call("slow" if i % 2 else "quick", {"n": i}, id=f"c{i}") for i in range(12)]
    cap = ConcurrencyCap(4, per_tool={"slow": 1})
    result = Loop(ScriptedModel([reply(None, *calls), "done"]), [slow, quick], tool_concurrency=cap).run_sync(
        "Go."
    )
    assert (gauges["slow"].most, gauges["all"].most) == (1, 4)
    assert gauges["quick"].most >= 3  # the slow calls waiting for their own slot hold no run slot
    assert gauges["slow"].started == [1, 3, 5, 7, 9, 11]
    assert [m["tool_call_id"] for m in result.messages if m["role"] == "tool"] == [f"c{i}" for i in range(12)]


def test_cancelling_a_run_midway_leaves_no_slot_taken() -> None:
    asyncio.run(_cancelling_a_run_midway_leaves_no_slot_taken())


async def _cancelling_a_run_midway_leaves_no_slot_taken() -> None:
    release = asyncio.Event()
    running: list[int] = []

    @tool
    async def work(n: int) -> int:
        """Work on n."""
        running.append(n)
        await release.wait()
        return n

    cap = ConcurrencyCap(2)
    loop = Loop(ScriptedModel([fan_out(20), "done"]), [work], tool_concurrency=cap)
    run = loop.iter("Work.")
    task = asyncio.create_task(anext(run))
    while len(running) < 2:
        await asyncio.sleep(0)
    slots = cap.slots(run.state).all
    assert (slots.free, len(slots.waiting)) == (0, 18)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (slots.free, len(slots.waiting)) == (2, 0)
    assert run.result is not None and run.result.status == "cancelled"
    assert running == [0, 1]

    release.set()  # a second run on the same loop starts at once and finishes
    second = await asyncio.wait_for(
        Loop(ScriptedModel([fan_out(3), "done"]), [work], tool_concurrency=cap).run("Again."), 5
    )
    assert second.status == "success"


def test_closing_a_stream_midway_gives_its_slots_back() -> None:
    asyncio.run(_closing_a_stream_midway_gives_its_slots_back())


async def _closing_a_stream_midway_gives_its_slots_back() -> None:
    gate = asyncio.Event()
    running: list[int] = []

    @tool
    async def work(n: int) -> int:
        """Work on n."""
        running.append(n)
        await gate.wait()
        return n

    cap = ConcurrencyCap(3)
    loop = Loop(ScriptedModel([fan_out(10), "done"]), [work], tool_concurrency=cap)
    async with loop.stream("Work.") as events:
        async for event in events:
            if isinstance(event, ToolCallFinished):
                break  # the calls are about to run
        while len(running) < 3:
            await asyncio.sleep(0)
    slots = cap.slots(events.run.state).all
    assert (slots.free, len(slots.waiting)) == (3, 0)
    assert events.result is not None and events.result.status == "cancelled"


def test_a_waiting_call_cancelled_as_it_is_handed_a_slot_passes_the_slot_on() -> None:
    asyncio.run(_a_waiting_call_cancelled_as_it_is_handed_a_slot_passes_the_slot_on())


async def _a_waiting_call_cancelled_as_it_is_handed_a_slot_passes_the_slot_on() -> None:
    from minloop.layers.concurrency import Slots

    slots = Slots(1)
    order: list[str] = []

    async def take(name: str) -> None:
        async with slots:
            order.append(name)

    await slots.__aenter__()  # the one slot is taken
    second, third = asyncio.create_task(take("b")), asyncio.create_task(take("c"))
    await asyncio.sleep(0)  # both wait, "b" first
    await slots.__aexit__(None, None, None)  # "b" is handed the slot ...
    second.cancel()  # ... and cancelled before it runs: "c" gets the slot
    await asyncio.gather(second, third, return_exceptions=True)
    assert order == ["c"]
    assert (slots.free, len(slots.waiting)) == (1, 0)


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (0, "tool_concurrency must be >= 1, got 0"),
        (-1, "tool_concurrency must be >= 1, got -1"),
        (2.5, "tool_concurrency must be a whole number >= 1 or a ConcurrencyCap, got 2.5"),
        (True, "tool_concurrency must be a whole number >= 1 or a ConcurrencyCap, got True"),
    ],
)
def test_a_cap_must_be_a_whole_number_of_at_least_one(bad: Any, said: str) -> None:
    with pytest.raises(MinloopError) as caught:
        Loop(ScriptedModel(["x"]), tool_concurrency=bad)
    assert str(caught.value) == said
    with pytest.raises(MinloopError, match=r"per_tool\['f'\] must be a whole number >= 1"):
        ConcurrencyCap(2, per_tool={"f": bad})


@tool
def search(query: str) -> str:
    """Search."""
    return query


def test_a_cap_on_a_tool_the_loop_does_not_have_is_refused_naming_the_tools_it_has() -> None:
    cap = ConcurrencyCap(4, per_tool={"serch": 1, "search": 1, "搜索": 2})
    with pytest.raises(MinloopError) as caught:
        Loop(ScriptedModel(["x"]), [search], tool_concurrency=cap)
    assert str(caught.value) == (
        "ConcurrencyCap: per_tool names 'serch', '搜索', which the loop does not have; "
        "its tools are 'ask_for_clarification', 'search'"
    )
    assert Loop(ScriptedModel(["x"]), [search], tool_concurrency=ConcurrencyCap(None, per_tool={"search": 1}))
