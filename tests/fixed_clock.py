"""A clock that always says the same time, so a real-model test does not depend on the hour it runs."""

from __future__ import annotations

from minloop import tool
from minloop.builtins import calculator


@tool(timeout=2.0)
def current_time(timezone: str = "UTC") -> dict[str, str]:
    """Get the current date and time in a time zone.

    Args:
        timezone: IANA time zone name such as "Asia/Shanghai" or "Europe/Paris", or a city or country name.
    """
    return {"timezone": timezone, "date": "2026-11-30", "time": "09:15", "weekday": "Monday"}


TOOLS = [calculator, current_time]
