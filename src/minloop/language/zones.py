"""Place names to IANA time zones, in English and Chinese, from CLDR data (shipped by Babel).

``resolve_zone("Tokyo")``, ``resolve_zone("东京")`` and ``resolve_zone("asia/tokyo")`` are all
``"Asia/Tokyo"``. The names are CLDR's localized exemplar cities (``东京``, ``纽约``, ``東京``) and
country names (``日本`` gives the country's first zone), plus the city part of every IANA zone
id and the places tzdata's own zone table names ("Beijing Time" for Asia/Shanghai), and 北京.
``zones_in(text)`` finds the zones a free text names ("What time is it in New York?"; in
English after a preposition, with the names listed after it ("in London, Paris and Sydney"), or
before "time"; in Chinese anywhere).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from zoneinfo import ZoneInfo, available_timezones

__all__ = ["is_zone_parameter", "resolve_zone", "zones_in"]

LOCALES = ("en", "zh", "zh_Hant", "ja")
_ALIASES = {
    "utc": "UTC", "gmt": "UTC", "z": "UTC", "zulu": "UTC", "coordinated universal time": "UTC",
    "北京": "Asia/Shanghai", "北京时间": "Asia/Shanghai", "北京時間": "Asia/Shanghai",
}  # fmt: skip
# China's standard time is called 北京时间, but CLDR names its zone after Shanghai only.
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_NAME = r"[A-Z][A-Za-z'.-]*(?:[ _/][A-Z][A-Za-z'.-]*){0,3}"
# An English place is named after a preposition ("in Tokyo") or before "time" ("Tokyo time"), so
# that "Christmas", "Easter" or "Darwin" elsewhere in a sentence are not taken for zones.
_PLACE = re.compile(
    rf"\b(?i:in|at|for|from|to|of|and|vs|versus)\s+(?P<after>{_NAME}(?:,\s*{_NAME})*)|(?P<before>{_NAME})(?=\s+time\b)"
    r"|\b(?P<utc>UTC|GMT)\b"
)


def _missing_babel() -> Exception:
    from ..exceptions import MissingDependencyError

    return MissingDependencyError("babel (CLDR place names for time zones)", "pip install babel")


@cache
def _index() -> dict[str, str]:
    """Every known name, lowercased, to its zone. Earlier sources win over later ones."""
    try:
        from babel import Locale
        from babel.core import get_global
    except ImportError:
        raise _missing_babel() from None
    zones = sorted(z for z in available_timezones() if "/" in z and not z.startswith(("Etc/", "SystemV/")))
    index: dict[str, str] = dict(_ALIASES)
    for zone in zones:
        index.setdefault(zone.lower(), zone)
    for zone in zones:
        index.setdefault(zone.rsplit("/", 1)[1].replace("_", " ").lower(), zone)
    canonical = {z.lower(): z for z in zones}
    for code in LOCALES:
        locale = Locale.parse(code)
        for zone, names in locale.time_zones.items():
            city = names.get("city") if hasattr(names, "get") else None
            if city and zone.lower() in canonical:
                index.setdefault(city.lower(), canonical[zone.lower()])
    for place, zone in _tzdata_places():
        index.setdefault(place.lower(), zone)
    territory_zones = get_global("territory_zones")
    for code in LOCALES:
        for territory, name in Locale.parse(code).territories.items():
            first = (territory_zones.get(territory) or [None])[0]
            if first and first.lower() in canonical:
                index.setdefault(name.lower(), canonical[first.lower()])
    return index


def _tzdata_places() -> list[tuple[str, str]]:
    """Places named in the comments of tzdata's zone table: ("Beijing", "Asia/Shanghai")."""
    try:
        table = resources.files("tzdata").joinpath("zoneinfo", "zone1970.tab").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        return []
    places = []
    for line in table.splitlines():
        fields = line.split("\t")
        if len(fields) == 4 and not line.startswith("#") and fields[3].endswith(" Time"):
            place = fields[3].removesuffix(" Time").removeprefix("most of ")
            if place and place[0].isupper() and " " not in place:
                places.append((place, fields[2]))
    return places


def resolve_zone(name: str) -> str | None:
    """The IANA zone a place name or zone id stands for, or None when it is not known."""
    key = name.strip().lower().replace("_", " ")
    if not key:
        return None
    zone = _index().get(key) or _index().get(key.replace(" ", "_"))
    if zone is None and "/" in key:
        zone = _index().get(key.rsplit("/", 1)[1])
    if zone is None and _CJK.search(key):
        zone = _index().get(key.removesuffix("时间").removesuffix("時間").removesuffix("市"))
    return zone if zone is None or zone == "UTC" else str(ZoneInfo(zone))


@cache
def _cjk_names() -> tuple[tuple[str, str], ...]:
    """The Chinese and Japanese names, longest first (so 新西兰 is found before 西兰)."""
    names = [(k, z) for k, z in _index().items() if _CJK.search(k) and len(k) >= 2]
    return tuple(sorted(names, key=lambda kz: -len(kz[0])))


def zones_in(text: str) -> list[str]:
    """The zones a free text names, in order of first mention, without repeats."""
    found: list[tuple[int, str]] = []
    if _CJK.search(text):
        taken = [False] * len(text)
        for name, zone in _cjk_names():
            start = text.find(name)
            while start >= 0:
                if not any(taken[start : start + len(name)]):
                    taken[start : start + len(name)] = [True] * len(name)
                    found.append((start, zone))
                start = text.find(name, start + 1)
    index = _index()
    for match in _PLACE.finditer(text):
        names = (match.group("after") or match.group("before") or match.group("utc")).split(",")
        for k, name in enumerate(names):  # "in London, Paris and Sydney"
            words = name.split()
            for n in range(len(words), 0, -1):  # the longest name first: "New York" before "York"
                key = " ".join(words[:n]).lower()
                named = index.get(key) or index.get(key.rstrip("."))  # "in Paris." ends a sentence
                if named:
                    found.append((match.start() + k, named))
                    break
    seen: dict[str, None] = {}
    for _, zone in sorted(found):
        seen.setdefault(zone)
    return list(seen)


def is_zone_parameter(name: str, schema: object) -> bool:
    """Whether a tool parameter takes a time zone, judged from its name and description."""
    key = name.lower().replace("_", "").replace("-", "")
    if key in ("tz", "zone", "tzname") or "timezone" in key:
        return True
    description = str(schema.get("description", "")) if isinstance(schema, dict) else ""
    return bool(re.search(r"\bIANA\b|time ?zone", description, re.IGNORECASE))
