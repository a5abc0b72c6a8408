"""The current date and time in any IANA time zone, or in the zone of a named city or country."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..language import resolve_zone
from ..tools import tool


@tool(timeout=2.0, idempotent=True)
def current_time(timezone: str = "UTC") -> dict[str, str]:
    """Get the current date and time in a time zone, with the day of the week.

    Args:
        timezone: IANA time zone name such as "Asia/Shanghai" or "Europe/Paris", or a city or country name.
    """
    return reading(timezone)


def reading(timezone: str, now: datetime | None = None) -> dict[str, str]:
    """The clock's result for ``timezone`` at ``now`` (an aware datetime; default: the present)."""
    timezone = resolve_zone(timezone) or timezone  # "Tokyo" and "东京" are Asia/Tokyo
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {timezone!r}; use an IANA name like 'Europe/Paris'") from None
    local = (now or datetime.now(UTC)).astimezone(zone)
    return {  # date and time spelled out beside the ISO form: a small model copies them, not parses
        "timezone": timezone,
        "date": local.strftime("%Y-%m-%d"),
        "time": local.strftime("%H:%M"),
        "weekday": local.strftime("%A"),
        "datetime": local.isoformat(timespec="seconds"),
        "utc_offset": local.strftime("%z"),
    }
