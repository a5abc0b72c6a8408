"""The same 8-step scenario three ways: no policy, window only, full policy.

    .venv/bin/python benchmarks/context_budget.py [--window 4096]

Seven rounds call a tool that returns ~2 KB (most of it noise fields), the eighth answers.
Every request goes through the embedded model (its own template, tokenizer and 4,096-token
window), so prompt tokens are exact and an overflow is the runtime's own refusal; the
*decisions* are scripted so the three runs are comparable step by step.
"""

from __future__ import annotations

import argparse
import json

from minloop import Loop, ModelRequest, ModelResponse, tool
from minloop.layers.context import ContextPolicy, WindowPolicy
from minloop.models.local import LocalModel

CITIES = ["Beijing", "Paris", "Oslo", "Lima", "Cairo", "Delhi", "Tokyo"]
NOISE = {f"debug_field_{i}": "0123456789abcdef" * 8 for i in range(14)}


def weather(city: str) -> dict[str, object]:
    """Get the current weather for a city.

    Args:
        city: City name.
    """
    return {"city": city, "condition": "Sunny", "temperature": 20 + len(city), **NOISE}


raw_tool = tool(name="get_weather")(weather)
shaped_tool = tool(name="get_weather", keep_fields=["city", "condition", "temperature"])(weather)


class ScriptedDecisions:
    """Sends every request to the embedded model, then replaces its decision by the script."""

    def __init__(self, model: LocalModel) -> None:
        self.model, self.name, self.calls = model, "scripted-decisions", 0
        self.context_window = model.context_window
        self.count_tokens = model.count_tokens

    async def call(self, request: ModelRequest) -> ModelResponse:
        real = await self.model.call(request)  # raises ContextOverflowError past the window
        self.calls += 1
        if self.calls > len(CITIES):
            return ModelResponse(
                {"role": "assistant", "content": "Done: all seven cities looked up."}, real.usage
            )
        args = json.dumps({"city": CITIES[self.calls - 1]})
        call = {
            "id": f"c{self.calls}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": args},
        }
        return ModelResponse({"role": "assistant", "content": None, "tool_calls": [call]}, real.usage)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=int, default=4096)
    args = parser.parse_args()
    local = LocalModel(n_ctx=args.window, max_tokens=48)
    local.load()
    ways = {
        "no policy": (raw_tool, None),
        "window only": (raw_tool, WindowPolicy(max_messages=4)),
        "full policy": (shaped_tool, ContextPolicy(keep_steps=2, task_summary=True)),
    }
    table: dict[str, list[int | None]] = {}
    for name, (t, policy) in ways.items():
        result = Loop(ScriptedDecisions(local), [t], max_steps=8, context=policy).run_sync(
            "Look up the weather in Beijing, Paris, Oslo, Lima, Cairo, Delhi and Tokyo, one city per step."
        )
        table[name] = [s.usage.prompt_tokens for s in result.steps] + [None] * (8 - len(result.steps))
        modes = ",".join(s.context.mode[0] if s.context else "-" for s in result.steps)
        print(
            f"{name:>12}: {result.status:<17} {len(result.steps)} steps  modes {modes}  {result.error or ''}"
        )
    print(f"\nprompt tokens per step (window {args.window})")
    print(f"{'step':>4} " + " ".join(f"{n:>12}" for n in table) + f" {'full vs none':>13}")
    for i in range(8):
        row = [table[n][i] for n in table]
        none, full = row[0], row[-1]
        saving = f"{1 - full / none:>12.0%}" if none and full else f"{'-':>12}"
        print(
            f"{i + 1:>4} "
            + " ".join(f"{v if v is not None else 'overflow':>12}" for v in row)
            + f" {saving:>13}"
        )


if __name__ == "__main__":
    main()
