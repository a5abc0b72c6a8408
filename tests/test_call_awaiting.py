"""An async tool's call under its timeout: it runs at once to its first wait, and only a call
that waits gets a timer; what the task sends or throws in reaches the tool."""

from __future__ import annotations

import asyncio

import pytest

from minloop.workers import Overdue, call_awaiting


async def computed(x: int) -> int:
    return x * 2


async def waits(x: int, seconds: float, times: int = 1) -> int:
    for _ in range(times):
        await asyncio.sleep(seconds)
    return x


def test_a_call_that_never_waits_needs_no_timer() -> None:
    async def main() -> int:
        return await call_awaiting(computed(21), 1e-9)  # a timer this short would have fired

    assert asyncio.run(main()) == 42


def test_a_call_that_waits_finishes_within_its_timeout_or_is_overdue() -> None:
    async def main() -> tuple[int, bool]:
        done = await call_awaiting(waits(7, 0.001, times=5), 5)
        try:
            await call_awaiting(waits(7, 5), 0.05)
        except Overdue:
            return done, True
        return done, False

    assert asyncio.run(main()) == (7, True)


def test_a_timeout_error_of_the_tools_own_is_not_overdue() -> None:
    async def own() -> None:
        await asyncio.sleep(0)
        raise TimeoutError("the upstream service timed out")

    async def main() -> None:
        await call_awaiting(own(), 5)

    with pytest.raises(TimeoutError, match="upstream"):
        asyncio.run(main())


def test_a_cancellation_reaches_the_waiting_tool() -> None:
    seen: list[str] = []

    async def tool() -> None:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        finally:
            seen.append("cleaned up")

    async def main() -> None:
        task = asyncio.create_task(call_awaiting(tool(), 10))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert seen == ["cancelled", "cleaned up"]


def test_an_error_before_the_first_wait_is_raised_as_it_is() -> None:
    async def broken() -> None:
        raise ValueError("bad input")

    async def main() -> None:
        await call_awaiting(broken(), 5)

    with pytest.raises(ValueError, match="bad input"):
        asyncio.run(main())
