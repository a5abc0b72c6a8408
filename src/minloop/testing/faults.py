"""Faults on purpose: tools and models that misbehave, and the fault matrix the loop must survive.

Tools (each factory returns a ``Tool``): ``hanging_tool``, ``raising_tool``, ``slow_tool``,
``schema_breaking_tool``, ``unserializable_tool``, ``huge_output_tool``.

Models (each a ``FunctionModel`` that counts its own calls: make one per run):
``hallucinating_model``, ``invalid_json_model``, ``no_call_model``, ``text_and_call_model``,
``blank_model``, ``forever_caller``, ``hanging_model``, ``failing_model``. A persistent fault
lasts while the request lets the model call tools; once the loop switches tools off
(``tool_choice="none"``, as after decision decay) the model answers, as a real endpoint must.
``obey_tool_choice=False`` makes a model that ignores it (some local servers do).

HTTP faults: ``ChatServer`` with ``Fault`` (429 + Retry-After, 5xx, delay, malformed or
truncated body). The fault matrix is in ``minloop.testing.matrix``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ..exceptions import ModelError
from ..messages import Message
from ..models.base import ModelRequest
from ..models.scripted import FunctionModel, call, reply
from ..tools import Tool, tool

__all__ = [
    "blank_model",
    "failing_model",
    "forever_caller",
    "hallucinating_model",
    "hanging_model",
    "hanging_tool",
    "huge_output_tool",
    "invalid_json_model",
    "no_call_model",
    "raising_tool",
    "schema_breaking_tool",
    "slow_tool",
    "text_and_call_model",
    "unserializable_tool",
]

# --- tools -------------------------------------------------------------------------------------


def hanging_tool(name: str = "hang", *, timeout: float = 0.1, sync: bool = False) -> Tool:
    """A tool that never returns: cut at ``timeout`` (an async one is cancelled, a sync one's
    daemon thread is abandoned, blocked for good)."""

    async def wait_async() -> str:
        await asyncio.Event().wait()
        return "unreachable"

    def wait_sync() -> str:
        threading.Event().wait()
        return "unreachable"

    return tool(
        wait_sync if sync else wait_async,
        name=name,
        description="Wait for a resource that never answers.",
        timeout=timeout,
    )


def raising_tool(name: str = "boom", exc: Exception | None = None) -> Tool:
    """A tool that raises ``exc`` (default ``RuntimeError("backend down")``)."""

    def fail() -> None:
        raise exc if exc is not None else RuntimeError("backend down")

    return tool(fail, name=name, description="Call a backend that is down.")


def slow_tool(name: str = "slow", *, delay: float = 0.05, timeout: float = 1.0) -> Tool:
    """A tool that answers ``{"waited": delay}`` after ``delay`` seconds, inside its timeout."""

    async def wait(delay: float = delay) -> dict[str, float]:
        await asyncio.sleep(delay)
        return {"waited": delay}

    return tool(wait, name=name, description="Answer slowly.", timeout=timeout)


class Reading(BaseModel):
    """The contract ``schema_breaking_tool`` declares and breaks."""

    city: str
    temperature: int


def schema_breaking_tool(name: str = "broken_schema", returns: Any = None) -> Tool:
    """A tool declaring ``Reading`` as output and returning ``returns`` (default: a wrong shape)."""
    value = returns if returns is not None else {"temperature": "very hot"}

    def read(city: str = "Paris") -> Any:
        return value

    return tool(read, name=name, description="Read a temperature.", output=Reading)


def unserializable_tool(name: str = "opaque") -> Tool:
    """A tool returning an object that is not JSON."""
    return tool(lambda: object(), name=name, description="Return an opaque object.")


def huge_output_tool(name: str = "flood", *, chars: int = 100_000) -> Tool:
    """A tool returning a string of ``chars`` characters."""
    return tool(lambda: "x" * chars, name=name, description="Return a very large result.")


# --- models ------------------------------------------------------------------------------------

Turn = Message | str
AnswerText = str | Callable[[ModelRequest], str]


def _persistent(
    name: str,
    fault: Callable[[int], Turn],
    answer: AnswerText,
    *,
    times: int | None = None,
    obey_tool_choice: bool = True,
) -> FunctionModel:
    """Plays ``fault(n)`` for calls n = 1.. while tools are allowed (at most ``times``), then ``answer``."""
    made = 0

    def play(request: ModelRequest) -> Turn:
        nonlocal made
        tools_off = obey_tool_choice and request.tool_choice == "none"
        if tools_off or (times is not None and made >= times):
            return answer(request) if callable(answer) else answer
        made += 1
        return fault(made)

    return FunctionModel(play, name=name)


def last_result(request: ModelRequest) -> dict[str, Any]:
    """The JSON body of the latest tool result the model was sent (``{}`` if none)."""
    for message in reversed(request.messages):
        if message.get("role") in ("tool", "function"):
            body = json.loads(message["content"])
            return body if isinstance(body, dict) else {"result": body}
    return {}


def hallucinating_model(tool_name: str = "fake_tool", *, times: int = 1) -> FunctionModel:
    """Calls an unregistered tool ``times`` times, then apologises, naming the tools it was offered."""

    def sorry(request: ModelRequest) -> str:
        offered = ", ".join(last_result(request).get("available_tools") or ["none"])
        return (
            f"Sorry, I can't recognize {tool_name!r}. I can use: {offered}. Could you rephrase your request?"
        )

    return _persistent("hallucinating", lambda n: reply(None, call(tool_name, {})), sorry, times=times)


def invalid_json_model(tool_name: str, *, arguments: str = '{"city": "Par', times: int = 1) -> FunctionModel:
    """Calls ``tool_name`` with arguments that are not valid JSON, then reports the error."""

    def report(request: ModelRequest) -> str:
        return f"I could not call {tool_name}: {last_result(request).get('error', 'no result')}"

    return _persistent("invalid_json", lambda n: reply(None, call(tool_name, arguments)), report, times=times)


def no_call_model(tool_calls: list[Any] | None = None, *, content: str = "Hello!") -> FunctionModel:
    """Answers with ``tool_calls`` of ``None`` (OpenAI style) or ``[]`` (Llama-style servers)."""
    return FunctionModel(lambda request: {"content": content, "tool_calls": tool_calls}, name="no_call")


def text_and_call_model(
    tool_name: str, arguments: dict[str, Any] | None = None, *, text: str = "Let me check."
) -> FunctionModel:
    """Sends text and a tool call in one reply, then answers with the result it read."""

    def done(request: ModelRequest) -> str:
        return f"Done: {json.dumps(last_result(request), sort_keys=True)}"

    return _persistent("text_and_call", lambda n: reply(text, call(tool_name, arguments)), done, times=1)


def blank_model(
    *, times: int | None = None, obey_tool_choice: bool = True, answer: str = "Here is my answer."
) -> FunctionModel:
    """Sends blank replies (no text, no calls), cycling ``None``, ``""`` and whitespace."""
    blanks: list[Turn] = [{"content": None}, {"content": ""}, {"content": "  \n"}]
    return _persistent(
        "blank", lambda n: blanks[(n - 1) % 3], answer, times=times, obey_tool_choice=obey_tool_choice
    )


def forever_caller(
    tool_name: str,
    arguments: dict[str, Any] | Callable[[int], dict[str, Any]] | None = None,
    *,
    obey_tool_choice: bool = True,
    answer: str = "I will stop calling tools now.",
) -> FunctionModel:
    """Calls ``tool_name`` on every reply; ``arguments`` may be a function of the call number."""

    def again(n: int) -> Message:
        return reply(None, call(tool_name, arguments(n) if callable(arguments) else arguments))

    return _persistent("forever", again, answer, obey_tool_choice=obey_tool_choice)


def hanging_model() -> FunctionModel:
    """A model whose call never returns: only the run's ``time_budget`` or cancellation ends it."""

    async def wait(request: ModelRequest) -> str:
        await asyncio.Event().wait()
        return "unreachable"

    return FunctionModel(wait, name="hanging")


def failing_model(exc: Exception | None = None) -> FunctionModel:
    """A model whose call raises ``exc`` (default ``ModelError("upstream down")``)."""

    def fail(request: ModelRequest) -> str:
        raise exc if exc is not None else ModelError("upstream down")

    return FunctionModel(fail, name="failing")
