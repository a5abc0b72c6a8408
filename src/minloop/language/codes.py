"""Codes for currencies, languages and countries, and what people call them, in English and
Chinese, from CLDR data (shipped by Babel).

``code_names("GBP")`` holds "british pound", "英镑" and "£"; ``code_names("fr")`` "french" and
"法语"; ``code_names("JP")`` "japan" and "日本"; ``code_names("en-US")`` "american english" and
"english". Codes are ISO 4217 currencies (three letters), language codes (two or three letters,
with a region: ``zh_CN``, ``en-US``) and ISO 3166 countries (two letters), in any case, and the
symbols of common units of length, weight and volume (``code_names("mi")`` holds "miles" and
"英里"). A word that is no code has no names. Grounding uses them: a call's ``"GBP"`` stands on a
request that says "British pounds", and ``"km"`` on one that says "kilometres" or "公里".
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache

__all__ = ["code_names", "unit_names"]

LOCALES = ("en", "zh")
_CODE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z]{2,4})?")
_UNITS = {  # a unit's symbol, and what people call it, in English and in Chinese
    "km": "kilometre kilometres kilometer kilometers 公里 千米",
    "m": "metre metres meter meters 米",
    "cm": "centimetre centimetres centimeter centimeters 厘米",
    "mm": "millimetre millimetres millimeter millimeters 毫米",
    "mi": "mile miles 英里",
    "ft": "foot feet 英尺",
    "in": "inch inches 英寸",
    "yd": "yard yards 码",
    "kg": "kilogram kilograms 公斤 千克",
    "g": "gram grams 克",
    "lb": "pound pounds 磅",
    "lbs": "pound pounds 磅",
    "oz": "ounce ounces 盎司",
    "l": "litre litres liter liters 升",
    "ml": "millilitre millilitres milliliter milliliters 毫升",
    "gal": "gallon gallons 加仑",
}


@cache
def _index() -> dict[str, frozenset[str]]:
    """Every code, lowercased with ``_`` between its parts, to its names and symbols."""
    try:
        from babel import Locale
    except ImportError:
        from ..exceptions import MissingDependencyError

        raise MissingDependencyError(
            "babel (CLDR names of currencies and languages)", "pip install babel"
        ) from None
    names: dict[str, set[str]] = defaultdict(set)
    for code in LOCALES:
        locale = Locale.parse(code)
        for table in (locale.currencies, locale.languages, locale.territories, locale.currency_symbols):
            for key, name in table.items():
                if key.isalpha() or "_" in key:
                    names[key.lower()].add(name.lower())
    return {code: frozenset(found) for code, found in names.items()}


def code_names(value: str) -> frozenset[str]:
    """The names and symbols of the currency, language or country ``value`` is the code of, and
    the names of the unit it is the symbol of (lowercased), or nothing when it is no code."""
    unit = unit_names(value)
    if not _CODE.fullmatch(value.strip()):
        return unit
    key, index = value.strip().lower().replace("-", "_"), _index()
    found = index.get(key, frozenset()) | unit
    if "_" in key:  # "en_us": American English, and English
        found |= index.get(key.split("_")[0], frozenset())
    return found


def unit_names(symbol: str) -> frozenset[str]:
    """What people call the unit ``symbol`` stands for ("mi": "miles", "英里"), or nothing."""
    return frozenset(_UNITS.get(symbol.strip().lower(), "").split())
