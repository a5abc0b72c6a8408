"""Clocks that always say the same time, so a real-model test does not depend on the hour it runs."""

from __future__ import annotations

from datetime import datetime

from minloop import Tool, tool
from minloop.builtins import calculator
from minloop.builtins.clock import reading


@tool(timeout=2.0)
def current_time(timezone: str = "UTC") -> dict[str, str]:
    """Get the current date and time in a time zone, with the day of the week.

    Args:
        timezone: IANA time zone name such as "Asia/Shanghai" or "Europe/Paris", or a city or country name.
    """
    return {"timezone": timezone, "date": "2026-11-30", "time": "09:15", "weekday": "Monday"}


TOOLS = [calculator, current_time]


def stopped_at(instant: str) -> list[Tool]:
    """The calculator and the built-in clock, its time fixed at ``instant`` (ISO, with its offset)."""
    now = datetime.fromisoformat(instant)

    @tool(name="current_time", timeout=2.0)
    def stopped(timezone: str = "UTC") -> dict[str, str]:
        """Get the current date and time in a time zone, with the day of the week.

        Args:
            timezone: IANA time zone name such as "Asia/Shanghai" or "Europe/Paris", or a city or country name.
        """
        return reading(timezone, now)

    return [calculator, stopped]


TOKYO_0502 = stopped_at("2026-12-01T05:02:23+09:00")
TOKYO_1502 = stopped_at("2026-12-01T15:02:41+09:00")
TOKYO_2338 = stopped_at("2026-12-01T23:38:07+09:00")
