"""Layers: the one way to add a control around the four steps.

A layer is an object with any of eight hooks; subclass ``Layer`` and override the ones you need
(a hook you do not override costs nothing)::

    reserve(run) -> bool                        a new run's id: keep it, or False when it is
                                                taken (the loop draws another), before ``start``
    start(run)                                  the run begins
    before_model(run, prompt) -> Prompt         change what the next model call sends, or set
                                                ``prompt.limit`` to end the run there
    wrap_model(run, request, call) -> Reply     around the model call: ``await call(request)``,
                                                or answer it from elsewhere
    after_model(run, reply, decision) -> Decision
                                                what came back, and what the loop made of it
    wrap_tool(run, call, tool, execute) -> value
                                                around one valid tool call: ``await execute()``,
                                                return a value of your own (the call's result,
                                                checked against the tool's output schema), or
                                                ``raise ToolFailure(code, text)`` to refuse it
                                                with an error the model reads
    after_step(run, step, outcome) -> Outcome   the step's record, and what happens next
    end(run, result) -> RunResult               the run's end

``run`` is the run's ``RunState``. Order: with ``layers=[a, b]``, ``before_model`` runs ``a``
then ``b``; the wrap hooks nest with ``a`` outermost; ``after_model``, ``after_step`` and
``end`` run ``b`` then ``a``. Any hook may end the run with ``raise StopRun(status, reason)``.

A layer holds no state between runs: one loop serves concurrent runs, so what a layer keeps
for a run lives in the run (``run.local(self, make)``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, ClassVar

from .decision import Decision
from .exceptions import MinloopError
from .messages import ToolCall
from .models.base import ModelRequest
from .result import RunResult, Status, Step
from .state import Outcome, Prompt, Reply, RunState
from .tools import Tool

__all__ = ["CallModel", "Execute", "Layer", "Stack", "StopRun"]

CallModel = Callable[[ModelRequest], Awaitable[Reply]]
Execute = Callable[[], Awaitable[Any]]
DRAWS = 100  # ids drawn for a new run before giving up


class StopRun(Exception):
    """Raised in a layer's hook: the run ends here with ``status`` and ``reason`` (the step in
    progress is not recorded; calls already running in it finish first)."""

    def __init__(self, status: Status, reason: str) -> None:
        super().__init__(reason)
        self.status: Status = status
        self.reason = reason


class Layer:
    """A control around the four steps. Every hook passes through unchanged by default.

    ``approves`` says the layer decides on calls to tools that need approval (a loop with such
    a tool and no such layer refuses to start).
    """

    approves: ClassVar[bool] = False

    def check_tools(self, tools: Sequence[Tool]) -> None:
        """Refuse, when the loop is made, the loop's ``tools`` if this layer cannot work with
        them (raise ``MinloopError`` saying why)."""

    def reserve(self, run: RunState) -> bool:
        """A new run's id (``run.trace_id``): record the run under it, or return False when
        something else already holds that id (the loop then draws another and asks again).
        Called before any ``start`` and before anything is written under the id."""
        return True

    def start(self, run: RunState) -> None:
        """The run begins (its input is in ``run.messages``)."""

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        """What the next model call will send; return it, changed or not."""
        return prompt

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        """Around the model call: ``await call(request)``, or return a ``Reply`` of your own."""
        return await call(request)

    async def after_model(self, run: RunState, reply: Reply, decision: Decision) -> Decision:
        """What the model said (``reply``) and how the loop decided it; return the decision to act on."""
        return decision

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        """Around one call whose tool exists and whose arguments are valid."""
        return await execute()

    async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
        """The step was recorded (``step``); return what happens next."""
        return outcome

    def end(self, run: RunState, result: RunResult) -> RunResult:
        """The run ended; return its result, changed or not."""
        return result


def _overrides(layer: Layer, hook: str) -> bool:
    return getattr(type(layer), hook, None) is not getattr(Layer, hook)


class Stack:
    """Layers in their order, with each hook's list made once: a run calls only the hooks that
    some layer overrides."""

    __slots__ = ("_after_model", "_after_step", "_before", "_ends", "_model", "_reserves", "_starts", "_tools",
                 "layers")  # fmt: skip

    def __init__(self, layers: Iterable[Layer] = ()) -> None:
        self.layers = tuple(layers)
        have = lambda hook: [layer for layer in self.layers if _overrides(layer, hook)]
        self._reserves = [layer.reserve for layer in have("reserve")]
        self._starts = [layer.start for layer in have("start")]
        self._before = [layer.before_model for layer in have("before_model")]
        self._model = [layer.wrap_model for layer in have("wrap_model")]
        self._after_model = [layer.after_model for layer in reversed(have("after_model"))]
        self._tools = [layer.wrap_tool for layer in have("wrap_tool")]
        self._after_step = [layer.after_step for layer in reversed(have("after_step"))]
        self._ends = [layer.end for layer in reversed(have("end"))]

    def outside(self, extra: Iterable[Layer]) -> Stack:
        """This stack inside ``extra`` (the layers of one run only)."""
        extra = tuple(extra)
        return Stack((*extra, *self.layers)) if extra else self

    @property
    def wraps_tools(self) -> bool:
        return bool(self._tools)

    def check(self, tools: Iterable[Tool]) -> None:
        """Refuse to run ``tools`` when one needs approval and no layer here decides approvals."""
        tools = list(tools)
        for layer in self.layers:
            layer.check_tools(tools)
        guarded = [t.name for t in tools if t.needs_approval]
        if guarded and not any(layer.approves for layer in self.layers):
            raise MinloopError(
                f"tool {guarded[0]!r} needs approval, but no layer decides approvals: "
                "use minloop.Loop(..., approve=...) or add an Approval layer"
            )

    def new_run(self, make: Callable[[], RunState]) -> RunState:
        """A new run from ``make()``, under an id every layer could ``reserve`` (a taken id, such
        as one of a run already in a shared store, is drawn again: ``make()`` draws a new one)."""
        for _ in range(DRAWS):
            run = make()
            if all(reserve(run) for reserve in self._reserves):
                return run
        raise MinloopError(f"no free run id in {DRAWS} draws: every one drawn was taken")

    def start(self, run: RunState) -> None:
        for start in self._starts:
            start(run)

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        for before in self._before:
            prompt = await before(run, prompt)
        return prompt

    def call_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Awaitable[Reply]:
        for wrap in reversed(self._model):
            call = _model_link(wrap, run, call)
        return call(request)

    async def after_model(self, run: RunState, reply: Reply, decision: Decision) -> Decision:
        for after in self._after_model:
            decision = await after(run, reply, decision)
        return decision

    def run_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Awaitable[Any]:
        for wrap in reversed(self._tools):
            execute = _tool_link(wrap, run, call, tool, execute)
        return execute()

    async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
        for after in self._after_step:
            outcome = await after(run, step, outcome)
        return outcome

    def end(self, run: RunState, result: RunResult) -> RunResult:
        for end in self._ends:
            result = end(run, result)
        return result


def _model_link(wrap: Callable[..., Awaitable[Reply]], run: RunState, inner: CallModel) -> CallModel:
    async def call(request: ModelRequest) -> Reply:
        return await wrap(run, request, inner)

    return call


def _tool_link(
    wrap: Callable[..., Awaitable[Any]], run: RunState, call: ToolCall, tool: Tool, inner: Execute
) -> Execute:
    async def execute() -> Any:
        return await wrap(run, call, tool, inner)

    return execute
