"""Times given for a place are held to what the clock read for that place."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from minloop import tool
from minloop.builtins import current_time as clock
from minloop.builtins.clock import reading
from minloop.small.evidence import unsupported
from minloop.small.values import Evidence


def read_at(zone: str, utc: str) -> dict[str, str]:
    """The built-in clock's result for ``zone`` at ``utc`` ("10:27:44") on 2026-12-03, UTC."""
    return reading(zone, datetime.fromisoformat(f"2026-12-03T{utc}").replace(tzinfo=UTC))


UTC_READING = read_at("UTC", "10:27:44")


@tool
def current_time(timezone: str = "UTC") -> dict[str, str]:
    """Get the current date and time in a time zone (a fixed clock that always reads UTC)."""
    return UTC_READING


def read(question: str, *results: dict[str, str]) -> list[dict[str, object]]:
    """A conversation in which the clock was read once per result."""
    return [
        {"role": "user", "content": question},
        *({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps(r)} for i, r in enumerate(results)),
    ]


def test_a_time_that_says_am_or_pm_is_read_on_the_24_hour_clock() -> None:
    new_york = read_at("America/New_York", "10:35:00")
    seen = Evidence.of(read("纽约今天星期几？", new_york))
    assert unsupported("It is 5:35 am in New York.", seen) == []
    assert unsupported("纽约现在是早上5点35分。", seen) == unsupported("纽约现在是5点35分。", seen) == []
    assert unsupported("It is 5:35 PM.", seen) == ["5:35 PM"]
    assert unsupported("纽约现在是下午5点35分。", seen) == ["下午5点35分"]
    assert unsupported("The time in New York is December 3, 2026, at 05:35 PM.", seen) == ["05:35 PM"]


CLOCK = {"type": "function", "function": {"name": "current_time", "parameters": clock.parameters()}}


def calls(*zones: str | None) -> dict[str, object]:
    """An assistant message calling the clock once per zone (``None``: no zone written)."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_2_{j + 1}",
                "type": "function",
                "function": {
                    "name": "current_time",
                    "arguments": json.dumps({} if zone is None else {"timezone": zone}),
                },
            }
            for j, zone in enumerate(zones)
        ],
    }


def test_both_places_read_and_each_given_its_own_time_pass_the_check() -> None:
    tokyo = read_at("Asia/Tokyo", "11:37:38")
    new_york = read_at("America/New_York", "11:37:38")
    seen = Evidence.of(read("东京和纽约现在几点？", tokyo, new_york))
    answer = (
        "The Tokyo and New York times are currently 2026-12-03 at 20:37, Thursday, in Tokyo, "
        "and 2026-12-03 at 06:37, Thursday, in New York."
    )  # the 0.5B model's own answer: each place named after its time
    assert unsupported(answer, seen) == []
    assert unsupported("东京现在是06:38。", seen) == ["06:38"]
