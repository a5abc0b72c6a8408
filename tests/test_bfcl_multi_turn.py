"""The BFCL multi-turn harness (``benchmarks/bfcl_multi_turn.py``) without a model: the call
strings, the shape given to BFCL's checker, and the ground truth scored valid by that checker,
given as calls and played through the loop."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bfcl_multi_turn as harness  # noqa: E402

from minloop.testing import ScriptedModel, call, reply  # noqa: E402


@pytest.fixture(scope="module")
def entries() -> list[dict[str, Any]]:
    return harness.load(4)


def test_a_call_is_spelled_as_bfcls_decoder_spells_it() -> None:
    assert harness.call_string("cd", {"folder": "document"}) == "cd(folder='document')"
    assert harness.call_string("ls", {}) == "ls()"
    assert (
        harness.call_string(
            "post_tweet", {"content": "预算 'ok'", "tags": ["#a"], "mentions": None, "n": 1.5, "x": True}
        )
        == "post_tweet(content=\"预算 'ok'\",tags=['#a'],mentions=None,n=1.5,x=True)"
    )


def test_an_item_has_its_classes_functions_less_the_excluded_ones(entries: list[dict[str, Any]]) -> None:
    first = entries[0]
    assert [e["id"] for e in entries] == [f"multi_turn_base_{i}" for i in range(4)]
    assert first["involved_classes"] == ["TwitterAPI", "GorillaFileSystem"]
    assert first["excluded_function"] == ["cp"]
    names = [f["name"] for f in first["function"]]
    assert "cp" not in names and {"cd", "mv", "grep", "post_tweet"} <= set(names) and len(names) == 31
    assert first["ground_truth"][0] == ["cd(folder='document')", "mkdir(dir_name='temp')", "mv(source='final_report.pdf', destination='temp')"]  # fmt: skip


def test_the_ground_truth_given_as_the_models_calls_is_valid_twice(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        calls = [[[c] for c in turn] for turn in entry["ground_truth"]]  # one call per step
        assert harness.check(entry, calls, "replay") == {"valid": True}
        assert harness.check(entry, calls, "replay") == {"valid": True}  # fresh instances each time
        whole = [[turn] for turn in entry["ground_truth"]]  # all of a turn's calls in one step
        assert harness.check(entry, whole, "replay") == {"valid": True}


def test_wrong_or_missing_calls_are_invalid_by_bfcls_checker(entries: list[dict[str, Any]]) -> None:
    first = entries[0]
    calls = [[[c] for c in turn] for turn in first["ground_truth"]]
    wrong = [[["mkdir(dir_name='junk')"]], *calls[1:]]
    assert harness.check(first, wrong, "replay")["error_type"] == "multi_turn:instance_state_mismatch"
    assert harness.check(first, calls, "replay") == {"valid": True}  # the wrong run left nothing behind
    silent = [*calls[:2], [], calls[3]]
    verdict = harness.check(first, silent, "replay")
    assert verdict["error_type"] == "multi_turn:empty_turn_model_response"
    with pytest.raises(ValueError, match="3 turns of calls for 4 turns"):
        harness.check(first, calls[:3], "replay")


def test_the_ground_truth_played_through_the_loop_is_valid(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        turns = harness.ground_truth_calls(entry)
        script = [step for turn in turns for step in [*(reply(None, call(c["name"], c["arguments"])) for c in turn), "Done."]]  # fmt: skip
        model = ScriptedModel(script)
        row = harness.run_item(entry, model, "replay")
        assert len(model.requests) == len(script)
        assert row["calls"] == [
            [[harness.call_string(c["name"], c["arguments"])] for c in turn] for turn in turns
        ]
        assert (row["id"], row["valid"], row["error_type"], row["ends"]) == (entry["id"], True, "", ["success"] * len(turns))  # fmt: skip


def test_one_conversation_goes_on_across_the_turns(entries: list[dict[str, Any]]) -> None:
    entry = entries[3]  # two turns: one call, then four
    turns = harness.ground_truth_calls(entry)
    script = [step for turn in turns for step in [*(reply(None, call(c["name"], c["arguments"])) for c in turn), "Done."]]  # fmt: skip
    model = ScriptedModel(script)
    row = harness.run_item(entry, model, "replay")
    transcript = row["transcript"]
    assert [m["role"] for m in transcript] == ["user", "assistant", "tool", "assistant", "user"] + ["assistant", "tool"] * 4 + ["assistant"]  # fmt: skip
    assert [m["content"] for m in transcript if m["role"] == "user"] == [
        t[0]["content"] for t in entry["question"]
    ]
    second = model.requests[2].messages  # the first step of the second turn sees the whole first turn
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "assistant", "user"]
    assert row["calls"][0] == [["find(path='.',name='test')"]]
    # the file system's own answers
    assert '"./projects/photography/test_image1.jpg"' in transcript[2]["content"]
    assert "copied to 'backup_tests/test_image1.jpg'" in transcript[10]["content"]
