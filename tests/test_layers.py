"""The layer protocol: hooks in their stated order, per-run state, refusing and answering calls,
ending a run from a hook, and the layers a user writes (the README's among them)."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from minloop import (
    Answer,
    BaseLoop,
    CallModel,
    Decision,
    Execute,
    Layer,
    Loop,
    MinloopError,
    ModelRequest,
    ModelResponse,
    Outcome,
    Prompt,
    Reply,
    RunResult,
    RunState,
    Step,
    StopRun,
    Tool,
    ToolCall,
    ToolFailure,
    tool,
)
from minloop.decision import CONTROL_TEXT, quoting
from minloop.testing import ScriptedModel, call, reply

from .conftest import content, masked


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


class Recorder(Layer):
    """Writes every hook it sees into one shared log, under its own name."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def start(self, run: RunState) -> None:
        self.log.append(f"{self.name}.start")

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        self.log.append(f"{self.name}.before_model:{run.index}")
        return prompt

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        self.log.append(f"{self.name}.wrap_model>")
        out = await call(request)
        self.log.append(f"{self.name}.wrap_model<")
        return out

    async def after_model(self, run: RunState, reply: Reply, decision: Decision) -> Decision:
        self.log.append(f"{self.name}.after_model:{decision.kind}")
        return decision

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        self.log.append(f"{self.name}.wrap_tool>{call.name}")
        out = await execute()
        self.log.append(f"{self.name}.wrap_tool<{call.name}")
        return out

    async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
        self.log.append(f"{self.name}.after_step:{step.index}")
        return outcome

    def end(self, run: RunState, result: RunResult) -> RunResult:
        self.log.append(f"{self.name}.end:{result.status}")
        return result


def test_hooks_run_in_the_stated_order_before_in_order_wraps_nested_after_reversed() -> None:
    log: list[str] = []
    model = ScriptedModel([reply(None, call("lookup", {"city": "Paris"})), "Paris is sunny."])
    with model:
        result = Loop(model, [lookup], layers=[Recorder("a", log), Recorder("b", log)]).run_sync("Paris?")
    assert result.status == "success"
    assert log == [
        "a.start", "b.start",
        "a.before_model:1", "b.before_model:1",
        "a.wrap_model>", "b.wrap_model>", "b.wrap_model<", "a.wrap_model<",
        "b.after_model:tool_calls", "a.after_model:tool_calls",
        "a.wrap_tool>lookup", "b.wrap_tool>lookup", "b.wrap_tool<lookup", "a.wrap_tool<lookup",
        "b.after_step:1", "a.after_step:1",
        "a.before_model:2", "b.before_model:2",
        "a.wrap_model>", "b.wrap_model>", "b.wrap_model<", "a.wrap_model<",
        "b.after_model:answer", "a.after_model:answer",
        "b.after_step:2", "a.after_step:2",
        "b.end:success", "a.end:success",
    ]  # fmt: skip


class CallCap(Layer):
    """At most ``limit`` calls per tool in one run; further calls get ERR_TOOL_CAPPED."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        counts = run.local(self, Counter)  # per run: the layer itself keeps nothing
        counts[call.name] += 1
        if counts[call.name] > self.limit:
            raise ToolFailure("ERR_TOOL_CAPPED", f"{call.name} may be called {self.limit} times per run")
        return await execute()


def test_a_call_cap_refuses_with_an_envelope_the_model_reads_and_keeps_nothing_between_runs() -> None:
    loop = Loop(ScriptedModel([]), [lookup], layers=[CallCap(1)])
    for _ in range(2):  # the same loop twice: the count starts again in each run
        model = ScriptedModel([
            reply(None, call("lookup", {"city": "Paris"}), call("lookup", {"city": "Rome"})),
            "Paris is sunny; Rome was not looked up.",
        ])  # fmt: skip
        with model:
            result = replace(loop, model=model).run_sync("Weather in Paris and Rome?")
        assert masked(result.messages, result.trace_id)[2:4] == [
            {
                "role": "tool",
                "tool_call_id": "call_1_1",
                "name": "lookup",
                "content": content(result="Paris: sunny"),
            },
            {
                "role": "tool",
                "tool_call_id": "call_1_2",
                "name": "lookup",
                "content": content(
                    error="lookup may be called 1 times per run", code="ERR_TOOL_CAPPED", tool="lookup"
                ),
            },
        ]
        assert (result.status, result.steps[0].valid) == ("success", True)


CARD = re.compile(r"\b(?:\d[ -]?){13,19}\b")


class NoCardNumbers(Layer):
    """Refuses any call whose arguments hold something shaped like a payment card number."""

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        if CARD.search(call.arguments):
            raise ToolFailure("ERR_TOOL_DENIED", "arguments hold a card number; ask for the last four digits")
        return await execute()


def test_a_guard_refuses_a_call_holding_a_card_number_and_the_tool_never_runs() -> None:
    ran: list[str] = []

    @tool
    def pay(card: str, amount: int) -> str:
        """Pay."""
        ran.append(card)
        return "paid"

    model = ScriptedModel(
        [reply(None, call("pay", {"card": "4111 1111 1111 1111", "amount": 5})), "Not paid."]
    )
    with model:
        result = Loop(model, [pay], layers=[NoCardNumbers()]).run_sync(
            "Pay 5 with my card 4111 1111 1111 1111"
        )
    assert ran == []
    assert masked(result.messages, result.trace_id)[2]["content"] == content(
        error="arguments hold a card number; ask for the last four digits", code="ERR_TOOL_DENIED", tool="pay"
    )


class Cache(Layer):
    """Answers a call from earlier runs' results: the tool runs once per arguments."""

    def __init__(self, store: dict[str, Any]) -> None:
        self.store = store  # the caller's own store, shared on purpose

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        key = f"{call.name}:{call.arguments}"
        if key not in self.store:
            self.store[key] = await execute()
        return self.store[key]


def test_a_layer_answers_a_call_from_elsewhere_and_the_answer_is_checked_like_any_result() -> None:
    ran: list[str] = []

    @tool
    def slow(city: str) -> dict[str, str]:
        """Slow lookup."""
        ran.append(city)
        return {"city": city}

    store: dict[str, Any] = {'slow:{"city": "Oslo"}': {"city": "Oslo", "from": "cache"}}
    model = ScriptedModel([reply(None, call("slow", {"city": "Oslo"}), call("slow", {"city": "Rome"})), "ok"])
    with model:
        result = Loop(model, [slow], layers=[Cache(store)]).run_sync("Oslo and Rome")
    assert ran == ["Rome"]
    bodies = [m["content"] for m in masked(result.messages, result.trace_id)[2:4]]
    assert bodies == [content(city="Oslo", **{"from": "cache"}), content(city="Rome")]


class Canned(Layer):
    """Answers the model call itself: no model is asked."""

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        return Reply(ModelResponse({"role": "assistant", "content": "canned"}), 0.0)


def test_a_layer_answers_the_model_call_from_elsewhere() -> None:
    model = ScriptedModel([])
    with model:  # never called
        result = Loop(model, [lookup], layers=[Canned()]).run_sync("hi")
    assert (result.status, result.output, model.requests) == ("success", "canned", [])


class Shout(Layer):
    """Changes what is sent and what came back."""

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        return replace(prompt, notes=(*prompt.notes, "Answer in capitals."))

    async def after_model(self, run: RunState, reply: Reply, decision: Decision) -> Decision:
        if isinstance(decision, Answer):
            return Answer({"role": "assistant", "content": decision.message["content"].upper()})
        return decision


def test_a_layer_changes_the_request_and_the_decision() -> None:
    model = ScriptedModel([reply(None, call("lookup", {"city": "Oslo"})), "oslo is sunny"])
    with model:
        result = Loop(model, [lookup], layers=[Shout()]).run_sync("Oslo?")
    assert result.output == "OSLO IS SUNNY"
    assert [r.messages[-1] for r in model.requests] == [
        {"role": "system", "content": "Answer in capitals."},
        {
            "role": "system",
            "content": f"{quoting(CONTROL_TEXT, [{'role': 'user', 'content': 'Oslo?'}])}\n\nAnswer in capitals.",
        },
    ]
    assert [s.control for s in result.steps] == [
        "Answer in capitals.",
        f"{quoting(CONTROL_TEXT, [{'role': 'user', 'content': 'Oslo?'}])}\n\nAnswer in capitals.",
    ]


class Halt(Layer):
    """Ends the run from a hook."""

    def __init__(self, where: str) -> None:
        self.where = where

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        if self.where == "model" and run.index == 2:
            raise StopRun("cancelled", "stopped before the second call")
        return prompt

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        if self.where == "tool" and call.name == "lookup":
            raise StopRun("cancelled", f"stopped before {call.name} ran")
        return await execute()


@pytest.mark.parametrize(("where", "steps", "reason"), [("model", 1, "stopped before the second call"),
                                                        ("tool", 0, "stopped before lookup ran")])  # fmt: skip
def test_a_layer_ends_the_run_from_a_hook_and_loses_nothing_recorded(
    where: str, steps: int, reason: str
) -> None:
    finished: list[str] = []

    @tool
    async def other() -> str:
        """Takes a moment."""
        await asyncio.sleep(0.05)
        finished.append("other")
        return "done"

    model = ScriptedModel([reply(None, call("lookup", {"city": "Oslo"}), call("other")), "never"])
    result = Loop(model, [lookup, other], layers=[Halt(where)]).run_sync("Oslo?")
    assert (result.status, result.error, len(result.steps)) == ("cancelled", reason, steps)
    assert finished == ["other"]  # a call already running in the step finished first
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "tool"][: 1 + 3 * steps]


def test_per_run_state_is_the_runs_own_even_when_runs_overlap() -> None:
    seen: list[int] = []

    class Count(Layer):
        async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
            n = run.local(self, lambda: [0])
            n[0] += 1
            seen.append(n[0])
            return outcome

    async def main() -> list[RunResult]:
        loop = Loop(ScriptedModel([]), [lookup], layers=[Count()])
        runs = [
            replace(loop, model=ScriptedModel([reply(None, call("lookup", {"city": "x"})), "ok"]))
            for _ in range(3)
        ]
        return await asyncio.gather(*(r.run("x") for r in runs))

    assert [r.status for r in asyncio.run(main())] == ["success"] * 3
    assert sorted(seen) == [1, 1, 1, 2, 2, 2]


def test_the_bare_loop_refuses_a_tool_needing_approval_without_a_layer_that_decides() -> None:
    @tool(needs_approval=True)
    def wipe() -> str:
        """Wipe."""
        return "wiped"

    with pytest.raises(MinloopError, match="tool 'wipe' needs approval, but no layer decides approvals"):
        BaseLoop(ScriptedModel([]), [wipe])
    assert Loop(ScriptedModel([]), [wipe]).stack.layers  # minloop.Loop installs the approval layer


def test_a_loop_with_no_layers_calls_no_hook() -> None:
    loop = Loop(ScriptedModel([]), [lookup])
    assert (loop.stack.layers, loop.stack.wraps_tools) == ((), False)
