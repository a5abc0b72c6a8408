"""A small MCP server over stdio (plain JSON-RPC lines, no SDK) for faults real servers do not
produce on demand: ``crash`` exits mid-call, ``hang`` never answers, ``drift`` returns structured
content that breaks its own output schema, ``wipe`` is marked destructive. ``echo`` answers with
the server's name (``fault`` + the first argument) and how many calls it has received; ``echo``
of the text "raise" answers with a JSON-RPC error, as a server whose tool handler raised does.
Named ``faultZh`` (argument ``Zh``) it offers tools whose names the Chat Completions format does
not allow (Chinese, and two that share their first 64 characters) instead; named ``faultNoisy``
it prints lines on stdout that are not JSON-RPC (two at start, one before each call's answer)."""

from __future__ import annotations

import json
import os
import sys

OUT = {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text.",
        "inputSchema": TEXT,
        "annotations": {"readOnlyHint": True},
    },
    {"name": "crash", "description": "Exit in the middle of the call.", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "Never answer.", "inputSchema": {"type": "object"}},
    {"name": "drift", "description": "Temperature.", "inputSchema": {"type": "object"}, "outputSchema": OUT},
    {
        "name": "wipe",
        "description": "Delete everything.",
        "inputSchema": {"type": "object"},
        "annotations": {"destructiveHint": True, "readOnlyHint": False},
    },
]


LONG = "get_the_weather_forecast_for_the_next_seven_days_in_a_given_city_"
NAMED = [
    {"name": n, "description": f"工具 {n}", "inputSchema": TEXT}
    for n in ("查询天气", "查询时间", LONG + "a", LONG + "b")
]


def answer(request_id: object, result: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


CALLS = [0]


def call(request_id: object, name: str, arguments: dict[str, object], server: str) -> None:
    CALLS[0] += 1
    if name == "crash":
        print("fault server: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    if name == "hang":
        return
    if name == "drift":
        answer(
            request_id,
            {"content": [{"type": "text", "text": "warm"}], "structuredContent": {"celsius": "warm"}},
        )
        return
    if arguments.get("text") == "raise":
        error = {"code": -32603, "message": "ValueError: the handler raised"}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}) + "\n")
        sys.stdout.flush()
        return
    text = f"{server} call #{CALLS[0]} {name}: {arguments.get('text', 'done')}"
    answer(request_id, {"content": [{"type": "text", "text": text}]})


def main() -> None:
    server = "fault" + (sys.argv[1] if len(sys.argv) > 1 else "")
    if server == "faultNoisy":
        print("starting up...\n[配置] 已加载", flush=True)
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            answer(
                request_id,
                {
                    "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": server, "version": "1.0"},
                },
            )
        elif method == "tools/list":
            answer(request_id, {"tools": NAMED if server == "faultZh" else TOOLS})
        elif method == "tools/call":
            if server == "faultNoisy":
                print("handling a call", flush=True)
            call(request_id, params["name"], params.get("arguments") or {}, server)
        elif request_id is not None:
            answer(request_id, {})


if __name__ == "__main__":
    main()
