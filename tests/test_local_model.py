"""The embedded model: GGUF assembly, constrained decisions, and real runs at temperature 0."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from minloop import Loop, MissingDependencyError, ModelLoadError, ModelRequest
from minloop.builtins import calculator, current_time, default_tools
from minloop.models.local import LocalModel, gguf
from minloop.models.local.decoding import ANSWER, decision_schema, parse_decision
from minloop.small.notes import ungrounded_note


def test_assembly_verifies_the_hash_and_skips_it_next_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = [tmp_path / f"part{i}.bin" for i in range(3)]
    for i, p in enumerate(parts):
        p.write_bytes(bytes([i]) * 1000)
    whole = b"".join(p.read_bytes() for p in parts)
    spec = gguf.GGUFSpec("tiny", ("a", "b", "c"), len(whole), hashlib.sha256(whole).hexdigest(), "local")
    monkeypatch.setitem(gguf.KNOWN_MODELS, "tiny", spec)
    calls = []
    monkeypatch.setattr(gguf, "_part_files", lambda s: calls.append(s) or parts)
    path = gguf.ensure_gguf("tiny", tmp_path / "cache")
    assert path.read_bytes() == whole
    assert gguf.ensure_gguf("tiny", tmp_path / "cache") == path and len(calls) == 1  # verified once

    parts[1].write_bytes(b"corrupt")
    path.unlink()
    with pytest.raises(ModelLoadError, match="reinstall the part packages"):
        gguf.ensure_gguf("tiny", tmp_path / "cache")
    assert not path.exists() and list((tmp_path / "cache").glob("*.tmp*")) == []


def test_missing_parts_and_runtime_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    spec = gguf.GGUFSpec("ghost", ("no-such-dist-minloop",), 1, "0" * 64, "local")
    monkeypatch.setitem(gguf.KNOWN_MODELS, "ghost", spec)
    with pytest.raises(MissingDependencyError, match=r"pip install 'minloop\[local\]'"):
        gguf.ensure_gguf("ghost", tmp_path)
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    fake = tmp_path / "m.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 16)
    with pytest.raises(MissingDependencyError, match=r"xllamacpp .* pip install 'minloop\[local\]'"):
        LocalModel(path=fake, threads=1).load()


def test_the_note_after_a_call_on_invented_values_is_in_the_users_language() -> None:
    missing = {"read_file": ["path"], "convert_time": ["time", "source_timezone"]}
    assert ungrounded_note(missing) == (
        "Do not call a function now: read_file needs path; convert_time needs time, source_timezone, "
        "and the conversation does not give these values. Answer the user directly and briefly. "
        "If the request needs those values, ask the user for them."
    )
    assert ungrounded_note(missing, "zh") == (
        "现在不要调用函数：read_file 需要 path；convert_time 需要 time、source_timezone，对话中没有给出这些值。"
        "请直接简短地回答用户；如果需要这些值，请向用户询问。"
    )


def test_decision_schema_follows_tool_choice() -> None:
    specs = [calculator.spec(), current_time.spec()]
    auto = decision_schema(specs, "auto")
    assert [o.get("properties", {}).get("name", {}).get("const") for o in auto["anyOf"]] == [
        "calculator",
        "current_time",
        None,
    ]
    assert auto["anyOf"][0]["properties"]["arguments"] == calculator.parameters()
    assert auto["anyOf"][-1] == ANSWER
    assert (
        "anyOf" in decision_schema(specs, "required")
        and ANSWER not in decision_schema(specs, "required")["anyOf"]
    )
    forced = decision_schema(specs, {"type": "function", "function": {"name": "current_time"}})
    assert forced["properties"]["name"] == {"const": "current_time"}
    assert decision_schema(specs, "none") == ANSWER


def test_parse_decision_fallbacks() -> None:
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_2_1",
                "type": "function",
                "function": {"name": "calculator", "arguments": '{"expression": "1+1"}'},
            }
        ],
    }
    assert parse_decision('{"name": "calculator", "arguments": {"expression": "1+1"}}', "call_2") == call
    assert (
        parse_decision(
            '<tool_call>\n{"name": "calculator", "arguments": {"expression": "1+1"}}\n</tool_call>', "call_2"
        )
        == call
    )
    assert (
        parse_decision('```json\n{"name": "calculator", "arguments": {"expression": "1+1"}}\n```', "call_2")
        == call
    )
    assert parse_decision('{"answer": "Hello!"}') == {"role": "assistant", "content": "Hello!"}
    assert parse_decision("Plain words") == {"role": "assistant", "content": "Plain words"}


def test_several_calls_in_one_decision() -> None:
    specs = [calculator.spec(), current_time.spec()]
    schema = decision_schema(specs, "auto", parallel=True)
    calls, single = schema["anyOf"][2], schema["anyOf"][0]
    assert calls["properties"]["calls"] == {
        "type": "array",
        "items": {"anyOf": schema["anyOf"][:2]},
        "minItems": 2,
    }
    assert single["properties"]["name"] == {"const": "calculator"} and schema["anyOf"][-1] == ANSWER
    forced = decision_schema(specs, {"type": "function", "function": {"name": "calculator"}}, parallel=True)
    assert forced == single  # a forced function is one call
    text = '{"calls": [{"name": "calculator", "arguments": {"expression": "2*3"}}, {"name": "current_time", "arguments": {}}]}'
    assert parse_decision(text, "call_1") == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1_1",
                "type": "function",
                "function": {"name": "calculator", "arguments": '{"expression": "2*3"}'},
            },
            {"id": "call_1_2", "type": "function", "function": {"name": "current_time", "arguments": "{}"}},
        ],
    }


BROKEN_CALL = [
    {"role": "user", "content": "What is 2 * 3?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1_0", "type": "function", "function": {"name": "calculator", "arguments": '{"ex'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1_0", "content": '{"code": "ERR_TOOL_ARGS_INVALID"}'},
]


def test_a_call_cut_off_mid_arguments_reaches_the_runtime_as_json() -> None:
    body = LocalModel(constrain=False).body(ModelRequest(BROKEN_CALL, [calculator.spec()]))
    (call,) = body["messages"][1]["tool_calls"]
    assert call["function"]["arguments"] == '"{\\"ex"' and json.loads(call["function"]["arguments"]) == '{"ex'
    assert body["messages"][0] == BROKEN_CALL[0] and body["messages"][2] == BROKEN_CALL[2]
    assert BROKEN_CALL[1]["tool_calls"][0]["function"]["arguments"] == '{"ex'  # the request is unchanged


# -- real runs on the bundled model (temperature 0) ------------------------------------------


@pytest.mark.local_model
@pytest.mark.parametrize(
    ("prompt", "expected_tool"),
    [
        ("What is 1234 * 5678? Use the calculator.", "calculator"),
        ("What is the current time in the Asia/Tokyo time zone?", "current_time"),
        ("How many Python files are in this folder?", "list_files"),
    ],
)
def test_embedded_model_picks_the_tool_and_finishes(
    local: LocalModel, prompt: str, expected_tool: str
) -> None:
    root = Path(__file__).resolve().parents[1]
    result = Loop(local, default_tools(root), max_steps=4).run_sync(prompt)
    assert result.status == "success", result.to_dict()
    assert result.steps[0].tool_calls[0].name == expected_tool
    assert result.steps[0].results[0].error is None


@pytest.mark.local_model
def test_the_quickstart_question_is_answered_from_the_listing(local: LocalModel, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for name, size in (("src/app.py", 900), ("src/util.py", 300), ("setup.py", 120), ("notes.md", 5000)):
        (tmp_path / name).write_text("#" * size)
    prompt = "How many Python files are in this folder and which is the largest?"
    result = Loop(local, default_tools(tmp_path), max_steps=4).run_sync(prompt)
    assert result.status == "success", result.to_dict()
    assert [c.name for c in result.steps[0].tool_calls] == ["list_files"]
    answer = result.output or ""
    assert "3" in answer and "app.py" in answer and "notes.md" not in answer, answer


@pytest.mark.local_model
@pytest.mark.parametrize(
    "prompt",
    [
        "How many Python files are in this folder and which is the largest?",
        "这个文件夹里有多少个 Python 文件？哪个最大？",
        "Which Python file here is the biggest, and how many are there?",  # declined before insisting
    ],
)
def test_the_largest_file_is_told_when_the_next_one_is_close(
    local: LocalModel, tmp_path: Path, prompt: str
) -> None:
    sizes = {
        "pkg/models/local/engine.py": 22702,
        "benchmarks/overhead.py": 22682,
        "tests/test_evidence.py": 19739,
    }
    sizes |= {f"pkg/part{n}.py": 9000 - 500 * n for n in range(12)}
    for name, size in sizes.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("#" * size)
    result = Loop(local, default_tools(tmp_path), max_steps=4).run_sync(prompt)
    assert result.status == "success", result.to_dict()
    answer = result.output or ""
    assert "engine.py" in answer and "overhead.py" not in answer, answer


@pytest.mark.local_model
def test_later_steps_reuse_the_kv_cache(local: LocalModel) -> None:
    result = Loop(local, [calculator], max_steps=3).run_sync("Compute 99 * 101 with the calculator.")
    assert result.status == "success"
    second = result.steps[1].usage
    assert second.evaluated_tokens is not None and second.evaluated_tokens < second.prompt_tokens / 2


@pytest.mark.local_model
def test_the_model_is_called_again_after_a_call_cut_off_mid_arguments(local: LocalModel) -> None:
    import asyncio

    response = asyncio.run(local.call(ModelRequest(BROKEN_CALL, [calculator.spec()], "auto")))
    assert response.message["role"] == "assistant"


@pytest.mark.local_model
def test_tools_off_gives_a_plain_answer(local: LocalModel) -> None:
    import asyncio

    response = asyncio.run(
        local.call(ModelRequest([{"role": "user", "content": "Say hello."}], [calculator.spec()], "none"))
    )
    assert isinstance(response.message["content"], str) and response.message["content"]
    assert "tool_calls" not in response.message


@pytest.mark.local_model
def test_a_call_on_invented_values_is_not_made(local: LocalModel) -> None:
    from minloop import tool

    @tool
    def calculate_bmi(weight: float, height: float) -> dict[str, float]:
        """Calculate the body mass index from weight in kilograms and height in meters."""
        return {"bmi": weight / height**2}

    def ask(prompt: str, model: LocalModel) -> list:
        return Loop(model, [calculate_bmi], max_steps=1).run_sync(prompt).steps[0].tool_calls

    unrelated = "How many calories does an apple have?"
    (invented,) = ask(unrelated, local.plain())  # the bare model calls anyway, on made-up numbers
    assert invented.name == "calculate_bmi"
    assert ask(unrelated, local) == ()  # with its layers: no call, an answer
    (given,) = ask("My weight is 70 kg and my height is 1.75 m. What is my BMI?", local)
    assert json.loads(given.arguments) == {"weight": 70, "height": 1.75}


@pytest.mark.local_model
def test_a_call_cut_off_by_the_token_limit_is_not_made() -> None:
    import asyncio

    request = ModelRequest([{"role": "user", "content": "What is 1234 * 5678?"}], [calculator.spec()], "auto")
    short = LocalModel(max_tokens=12)  # the call's JSON needs ~20 tokens: its arguments are cut off
    assert "tool_calls" in asyncio.run(short.plain().call(request)).message  # the bare model makes it anyway
    step = Loop(short, [calculator], max_steps=1).run_sync("What is 1234 * 5678?").steps[0]
    assert step.tool_calls == () and isinstance(step.message["content"], str)  # with its layers: not made


@pytest.mark.local_model
def test_a_tool_whose_parameters_are_one_of_two_shapes_is_called_with_the_shared_ones_too(
    local: LocalModel,
) -> None:
    from minloop.tools import tool_from_schema

    params = {
        "type": "object",
        "properties": {"kind": {"type": "string", "enum": ["book", "film"]}},
        "required": ["kind"],
        "anyOf": [
            {"properties": {"item_id": {"type": "integer"}}, "required": ["item_id"]},
            {"properties": {"title": {"type": "string"}}, "required": ["title"]},
        ],
    }
    seen: list[dict[str, object]] = []
    find = tool_from_schema("find_item", "Find a book or a film by its id or its title.", params,
                            lambda **args: seen.append(args) or {"year": 1937})  # fmt: skip
    result = Loop(local, [find], max_steps=1).run_sync("When was the book with id 4411 published?")
    assert [json.loads(c.arguments) for c in result.steps[0].tool_calls] == [
        {"kind": "book", "item_id": 4411}
    ]
    assert seen == [{"kind": "book", "item_id": 4411}]  # before, the grammar left out "kind": refused
