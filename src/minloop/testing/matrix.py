"""The fault matrix: every fault the loop is tested against, where it is injected, and the
status the run must end in. ``run_fault_case`` runs one row (``benchmarks/fault_matrix.py``
prints them all)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..exceptions import TranscriptError
from ..messages import Message, check_transcript
from ..models.scripted import ScriptedModel, call, reply
from ..result import RunResult, Status
from ..standard import Loop
from ..tools import Tool, tool
from .faults import (
    blank_model,
    failing_model,
    forever_caller,
    hallucinating_model,
    hanging_model,
    hanging_tool,
    huge_output_tool,
    invalid_json_model,
    no_call_model,
    raising_tool,
    schema_breaking_tool,
    slow_tool,
    text_and_call_model,
    unserializable_tool,
)
from .server import ChatServer, Fault

__all__ = ["FaultCase", "FaultOutcome", "fault_matrix", "run_fault_case", "run_fault_matrix"]

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
    codes = tuple(
        r.error or "result_truncated"
        for step in result.steps
        for r in step.results
        if r.error or '"result_truncated": true' in r.content
    )
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
        with ChatServer(
            script
        ) as server:  # the transport is built outside the budget (it loads TLS defaults)
            model = OpenAIModel(
                "loopback",
                base_url=server.base_url,
                api_key="sk-loopback",
                timeout=timeout,
                max_retries=1,
                backoff=0.01,
                transport=httpx.AsyncHTTPTransport(),
            )
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
    return [*_tool_faults(), *_model_faults(), *_http_faults(),
            FaultCase("run cancelled while a tool runs", "caller", "cancelled", 0, _cancelled)]  # fmt: skip


# fmt: off
def _tool_faults() -> list[FaultCase]:
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
    ]


def _model_faults() -> list[FaultCase]:
    n = MATRIX_MAX_STEPS
    return [
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
        FaultCase("same call forever", "model", "success", 4, _run(lambda: forever_caller("step", {"n": 1}), STEP)),
        FaultCase("new call forever", "model", "max_steps_exceeded", n,
                  _run(lambda: forever_caller("step", lambda i: {"n": i}), STEP)),
        FaultCase("call fails", "model", "model_error", 0, _run(failing_model)),
        FaultCase("call hangs", "model", "timeout", 0, _run(hanging_model)),
    ]


def _http_faults() -> list[FaultCase]:
    ok = reply("ok")
    hang = Fault(200, body="", delay=2 * MATRIX_BUDGET)
    cut = Fault(200, body='{"choices": [', truncate=True)
    return [
        FaultCase("429 with Retry-After, then ok", "http", "success", 1,
                  _http(Fault(429, headers={"Retry-After": "0.05"}), ok)),
        FaultCase("500, then ok", "http", "success", 1, _http(Fault(500), ok)),
        FaultCase("503 on every attempt", "http", "model_error", 0, _http(Fault(503), Fault(503))),
        FaultCase("hangs past the client timeout", "http", "model_error", 0, _http(hang, hang, timeout=0.05)),
        FaultCase("hangs past the run's time budget", "http", "timeout", 0, _http(hang)),
        FaultCase("malformed JSON body, then ok", "http", "success", 1, _http(Fault(200, body="{not json"), ok)),
        FaultCase("malformed JSON body on every attempt", "http", "model_error", 0,
                  _http(Fault(200, body="{not json"), Fault(200, body="{not json"))),
        FaultCase("truncated body on every attempt", "http", "model_error", 0, _http(cut, cut)),
    ]
# fmt: on


def run_fault_matrix() -> list[FaultOutcome]:
    """Run every row of ``fault_matrix()``, each in its own event loop."""
    return [asyncio.run(run_fault_case(case)) for case in fault_matrix()]
