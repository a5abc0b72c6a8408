"""A process that runs (or resumes) one durable run whose only call goes to the asking MCP server
(tests/servers/mcp_asking.py), for the crash tests of a server's question.

    python asking_child.py STORE DIR SERVER TOOL start
    python asking_child.py STORE DIR SERVER TOOL resume RUN_ID [--answer JSON | --decline]

SERVER is the server's URL, or ``stdio`` to start it here (its log in DIR/log). The model calls
TOOL with ``{"city": "Paris"}`` (``{"amount": 30}`` for ``pay``), then answers with the tool's
result. ``ASK_KILL=asked`` kills this process with SIGKILL as soon as the question is in the
store, before anyone could answer it. The run id goes to stdout at once; the result's status,
messages and pending calls go to DIR/result.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from minloop import Loop, ModelRequest, Question, UserAnswer
from minloop.mcp import MCPServer, connect
from minloop.runs import open_store
from minloop.testing import FunctionModel

HERE = Path(__file__).parent


def answer(request: ModelRequest, tool: str) -> Any:
    results = [m for m in request.messages if m["role"] == "tool"]
    if results:
        return f"Done: {results[-1]['content']}"
    args = {"amount": 30} if tool == "pay" else {"city": "Paris"}
    return {"content": None, "tool_calls": [{"id": "c1", "type": "function",
                                             "function": {"name": tool, "arguments": json.dumps(args)}}]}  # fmt: skip


def die(question: Question) -> UserAnswer | None:
    os.kill(os.getpid(), signal.SIGKILL)
    return None


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("dir", type=Path)
    parser.add_argument("server")
    parser.add_argument("tool")
    parser.add_argument("mode", choices=["start", "resume"])
    parser.add_argument("run_id", nargs="?")
    parser.add_argument("--answer")
    parser.add_argument("--decline", action="store_true")
    args = parser.parse_args()
    target = (
        [sys.executable, str(HERE / "mcp_asking.py"), str(args.dir / "log"), "stdio"]
        if args.server == "stdio"
        else args.server
    )
    ask_user = die if os.environ.get("ASK_KILL") == "asked" else None
    async with connect(MCPServer(target, name="asking")) as tools:
        model = FunctionModel(lambda r: answer(r, args.tool), name="plan")
        loop = Loop(model, tools, max_steps=4, store=open_store(args.store), ask_user=ask_user)
        if args.mode == "start":
            run = loop.iter("Do it.")
        else:
            given: Any = UserAnswer("decline") if args.decline else None
            if args.answer:
                given = UserAnswer(content=json.loads(args.answer))
            run = loop.iter_resume(args.run_id, {"c1": given} if given is not None else None, by="test")
        print(run.trace_id, flush=True)
        async for _ in run:
            pass
    assert run.result is not None
    out = {
        "status": run.result.status,
        "messages": run.result.messages,
        "pending": [p.to_dict() for p in run.result.pending],
    }
    (args.dir / "result.json").write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
