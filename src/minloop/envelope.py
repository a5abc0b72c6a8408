"""What a tool message says: result bodies, error envelopes, strict JSON and the output cap.

Every tool message the loop writes goes through ``seal``:

* strict JSON (RFC 8259): NaN and infinities, which JSON cannot carry, become the strings
  ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``;
* secrets redacted (after the result is cut to what can be shown, so a huge result costs
  little to redact);
* at most ``max_chars`` characters. An error envelope over the cap keeps its fields (``error``,
  ``code``, ``tool``, ``trace_id``) and only its long texts are shortened; any other result
  over the cap becomes ``{"result_truncated": true, "original_chars": N, "head": "..."}``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

__all__ = ["ErrorCode", "envelope", "result_body", "seal", "to_json"]

ErrorCode: TypeAlias = Literal[
    "ERR_TOOL_TIMEOUT",
    "ERR_TOOL_SCHEMA_MISMATCH",
    "ERR_TOOL_ARGS_INVALID",
    "ERR_TOOL_UNKNOWN",
    "ERR_TOOL_FAILED",
    "ERR_TOOL_REPEATED",
    "ERR_TOOL_DENIED",
    "ERR_TOOL_BUDGET",
    "ERR_TOOL_IN_DOUBT",
    "ERR_TOOL_NOT_STORED",
    "ERR_TOOL_INPUT_REQUIRED",
    "ERR_TOOL_UNAUTHORIZED",
]


def result_body(payload: Any, trace_id: str) -> dict[str, Any]:
    """A successful result as the model reads it: the tool's fields (or ``{"result": ...}``) and ``trace_id``."""
    if isinstance(payload, dict):
        return {**payload, "trace_id": trace_id}
    return {"result": payload, "trace_id": trace_id}


def envelope(
    code: ErrorCode | str, message: str, tool_name: str, trace_id: str, **details: Any
) -> dict[str, Any]:
    return {"error": message, "code": code, "tool": tool_name, **details, "trace_id": trace_id}


def seal(
    body: dict[str, Any],
    max_chars: int,
    redact: Callable[[Any], Any] | None,
    trace_id: str,
    *,
    is_error: bool = False,
) -> str:
    """The content of a tool message: strict JSON, redacted, at most ``max_chars`` characters.

    A result is cut to what its head can show before it is redacted (redaction costs time per
    character, and nothing past the cut can reach the model): long strings are shortened and
    items past the head left out, with a margin so a secret cut there is still recognised. A
    string holding JSON is kept whole, so secrets inside it are still found by key. The
    message is the same as if everything had been redacted first. An error envelope
    (``is_error``) over the cap keeps every field and shortens its long texts; any other result
    over the cap becomes ``{"result_truncated": true, "original_chars": N, "head": "..."}``.
    """
    scrub = redact if redact is not None else _same
    if is_error:
        core = {k: body[k] for k in _ENVELOPE if k in body}
        return _fit(body, max_chars, scrub) or _fit(core, max_chars, scrub) or to_json(scrub(core))
    plain = whole = to_json(body)
    head, cut = body, False
    if len(plain) > max_chars + _MARGIN:  # only then can a cut before redacting save time
        head, _, cut = _head(body, max_chars + _MARGIN)
        plain = to_json(head)
    clean = getattr(redact, "is_clean", None)  # a Redactor says at once when text holds nothing secret
    text = plain if redact is None or (clean is not None and clean(plain)) else to_json(scrub(head))
    if cut and len(plain) - len(text) >= _MARGIN:  # redaction pulled the cut into view
        text = to_json(scrub(body))
    if len(text) <= max_chars:
        return text
    return _truncated(text, len(whole), trace_id, max_chars)


def _same(value: Any) -> Any:
    return value


_ENVELOPE = ("error", "code", "tool", "trace_id")
_MARGIN = 256  # characters kept past the cap before redaction, so a secret cut there still matches
_NEVER_CUT = frozenset({"code", "trace_id"})


def to_json(value: Any) -> str:
    """Strict JSON (RFC 8259): NaN and infinities become the strings "NaN", "Infinity", "-Infinity"."""
    try:
        return _ENCODER.encode(value)
    except ValueError:
        return _ENCODER.encode(_finite(value))


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str)  # made once, not per call


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _clip_strings(value: Any, limit: int) -> Any:
    """``value`` with every string longer than ``limit`` cut, saying how much was cut."""
    if isinstance(value, str):
        return value if len(value) <= limit else f"{value[:limit]} [... {len(value) - limit} more characters]"
    if isinstance(value, dict):
        return {k: _clip_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip_strings(v, limit) for v in value]
    return value


def _head(value: Any, budget: int) -> tuple[Any, int, bool]:
    """What of ``value`` can appear in the first ``budget`` characters of its JSON: strings cut
    and items left out past that point (strings holding JSON stay whole). Returns that part,
    a lower bound of its JSON length, and whether anything was cut (``value`` itself if not)."""
    if isinstance(value, str):
        if len(value) <= budget or value.lstrip()[:1] in ("{", "["):
            return value, len(value) + 2, False
        return value[:budget], budget + 2, True
    if not isinstance(value, dict | list):
        return value, 1, False
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    kept: list[tuple[Any, Any]] = []
    used, cut = 2, False
    for key, item in pairs:
        if used >= budget:
            cut = True
            break
        part, size, inner = _head(item, budget - used)
        kept.append((key, part))
        used, cut = used + size + (len(str(key)) + 4 if isinstance(value, dict) else 1), cut or inner
    if not cut:
        return value, used, False
    return (dict(kept) if isinstance(value, dict) else [p for _, p in kept]), used, True


def _fit(body: dict[str, Any], max_chars: int, scrub: Callable[[Any], Any]) -> str | None:
    """The envelope whole if it fits, else with its texts cut to the longest length that fits
    ``max_chars`` (``code`` and ``trace_id`` are never cut); ``None`` if none does. Every cut
    starts from the full text, so "N more characters" is exact."""
    text = to_json(scrub(_clip_strings(body, max_chars)))  # a longer string can never fit whole
    if len(text) <= max_chars:
        return text
    low, high, best = 0, max_chars, None
    while low <= high:
        mid = (low + high) // 2
        text = to_json(scrub({k: v if k in _NEVER_CUT else _clip_strings(v, mid) for k, v in body.items()}))
        if len(text) <= max_chars:
            best, low = text, mid + 1
        else:
            high = mid - 1
    return best


def _truncated(text: str, original: int, trace_id: str, max_chars: int) -> str:
    """The marker for a result over the cap, with the longest head of its JSON that fits."""
    marker = {"result_truncated": True, "original_chars": original, "head": "", "trace_id": trace_id}
    low, high, best = 0, min(len(text), max_chars), to_json(marker)
    while low <= high:
        mid = (low + high) // 2
        out = to_json({**marker, "head": text[:mid]})
        if len(out) <= max_chars:
            best, low = out, mid + 1
        else:
            high = mid - 1
    return best
