"""Executing tool calls under contract.

Each call is parsed, validated against the tool's argument model, run under its timeout and
checked against its output model. Whatever the model can act on becomes one JSON error
envelope with a standard code instead of an exception::

    {"error": "...", "code": "ERR_TOOL_TIMEOUT", "tool": "get_weather", "trace_id": "trc_..."}

Every result and envelope becomes the tool message's content through ``minloop.envelope.seal``
(strict JSON, secrets redacted, at most ``max_chars`` characters). A model called from inside
a tool raises ``NestedModelCallError`` out of the run, even if the tool caught it.

Parallel calls run concurrently; results keep call order and one failure never loses the
others. Sync tools run in a daemon thread each: a thread that outlives its timeout cannot be
killed in Python, so it is abandoned (its result is discarded, it holds no pool slot and does
not keep the process alive at exit).

Layers wrap the execution of each valid call (``Layer.wrap_tool``): they run it, answer it from
elsewhere, or refuse it by raising ``ToolFailure``, which becomes the envelope the model reads.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from .envelope import ErrorCode, envelope, result_body, seal
from .exceptions import NestedModelCallError
from .guard import tool_scope
from .messages import Message, ResultRole, ToolCall, loads
from .tools import CallKey, ContractViolation, Tool, pydantic_problems
from .workers import Overdue, call_awaiting, call_in_thread

__all__ = [
    "ErrorCode",
    "ToolFailure",
    "ToolResult",
    "TransientToolError",
    "call_key",
    "describe",
    "execute_calls",
]

Wrap: TypeAlias = Callable[[ToolCall, Tool, Callable[[], Awaitable[Any]]], Awaitable[Any]]
"""How a run's layers wrap one call: ``wrap(call, tool, execute)`` returns the call's value."""
MAX_RESULT_CHARS = 16_000
MAX_NAME_CHARS = 64  # the longest function name the Chat Completions API accepts


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one call: ``content`` is the JSON string the model will read."""

    call_id: str
    name: str
    content: str
    error: ErrorCode | str | None = None
    latency: float = 0.0
    rerouted_to: str | None = None

    def to_message(self, role: ResultRole = "tool") -> Message:
        if role == "function":
            return {
                "role": "function",
                "name": self.name,
                "tool_call_id": self.call_id,
                "content": self.content,
            }
        return {"role": "tool", "tool_call_id": self.call_id, "name": self.name, "content": self.content}


@dataclass(slots=True)
class ExecContext:
    """What executing a run's calls needs: the registry, the run's id, the guards' settings and
    the run's layers (``wrap``). Made once per run; ``seen`` counts the run's calls for the
    repetition guard."""

    tools: Mapping[str, Tool]
    fallback: Tool
    trace_id: str
    log: Any  # a logging.LoggerAdapter keyed by the trace id
    seen: dict[tuple[str, str], int] = field(default_factory=dict)  # the run's calls so far
    repeat_limit: int = 2
    max_chars: int = MAX_RESULT_CHARS
    redact: Callable[[Any], Any] | None = None
    wrap: Wrap | None = None
    step: int = 0  # the step whose calls run now (part of each call's key)
    listed: Mapping[str, Tool] = field(init=False)  # the loop's tools, before any source changed them
    sources: bool = field(init=False)  # some tools come from a source that may change them

    def __post_init__(self) -> None:
        self.listed, self.sources = self.tools, any(t.source is not None for t in self.tools.values())

    async def current(self, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tools to offer at this step: ``specs`` (the loop's), unless some tools come from a
        source that may change them (``ToolSource``); then each source's current tools, which
        become the run's."""
        if not self.sources:
            return specs
        self.tools = await current_tools(self.listed, self.log)
        return [t.spec() for t in self.tools.values()]


async def current_tools(registry: Mapping[str, Tool], log: Any) -> dict[str, Tool]:
    """``registry`` with each source's current tools in place of its earlier ones; a new tool whose
    name another tool has is left out, with a warning on ``log``."""
    tools: dict[str, Tool] = {}
    asked: set[int] = set()  # the sources asked already
    for t in registry.values():
        if t.source is None:
            tools[t.name] = t
        elif id(t.source) not in asked:
            asked.add(id(t.source))
            for fresh in await t.source.current():
                if fresh.name in tools or getattr(registry.get(fresh.name), "source", 0) is None:
                    log.warning(
                        "tool %r of %s is left out: another tool has its name", fresh.name, t.source.name
                    )
                else:
                    tools[fresh.name] = fresh
    return tools


class ToolFailure(Exception):
    """A call that failed in a way the model reads: ``code`` (a standard ``ERR_TOOL_...`` code, or
    one of a layer's own) and ``message`` go into the call's error envelope with ``details``.
    A layer raises it from ``wrap_tool`` to refuse a call. ``transient`` says the failure may
    pass (a timeout, or a tool's ``TransientToolError``): retries try such a call again. Raised
    by a tool itself it becomes ``ERR_TOOL_FAILED``, unless its class sets ``kept``
    (``minloop.questions.Asked``: the layers around the call act on it)."""

    kept: ClassVar[bool] = False

    def __init__(
        self, code: ErrorCode | str, message: str, *, transient: bool = False, **details: Any
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.transient = transient


class TransientToolError(Exception):
    """Raised by a tool: this failure may pass if the call is tried again (a busy or unreachable
    service). The model reads it as ``ERR_TOOL_FAILED`` like any other failure; with retries on
    (``Loop(..., retries=3)``), a tool that is safe to repeat is tried again first."""


def call_key(trace_id: str, step: int, call_id: str) -> CallKey:
    """The idempotency key of call ``call_id`` in step ``step`` of run ``trace_id``: the same
    whenever that call is made again (after a resume, or by a retry), different for any other."""
    digest = hashlib.sha256(f"{trace_id}\x00{step}\x00{call_id}".encode()).hexdigest()
    return CallKey(f"mlk_{digest[:32]}")


async def execute_calls(calls: Sequence[ToolCall], ctx: ExecContext) -> list[ToolResult]:
    """Run every call (concurrently when there are several); results keep call order."""
    if len(calls) == 1:
        return [await execute_call(calls[0], ctx)]
    done = await asyncio.gather(*(execute_call(c, ctx) for c in calls), return_exceptions=True)
    for outcome in done:  # every call has finished: now a layer's StopRun or a red-line breach
        if isinstance(outcome, BaseException):
            raise outcome
    return done  # type: ignore[return-value]


async def execute_call(call: ToolCall, ctx: ExecContext) -> ToolResult:
    start = time.perf_counter()
    tool = ctx.tools.get(call.name)
    if tool is None:
        return await _reroute(call, ctx, start)
    if ctx.log.isEnabledFor(20):
        ctx.log.info("tool call %s %s id=%s", call.name, _scrub(ctx, call.arguments)[:200], call.id)
    try:
        data = json_arguments(call.arguments)
        args = checked_arguments(tool, data)
        _check_repeat(call.name, data, ctx)
        if tool.key is not None:
            args[tool.key] = call_key(ctx.trace_id, ctx.step, call.id)
        value = await _run(tool, call, args, ctx)
        body, error = result_body(check_output(tool, value), ctx.trace_id), None
    except ToolFailure as f:
        body, error = envelope(f.code, f.message, call.name, ctx.trace_id, **f.details), f.code
        level = 30 if f.code == "ERR_TOOL_SCHEMA_MISMATCH" else 20  # a mismatch is logged as a warning
        ctx.log.log(level, "tool %s failed %s: %s", call.name, f.code, _scrub(ctx, f.message[:2000])[:500])
    except NestedModelCallError as exc:
        ctx.log.error("tool %s broke the red line: %s", call.name, exc)
        raise
    content = seal(body, ctx.max_chars, ctx.redact, ctx.trace_id, is_error=error is not None)
    latency = time.perf_counter() - start
    if ctx.log.isEnabledFor(20):
        ctx.log.info("tool result %s %.1fms %s", call.name, latency * 1000, content[:200])
    return ToolResult(call.id, call.name, content, error, latency)


_CANONICAL = json.JSONEncoder(sort_keys=True)  # the same arguments in any key order, one key


def _check_repeat(name: str, data: dict[str, Any], ctx: ExecContext) -> None:
    """Repetition guard: the same tool with the same arguments (in any key order) runs
    ``repeat_limit`` times at most."""
    if ctx.repeat_limit <= 0:
        return
    key = (name, _CANONICAL.encode(data))
    done = ctx.seen.get(key, 0)
    if done >= ctx.repeat_limit:
        raise ToolFailure(
            "ERR_TOOL_REPEATED",
            f"this exact call was already made {done} times; its result is above. Answer with it, "
            "or change the arguments",
        )
    ctx.seen[key] = done + 1


def _run(tool: Tool, call: ToolCall, args: dict[str, Any], ctx: ExecContext) -> Awaitable[Any]:
    """The call's value (to await), through the run's layers when it has any."""
    if ctx.wrap is None:
        return invoke(tool, args)
    return ctx.wrap(call, tool, lambda: invoke(tool, args))


def _scrub(ctx: ExecContext, text: str) -> str:
    return ctx.redact(text) if ctx.redact is not None else text


def parse_arguments(tool: Tool, raw: str) -> dict[str, Any]:
    """The keyword arguments for ``tool`` from a call's JSON text; ``ToolFailure`` if they do not fit."""
    return checked_arguments(tool, json_arguments(raw))


def json_arguments(raw: str) -> dict[str, Any]:
    try:
        data = loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError) as exc:
        raise ToolFailure("ERR_TOOL_ARGS_INVALID", f"arguments are not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ToolFailure(
            "ERR_TOOL_ARGS_INVALID", f"arguments must be a JSON object, got {type(data).__name__}"
        )
    return data


def checked_arguments(tool: Tool, data: dict[str, Any]) -> dict[str, Any]:
    try:
        return tool.check_args(data)
    except ContractViolation as exc:
        raise ToolFailure(
            "ERR_TOOL_ARGS_INVALID",
            str(exc),
            problems=exc.problems,
            parameters=tool.parameters(),
        ) from None


async def invoke(tool: Tool, args: dict[str, Any]) -> Any:
    """Run the tool under its timeout; what it raises becomes a ``ToolFailure``. A model called
    inside it raises ``NestedModelCallError`` here, even when the tool caught that error itself:
    a red-line breach is the developer's bug."""
    with tool_scope(tool.name) as breaches:
        try:
            if not tool.is_async:
                return await call_in_thread(tool.fn, args, tool.timeout)
            return await call_awaiting(tool.fn(**args), tool.timeout)
        except Overdue:
            raise _late(tool) from None
        except NestedModelCallError:
            raise  # a red-line breach is the developer's bug: fail loudly
        except TransientToolError as exc:
            raise ToolFailure("ERR_TOOL_FAILED", describe(exc), transient=True) from None
        except ToolFailure as failure:
            if failure.kept:
                raise
            raise ToolFailure("ERR_TOOL_FAILED", describe(failure)) from None
        except Exception as exc:
            raise ToolFailure("ERR_TOOL_FAILED", describe(exc)) from None
        finally:
            if breaches:
                raise NestedModelCallError(breaches[0])  # outranks whatever the tool made of it


def _late(tool: Tool) -> ToolFailure:
    return ToolFailure("ERR_TOOL_TIMEOUT", f"tool did not finish within {tool.timeout:g}s", transient=True)


def describe(exc: BaseException) -> str:
    """``"ExceptionType: text"``. Never fails, even when the exception's ``__str__`` does."""
    return f"{type(exc).__name__}: {_text_of(exc)}"


def _text_of(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception as inner:
        return f"(its message could not be read: {type(inner).__name__} while converting it to text)"


def check_output(tool: Tool, value: Any) -> Any:
    """Validate against the declared output model; return a JSON-able payload."""
    if tool.output is None:
        try:
            payload = to_jsonable_python(value)
        except Exception as exc:
            raise ToolFailure(
                "ERR_TOOL_SCHEMA_MISMATCH", f"result is not JSON-serializable: {_text_of(exc)}"
            ) from None
        if tool.keep_fields is not None and isinstance(payload, dict):
            payload = {k: v for k, v in payload.items() if k in tool.keep_fields}
        try:
            tool.check_result(payload)
        except ContractViolation as exc:
            raise ToolFailure("ERR_TOOL_SCHEMA_MISMATCH", str(exc), problems=exc.problems) from None
        return payload
    if isinstance(value, tool.output):
        return value.model_dump(mode="json")
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, Mapping) and tool.output_map:
        value = {tool.output_map.get(k, k): v for k, v in value.items()}
    try:
        return tool.output.model_validate(value).model_dump(mode="json")
    except ValidationError as exc:
        raise ToolFailure(
            "ERR_TOOL_SCHEMA_MISMATCH",
            f"tool returned data that does not match {tool.output.__name__}",
            problems=pydantic_problems(exc),
        ) from None


async def _reroute(call: ToolCall, ctx: ExecContext, start: float) -> ToolResult:
    """An unknown name becomes a clarification request through the fallback tool."""
    name = call.name
    if len(name) > MAX_NAME_CHARS:  # no tool can have it: say so, and never repeat it whole
        name = f"{name[:MAX_NAME_CHARS]}..."
        note = (
            f"the tool name is {len(call.name)} characters long, but a tool name has at most "
            f"{MAX_NAME_CHARS}; no tool has this name ({name!r}), turned into a clarification request"
        )
    else:
        note = f"unrecognized tool name {name!r}, turned into a clarification request"
    ctx.log.warning("tool call %s: %s", name, note)
    details: dict[str, Any] = {"available_tools": sorted(ctx.tools)}
    question = (
        f"I can't use a tool called {name!r}. Could you rephrase what you need? "
        f"I can use: {', '.join(sorted(ctx.tools)) or 'no tools'}."
    )
    try:
        asked = json.dumps({"question": question})
        args = parse_arguments(ctx.fallback, asked)
        value = await _run(ctx.fallback, ToolCall(call.id, ctx.fallback.name, asked), args, ctx)
        details["clarification"] = check_output(ctx.fallback, value)
    except ToolFailure as f:
        details["fallback_error"] = f"{f.code}: {f.message}"
    body = envelope("ERR_TOOL_UNKNOWN", note, name, ctx.trace_id, **details)
    content = seal(body, ctx.max_chars, ctx.redact, ctx.trace_id, is_error=True)
    latency = time.perf_counter() - start
    return ToolResult(call.id, call.name, content, "ERR_TOOL_UNKNOWN", latency, ctx.fallback.name)
