"""The loop the server tests serve (``minloop serve --loop tests.servers.served:loop``).

Its model answers by the first word of the request: ``add A B`` calls ``add``, ``delete NAME``
calls ``delete`` (which needs approval), ``slow S`` calls ``wait`` (S seconds), ``trip CITY``
calls ``trip`` (which asks the user the date first, as an MCP server may), ``crash`` raises (a
broken model), anything else is echoed; after a tool result it answers ``done: RESULT``. Each tool appends a line to
``SERVED_COUNTS/<tool>`` (when set) as its side effect, so a test can count how often it ran.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from minloop import Loop, ModelRequest, Question, tool
from minloop.questions import Asked, Asking, answered
from minloop.testing import FunctionModel

WHEN = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}


def _count(name: str) -> None:
    where = os.environ.get("SERVED_COUNTS")
    if where:
        with open(Path(where) / name, "a") as f:
            f.write("ran\n")


def add(a: int, b: int) -> int:
    """Add two numbers."""
    _count("add")
    return a + b


@tool(needs_approval=True)
def delete(name: str) -> str:
    """Delete a file by name."""
    _count("delete")
    return f"deleted {name}"


async def wait(seconds: float) -> str:
    """Say so, then wait (a kill while it waits lands after its side effect)."""
    _count("wait")
    await asyncio.sleep(seconds)
    return f"waited {seconds}"


async def trip(city: str) -> str:
    """Plan a trip (it asks the user when)."""
    sent = answered()
    if sent is None:
        raise Asked(Asking((Question("travel", "when", "form", f"When do you go to {city}?", WHEN),), "s-1"))
    _count("trip")
    given = sent.answers["when"]
    return (
        f"trip to {city} on {given.content['date']}"
        if given.action == "accept"
        else f"no trip: {given.action}"
    )


def answer(request: ModelRequest) -> Any:
    results = [m for m in request.messages if m["role"] == "tool"]
    if results:
        return f"done: {results[-1]['content']}"
    last = request.messages[-1]
    words = str(last.get("content") or "").split()
    head = words[0] if words else ""
    if head == "add" and len(words) == 3 and all(w.isascii() and w.isdigit() for w in words[1:]):
        return {"content": None, "tool_calls": [_call("add", {"a": int(words[1]), "b": int(words[2])})]}
    if head == "delete" and len(words) == 2:
        return {"content": None, "tool_calls": [_call("delete", {"name": words[1]})]}
    if head == "trip" and len(words) == 2:
        return {"content": None, "tool_calls": [_call("trip", {"city": words[1]})]}
    if head == "crash":
        raise RuntimeError("the model broke")
    if head == "slow" and len(words) == 2:
        return {"content": None, "tool_calls": [_call("wait", {"seconds": float(words[1])})]}
    return "echo: " + " ".join(words)


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    import json

    return {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


loop = Loop(FunctionModel(answer, name="served"), [add, delete, wait, trip], max_steps=4)
