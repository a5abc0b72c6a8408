"""Scripted model, two tools, an unknown tool name, a timeout and a schema mismatch: the run
still ends in success, and every failure reached the model as a JSON error envelope."""

import asyncio
import json

from pydantic import BaseModel

from minloop import Loop, tool
from minloop.testing import ScriptedModel, call, reply


class Weather(BaseModel):
    city: str
    condition: str
    temperature: int


@tool(output=Weather, output_map={"weather": "condition", "temp": "temperature"}, sla=0.2)
async def get_weather(city: str) -> dict:
    """Get the current weather for a city.

    Args:
        city: City name, e.g. "Beijing".
    """
    if city == "Atlantis":
        await asyncio.sleep(5)  # hangs: cut off at 1.5 x SLA = 0.3 s
    if city == "Paris":
        return {"city": city, "weather": "Rain"}  # the API dropped a field
    return {"city": city, "weather": "Sunny", "temp": "25"}  # mapped and coerced


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


model = ScriptedModel(
    [
        reply(
            None,
            call("get_weather", {"city": "Beijing"}),
            call("get_weather", {"city": "Atlantis"}),
            call("get_weather", {"city": "Paris"}),
            call("calculate_stock_price", {"ticker": "ACME"}),
        ),
        reply(None, call("add", {"a": 25, "b": 3})),
        "Beijing is sunny at 25 C, and 25 + 3 = 28. The Atlantis lookup timed out, "
        "Paris returned malformed data, and I have no stock-price tool.",
    ]
)

result = Loop(model, [get_weather, add], max_steps=5).run_sync("Weather in Beijing, Atlantis and Paris?")
model.assert_done()

assert result.status == "success"
print(result.status, result.trace_id)
for step in result.steps:
    print(step.index, step.decision, [c.name for c in step.tool_calls], step.errors)
print(json.dumps(result.messages, indent=2))
