"""Usage budgets per run: tokens, model calls, tool calls and cost.

``Loop(..., budget=Budget(total_tokens=20_000, model_calls=8, cost=0.05, prices={...}))``. Before
each model call the loop asks ``Budget.check`` whether the call may go out, counting what it will
at least spend: its prompt, counted exactly by the embedded model (``count_tokens``) and
estimated for remote models (``minloop.layers.tokens``, calibrated on each reply's reported
usage). A reply that overshoots a budget is caught the same way before the next call. A reply that
reports no usage (some local servers and proxies, streams without ``stream_options``) is
counted by the loop: the prompt it sent and the reply it got, by the same estimate; the
``error`` of a run that such counts stopped says the count is an estimate.
Tool calls are counted as they are made: a call past ``tool_calls`` is not run (the model reads
``ERR_TOOL_BUDGET``). A spent budget ends the run with status ``budget_exceeded``; ``RunResult
.error`` names the budget and by how much it would be exceeded. A reply that already holds the
final answer is never thrown away: a run that gets its answer ends ``success`` whatever it cost.

Cost comes from ``prices``, per model name, in any currency per million tokens. ``Budgeting`` is
the layer that holds a run to its ``Budget``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from ..decision import CallTools, Decision
from ..envelope import ErrorCode
from ..exceptions import MinloopError
from ..execute import ToolFailure
from ..layer import CallModel, Execute, Layer
from ..messages import ToolCall
from ..models.base import ModelRequest, Usage
from ..result import RunResult, Step
from ..state import Limit, Prompt, Reply, RunState
from ..tools import Tool
from .tokens import estimate_tokens, tokens_of

__all__ = ["Budget", "BudgetName", "Budgeting", "Price", "Spent"]

BudgetName: TypeAlias = Literal[
    "prompt_tokens", "completion_tokens", "total_tokens", "model_calls", "tool_calls", "cost"
]
REFUSED: ErrorCode = "ERR_TOOL_BUDGET"


@dataclass(frozen=True, slots=True)
class Price:
    """What a million tokens cost, prompt and completion, in the caller's currency."""

    prompt: float
    completion: float

    def __post_init__(self) -> None:
        for name in ("prompt", "completion"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise MinloopError(
                    f"Price({name}={value!r}): a price is a number per million tokens, "
                    f"e.g. Price(prompt=0.15, completion=0.6)"
                )
            if value < 0:
                raise MinloopError(f"Price({name}={value}): a price cannot be negative")

    def of(self, usage: Usage) -> float:
        return (usage.prompt_tokens * self.prompt + usage.completion_tokens * self.completion) / 1e6


@dataclass(frozen=True, slots=True)
class Spent:
    """What a run has used so far (``RunResult`` reports the same totals)."""

    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    tool_calls: int = 0  # calls the loop ran or tried to run
    refused_calls: int = 0  # calls not run because the tool-call budget was spent
    cost: float | None = None

    estimated: int = 0  # model calls whose usage the loop counted itself (the model reported none)

    @classmethod
    def of(
        cls, steps: Iterable[Step], price: Price | None = None, estimates: Mapping[int, Usage] | None = None
    ) -> Spent:
        """The totals of ``steps``; ``estimates`` (by step) stands in for usage a model did not report."""
        usage, calls, tools, refused, estimated = Usage(), 0, 0, 0, 0
        for step in steps:
            counted = (estimates or {}).get(step.index) if not step.usage.total_tokens else None
            estimated += counted is not None
            usage, calls = usage + (counted or step.usage), calls + 1
            for result in step.results:
                refused += result.error == REFUSED
                tools += result.error != REFUSED
        return cls(usage, calls, tools, refused, None if price is None else price.of(usage), estimated)


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits for one run; ``None`` means no limit. ``prices`` maps a model name to its ``Price``
    (or a ``(prompt, completion)`` pair per million tokens); ``cost`` needs the price of the
    loop's model."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    model_calls: int | None = None
    tool_calls: int | None = None
    cost: float | None = None
    prices: Mapping[str, Price | tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in (
            "prompt_tokens",
            "completion_tokens",
            "total_tokens",
            "model_calls",
            "tool_calls",
            "cost",
        ):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
                kind = "a number" if name == "cost" else "a whole number"
                raise MinloopError(
                    f"Budget({name}={value!r}): a budget is {kind} or None, got {type(value).__name__}"
                )
            if name != "cost" and isinstance(value, float):
                raise MinloopError(f"Budget({name}={value!r}): a count budget is a whole number (int)")
            if value is not None and value < 0:
                raise MinloopError(f"Budget({name}={value}): a budget cannot be negative")
        object.__setattr__(self, "prices", _prices(self.prices))

    def price_for(self, model: str) -> Price | None:
        """The model's price; raises if a cost limit is set and the table does not name the model."""
        price = self.prices.get(model)
        if price is None and self.cost is not None:
            known = ", ".join(sorted(self.prices)) or "none"
            raise MinloopError(
                f"Budget(cost={self.cost}) needs the price of model {model!r} in prices= (priced: {known})"
            )
        return price  # type: ignore[return-value]  # converted to Price in __post_init__

    @property
    def counts_prompts(self) -> bool:
        """Whether checking needs the next call's prompt tokens."""
        return any(v is not None for v in (self.prompt_tokens, self.total_tokens, self.cost))

    def check(self, spent: Spent, next_prompt: int = 0, price: Price | None = None) -> Limit | None:
        """The first budget that the next call, sending about ``next_prompt`` tokens, would exceed."""
        if self.model_calls is not None and spent.model_calls >= self.model_calls:
            return _over(
                "model_calls", f"{spent.model_calls} model calls made, the limit is {self.model_calls}"
            )
        if self.tool_calls is not None and spent.refused_calls:
            asked = spent.tool_calls + spent.refused_calls
            return _over(
                "tool_calls",
                f"the model asked for {asked} tool calls, the limit is {self.tool_calls} "
                f"({spent.refused_calls} not run)",
            )
        usage = spent.usage
        tokens: list[tuple[BudgetName, float | None, float, float]] = [
            ("prompt_tokens", self.prompt_tokens, usage.prompt_tokens, next_prompt),
            ("total_tokens", self.total_tokens, usage.total_tokens, next_prompt),
            ("completion_tokens", self.completion_tokens, usage.completion_tokens, 1),
        ]
        if self.cost is not None and price is not None:
            tokens.append(("cost", self.cost, spent.cost or 0.0, next_prompt * price.prompt / 1e6))
        for name, limit, used, coming in tokens:
            if limit is not None and used + coming > limit:
                return _over(name, _overrun_text(name, limit, used, coming))
        return None


def _prices(prices: Any) -> dict[str, Price]:
    if not isinstance(prices, Mapping):
        raise MinloopError(f"Budget(prices=...) maps a model name to a Price, got {type(prices).__name__}")
    table = {}
    for model, price in prices.items():
        if isinstance(price, Price):
            table[model] = price
        elif isinstance(price, tuple | list) and len(price) == 2:
            table[model] = Price(*price)
        else:
            raise MinloopError(
                f"Budget(prices={{{model!r}: {price!r}}}): a price is Price(prompt, completion) "
                "or a (prompt, completion) pair per million tokens"
            )
    return table


def _estimated(limit: Limit, spent: Spent) -> Limit:
    if not spent.estimated or limit.name in ("model_calls", "tool_calls"):
        return limit
    note = (
        f" (an estimate: the model reported no token usage for {spent.estimated} of "
        f"{spent.model_calls} calls, so the loop counted what was sent and received)"
    )
    return replace(limit, reason=limit.reason + note)


def _over(name: BudgetName, text: str) -> Limit:
    return Limit(name, "budget_exceeded", f"budget exceeded: {name}: {text}")


def _overrun_text(name: str, limit: float, used: float, coming: float) -> str:
    fmt = (lambda v: f"{v:.6g}") if name == "cost" else (lambda v: f"{int(v)}")
    if used >= limit or name == "completion_tokens":
        over = f" (over by {fmt(used - limit)})" if used > limit else ""
        return f"{fmt(used)} spent, the limit is {fmt(limit)}{over}"
    return (
        f"{fmt(used)} spent and about {fmt(coming)} more for the next call's prompt would "
        f"exceed the limit of {fmt(limit)} by {fmt(used + coming - limit)}"
    )


class Budgeting(Layer):
    """Holds each run to ``budget``: a call that would pass it is not made (the run ends
    ``budget_exceeded``, or the answer at the limit is asked for), a tool call past
    ``tool_calls`` is not run, and the result carries the cost when the model is priced."""

    def __init__(self, budget: Budget, price: Price | None = None) -> None:
        self.budget = budget
        self.price = price

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        if prompt.limit is not None:
            return prompt
        tokens = 0
        if self.budget.counts_prompts:
            tokens = tokens_of(run, prompt.tools).count(prompt.request().messages)
        spent = Spent.of(run.steps, self.price, run.local(_Estimates, _Estimates))
        limit = self.budget.check(spent, tokens, self.price)
        return prompt if limit is None else replace(prompt, limit=_estimated(limit, spent))

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        reply = await call(request)
        usage, tokens = reply.response.usage, tokens_of(run, request.tools)
        if not usage.total_tokens:  # no usage reported: count what was sent and what came back
            received = estimate_tokens([reply.response.message])
            run.local(_Estimates, _Estimates)[run.index] = Usage(tokens.count(request.messages), received)
        elif self.budget.counts_prompts:
            tokens.calibrate(request.messages, usage.prompt_tokens)
        return reply

    async def after_model(self, run: RunState, reply: Reply, decision: Decision) -> Decision:
        if isinstance(decision, CallTools) and self.budget.tool_calls is not None:
            run.local(self, _Calls).of_step(run, decision.calls)
        return decision

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        limit = self.budget.tool_calls
        if limit is not None and not run.local(self, _Calls).admits(call, limit):
            text = f"not run: this run may make at most {limit} tool calls, and they are spent"
            raise ToolFailure(REFUSED, text)
        return await execute()

    def end(self, run: RunState, result: RunResult) -> RunResult:
        if self.price is None:
            return result
        return replace(
            result, cost=Spent.of(result.steps, self.price, run.local(_Estimates, _Estimates)).cost
        )


class _Estimates(dict[int, Usage]):
    """The usage the loop counted, by step, for replies that reported none."""


class _Calls:
    """The step's calls in order, and how many tool calls the run had made before them."""

    def __init__(self) -> None:
        self.before = 0
        self.ids: list[str] = []

    def of_step(self, run: RunState, calls: Iterable[ToolCall]) -> None:
        self.before = Spent.of(run.steps).tool_calls
        self.ids = [c.id for c in calls]

    def admits(self, call: ToolCall, limit: int) -> bool:
        """Calls run in order until the budget is spent (a call's place in its step counts)."""
        place = self.ids.index(call.id) if call.id in self.ids else len(self.ids)
        return self.before + place < limit
