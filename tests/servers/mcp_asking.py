"""An MCP server (the ``mcp`` SDK's low-level ``Server``, protocol 2026-07-28) whose tools ask
for the user's input mid-call, for the tests of a server's question.

    python mcp_asking.py LOG stdio
    python mcp_asking.py LOG http PORT

Tools:

* ``book(city)``: asks a form question (``when``: a date and a seat count), then books. Not
  safe to repeat.
* ``plan(city)``: asks ``when``, then, on the retried call, a new question (``budget``), then
  plans. Safe to repeat (read-only).
* ``pay(amount)``: asks a URL question (a payment page), then says whether it was paid.

Each round appends one JSON line to LOG: ``{"tool", "round": "first" | "again", "state",
"state_ok", "answers"}``. A first round is a call without ``requestState``; a retried round must
echo the state this server issued byte for byte (``state_ok`` says whether it did; the state
is made from the call's arguments, so another process of this server checks it as well). The
state holds characters that a careless copy changes: quotes, a backslash, a newline, ``+/=``
and Chinese. While a file ``slow`` lies beside LOG, a retried round waits a minute after it is
logged (a test kills its client meanwhile).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server

LOG = Path(sys.argv[1])
WHEN = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "description": "Which day (YYYY-MM-DD)"},
        "seats": {"type": "integer", "description": "How many seats"},
    },
    "required": ["date"],
}
BUDGET = {"type": "object", "properties": {"euros": {"type": "integer"}}, "required": ["euros"]}
PAGE = "https://pay.example.test/checkout/s-91?token=one-time-7f3a"


def state_for(tool: str, args: dict[str, Any], round_: int) -> str:
    return f'{tool}|{json.dumps(args, sort_keys=True)}|round {round_}|"q" \\ +/= 状态\n✓'


def record(tool: str, round_: str, state: str | None, ok: bool | None, answers: Any) -> None:
    line = {"tool": tool, "round": round_, "state": state, "state_ok": ok, "answers": answers}
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(line, ensure_ascii=False) + "\n")


def form(message: str, schema: dict[str, Any]) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


def asked(state: str, **questions: types.ElicitRequest) -> types.InputRequiredResult:
    return types.InputRequiredResult(input_requests=dict(questions), request_state=state)


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


def answer_of(responses: Any, key: str) -> tuple[str, dict[str, Any]]:
    got = (responses or {}).get(key)
    if not isinstance(got, types.ElicitResult):
        return "missing", {}
    return got.action, dict(got.content or {})


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    amount = {"type": "object", "properties": {"amount": {"type": "integer"}}, "required": ["amount"]}
    return types.ListToolsResult(
        tools=[
            types.Tool(name="book", description="Book a table in a city.", input_schema=city),
            types.Tool(
                name="plan",
                description="Plan a trip to a city.",
                input_schema=city,
                annotations=types.ToolAnnotations(read_only_hint=True),
            ),
            types.Tool(name="pay", description="Pay an amount.", input_schema=amount),
        ]
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
    tool, args = params.name, dict(params.arguments or {})
    state, responses = params.request_state, params.input_responses
    wire = {k: v.model_dump(mode="json", exclude_none=True) for k, v in (responses or {}).items()}
    if state is None:
        record(tool, "first", None, None, wire)
        if tool == "pay":
            url = types.ElicitRequestURLParams(message="Pay on the payment page.", url=PAGE)
            return asked(state_for(tool, args, 1), payment=types.ElicitRequest(params=url))
        return asked(state_for(tool, args, 1), when=form(f"When do you want to go to {args['city']}?", WHEN))
    round_ = 2 if state == state_for(tool, args, 2) else 1
    ok = state == state_for(tool, args, round_)
    record(tool, "again", state, ok, wire)
    if (LOG.parent / "slow").exists():
        await anyio.sleep(60)
    if not ok:
        raise ValueError("the request state was not echoed unchanged")
    if tool == "pay":
        action, _ = answer_of(responses, "payment")
        return text(f"paid {args['amount']}" if action == "accept" else f"not paid ({action})")
    action, given = answer_of(responses, "budget" if round_ == 2 else "when")
    if action != "accept":
        return text(f"not booked: the user chose {action}")
    if tool == "plan" and round_ == 1:
        return asked(state_for(tool, args, 2), budget=form(f"Your budget for {given['date']}?", BUDGET))
    if tool == "plan":
        return text(f"planned {args['city']} for {given['euros']} euros")
    return text(f"booked {args['city']} on {given['date']} for {given.get('seats', 1)}")


server = Server("asking", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    if sys.argv[2] == "stdio":
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return
    import uvicorn

    config = uvicorn.Config(
        server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[3]), log_level="warning"
    )
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    anyio.run(main)
