"""BFCL evaluation: doc -> spec conversion, scoring with BFCL's own checker, a tiny end-to-end run."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from minloop.evals.bfcl import (
    CATEGORIES,
    json_schema,
    load_checker,
    load_items,
    placeholder_tool,
    score,
    tool_spec,
)
from minloop.exceptions import MinloopError
from minloop.models.base import ModelRequest
from minloop.testing import FunctionModel, call, reply
from minloop.tools import ContractViolation

DOC = {
    "name": "geo.route",
    "description": "Plan a route.",
    "parameters": {
        "type": "dict",
        "properties": {
            "stops": {
                "type": "array",
                "items": {"type": "tuple", "items": {"type": "float"}},
                "description": "Points.",
            },
            "options": {
                "type": "dict",
                "properties": {"avoid": {"type": "string", "enum": ["tolls", "ferries"]}},
                "required": ["avoid"],
                "description": "Options.",
            },
            "extra": {"type": "any", "description": "Anything.", "optional": True},
            "speed": {"type": "float", "description": "Km/h.", "default": 50.0},
            "fast": {"type": "boolean", "description": "Hurry."},
        },
        "required": ["stops", "fast"],
    },
}


def test_bfcl_types_become_json_schema() -> None:
    assert tool_spec(DOC) == {
        "type": "function",
        "function": {
            "name": "geo_route",
            "description": "Plan a route. Note that the provided function is in Python 3 syntax.",
            "parameters": {
                "type": "object",
                "properties": {
                    "stops": {
                        "type": "array",
                        "description": "Points.",
                        "items": {
                            "type": "array",
                            "items": {
                                "type": "number",
                                "format": "float",
                                "description": " This is a float type value.",
                            },
                        },
                    },
                    "options": {
                        "type": "object",
                        "description": "Options.",
                        "required": ["avoid"],
                        "properties": {"avoid": {"type": "string", "enum": ["tolls", "ferries"]}},
                    },
                    "extra": {"type": "string", "description": "Anything."},
                    "speed": {
                        "type": "number",
                        "format": "float",
                        "default": 50.0,
                        "description": "Km/h. This is a float type value.",
                    },
                    "fast": {"type": "boolean", "description": "Hurry."},
                },
                "required": ["stops", "fast"],
            },
        },
    }
    assert json_schema({"description": "no type"}) == {"description": "no type", "type": "string"}


def test_a_placeholder_tool_sends_the_spec_and_validates_strictly() -> None:
    t = placeholder_tool(DOC)
    assert t.spec() == tool_spec(DOC)
    good = {"stops": [[1, 2.5]], "fast": True, "options": {"avoid": "tolls"}}
    assert t.check_args(good) == good
    for bad in (
        {"stops": [[1, 2]]},
        {"stops": "[[1, 2]]", "fast": True},
        {"stops": [], "fast": "yes"},
        {"stops": [], "fast": True, "speed": "fast"},
        {"stops": [], "fast": True, "unknown": 1},
        {"stops": [], "fast": 1},
        {"stops": [[1, "2"]], "fast": True},
        {"stops": [], "fast": True, "options": {"avoid": "x"}},
    ):
        with pytest.raises(ContractViolation):
            t.check_args(bad)


def test_multi_turn_categories_are_refused_and_held_out_ones_load() -> None:
    for category in ("multi_turn_base", "live_parallel", "memory"):
        with pytest.raises(MinloopError, match="not evaluated here"):
            load_items(category, 1)
    import bfcl_eval  # noqa: F401  (installed by scripts/setup.sh; a missing one is a failure, not a skip)

    (simple,), (irrelevant,) = load_items("live_simple", 1), load_items("live_irrelevance", 1)
    assert simple.answer and irrelevant.answer is None


@pytest.fixture(scope="module")
def check() -> Any:
    import bfcl_eval  # noqa: F401  (installed by scripts/setup.sh; a missing one is a failure, not a skip)

    return load_checker()


def test_known_predictions_are_scored_by_bfcls_checker(check: Any) -> None:
    simple, factorial = load_items("simple_python", 2)
    assert (simple.id, simple.answer) == (
        "simple_python_0",
        [{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}],
    )
    assert score(simple, [{"calculate_triangle_area": {"base": 10, "height": 5}}], check) == (True, "")
    assert score(simple, [{"calculate_triangle_area": {"base": 10, "height": 6}}], check) == (
        False,
        "Invalid value for parameter 'height': 6. Expected one of [5].",
    )
    assert score(simple, [{"calculate_triangle_area": {"base": "10", "height": 5}}], check)[0] is False
    assert score(simple, [], check) == (False, "no call")
    assert score(simple, None, check) == (False, "arguments are not a JSON object")
    assert score(factorial, [{"math.factorial": {"number": 5}}], check) == (True, "")  # BFCL's dotted name

    parallel = load_items("parallel", 1)[0]
    both = [
        {"spotify.play": {"artist": "Maroon 5", "duration": 15}},
        {"spotify.play": {"artist": "Taylor Swift", "duration": 20}},
    ]
    assert score(parallel, both, check) == (True, "")  # in any order
    assert score(parallel, both[:1], check) == (False, "Wrong number of functions.")

    irrelevant = load_items("irrelevance", 1)[0]
    assert irrelevant.answer is None
    assert score(irrelevant, [], check) == (True, "")
    assert score(irrelevant, None, check) == (True, "")  # undecodable calls are no call, as BFCL counts
    assert (
        score(irrelevant, [{"determine_body_mass_index": {"weight": 1.0, "height": 2.0}}], check)[0] is False
    )


def right_calls(answer: list[dict[str, Any]], broken: bool = False) -> list[dict[str, Any]]:
    """Wire calls from a BFCL answer (first option of each parameter); ``broken`` passes numbers as text."""
    calls = []
    for entry in answer:
        for name, params in entry.items():
            args = {p: options[0] for p, options in params.items() if options[0] != ""}
            if broken:
                args = {p: str(v) if isinstance(v, int | float) else v for p, v in args.items()}
            calls.append(call(name.replace(".", "_"), args))
    return calls


def oracle(items: list[Any], *, fix_after_feedback: bool) -> FunctionModel:
    """Answers each question right, or first with numbers as strings and right once the loop objects."""
    by_question = {item.messages[-1]["content"]: item for item in items}

    def answer(request: ModelRequest) -> Any:
        user = next(m for m in request.messages if m["role"] == "user")
        item = by_question[user["content"]]
        if item.answer is None:
            return "None of these tools applies."
        objected = any("ERR_TOOL_ARGS_INVALID" in str(m.get("content")) for m in request.messages)
        return reply(None, *right_calls(item.answer, broken=fix_after_feedback and not objected))

    return FunctionModel(answer, name="oracle")


def test_end_to_end_the_loop_and_the_raw_baseline(check: Any) -> None:
    from minloop.evals.bfcl_run import evaluate

    chosen = ["simple_python", "parallel", "irrelevance"]
    items = [i for c in chosen for i in load_items(c, 3)]
    right = asyncio.run(evaluate(oracle(items, fix_after_feedback=False), chosen, 3))
    assert [(s.category, s.items, s.correct, s.errors) for s in right.scores["loop"]] == [
        ("simple_python", 3, 3, 0),
        ("parallel", 3, 3, 0),
        ("irrelevance", 3, 3, 0),
    ]
    assert [(s.correct, s.errors) for s in right.scores["raw"]] == [(3, 0), (3, 0), (3, 0)]

    # Numbers sent as text: the loop's argument check objects and the model fixes them; one raw call cannot.
    slow = asyncio.run(evaluate(oracle(items, fix_after_feedback=True), ["simple_python"], 3, max_steps=3))
    assert (slow.scores["loop"][0].correct, slow.scores["raw"][0].correct) == (3, 0)
    wrong = next(r for r in slow.rows if r["arm"] == "raw")
    assert wrong["prediction"] == [
        {"calculate_triangle_area": {"base": "10", "height": "5", "unit": "units"}}
    ]
    strict = asyncio.run(evaluate(oracle(items, fix_after_feedback=True), ["simple_python"], 3, max_steps=1))
    assert strict.scores["loop"][0].correct == 0  # max_steps=1: strictly the first round


def test_minloop_eval_bfcl_prints_both_tables(check: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from minloop.cli.app import app

    items = [i for c in CATEGORIES for i in load_items(c, 2)]
    monkeypatch.setattr(
        "minloop.cli.eval.build_model", lambda *a, **k: oracle(items, fix_after_feedback=False)
    )
    done = CliRunner().invoke(
        app, ["eval", "bfcl", "--limit", "2", "--model", "oracle", "--categories", ",".join(CATEGORIES)]
    )
    assert done.exit_code == 0, done.output
    out = done.output
    assert (
        "minloop loop (max_steps=3) · oracle" in out
        and "raw baseline (one call: no loop controls, no grounding) · oracle" in out
    )
    assert out.count("100.0%") == 12  # 5 categories + all, twice


def test_a_spread_sample_spaces_items_over_the_whole_category() -> None:
    whole = [i.id for i in load_items("irrelevance")]
    spread = [i.id for i in load_items("irrelevance", 4, spread=True)]
    step = len(whole) / 4
    assert spread == [whole[int(k * step)] for k in range(4)] and spread[0] == whole[0]
    assert [i.id for i in load_items("irrelevance", 4)] == whole[:4]
    assert [i.id for i in load_items("irrelevance", len(whole) + 5, spread=True)] == whole
    answers = load_items("simple_python", 3, spread=True)
    assert all(item.answer for item in answers)  # each item keeps its own possible answer


def test_minloop_eval_bfcl_spread_without_the_raw_arm(check: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from minloop.cli.app import app

    items = load_items("simple_python", 3, spread=True)
    monkeypatch.setattr(
        "minloop.cli.eval.build_model", lambda *a, **k: oracle(items, fix_after_feedback=False)
    )
    args = ["eval", "bfcl", "--limit", "3", "--spread", "--no-raw", "--categories", "simple_python"]
    done = CliRunner().invoke(app, [*args, "--model", "oracle"])
    assert done.exit_code == 0, done.output
    assert "minloop loop (max_steps=3) · oracle" in done.output and "raw baseline" not in done.output
    assert done.output.count("100.0%") == 2  # simple_python and all, loop arm only


def test_calls_written_as_text_are_scored_unless_text_calls_are_off(check: Any) -> None:
    from minloop.evals.bfcl_run import evaluate

    items = load_items("simple_python", 2)
    right = oracle(items, fix_after_feedback=False)

    async def as_text(request: ModelRequest) -> Any:  # the calls of the right reply, written as text
        message = (await right.call(request)).message
        calls = [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                 for c in message["tool_calls"]]  # fmt: skip
        return "```json\n" + json.dumps(calls[0] if len(calls) == 1 else calls) + "\n```"

    model = FunctionModel(as_text, name="as-text")
    read = asyncio.run(evaluate(model, ["simple_python"], 2, arms=("loop",)))
    unread = asyncio.run(evaluate(model, ["simple_python"], 2, arms=("loop",), text_calls=False))
    assert (read.scores["loop"][0].correct, unread.scores["loop"][0].correct) == (2, 0)
