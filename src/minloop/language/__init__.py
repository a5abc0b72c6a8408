"""Language helpers shared by grounding and the evidence check: numbers in English and Chinese
(``numerals``), place names to IANA time zones (``zones``), the names of currency, language and
country codes (``codes``), dates in a described format (``dates``), and which language a user
writes in."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .codes import code_names, unit_names
from .dates import date_format, in_format
from .numerals import chinese_number, implied_numbers, numbers_in
from .zones import is_zone_parameter, resolve_zone, zones_in

__all__ = [
    "Language",
    "chinese_number",
    "code_names",
    "date_format",
    "implied_numbers",
    "in_format",
    "is_zone_parameter",
    "language_of",
    "last_said",
    "numbers_in",
    "resolve_zone",
    "unit_names",
    "user_language",
    "zones_in",
]

Language = Literal["en", "zh"]
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def language_of(text: str) -> Language:
    """``"zh"`` when a text has Han characters, else ``"en"``."""
    return "zh" if _CJK.search(text) else "en"


def user_language(messages: Sequence[Mapping[str, Any]]) -> Language:
    """The language of the last user message with text ("en" when there is none)."""
    return language_of(last_said(messages))


def last_said(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of the last user message with text ("" when there is none)."""
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str) and content.strip():
            return content
    return ""
