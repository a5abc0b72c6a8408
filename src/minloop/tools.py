"""Tools: a function plus a machine-checked contract.

``@tool`` builds the argument model from the signature and docstring (Pydantic's ``create_model``);
the model sees that model's JSON schema, and the same model validates the arguments before every
call. A declared output model validates every result, after an optional key mapping
(``output_map``) and Pydantic's lax coercion. ``tool_from_schema`` builds the same ``Tool`` from a
JSON schema (MCP servers, benchmark function docs), checked with ``jsonschema``. Either way the
loop runs every tool through ``Tool.check_args`` and ``Tool.check_result``, so both kinds fail with
the same error envelopes.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from .exceptions import ToolDefinitionError
from .schemas import closed, compile_schema, problems
from .sources import ToolSource

__all__ = [
    "DEFAULT_TIMEOUT",
    "CallKey",
    "ContractViolation",
    "Tool",
    "ToolOptions",
    "registry_of",
    "tool",
    "tool_from_schema",
    "tool_specs",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds a tool may run when it declares neither ``timeout`` nor ``sla``."""

SLA_FACTOR = 1.5
_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class CallKey(str):
    """The call's idempotency key, for a tool with a parameter of this type (the model never sees
    it): made from the run and the call, the same when the call is made again after a resume.
    Pass it to the service the tool calls so that a repeat does nothing twice; a tool that takes
    it is by that safe to repeat (a resumed run repeats its call left in doubt)."""

    __slots__ = ()


class ContractViolation(Exception):
    """Arguments or a result do not fit a tool's schema; ``problems`` say where."""

    def __init__(self, message: str, problems: list[dict[str, str]]) -> None:
        super().__init__(message)
        self.problems = problems


@dataclass(frozen=True, slots=True)
class Tool:
    """A callable the model may request, with its contract.

    Arguments are checked by ``args`` (a Pydantic model, from ``@tool``) or by ``input_schema``
    (a JSON schema, from ``tool_from_schema``): exactly one of them is set. Results are checked
    by ``output`` (a Pydantic model) or ``output_schema`` (a JSON schema), when given.
    ``timeout`` is the hard limit in seconds (default ``1.5 * sla``, else ``DEFAULT_TIMEOUT``).
    ``server`` names where the tool runs when that is not this process (an MCP server): traces
    and the live view show it. ``idempotent`` says a call may safely run twice (a read, or a
    write that sets rather than adds): a resumed run repeats such a call when it cannot know
    whether it finished. ``read_only``: a call changes nothing (its result may be cached);
    ``retry``: a failed call may be tried again anyway; ``key``: the hidden ``CallKey`` parameter;
    ``source``: where it comes from, when that may change it during a run (``ToolSource``).
    """

    name: str
    description: str
    fn: Callable[..., Any]
    args: type[BaseModel] | None = None
    output: type[BaseModel] | None = None
    output_map: Mapping[str, str] = field(default_factory=dict)
    sla: float | None = None
    timeout: float = DEFAULT_TIMEOUT
    needs_approval: bool = False
    keep_fields: tuple[str, ...] | None = None
    is_async: bool = False
    input_schema: Mapping[str, Any] | None = None
    output_schema: Mapping[str, Any] | None = None
    server: str | None = None
    idempotent: bool = False
    read_only: bool = False
    retry: bool = False
    key: str | None = None
    source: ToolSource[Tool] | None = field(default=None, repr=False, compare=False)
    _arg_schema: Mapping[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    _arg_names: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)  # of ``args``

    def __post_init__(self) -> None:
        if (self.args is None) == (self.input_schema is None):
            raise ToolDefinitionError(
                f"tool {self.name!r}: give either args (a Pydantic model) or input_schema"
            )
        if self.input_schema is not None:
            object.__setattr__(self, "_arg_schema", closed(self.input_schema))
        if self.args is not None:
            object.__setattr__(self, "_arg_names", tuple(self.args.model_fields))

    @property
    def repeatable(self) -> bool:
        """Whether a call may safely run twice: the tool is idempotent, read-only, or takes the
        call's key (and passes it on, so the service does the work once)."""
        return self.idempotent or self.read_only or self.key is not None

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
        """The JSON schema of the arguments, as the model sees it."""
        if self.args is None:
            return dict(self.input_schema or {})
        return _clean_schema(self.args.model_json_schema())

    def check_args(self, data: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments for ``fn``; ``ContractViolation`` when ``data`` does not fit."""
        message = "arguments do not match the tool's schema"
        if self.args is None:
            assert self._arg_schema is not None
            found = problems(self._arg_schema, data, f"tool {self.name!r} input schema")
            if found:
                raise ContractViolation(message, found)
            return dict(data)
        try:
            model = self.args.model_validate(data)
        except ValidationError as exc:
            raise ContractViolation(message, pydantic_problems(exc)) from None
        return {name: getattr(model, name) for name in self._arg_names}

    def check_result(self, payload: Any) -> None:
        """``ContractViolation`` when a JSON-able result does not fit ``output_schema`` (if any)."""
        if self.output_schema is None:
            return
        found = problems(self.output_schema, payload, f"tool {self.name!r} output schema")
        if found:
            raise ContractViolation("tool returned data that does not match its output schema", found)


def registry_of(tools: Iterable[Tool | Callable[..., Any]]) -> dict[str, Tool]:
    """Tools by name (plain functions made tools); ``ToolDefinitionError`` if two share a name."""
    registry: dict[str, Tool] = {}
    for item in tools:
        t = item if isinstance(item, Tool) else tool(item)
        if t.name in registry:
            where = " and ".join(
                f"MCP server {x.server!r}" if x.server else "a local tool" for x in (registry[t.name], t)
            )
            raise ToolDefinitionError(
                f"two tools are named {t.name!r} ({where}); rename one or give the MCP server a prefix"
            )
        registry[t.name] = t
    return registry


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
    idempotent: bool
    read_only: bool
    retry: bool


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
    model already keeps only its own fields. ``idempotent=True`` says a call may safely run
    twice (after a crash, or on a retry); ``read_only=True``: it changes nothing (results may be
    cached); ``retry=True``: retries may repeat it anyway. A ``CallKey`` parameter is hidden.
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
    limit = _time_limit(tool_name, sla, timeout)
    keep = options.get("keep_fields")
    key = next((n for n, h in hints.items() if h is CallKey and n != "return"), None)
    return Tool(
        name=tool_name,
        description=options.get("description") or summary or tool_name,
        fn=fn,
        args=_args_model(fn, tool_name, hints, arg_docs, key),
        output=output,
        output_map=dict(options.get("output_map") or {}),
        sla=sla,
        timeout=limit,
        needs_approval=options.get("needs_approval", False),
        keep_fields=tuple(keep) if keep is not None else None,
        is_async=inspect.iscoroutinefunction(fn),
        idempotent=options.get("idempotent", False),
        read_only=options.get("read_only", False),
        retry=options.get("retry", False),
        key=key,
    )


def tool_from_schema(
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    fn: Callable[..., Any],
    *,
    output_schema: Mapping[str, Any] | None = None,
    sla: float | None = None,
    timeout: float | None = None,
    needs_approval: bool = False,
    server: str | None = None,
    idempotent: bool = False,
    read_only: bool = False,
    retry: bool = False,
    key: str | None = None,
) -> Tool:
    """A ``Tool`` described by a JSON schema rather than by a Python signature.

    ``parameters`` is the JSON schema of the arguments object (shown to the model as given);
    ``fn`` (sync or async) is called with the validated arguments as keyword arguments.
    Arguments are checked against ``parameters`` before the call (Draft 2020-12 unless the
    schema names another draft). A schema that does not say ``additionalProperties`` is
    treated as closed when checking: arguments it does not list (itself or in the parts of its
    ``allOf``, ``anyOf`` or ``oneOf``) are refused, like ``@tool`` refuses them; write
    ``"additionalProperties": true`` to accept any. Results are checked
    against ``output_schema`` when given (``ERR_TOOL_SCHEMA_MISMATCH`` otherwise). The options
    mean what they mean for ``@tool``; ``key`` names the argument that receives the ``CallKey``.
    Both schemas are checked here: an invalid one raises ``ToolDefinitionError``.
    """
    if not _NAME_RE.match(name):
        raise ToolDefinitionError(f"tool name {name!r} must match {_NAME_RE.pattern}")
    if not isinstance(parameters, Mapping) or parameters.get("type", "object") != "object":
        raise ToolDefinitionError(f"tool {name!r}: parameters must be a JSON schema of type 'object'")
    if not callable(fn):
        raise ToolDefinitionError(f"tool {name!r}: fn must be callable, got {type(fn).__name__}")
    made = Tool(
        name=name,
        description=description or name,
        fn=fn,
        input_schema=copy.deepcopy(dict(parameters)),
        output_schema=copy.deepcopy(dict(output_schema)) if output_schema is not None else None,
        sla=sla,
        timeout=_time_limit(name, sla, timeout),
        needs_approval=needs_approval,
        is_async=inspect.iscoroutinefunction(fn),
        server=server,
        idempotent=idempotent,
        read_only=read_only,
        retry=retry,
        key=key,
    )
    assert made._arg_schema is not None
    compile_schema(made._arg_schema, f"tool {name!r} parameters")
    if made.output_schema is not None:
        compile_schema(made.output_schema, f"tool {name!r} output_schema")
    return made


def _time_limit(name: str, sla: float | None, timeout: float | None) -> float:
    for label, value in (("sla", sla), ("timeout", timeout)):
        if value is not None and value <= 0:
            raise ToolDefinitionError(f"tool {name!r}: {label} must be > 0, got {value}")
    return timeout if timeout is not None else (sla * SLA_FACTOR if sla else DEFAULT_TIMEOUT)


def pydantic_problems(exc: ValidationError) -> list[dict[str, str]]:
    """A Pydantic validation error as ``[{"loc": "a.0.b", "msg": "..."}]``."""
    return [
        {"loc": ".".join(str(p) for p in err["loc"]) or "(root)", "msg": err["msg"]}
        for err in exc.errors(include_url=False)
    ]


def _args_model(
    fn: Callable[..., Any], tool_name: str, hints: dict[str, Any], docs: dict[str, str], key: str | None
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
        if param.name == key:
            continue  # the call's key: filled by the loop, never shown to the model
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
    paragraph = itertools.takewhile(lambda line: line.strip() and not _ARGS_HEADER.match(line), lines)
    summary = " ".join(line.strip() for line in paragraph).strip()
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


def _clean_schema(schema: Any) -> Any:
    """Drop Pydantic's ``title`` keys: they cost tokens and tell the model nothing."""
    if isinstance(schema, dict):
        return {k: _clean_schema(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_clean_schema(v) for v in schema]
    return schema
