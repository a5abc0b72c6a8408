"""The current date and time in any IANA time zone, or in the zone of a named city or country."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..language import resolve_zone
from ..tools import tool


@tool(timeout=2.0)
def current_time(timezone: str = "UTC") -> dict[str, str]:
    """Get the current date and time in a time zone.

    Args:
        timezone: IANA time zone name such as "Asia/Shanghai" or "Europe/Paris", or a city or country name.
    """
    timezone = resolve_zone(timezone) or timezone  # "Tokyo" and "东京" are Asia/Tokyo
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {timezone!r}; use an IANA name like 'Europe/Paris'") from None
    now = datetime.now(zone)
    return {  # date and time spelled out beside the ISO form: a small model copies them, not parses
        "timezone": timezone,
        "date": now.strftime("%Y-%m-%d"),
        "time": now.strftime("%H:%M"),
        "weekday": now.strftime("%A"),
        "datetime": now.isoformat(timespec="seconds"),
        "utc_offset": now.strftime("%z"),
    }
