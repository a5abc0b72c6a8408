"""One call per place: a question about several places gets a time zone tool called for each.

Asked "东京和纽约现在几点？", the 0.5B model reads the clock once, in UTC or for one of the two
cities, and then gives that one reading as both cities' time. ``per_place`` turns a call whose
time zone is none of the places the user named into one call per named place that no call of
the decision already reads; a call for a named place is kept as it is. It applies only when the
user named two places or more and the tool has exactly one time zone parameter (by its name or
description, see ``minloop.language.is_zone_parameter``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...language import is_zone_parameter, resolve_zone

__all__ = ["per_place"]


def per_place(
    calls: Sequence[Mapping[str, Any]], specs: Mapping[str, Mapping[str, Any]], zones: Sequence[str]
) -> list[Mapping[str, Any]]:
    """``calls`` with each call that reads no place the user named (``zones``) made once per named
    place not read by another call to the same tool; ids are numbered again when calls are added."""
    if len(zones) < 2:
        return list(calls)
    read = [_place(call, specs) for call in calls]
    covered = {(name, zone) for name, _, zone in filter(None, read) if zone in zones}
    out: list[Mapping[str, Any]] = []
    for call, place in zip(calls, read):
        if place is None or place[2] in zones:
            out.append(call)
            continue
        name, parameter, _ = place
        missing = [z for z in zones if (name, z) not in covered]
        covered.update((name, z) for z in missing)
        out += [_with(call, parameter, zone) for zone in missing] or [call]
    return out if len(out) == len(calls) else _numbered(out)


def _place(
    call: Mapping[str, Any], specs: Mapping[str, Mapping[str, Any]]
) -> tuple[str, str, str | None] | None:
    """The tool, its time zone parameter and the zone a call reads; ``None`` for other calls."""
    fn = call.get("function") or {}
    properties = (specs.get(str(fn.get("name"))) or {}).get("properties") or {}
    names = [n for n, schema in properties.items() if is_zone_parameter(n, schema)]
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except (TypeError, ValueError):
        return None
    if len(names) != 1 or not isinstance(args, dict) or not isinstance(args.get(names[0]), str | None):
        return None
    value = args.get(names[0])
    return fn["name"], names[0], resolve_zone(value) if value else None


def _with(call: Mapping[str, Any], parameter: str, zone: str) -> dict[str, Any]:
    fn = call["function"]
    args = {**json.loads(fn.get("arguments") or "{}"), parameter: zone}
    return {**call, "function": {**fn, "arguments": json.dumps(args, ensure_ascii=False)}}


def _numbered(calls: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The calls with ids ``<prefix>_1``, ``<prefix>_2``... after the first call's id's prefix."""
    first = str(calls[0].get("id") or "call")
    prefix = first.rsplit("_", 1)[0] if "_" in first else first
    return [{**call, "id": f"{prefix}_{j + 1}"} for j, call in enumerate(calls)]
