"""Executing tool calls under contract.

Each call is parsed, validated against the tool's argument model, run under its timeout and
checked against its output model. Whatever the model can act on becomes one JSON error
envelope with a standard code instead of an exception::

    {"error": "...", "code": "ERR_TOOL_TIMEOUT", "tool": "get_weather", "trace_id": "trc_..."}

Parallel calls run concurrently; results keep call order and one failure never loses the
others. Sync tools run in a daemon thread each: a thread that outlives its timeout cannot be
killed in Python, so it is abandoned (its result is discarded, it holds no pool slot and does
not keep the process alive at exit).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from .exceptions import NestedModelCallError
from .guard import current_tool
from .messages import Message, ResultRole, ToolCall
from .tools import ContractViolation, Tool, pydantic_problems
from .workers import call_in_thread

__all__ = ["ErrorCode", "ToolResult", "execute_calls"]

ErrorCode: TypeAlias = Literal[
    "ERR_TOOL_TIMEOUT",
    "ERR_TOOL_SCHEMA_MISMATCH",
    "ERR_TOOL_ARGS_INVALID",
    "ERR_TOOL_UNKNOWN",
    "ERR_TOOL_FAILED",
    "ERR_TOOL_REPEATED",
    "ERR_TOOL_DENIED",
]
Approver: TypeAlias = Callable[[ToolCall], "bool | Awaitable[bool]"]
MAX_RESULT_CHARS = 16_000


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one call: ``content`` is the JSON string the model will read."""

    call_id: str
    name: str
    content: str
    error: ErrorCode | None = None
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


@dataclass(frozen=True, slots=True)
class ExecContext:
    """What executing a run's calls needs: the registry, the run's id and the guards' settings.
    Made once per run; ``seen`` counts the run's calls for the repetition guard."""

    tools: Mapping[str, Tool]
    fallback: Tool
    trace_id: str
    log: Any  # a logging.LoggerAdapter keyed by the trace id
    seen: dict[tuple[str, str], int] = field(default_factory=dict)  # the run's calls so far
    repeat_limit: int = 2
    approve: Approver | None = None
    max_chars: int = MAX_RESULT_CHARS
    redact: Callable[[Any], Any] | None = None


class _Failure(Exception):
    def __init__(self, code: ErrorCode, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


async def execute_calls(calls: Sequence[ToolCall], ctx: ExecContext) -> list[ToolResult]:
    """Run every call (concurrently when there are several); results keep call order."""
    if len(calls) == 1:
        return [await execute_call(calls[0], ctx)]
    return list(await asyncio.gather(*(execute_call(c, ctx) for c in calls)))


async def execute_call(call: ToolCall, ctx: ExecContext) -> ToolResult:
    start = time.perf_counter()
    tool = ctx.tools.get(call.name)
    if tool is None:
        return await _reroute(call, ctx, start)
    if ctx.log.isEnabledFor(20):
        ctx.log.info("tool call %s %s id=%s", call.name, _scrub(ctx, call.arguments)[:200], call.id)
    try:
        args = parse_arguments(tool, call.arguments)
        _check_repeat(call, ctx)
        await _check_approval(tool, call, ctx)
        value = await invoke(tool, args)
        content, error = dump(check_output(tool, value), ctx.trace_id), None
    except _Failure as f:
        content, error = envelope(f.code, f.message, call.name, ctx.trace_id, **f.details), f.code
        level = 30 if f.code == "ERR_TOOL_SCHEMA_MISMATCH" else 20  # a mismatch is logged as a warning
        ctx.log.log(level, "tool %s failed %s: %s", call.name, f.code, _scrub(ctx, f.message))
    content = _cap(_scrub(ctx, content), ctx)
    latency = time.perf_counter() - start
    ctx.log.info("tool result %s %.1fms %s", call.name, latency * 1000, content[:200])
    return ToolResult(call.id, call.name, content, error, latency)


def _check_repeat(call: ToolCall, ctx: ExecContext) -> None:
    """Repetition guard: the same tool with the same arguments runs ``repeat_limit`` times at most."""
    if ctx.repeat_limit <= 0:
        return
    try:
        canonical = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True)
    except (ValueError, RecursionError):
        canonical = call.arguments
    key = (call.name, canonical)
    done = ctx.seen.get(key, 0)
    if done >= ctx.repeat_limit:
        raise _Failure(
            "ERR_TOOL_REPEATED",
            f"this exact call was already made {done} times; its result is above. Answer with it, "
            "or change the arguments",
        )
    ctx.seen[key] = done + 1


async def _check_approval(tool: Tool, call: ToolCall, ctx: ExecContext) -> None:
    if not tool.needs_approval:
        return
    verdict = ctx.approve(call) if ctx.approve is not None else False
    if inspect.isawaitable(verdict):
        verdict = await verdict
    if verdict is not True:
        raise _Failure("ERR_TOOL_DENIED", "the user did not approve this call; do not retry it")


def _scrub(ctx: ExecContext, text: str) -> str:
    return ctx.redact(text) if ctx.redact is not None else text


def _cap(content: str, ctx: ExecContext) -> str:
    """Oversized output is cut with a visible marker, and stays valid JSON."""
    if len(content) <= ctx.max_chars:
        return content
    marker = {"result_truncated": True, "original_chars": len(content), "head": content[: ctx.max_chars]}
    return json.dumps({**marker, "trace_id": ctx.trace_id}, ensure_ascii=False)


def parse_arguments(tool: Tool, raw: str) -> dict[str, Any]:
    try:
        data = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError) as exc:
        raise _Failure("ERR_TOOL_ARGS_INVALID", f"arguments are not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _Failure("ERR_TOOL_ARGS_INVALID", f"arguments must be a JSON object, got {type(data).__name__}")
    try:
        return tool.check_args(data)
    except ContractViolation as exc:
        raise _Failure(
            "ERR_TOOL_ARGS_INVALID",
            str(exc),
            problems=exc.problems,
            parameters=tool.parameters(),
        ) from None


async def invoke(tool: Tool, args: dict[str, Any]) -> Any:
    token = current_tool.set(tool.name)
    deadline = asyncio.timeout(tool.timeout)
    try:
        async with deadline:
            if tool.is_async:
                return await tool.fn(**args)
            return await call_in_thread(tool.fn, args)
    except TimeoutError as exc:
        if deadline.expired():
            raise _Failure("ERR_TOOL_TIMEOUT", f"tool did not finish within {tool.timeout:g}s") from None
        raise _Failure("ERR_TOOL_FAILED", f"TimeoutError: {exc}") from None
    except NestedModelCallError:
        raise  # a red-line breach is the developer's bug: fail loudly
    except Exception as exc:
        raise _Failure("ERR_TOOL_FAILED", f"{type(exc).__name__}: {exc}") from None
    finally:
        current_tool.reset(token)


def check_output(tool: Tool, value: Any) -> Any:
    """Validate against the declared output model; return a JSON-able payload."""
    if tool.output is None:
        try:
            payload = to_jsonable_python(value)
        except Exception as exc:
            raise _Failure("ERR_TOOL_SCHEMA_MISMATCH", f"result is not JSON-serializable: {exc}") from None
        if tool.keep_fields is not None and isinstance(payload, dict):
            payload = {k: v for k, v in payload.items() if k in tool.keep_fields}
        try:
            tool.check_result(payload)
        except ContractViolation as exc:
            raise _Failure("ERR_TOOL_SCHEMA_MISMATCH", str(exc), problems=exc.problems) from None
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
        raise _Failure(
            "ERR_TOOL_SCHEMA_MISMATCH",
            f"tool returned data that does not match {tool.output.__name__}",
            problems=pydantic_problems(exc),
        ) from None


def dump(payload: Any, trace_id: str) -> str:
    body = (
        {**payload, "trace_id": trace_id}
        if isinstance(payload, dict)
        else {"result": payload, "trace_id": trace_id}
    )
    return json.dumps(body, ensure_ascii=False)


def envelope(code: ErrorCode, message: str, tool_name: str, trace_id: str, **details: Any) -> str:
    body = {"error": message, "code": code, "tool": tool_name, **details, "trace_id": trace_id}
    return json.dumps(body, ensure_ascii=False, default=str)


async def _reroute(call: ToolCall, ctx: ExecContext, start: float) -> ToolResult:
    """An unknown name becomes a clarification request through the fallback tool."""
    note = f"unrecognized tool name {call.name!r}, turned into a clarification request"
    ctx.log.warning("tool call %s: %s", call.name, note)
    details: dict[str, Any] = {"available_tools": sorted(ctx.tools)}
    question = (
        f"I can't use a tool called {call.name!r}. Could you rephrase what you need? "
        f"I can use: {', '.join(sorted(ctx.tools)) or 'no tools'}."
    )
    try:
        args = parse_arguments(ctx.fallback, json.dumps({"question": question}))
        await _check_approval(ctx.fallback, call, ctx)
        details["clarification"] = check_output(ctx.fallback, await invoke(ctx.fallback, args))
    except _Failure as f:
        details["fallback_error"] = f"{f.code}: {f.message}"
    content = envelope("ERR_TOOL_UNKNOWN", note, call.name, ctx.trace_id, **details)
    latency = time.perf_counter() - start
    return ToolResult(call.id, call.name, content, "ERR_TOOL_UNKNOWN", latency, ctx.fallback.name)
