"""The embedded model's prompt prefix kept on disk: reused by a new process, damaged entries
ignored, the directory kept under its size bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from minloop.models.local.prefix_cache import PrefixCache

# One decision in a new process, as `minloop run` would make it; prints what the cache did.
DECIDE = """
import asyncio, json, sys
from minloop import ModelRequest
from minloop.builtins import default_tools
from minloop.models.local import LocalModel

model = LocalModel(path=sys.argv[1])
tools = [t.spec() for t in default_tools(".")]
request = ModelRequest([{"role": "user", "content": "What is 1234 * 5678? Use the calculator."}], tools)
response = asyncio.run(model.call(request))
cache = model.prefixes()
print(json.dumps({"hits": cache.hits, "misses": cache.misses, "message": response.message,
                  "evaluated": response.usage.evaluated_tokens}))
"""


def decide_in_new_process(cache_dir: Path, gguf: Path) -> dict[str, Any]:
    env = {**os.environ, "MINLOOP_CACHE_DIR": str(cache_dir)}
    done = subprocess.run(
        [sys.executable, "-c", DECIDE, str(gguf)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def entry(directory: Path, key: str, size: int, mtime: float) -> None:
    (directory / f"{key}.bin").write_bytes(b"\0" * size)
    (directory / f"{key}.json").write_text("{}")
    os.utime(directory / f"{key}.bin", (mtime, mtime))


def test_the_least_recently_used_entries_go_first_when_over_the_bound(tmp_path: Path) -> None:
    for i, key in enumerate(["old", "middle", "new"]):
        entry(tmp_path, key, 1000, 1_000_000 + i)
    PrefixCache(tmp_path, "model", max_bytes=2500).trim()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["middle.bin", "middle.json", "new.bin", "new.json"]
    PrefixCache(tmp_path, "model", max_bytes=0).trim()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.local_model
def test_a_new_process_restores_the_prefix_and_a_damaged_entry_is_ignored(tmp_path: Path) -> None:
    from minloop.models.local.gguf import ensure_gguf

    gguf = ensure_gguf("qwen2.5-coder-0.5b")  # the model stays where it is; only the prefixes go to tmp_path
    first = decide_in_new_process(tmp_path, gguf)
    assert (first["hits"], first["misses"]) == (0, 1)
    [saved] = list((tmp_path / "prefix").glob("*.bin"))
    record = json.loads(saved.with_suffix(".json").read_text())
    assert record["bytes"] == saved.stat().st_size and record["tokens"] > 300  # system prompt + five tools

    second = decide_in_new_process(tmp_path, gguf)
    assert (second["hits"], second["misses"]) == (1, 0)
    assert second["message"] == first["message"]
    assert second["message"]["tool_calls"][0]["function"]["name"] == "calculator"

    saved.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])  # llama.cpp would abort on this file
    third = decide_in_new_process(tmp_path, gguf)
    assert (third["hits"], third["misses"]) == (0, 1)
    assert third["message"] == first["message"]
    assert saved.stat().st_size == record["bytes"]  # evaluated again and saved whole
