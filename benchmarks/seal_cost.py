"""What writing one large tool result costs: redacting all of it, then capping (the old order),
against ``seal`` (cut long strings, redact what is left, cap), side by side in one run.

Three results: one long string, many small rows, and a small result for scale. Each side is
timed best of ``--repeats``; both produce a tool message of at most 16,000 characters.

    .venv/bin/python benchmarks/seal_cost.py [--mb 5] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from minloop.envelope import result_body, seal, to_json
from minloop.redact import Redactor

CAP = 16_000
TID = "trc_000000000000_000000"


def redact_then_cap(body: dict[str, Any], redact: Redactor) -> str:
    """The order before ``seal``: the whole JSON text is redacted, then cut to the cap."""
    text = redact(to_json(body))
    if len(text) <= CAP:
        return text
    return to_json(
        {"result_truncated": True, "original_chars": len(text), "head": text[:CAP], "trace_id": TID}
    )


def best(fn: Callable[[], str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0, help="size of the large results in MB")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    chars = int(args.mb * 1_000_000)
    rows = chars // 60
    payloads = {
        f"one {args.mb:g} MB string": {"log": "word " * (chars // 5), "token_count": 3},
        f"{rows:,} rows (~{args.mb:g} MB)": {
            "rows": [{"id": i, "name": f"item {i}", "note": "x" * 20} for i in range(rows)]
        },
        "small (200 chars)": {"city": "Oslo", "note": "mild " * 36},
    }
    redact = Redactor()
    print(f"{'result':<28} {'redact, then cap':>18} {'seal':>10} {'ratio':>8}")
    for name, payload in payloads.items():
        body = result_body(payload, TID)
        old = best(lambda body=body: redact_then_cap(body, redact), args.repeats)  # type: ignore[misc]
        new = best(lambda body=body: seal(body, CAP, redact, TID), args.repeats)  # type: ignore[misc]
        assert len(seal(body, CAP, redact, TID)) <= CAP
        print(f"{name:<28} {old * 1000:>15.2f} ms {new * 1000:>7.2f} ms {old / new:>7.1f}x")
    print(f"(the long string's JSON is {len(json.dumps(payloads[next(iter(payloads))])):,} characters)")


if __name__ == "__main__":
    main()
