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
truncated body). ``fault_matrix()`` lists every fault with where it is injected and the outcome
the loop must reach; ``run_fault_case`` runs one (``benchmarks/fault_matrix.py`` prints them).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from ..exceptions import ModelError, TranscriptError
from ..loop import Loop
from ..messages import Message, check_transcript
from ..models.base import ModelRequest
from ..models.scripted import FunctionModel, ScriptedModel, call, reply
from ..result import RunResult, Status
from ..tools import Tool, tool
from .server import ChatServer, Fault

__all__ = [
    "FaultCase", "FaultOutcome", "blank_model", "failing_model", "fault_matrix", "forever_caller",
    "hallucinating_model", "hanging_model", "hanging_tool", "huge_output_tool", "invalid_json_model",
    "no_call_model", "raising_tool", "run_fault_case", "run_fault_matrix", "schema_breaking_tool", "slow_tool",
    "text_and_call_model", "unserializable_tool",
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

    return tool(wait_sync if sync else wait_async, name=name, description="Wait for a resource that never answers.",
                timeout=timeout)


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


def _persistent(name: str, fault: Callable[[int], Turn], answer: AnswerText, *, times: int | None = None,
                obey_tool_choice: bool = True) -> FunctionModel:
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
        return f"Sorry, I can't recognize {tool_name!r}. I can use: {offered}. Could you rephrase your request?"

    return _persistent("hallucinating", lambda n: reply(None, call(tool_name, {})), sorry, times=times)


def invalid_json_model(tool_name: str, *, arguments: str = '{"city": "Par', times: int = 1) -> FunctionModel:
    """Calls ``tool_name`` with arguments that are not valid JSON, then reports the error."""

    def report(request: ModelRequest) -> str:
        return f"I could not call {tool_name}: {last_result(request).get('error', 'no result')}"

    return _persistent("invalid_json", lambda n: reply(None, call(tool_name, arguments)), report, times=times)


def no_call_model(tool_calls: list[Any] | None = None, *, content: str = "Hello!") -> FunctionModel:
    """Answers with ``tool_calls`` of ``None`` (OpenAI style) or ``[]`` (Llama-style servers)."""
    return FunctionModel(lambda request: {"content": content, "tool_calls": tool_calls}, name="no_call")


def text_and_call_model(tool_name: str, arguments: dict[str, Any] | None = None, *,
                        text: str = "Let me check.") -> FunctionModel:
    """Sends text and a tool call in one reply, then answers with the result it read."""

    def done(request: ModelRequest) -> str:
        return f"Done: {json.dumps(last_result(request), sort_keys=True)}"

    return _persistent("text_and_call", lambda n: reply(text, call(tool_name, arguments)), done, times=1)


def blank_model(*, times: int | None = None, obey_tool_choice: bool = True,
                answer: str = "Here is my answer.") -> FunctionModel:
    """Sends blank replies (no text, no calls), cycling ``None``, ``""`` and whitespace."""
    blanks: list[Turn] = [{"content": None}, {"content": ""}, {"content": "  \n"}]
    return _persistent("blank", lambda n: blanks[(n - 1) % 3], answer, times=times,
                       obey_tool_choice=obey_tool_choice)


def forever_caller(tool_name: str, arguments: dict[str, Any] | Callable[[int], dict[str, Any]] | None = None, *,
                   obey_tool_choice: bool = True, answer: str = "I will stop calling tools now.") -> FunctionModel:
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


# --- the fault matrix ----------------------------------------------------------------------------

MATRIX_MAX_STEPS = 5
MATRIX_BUDGET = 0.5
"""Every matrix run gets ``max_steps=MATRIX_MAX_STEPS`` and ``time_budget=MATRIX_BUDGET`` seconds."""
MATRIX_GRACE = 1.0
"""Wall time allowed over the budget for setting up and tearing down a row (servers, threads)."""

Where = Literal["tool", "model", "http", "caller"]
Scenario = Callable[[], Awaitable[RunResult]]


@dataclass(frozen=True, slots=True)
class FaultCase:
    """One row: a fault, where it is injected, and the status and step count the run must reach."""

    fault: str
    where: Where
    status: Status
    steps: int
    scenario: Scenario


@dataclass(frozen=True, slots=True)
class FaultOutcome:
    """What a row's run reached. ``valid``: ``check_transcript`` accepts ``RunResult.messages``."""

    case: FaultCase
    status: Status
    steps: int
    valid: bool
    seconds: float
    error: str | None
    codes: tuple[str, ...] = ()  # what the model read: tool error codes and output caps, in order

    @property
    def within_budget(self) -> bool:
        return self.steps <= MATRIX_MAX_STEPS and self.seconds <= MATRIX_BUDGET + MATRIX_GRACE

    @property
    def ok(self) -> bool:
        expected = (self.case.status, self.case.steps)
        return (self.status, self.steps) == expected and self.valid and self.within_budget


async def run_fault_case(case: FaultCase) -> FaultOutcome:
    started = time.perf_counter()
    result = await case.scenario()
    seconds = time.perf_counter() - started
    try:
        check_transcript(result.messages)
        valid = True
    except TranscriptError:
        valid = False
    codes = tuple(r.error or "result_truncated" for step in result.steps for r in step.results
                  if r.error or '"result_truncated": true' in r.content)
    return FaultOutcome(case, result.status, len(result.steps), valid, seconds, result.error, codes)


def _loop(model: Any, tools: tuple[Tool, ...] = ()) -> Loop:
    return Loop(model, tools, max_steps=MATRIX_MAX_STEPS, time_budget=MATRIX_BUDGET)


def _step(n: int = 0) -> dict[str, int]:
    """Do one step of a multi-step task."""
    return {"done": n}


STEP = tool(_step, name="step")


def _run(model: Callable[[], Any], *tools: Tool) -> Scenario:
    async def scenario() -> RunResult:
        return await _loop(model(), tools).run("Help me with my task.")

    return scenario


def _once(t: Tool, arguments: dict[str, Any] | None = None) -> Scenario:
    """A model that calls ``t`` once, then answers."""
    return _run(lambda: ScriptedModel([reply(None, call(t.name, arguments)), "Done."]), t)


def _long_chain() -> Scenario:
    calls = [reply(None, call("step", {"n": i})) for i in range(1, MATRIX_MAX_STEPS)]
    return _run(lambda: ScriptedModel([*calls, "All steps done."]), STEP)


def _http(*script: Message | Fault, timeout: float = 5.0) -> Scenario:
    import httpx

    from ..models.openai import OpenAIModel

    async def scenario() -> RunResult:
        with ChatServer(script) as server:  # the transport is built outside the budget (it loads TLS defaults)
            model = OpenAIModel("loopback", base_url=server.base_url, api_key="sk-loopback", timeout=timeout,
                                max_retries=1, backoff=0.01, transport=httpx.AsyncHTTPTransport())
            try:
                return await _loop(model).run("Hi")
            finally:
                await model.aclose()

    return scenario


async def _cancelled() -> RunResult:
    """The caller cancels the task driving the run while a tool is executing."""
    entered = asyncio.Event()

    async def wait_for_cancel() -> str:
        entered.set()
        await asyncio.Event().wait()
        return "unreachable"

    t = tool(wait_for_cancel, description="Wait until cancelled.", timeout=10.0)
    run = _loop(ScriptedModel([reply(None, call(t.name))]), (t,)).iter("Wait.")
    task = asyncio.ensure_future(anext(run))
    await entered.wait()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert run.result is not None
    return run.result


def fault_matrix() -> list[FaultCase]:
    """Every fault the loop must survive, with the outcome it must reach."""
    n, ok = MATRIX_MAX_STEPS, reply("ok")
    hang = Fault(200, body="", delay=2 * MATRIX_BUDGET)
    cut = Fault(200, body='{"choices": [', truncate=True)
    guarded = tool(_step, name="delete_all", needs_approval=True)
    return [
        FaultCase("hangs (async), cut by its timeout", "tool", "success", 2, _once(hanging_tool(timeout=0.05))),
        FaultCase("hangs (sync thread), cut by its timeout", "tool", "success", 2,
                  _once(hanging_tool(timeout=0.05, sync=True))),
        FaultCase("hangs past the run's time budget", "tool", "timeout", 0, _once(hanging_tool(timeout=30.0))),
        FaultCase("raises", "tool", "success", 2, _once(raising_tool())),
        FaultCase("answers slowly", "tool", "success", 2, _once(slow_tool(delay=0.05))),
        FaultCase("breaks its output schema", "tool", "success", 2, _once(schema_breaking_tool())),
        FaultCase("returns non-JSON data", "tool", "success", 2, _once(unserializable_tool())),
        FaultCase("returns huge output", "tool", "success", 2, _once(huge_output_tool())),
        FaultCase("needs approval, none given", "tool", "success", 2, _once(guarded)),
        FaultCase("long chain up to max_steps", "model", "success", n, _long_chain()),
        FaultCase("hallucinated tool name", "model", "success", 2, _run(hallucinating_model, STEP)),
        FaultCase("invalid JSON arguments", "model", "success", 2, _run(lambda: invalid_json_model("step"), STEP)),
        FaultCase("tool_calls is None", "model", "success", 1, _run(lambda: no_call_model(None))),
        FaultCase("tool_calls is []", "model", "success", 1, _run(lambda: no_call_model([]))),
        FaultCase("text plus tool calls", "model", "success", 2,
                  _run(lambda: text_and_call_model("step", {"n": 1}), STEP)),
        FaultCase("blank replies", "model", "success", 3, _run(blank_model)),
        FaultCase("blank replies, tool_choice ignored", "model", "max_steps_exceeded", n,
                  _run(lambda: blank_model(obey_tool_choice=False))),
        FaultCase("same call forever", "model", "success", 4,
                  _run(lambda: forever_caller("step", {"n": 1}), STEP)),
        FaultCase("new call forever", "model", "max_steps_exceeded", n,
                  _run(lambda: forever_caller("step", lambda i: {"n": i}), STEP)),
        FaultCase("call fails", "model", "model_error", 0, _run(failing_model)),
        FaultCase("call hangs", "model", "timeout", 0, _run(hanging_model)),
        FaultCase("429 with Retry-After, then ok", "http", "success", 1,
                  _http(Fault(429, headers={"Retry-After": "0.05"}), ok)),
        FaultCase("500, then ok", "http", "success", 1, _http(Fault(500), ok)),
        FaultCase("503 on every attempt", "http", "model_error", 0, _http(Fault(503), Fault(503))),
        FaultCase("hangs past the client timeout", "http", "model_error", 0, _http(hang, hang, timeout=0.05)),
        FaultCase("hangs past the run's time budget", "http", "timeout", 0, _http(hang)),
        FaultCase("malformed JSON body", "http", "model_error", 0, _http(Fault(200, body="{not json"))),
        FaultCase("truncated body on every attempt", "http", "model_error", 0,
                  _http(cut, cut)),
        FaultCase("run cancelled while a tool runs", "caller", "cancelled", 0, _cancelled),
    ]


def run_fault_matrix() -> list[FaultOutcome]:
    """Run every row of ``fault_matrix()``, each in its own event loop."""
    return [asyncio.run(run_fault_case(case)) for case in fault_matrix()]
