"""Checking values against JSON schemas (Draft 2020-12 unless the schema says otherwise).

Used by tools built from a JSON schema (``minloop.tool_from_schema``, MCP tools). The
``jsonschema`` package is imported on first use, so ``import minloop`` does not pay for it.
Compiled validators are kept per schema object: a tool compiles its schema once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .exceptions import ToolDefinitionError

__all__ = ["closed", "compile_schema", "distributed", "problems"]

_CACHE_LIMIT = 4096
_compiled: dict[int, tuple[Mapping[str, Any], Any]] = {}
_OPEN_KEYS = ("additionalProperties", "unevaluatedProperties", "patternProperties")
_PARTS = ("allOf", "anyOf", "oneOf")  # where a schema's properties may come from, besides itself
_PLAIN = frozenset({"type", "properties", "required", "title", "description"})  # an allOf part to merge


def closed(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with ``additionalProperties: false`` at the top level when it says nothing about
    extra keys, so unknown arguments are refused; ``unevaluatedProperties: false`` for a schema
    whose properties come from its parts (``allOf``, ``anyOf``, ``oneOf``, ``$ref``), which
    ``additionalProperties`` does not see. Nested objects are left as they are."""
    out = dict(schema)
    if out.get("type", "object") == "object" and not any(k in out for k in _OPEN_KEYS):
        composed = any(k in out for k in (*_PARTS, "$ref"))
        out["unevaluatedProperties" if composed else "additionalProperties"] = False
    return out


def distributed(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with the properties (and everything else) it gives beside an ``anyOf`` or
    ``oneOf`` carried into each of the parts, so that each part is a whole object on its own:
    ``{"properties": {"kind": ...}, "anyOf": [{"properties": {"x": ...}}, ...]}`` becomes
    ``{"anyOf": [{"properties": {"kind": ..., "x": ...}}, ...]}``; an ``allOf`` of parts that
    only name properties is made one object with all of them. Grammar converters read the
    parts alone (llama.cpp's makes every property of an ``allOf`` part required, and the
    parent's optional or absent), and a part closed to other keys would refuse the parent's. The same
    object values pass both; ``$defs`` stay at the top, where references look for them."""
    out = _joined(schema)
    for key in ("anyOf", "oneOf"):
        parts = out.get(key)
        if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
            continue
        kept: dict[str, Any] = {k: out.pop(k) for k in ("$defs", "definitions") if k in out}
        rest = {k: v for k, v in out.items() if k != key}
        if not rest:
            return {**out, **kept}
        return {key: [_merged(rest, part) for part in parts], **kept}
    return out


def _joined(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``allOf`` made one object, when each part only names properties (and
    which are required), no two define one property differently and the parent says nothing of
    other keys (its ``additionalProperties`` would refuse the parts' properties); else as it is."""
    parts, out = schema.get("allOf"), dict(schema)
    if not isinstance(parts, list) or not all(map(_plain, parts)) or "additionalProperties" in out:
        return out
    out.pop("allOf")
    for part in parts:
        mine, theirs = out.get("properties", {}), part.get("properties", {})
        if any(mine[name] != theirs[name] for name in mine.keys() & theirs.keys()):
            return dict(schema)
        out = _merged(out, {k: v for k, v in part.items() if k in ("properties", "required")})
    return out


def _plain(part: Any) -> bool:
    return isinstance(part, dict) and part.keys() <= _PLAIN and part.get("type", "object") == "object"


def _merged(whole: Mapping[str, Any], part: Mapping[str, Any]) -> dict[str, Any]:
    required = [*whole.get("required", []), *part.get("required", [])]
    properties = {**whole.get("properties", {}), **part.get("properties", {})}
    merged = {**whole, **part, "properties": properties, "required": list(dict.fromkeys(required))}
    return {k: v for k, v in merged.items() if v or k not in ("properties", "required")}


def compile_schema(schema: Mapping[str, Any], where: str) -> Any:
    """A ``jsonschema`` validator for ``schema``; ``ToolDefinitionError`` naming ``where`` if the
    schema itself is invalid. Cached by the schema object's identity."""
    hit = _compiled.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    cls = validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ToolDefinitionError(f"{where} is not a valid JSON schema: {exc.message}") from None
    validator = cls(schema)
    if len(_compiled) >= _CACHE_LIMIT:
        _compiled.clear()
    _compiled[id(schema)] = (schema, validator)  # holds the schema, so its id stays unique
    return validator


def problems(schema: Mapping[str, Any], value: Any, where: str) -> list[dict[str, str]]:
    """Where ``value`` breaks ``schema``, as ``[{"loc": "a.0.b", "msg": "..."}]`` (empty when it fits)."""
    validator = compile_schema(schema, where)
    found = sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    return [{"loc": ".".join(str(p) for p in e.absolute_path) or "(root)", "msg": _message(e)} for e in found]


def _message(error: Any) -> str:
    if (
        error.validator in ("additionalProperties", "unevaluatedProperties")
        and error.validator_value is False
    ):
        parts = [error.schema, *(p for k in _PARTS for p in error.schema.get(k) or [])]
        known = sorted({name for p in parts if isinstance(p, dict) for name in p.get("properties") or {}})
        extra = sorted(set(error.instance) - set(known)) if isinstance(error.instance, dict) else []
        what = "argument(s)" if not error.absolute_path else "key(s)"
        return f"unknown {what} {', '.join(map(repr, extra))}; expected: {', '.join(known) or 'none'}"
    return str(error.message)
