"""``minloop serve`` under load: 1,000 chat completions, 200 at a time, on one SQLite or
PostgreSQL store, each a two-step run (a tool call, then the answer): every one answered, each
run its own, and nothing unhandled in the server's log; and a NUL character, which PostgreSQL
cannot keep, is refused as a bad request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx

from minloop.runs import open_store
from tests.serving import served

RUNS, AT_ONCE = 1_000, 200


async def _complete(base: str) -> list[Any]:
    """Every run's reply (or what went wrong with it), ``AT_ONCE`` requests at a time."""
    limits = httpx.Limits(max_connections=AT_ONCE, max_keepalive_connections=AT_ONCE)
    gate = asyncio.Semaphore(AT_ONCE)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:

        async def one(i: int) -> Any:
            async with gate:
                try:
                    body = {"messages": [{"role": "user", "content": f"add {i} 1"}]}
                    answer = await client.post("/v1/chat/completions", json=body)
                except httpx.HTTPError as exc:
                    return f"{type(exc).__name__}: {exc}"
                return answer.json() if answer.status_code == 200 else f"{answer.status_code}: {answer.text}"

        return await asyncio.gather(*(one(i) for i in range(RUNS)))


def test_a_thousand_chat_completions_two_hundred_at_a_time_all_succeed(
    store_address: str, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    with served(store_address, "--lease-scan", "0", log=log) as (base, _):
        replies = asyncio.run(_complete(base))
        nul = httpx.post(
            f"{base}/runs", json={"prompt": "a\x00b"}
        )  # PostgreSQL cannot keep it: refused before
        assert nul.status_code == 400 and "a NUL character" in nul.json()["error"]["message"]
    failed = [r for r in replies if not isinstance(r, dict)]
    assert failed == [] and log.read_text() == ""
    answers = [r["choices"][0]["message"]["content"] for r in replies]
    assert [json.loads(a.removeprefix("done: "))["result"] for a in answers] == [i + 1 for i in range(RUNS)]
    run_ids = {r["minloop"]["run_id"] for r in replies}
    assert len(run_ids) == RUNS
    store = open_store(store_address)
    try:
        assert {store.row(run_id).status for run_id in run_ids} == {"success"}
    finally:
        store.close()
