"""A worker that resumes every stalled run in a store until none is left, for the test that two
workers sharing one PostgreSQL database never take the same run.

    python durable_worker.py STORE COUNTS TAKEN

Each run it resumes and finishes is appended to the file TAKEN (one run id a line); a run
another worker took first is skipped. The tools are durable_child.py's.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from durable_child import build

from minloop.exceptions import RunConflictError
from minloop.runs import open_store, stalled


async def main(store_address: str, counts: Path, taken: Path) -> None:
    store = open_store(store_address)
    loop = build(counts, store)
    while waiting := [row.run_id for row in store.runs(limit=1000) if stalled(row)]:
        for run_id in waiting:
            try:
                result = await loop.resume(run_id)
            except RunConflictError:
                continue  # the other worker has it
            with open(taken, "a", encoding="utf-8") as f:
                f.write(f"{run_id} {result.status}\n")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
