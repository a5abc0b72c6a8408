"""The fault matrix: every fault minloop must survive, where it is injected, and what the run reached.

    .venv/bin/python benchmarks/fault_matrix.py

Rows come from ``minloop.testing.matrix.fault_matrix()`` (the same definition
``tests/test_fault_matrix.py`` asserts). Each run gets ``max_steps`` and a wall ``time_budget``;
"valid" means ``check_transcript`` accepts ``RunResult.messages``. Exit code 1 if any row
missed its expected status or step count, broke its transcript or overran the budget.
"""

from __future__ import annotations

import re
import sys

from minloop.testing.matrix import MATRIX_BUDGET, MATRIX_MAX_STEPS, FaultOutcome, run_fault_matrix

COLUMNS = (
    "fault",
    "where injected",
    "status reached",
    "steps used",
    "transcript valid",
    "seconds",
    "what the model read / why it stopped",
    "ok",
)


def row(o: FaultOutcome) -> tuple[str, ...]:
    return (
        o.case.fault,
        o.case.where,
        o.status,
        str(o.steps),
        "yes" if o.valid else "NO",
        f"{o.seconds:.2f}",
        detail(o),
        "yes" if o.ok else f"NO (expected {o.case.status}, {o.case.steps} steps)",
    )


def detail(o: FaultOutcome) -> str:
    text = ", ".join(o.codes) or re.sub(r"https?://\S+", "<url>", o.error or "-")
    return text if len(text) <= 60 else text[:57] + "..."


def table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in [COLUMNS, *rows]) for i in range(len(COLUMNS))]
    lines = [COLUMNS, tuple("-" * w for w in widths), *rows]
    return "\n".join("| " + " | ".join(c.ljust(w) for c, w in zip(line, widths)) + " |" for line in lines)


def main() -> int:
    outcomes = run_fault_matrix()
    print(f"fault matrix: max_steps={MATRIX_MAX_STEPS}, time_budget={MATRIX_BUDGET}s per run\n")
    print(table([row(o) for o in outcomes]))
    failed = [o for o in outcomes if not o.ok]
    statuses = sorted({o.status for o in outcomes})
    print(
        f"\n{len(outcomes)} rows, {len(outcomes) - len(failed)} ok; statuses reached: {', '.join(statuses)}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
