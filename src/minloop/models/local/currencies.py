"""The currencies a text names, and the tool of a menu that converts between currencies."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...language import code_names

__all__ = ["currencies_in", "currency_tool"]

_CURRENCY_PARAMETER = re.compile(r"currenc|iso 4217|货币|币种", re.IGNORECASE)
_COMMON = ("USD", "EUR", "GBP", "JPY", "CNY", "CHF", "HKD", "CAD", "AUD", "KRW", "INR", "SGD", "RUB", "BRL")


def currencies_in(text: str) -> list[str]:
    """The currency codes a text names, by code ("EUR"), name ("euros", "British pounds") or
    Chinese name ("欧元"), in the order first named."""
    found: dict[str, None] = {}
    lowered = text.lower()
    for code in _COMMON:
        names = [n for n in code_names(code) if (len(n) > 1 and not n.isascii()) or " " in n or len(n) > 3]
        if re.search(rf"\b{code}\b", text) or any(_named(name, lowered) for name in names):
            found.setdefault(code)
    return sorted(found, key=lambda code: _first(code, text, lowered))


def _named(name: str, lowered: str) -> bool:
    if not name.isascii():
        return name in lowered
    stem = name.removesuffix("s")
    return bool(re.search(rf"\b{re.escape(stem)}s?\b", lowered)) or _last_word(stem, lowered)


def _last_word(name: str, lowered: str) -> bool:
    """ "euros" names the euro, "yen" the Japanese yen: a name's last word, when it is the
    currency's only common word ("dollar" is not: several currencies are dollars)."""
    word = name.split()[-1]
    return word not in ("dollar", "pound", "franc", "rupee", "peso", "krone") and bool(
        re.search(rf"\b{re.escape(word)}s?\b", lowered)
    )


def _first(code: str, text: str, lowered: str) -> int:
    at = [m.start() for m in re.finditer(rf"\b{code}\b", text)]
    at += [lowered.find(n) for n in code_names(code) if n in lowered]
    at += [lowered.find(n.split()[-1]) for n in code_names(code) if n.isascii() and n.split()[-1] in lowered]
    return min([a for a in at if a >= 0], default=len(text))


def currency_tool(tools: Sequence[Mapping[str, Any]]) -> str | None:
    """The one tool whose parameters take currencies, if there is exactly one."""
    found = []
    for spec in tools:
        fn = spec.get("function") or {}
        props = (fn.get("parameters") or {}).get("properties") or {}
        texts = [f"{name} {(schema or {}).get('description', '')}" for name, schema in props.items()]
        if sum(bool(_CURRENCY_PARAMETER.search(t)) for t in texts) >= 2 or any(
            name in ("base", "target", "from_currency", "to_currency") for name in props
        ):
            found.append(str(fn.get("name")))
    return found[0] if len(found) == 1 else None
