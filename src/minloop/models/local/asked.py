"""What an English request asks for by name, and whether the tools that ran give anything of it.

``not_given`` reads the thing a request names after "what is" ("What's the humidity in Paris?",
"What is Apple's market capitalisation?", "What's the name of the driver delivering my order?")
and looks for each of its words in what the tools that ran since the user spoke have: their
results (keys and values), their names, and the descriptions of the tools offered under those
names. A word found nowhere is a thing no tool gave. Measured on ``benchmarks/user_tools_dev.py``,
the 0.5B model answered such requests from the nearest field: "The humidity in Paris is 18
degrees Celsius" from a weather result that holds the temperature and the sky; the evidence
check let it through, because 18 is in the result.

Words are compared by their stems (``select.terms``), so "prices" finds "price". A request in
another language than English is left alone: its words cannot be looked for in English results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .results import outcomes
from .select import terms

__all__ = ["not_given"]

_OWNER = r"(?:the\s+|my\s+|your\s+|(?:[A-Z][\w.-]*\s+)*[A-Z][\w.-]*(?:'s|’s)\s+)?"
_ASKED = re.compile(
    rf"\bwhat(?:'s|’s|\s+is|\s+are|\s+was|\s+were)\s+{_OWNER}"
    r"(?P<what>[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2}?)"
    r"(?=\s+(?:of|in|for|on|at|from|between|to|like|today|now|right|with)\b|\s*[?.!]|\s*$)",
    re.IGNORECASE,
)
# Words that say when, which one or how exactly, not what.
_VAGUE = frozenset(
    terms("current currently latest today exact actual real now right present live first last next one worth")
)


def not_given(
    messages: Sequence[Mapping[str, Any]], menu: Sequence[Mapping[str, Any]] | None = None
) -> str | None:
    """The thing the user's last message names after "what is" when a word of it is in none of
    the results of the tools that served since then, their names or their descriptions in
    ``menu``; ``None`` when it is there, nothing is named, or no tool served."""
    said = [m.get("content") for m in messages if m.get("role") == "user"]
    found = _ASKED.search(said[-1]) if said and isinstance(said[-1], str) else None
    served = [o for o in outcomes(messages) if o.kind == "served"]
    if found is None or not served:
        return None
    wanted = [t for t in terms(found["what"]) if t not in _VAGUE]
    names = {o.tool for o in served}
    described = [
        f"{spec.get('name', '')} {spec.get('description', '')}"
        for spec in (tool.get("function") or {} for tool in menu or ())
        if spec.get("name") in names
    ]
    given = " ".join([*names, *described, *(json.dumps(o.result, ensure_ascii=False) for o in served)])
    have = set(terms(given.replace("_", " ")))
    return found["what"] if wanted and not set(wanted) <= have else None
