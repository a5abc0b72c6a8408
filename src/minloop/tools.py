"""Tools: a function plus a machine-checked contract.

``@tool`` builds the argument model from the function signature and docstring with public
Pydantic API (``create_model``); the JSON schema the model sees is that model's schema, and
the same model validates the arguments before every call. A declared output model validates
every result, after an optional key mapping (``output_map``) and Pydantic's lax coercion.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, create_model

from .exceptions import ToolDefinitionError

__all__ = ["DEFAULT_TIMEOUT", "Tool", "ToolOptions", "tool", "tool_specs"]

DEFAULT_TIMEOUT = 30.0
"""Seconds a tool may run when it declares neither ``timeout`` nor ``sla``."""

SLA_FACTOR = 1.5
_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class Tool:
    """A callable the model may request, with its contract.

    ``args`` validates arguments; ``output`` (optional) validates results; ``timeout`` is the
    hard limit in seconds (default ``1.5 * sla``, else ``DEFAULT_TIMEOUT``).
    """

    name: str
    description: str
    fn: Callable[..., Any]
    args: type[BaseModel]
    output: type[BaseModel] | None = None
    output_map: Mapping[str, str] = field(default_factory=dict)
    sla: float | None = None
    timeout: float = DEFAULT_TIMEOUT
    needs_approval: bool = False
    keep_fields: tuple[str, ...] | None = None
    is_async: bool = False

    def spec(self) -> dict[str, Any]:
        """The Chat Completions ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters(),
            },
        }

    def parameters(self) -> dict[str, Any]:
        return _clean_schema(self.args.model_json_schema())


def tool_specs(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    return [t.spec() for t in tools]


class ToolOptions(TypedDict, total=False):
    """The options of ``@tool(...)``."""

    name: str
    description: str
    output: type[BaseModel]
    output_map: Mapping[str, str]
    sla: float
    timeout: float
    needs_approval: bool
    keep_fields: Sequence[str]


@overload
def tool(fn: Callable[..., Any], /, **options: Unpack[ToolOptions]) -> Tool: ...
@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None, /, **options: Unpack[ToolOptions]
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function (sync or async) into a ``Tool``.

    Use bare (``@tool``) or with options (``@tool(output=Weather, sla=1.2)``). Parameter
    descriptions come from ``Annotated[..., Field(description=...)]`` or the docstring's
    ``Args:`` section. A return annotation that is a Pydantic model is the output contract
    unless ``output`` is given. ``timeout`` is the hard limit in seconds (default 1.5 x
    ``sla``, else 30 s). ``needs_approval=True`` runs the tool only when the loop's approval
    callback says yes (denied otherwise, with ``ERR_TOOL_DENIED``). ``keep_fields`` keeps only
    those keys of a dict result (noise fields never reach the model); a declared ``output``
    model already keeps only its own fields.
    """
    unknown = set(options) - set(ToolOptions.__annotations__)
    if unknown:
        raise ToolDefinitionError(
            f"unknown tool option(s) {sorted(unknown)}; known: {sorted(ToolOptions.__annotations__)}"
        )

    def build(f: Callable[..., Any]) -> Tool:
        return _build(f, options)

    return build(fn) if fn is not None else build


def _build(fn: Callable[..., Any], options: ToolOptions) -> Tool:
    tool_name = options.get("name") or fn.__name__
    if not _NAME_RE.match(tool_name):
        raise ToolDefinitionError(f"tool name {tool_name!r} must match {_NAME_RE.pattern}")
    summary, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
    hints = get_type_hints(fn, include_extras=True)
    output = options.get("output")
    if output is None:
        ret = hints.get("return")
        output = ret if isinstance(ret, type) and issubclass(ret, BaseModel) else None
    sla, timeout = options.get("sla"), options.get("timeout")
    for label, value in (("sla", sla), ("timeout", timeout)):
        if value is not None and value <= 0:
            raise ToolDefinitionError(f"tool {tool_name!r}: {label} must be > 0, got {value}")
    limit = timeout if timeout is not None else (sla * SLA_FACTOR if sla else DEFAULT_TIMEOUT)
    keep = options.get("keep_fields")
    return Tool(
        name=tool_name,
        description=options.get("description") or summary or tool_name,
        fn=fn,
        args=_args_model(fn, tool_name, hints, arg_docs),
        output=output,
        output_map=dict(options.get("output_map") or {}),
        sla=sla,
        timeout=limit,
        needs_approval=options.get("needs_approval", False),
        keep_fields=tuple(keep) if keep is not None else None,
        is_async=inspect.iscoroutinefunction(fn),
    )


def _args_model(
    fn: Callable[..., Any], tool_name: str, hints: dict[str, Any], docs: dict[str, str]
) -> type[BaseModel]:
    from pydantic import Field  # here, not at import: pydantic's field types cost ~20 ms to import
    from pydantic.fields import FieldInfo

    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolDefinitionError(
                f"tool {tool_name!r}: parameter {param.name!r} must be a named parameter "
                "(no *args, **kwargs or positional-only parameters)"
            )
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        if isinstance(default, FieldInfo):
            info = default
        elif param.name in docs:
            info = Field(default, description=docs[param.name])
        else:
            info = Field(default)
        fields[param.name] = (annotation, info)
    config = ConfigDict(extra="forbid")
    try:
        return create_model(f"{tool_name}_args", __config__=config, **fields)
    except Exception as exc:  # pydantic raises several types for unsupported annotations
        raise ToolDefinitionError(f"tool {tool_name!r}: cannot build argument schema: {exc}") from exc


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """First paragraph as the summary; Google-style ``Args:`` entries as descriptions."""
    lines = doc.splitlines()
    summary = " ".join(_take_paragraph(lines)).strip()
    args: dict[str, str] = {}
    in_args, current = False, None
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if in_args:
            if line.strip() and not line.startswith((" ", "\t")):
                break  # next section
            match = _ARG_LINE.match(line)
            if match and line.startswith(("    ", "\t")) and not line.startswith(("        ", "\t\t")):
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current and line.strip():
                args[current] = f"{args[current]} {line.strip()}"
    return summary, args


def _take_paragraph(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if not line.strip() or _ARGS_HEADER.match(line):
            break
        out.append(line.strip())
    return out


def _clean_schema(schema: Any) -> Any:
    """Drop Pydantic's ``title`` keys: they cost tokens and tell the model nothing."""
    if isinstance(schema, dict):
        return {k: _clean_schema(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_clean_schema(v) for v in schema]
    return schema
