"""The fault matrix beyond S20: every fault ends in a defined status within max_steps and the
wall budget, with a transcript ``check_transcript`` accepts. ``benchmarks/fault_matrix.py``
prints the same rows (both use ``minloop.testing.matrix.fault_matrix()``)."""

from __future__ import annotations

import asyncio
from typing import get_args

import pytest

from minloop import Status
from minloop.testing.matrix import MATRIX_MAX_STEPS, FaultCase, fault_matrix, run_fault_case

CASES = fault_matrix()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.where}: {c.fault}" for c in CASES])
def test_fault_ends_in_its_defined_status_with_a_valid_transcript(case: FaultCase) -> None:
    outcome = asyncio.run(run_fault_case(case))
    assert (outcome.status, outcome.steps, outcome.valid, outcome.within_budget) == (
        case.status,
        case.steps,
        True,
        True,
    ), outcome.error
    assert outcome.ok


def test_matrix_covers_every_place_and_every_failure_status() -> None:
    assert len({(c.where, c.fault) for c in CASES}) == len(CASES)
    assert {c.where for c in CASES} == {"tool", "model", "http", "caller"}
    reached = {c.status for c in CASES}
    assert reached <= set(get_args(Status))
    assert reached == {"success", "max_steps_exceeded", "model_error", "timeout", "cancelled"}
    assert all(0 <= c.steps <= MATRIX_MAX_STEPS for c in CASES)
