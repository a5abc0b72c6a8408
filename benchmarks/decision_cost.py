"""Where an embedded-model decision's time goes, and what two ways to shorten it would give.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/decision_cost.py [--items 12] [--speculative]

1. Tool definitions: prompt tokens per tool as the model's chat template renders them (the
   built-in tools and BFCL functions from the non-live categories), against the same JSON
   without the spaces after separators, and without the keys that say nothing (the root
   ``"type": "object"``, ``"additionalProperties": false``, an empty ``"required"``).
2. Time: ``--items`` simple_python and as many multiple requests, each decided once with its
   own functions (temperature 0, one after the other as a serving process would), split into
   prompt evaluation and generation from the runtime's own timings. With ``--speculative``,
   the same requests again with llama.cpp's speculative decoding: drafted from the prompt
   (``ngram-simple``, ``ngram-mod``), and drafted by the bundled 0.5B model for the 1.5B
   (``draft-0.5b``; the two share a tokenizer): drafted and accepted tokens, generation time,
   same replies.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
from typing import Any

import xllamacpp

from minloop.builtins import default_tools
from minloop.evals.bfcl import load_items, tool_spec
from minloop.models.base import ModelRequest
from minloop.models.local import LocalModel, runtime
from minloop.models.local.gguf import ensure_gguf

SPECULATIVE = {"ngram-simple": "NGRAM_SIMPLE", "ngram-mod": "NGRAM_MOD", "draft-0.5b": "DRAFT_SIMPLE"}
DRAFT_MODEL = "qwen2.5-coder-0.5b"


def bare(spec: dict[str, Any]) -> dict[str, Any]:
    fn = spec["function"]
    params = dict(fn.get("parameters") or {})
    for key, empty in (("type", "object"), ("additionalProperties", False), ("required", [])):
        if params.get(key) == empty:
            params.pop(key)
    return {**spec, "function": {**fn, "parameters": params}}


def tool_tokens(model: LocalModel, server: Any) -> None:
    specs = [t.spec() for t in default_tools()]
    for category in ("simple_python", "multiple", "irrelevance"):
        functions = [f for item in load_items(category, 20, spread=True) for f in item.functions]
        specs += [tool_spec(f) for f in functions[:20]]
    user = [{"role": "user", "content": "hi"}]

    def tokens(text: str) -> int:
        return len(runtime.post(server, "/tokenize", {"content": text, "parse_special": True})["tokens"])

    one = model.count_tokens(user, specs[:1])
    rendered = [model.count_tokens(user, [specs[0], s]) - one for s in specs]
    spaced = [tokens(json.dumps(s, ensure_ascii=False)) for s in specs]
    tight = [tokens(json.dumps(s, ensure_ascii=False, separators=(",", ":"))) for s in specs]
    plain = [tokens(json.dumps(bare(s), ensure_ascii=False)) for s in specs]
    print(f"{len(specs)} tools: {statistics.mean(rendered):.1f} prompt tokens per tool in the template")
    print(f"  JSON without spaces after separators: {1 - sum(tight) / sum(spaced):.1%} fewer tokens")
    print(f"  JSON without the keys that say nothing: {1 - sum(plain) / sum(spaced):.1%} fewer tokens")


def decide(server: Any, bodies: list[dict[str, Any]]) -> tuple[dict[str, float], list[str]]:
    lock, total, replies = threading.Lock(), {}, []
    for body in bodies:
        reply = runtime.complete(server, lock, body)
        for key in ("prompt_ms", "predicted_ms", "predicted_n", "draft_n", "draft_n_accepted"):
            total[key] = total.get(key, 0.0) + float(reply["timings"].get(key) or 0)
        replies.append(reply["choices"][0]["message"].get("content") or "")
    return total, replies


def load(path: str, threads: int, kind: str | None) -> Any:
    """A runtime like ``LocalModel``'s, optionally with speculative decoding of one ``kind``."""
    make = xllamacpp.CommonParams

    def params() -> Any:
        p = make()
        if kind is not None:
            p.speculative.types = [
                getattr(xllamacpp.common_speculative_type, f"COMMON_SPECULATIVE_TYPE_{kind}")
            ]
            p.speculative.ngram_simple.size_n, p.speculative.ngram_simple.size_m = 3, 16
            p.speculative.ngram_mod.n_match = 3
            if kind == "DRAFT_SIMPLE":  # llama-server's defaults: up to 16 drafted, kept from p 0.75
                draft = p.speculative.draft
                draft.mparams.path = str(ensure_gguf(DRAFT_MODEL))
                draft.n_max, draft.p_min = 16, 0.75
                draft.cpuparams.n_threads = draft.cpuparams_batch.n_threads = threads
        return p

    xllamacpp.CommonParams = params
    try:
        return runtime.load(path, 4096, threads)
    finally:
        xllamacpp.CommonParams = make


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=12, help="requests per category")
    parser.add_argument("--speculative", action="store_true", help="also decide with speculative decoding")
    args = parser.parse_args()
    model = LocalModel(prefix_cache=False)
    server = model.load()
    tool_tokens(model, server)
    items = [i for c in ("simple_python", "multiple") for i in load_items(c, args.items, spread=True)]
    bodies = [
        model.body(ModelRequest(i.messages, [tool_spec(f) for f in i.functions], "auto")) for i in items
    ]
    base, replies = decide(server, bodies)
    spent = base["prompt_ms"] + base["predicted_ms"]
    print(
        f"{len(items)} decisions: prompt evaluation {base['prompt_ms'] / spent:.0%}, generation "
        f"{base['predicted_ms'] / spent:.0%} ({base['predicted_n'] / len(items):.0f} tokens per decision, "
        f"{1000 * base['predicted_n'] / base['predicted_ms']:.1f} tokens/s)"
    )
    for name, kind in SPECULATIVE.items() if args.speculative else ():
        total, theirs = decide(load(str(ensure_gguf(model.model)), model.threads, kind), bodies)
        print(
            f"  {name}: {total['draft_n_accepted'] / max(total['draft_n'], 1):.1%} of {total['draft_n']:.0f} "
            f"drafted tokens accepted, generation {total['predicted_ms'] / base['predicted_ms']:.2f}x the "
            f"time, {sum(a == b for a, b in zip(replies, theirs, strict=True))}/{len(items)} replies the same"
        )


if __name__ == "__main__":
    main()
