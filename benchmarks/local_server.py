"""The bundled 1.5B model behind llama.cpp's own HTTP server, with and without the small-model
layers, side by side in one run.

    nice .venv/bin/python benchmarks/local_server.py [--set agent-test] [--limit 24] [--max-tokens 512]

Starts llama.cpp's server (``xllamacpp``'s ``Server``, the model's own chat template with tools,
temperature 0, one slot, two threads) with the bundled Qwen2.5-Coder-1.5B GGUF on 127.0.0.1, as a
user runs a small model, and runs each request of a set through ``Loop(OpenAIModel(...), menu,
max_steps=6)`` once per arm (the order of the arms turns round from one request to the next):

* ``plain``: the loop as it comes (calls written as text read, replies that run away stopped);
* ``layers``: the same with ``Loop(..., layers=minloop.small.small_model_layers())``, when that
  module can be imported; otherwise the column says so and is not run.

Sets (``--set``): ``agent-test`` / ``agent-dev``, the generated set of ``agent_set.py`` (sixteen
domains, half Chinese, split by domain; the test split's requests are never printed);
``user`` (``user_tools_set.py``, the tools of ``user_tools.py``) and ``other``
(``other_tools_set.py``). ``--limit`` takes that many requests, spread over the groups and
languages; ``--seconds`` starts no request after that long (the table is of those that ran). Answers are judged by ``judge.py``. Prints per arm: answers right (per group and
language), over-refusals, answers with an invented number, median seconds per request, the
longest reply of any step in tokens and the replies stopped (repeated, at the cap); a reply over
the cap (``--max-tokens``, sent to the server and held by ``OpenAIModel``) ends the run with an
error.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judge import DECLINE, judge
from tests.serving import free_port

from minloop import Layer, Loop, Tool
from minloop.models.base import ModelRequest, ModelResponse
from minloop.models.openai import OpenAIModel

SERVER = Path(__file__).resolve().parents[1] / "tests" / "servers" / "llama_http.py"
GROUPS = ("one_call", "two_step", "not_found", "not_returned")
Request = tuple[str, str, str, list[Any], list[Tool]]  # group, language, request, facts, menu


def requests(which: str) -> list[Request]:
    """The requests of a set, each with the menu it is run with."""
    if which.startswith("agent-"):
        from agent_set import items, tools_of

        return [(i.group, i.language, i.request, i.facts, tools_of(i)) for i in items(which.split("-")[1])]
    if which == "user":
        import user_tools
        import user_tools_set

        return [(g, lang, r, f, list(user_tools.TOOLS)) for g, lang, r, f in user_tools_set.ITEMS]
    import other_tools
    import other_tools_set

    return [(g, lang, r, f, list(other_tools.TOOLS)) for g, lang, r, f in other_tools_set.ITEMS]


def spread(rows: list[Request], limit: int | None) -> list[Request]:
    """``limit`` requests taken in turn from each group and language, in the set's order."""
    if limit is None or limit >= len(rows):
        return rows
    buckets: dict[tuple[str, str], list[Request]] = defaultdict(list)
    for row in rows:
        buckets[(row[0], row[1])].append(row)
    out: list[Request] = []
    while len(out) < limit:
        for bucket in buckets.values():
            if bucket and len(out) < limit:
                out.append(bucket.pop(0))
    return out


def small_layers() -> Callable[[], Sequence[Layer]] | None:
    """``minloop.small.small_model_layers``, when it can be imported."""
    try:
        from minloop.small import small_model_layers  # type: ignore[import-not-found]
    except ImportError:
        return None
    return small_model_layers  # type: ignore[no-any-return]


class Watched(OpenAIModel):
    """``OpenAIModel`` that keeps the length of every reply and why any was stopped."""

    replies: list[tuple[int, str | None]]

    async def call(self, request: ModelRequest) -> ModelResponse:
        response = await super().call(request)
        self.replies.append((response.usage.completion_tokens, response.stopped))
        return response


def serve(model: str) -> tuple[str, subprocess.Popen[str]]:
    from minloop.models.local.gguf import ensure_gguf

    port = free_port()
    command = [sys.executable, str(SERVER), str(ensure_gguf(model)), str(port), "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    address = process.stdout.readline().strip() if process.stdout else ""
    if not address:
        process.kill()
        raise SystemExit(f"llama.cpp's server did not start for {model}")
    return f"{address}/v1", process


def run_one(url: str, row: Request, layers: Sequence[Layer], cap: int) -> dict[str, Any]:
    group, language, prompt, facts, menu = row
    model = Watched("local", base_url=url, max_tokens=cap, timeout=600, max_retries=0)
    model.replies = []
    started = time.perf_counter()
    result = Loop(model, menu, max_steps=6, layers=layers).run_sync(prompt)
    seconds = time.perf_counter() - started
    verdict = judge(result, group, language, prompt, facts)
    served = group in ("one_call", "two_step")
    longest = max((tokens for tokens, _ in model.replies), default=0)
    if longest > cap:
        raise SystemExit(f"a reply of {longest} tokens passed the cap of {cap}")
    return {
        "group": group,
        "language": language,
        "right": verdict["right"],
        "invented": bool(verdict["invented"]),
        "over_refusal": served and not verdict["right"] and bool(DECLINE.search(result.output or "")),
        "seconds": seconds,
        "longest": longest,
        "stopped": [why for _, why in model.replies if why],
        "status": result.status,
    }


def table(rows: dict[str, list[dict[str, Any]]], cap: int) -> None:
    arms = list(rows)
    print(f"\n{'right answers':>18s}" + "".join(f"{arm:>22s}" for arm in arms))
    for group in (*GROUPS, "all"):
        for language in ("en", "zh", "both"):
            cells = []
            for arm in arms:
                got = [
                    r
                    for r in rows[arm]
                    if group in ("all", r["group"]) and language in ("both", r["language"])
                ]
                cells.append(f"{sum(r['right'] for r in got)}/{len(got)}" if got else "-")
            if any(c != "-" for c in cells):
                print(f"{group:>13s} {language:>4s}" + "".join(f"{c:>22s}" for c in cells))

    def line(label: str, value: Callable[[list[dict[str, Any]]], str]) -> None:
        print(f"{label:>18s}" + "".join(f"{value(rows[arm]) if rows[arm] else '-':>22s}" for arm in arms))

    line("over-refusals", lambda rs: f"{sum(r['over_refusal'] for r in rs)}/{len(rs)}")
    line("invented numbers", lambda rs: f"{sum(r['invented'] for r in rs)}/{len(rs)}")
    line("median s", lambda rs: f"{statistics.median(r['seconds'] for r in rs):.1f}")
    line(f"longest (cap {cap})", lambda rs: str(max(r["longest"] for r in rs)))
    line("stopped: repeat", lambda rs: str(sum(r["stopped"].count("repeated") for r in rs)))
    line("stopped: cap", lambda rs: str(sum(r["stopped"].count("length") for r in rs)))
    line("no answer", lambda rs: str(sum(r["status"] != "success" for r in rs)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--set", default="agent-test", choices=["agent-test", "agent-dev", "user", "other"])
    parser.add_argument("--limit", type=int, default=24)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--seconds", type=float, help="start no request after this many seconds")
    args = parser.parse_args()
    chosen = spread(requests(args.set), args.limit)
    layers = small_layers()
    arms: dict[str, Callable[[], Sequence[Layer]] | None] = {"plain": lambda: [], "layers": layers}
    print(f"{args.model} behind llama.cpp's server; set {args.set}: {len(chosen)} requests "
          f"({sum(r[1] == 'zh' for r in chosen)} Chinese); reply cap {args.max_tokens} tokens")  # fmt: skip
    if layers is None:
        print("layers: minloop.small.small_model_layers cannot be imported here; that column is not run")
    url, process = serve(args.model)
    rows: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
    deadline = time.monotonic() + args.seconds if args.seconds else None
    try:
        live = [arm for arm, make in arms.items() if make is not None]
        for index, row in enumerate(chosen):
            if deadline is not None and time.monotonic() > deadline:
                print(f"--seconds {args.seconds:g} passed: {index} of {len(chosen)} requests run")
                break
            for arm in live[index % len(live) :] + live[: index % len(live)]:
                make = arms[arm]
                assert make is not None
                rows[arm].append(one := run_one(url, row, make(), args.max_tokens))
                print(f"{index:3d} {arm:7s} {row[1]} {row[0]:12s} right={one['right']!s:5s} "
                      f"{one['seconds']:6.1f}s longest={one['longest']}", flush=True)  # fmt: skip
    except KeyboardInterrupt:
        print("interrupted: the requests run so far")
    finally:
        process.kill()
        process.wait(10)
    table(rows, args.max_tokens)


if __name__ == "__main__":
    main()
