"""Every Python example in the README runs, and so does examples/contracts.py."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from .conftest import content, masked

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), {"__name__": "__readme__"})


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 3


CONTRACTS_TRANSCRIPT = [
    {"role": "user", "content": "Weather in Beijing, Atlantis and Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'},
            },
            {
                "id": "call_1_2",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Atlantis"}'},
            },
            {
                "id": "call_1_3",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "call_1_4",
                "type": "function",
                "function": {"name": "calculate_stock_price", "arguments": '{"ticker": "ACME"}'},
            },
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1_1",
        "name": "get_weather",
        "content": content(city="Beijing", condition="Sunny", temperature=25),
    },
    {
        "role": "tool",
        "tool_call_id": "call_1_2",
        "name": "get_weather",
        "content": content(
            error="tool did not finish within 0.3s", code="ERR_TOOL_TIMEOUT", tool="get_weather"
        ),
    },
    {
        "role": "tool",
        "tool_call_id": "call_1_3",
        "name": "get_weather",
        "content": content(
            error="tool returned data that does not match Weather",
            code="ERR_TOOL_SCHEMA_MISMATCH",
            tool="get_weather",
            problems=[{"loc": "temperature", "msg": "Field required"}],
        ),
    },
    {
        "role": "tool",
        "tool_call_id": "call_1_4",
        "name": "calculate_stock_price",
        "content": content(
            error="unrecognized tool name 'calculate_stock_price', turned into a clarification request",
            code="ERR_TOOL_UNKNOWN",
            tool="calculate_stock_price",
            available_tools=["add", "get_weather"],
            clarification={
                "question": "I can't use a tool called 'calculate_stock_price'. Could you rephrase what you "
                "need? I can use: add, get_weather.",
                "next": "ask the user this question in your answer",
            },
        ),
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_2_1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 25, "b": 3}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_2_1", "name": "add", "content": content(result=28)},
    {
        "role": "assistant",
        "content": "Beijing is sunny at 25 C, and 25 + 3 = 28. The Atlantis lookup timed out, "
        "Paris returned malformed data, and I have no stock-price tool.",
    },
]


def test_contracts_example_ends_in_success_with_the_full_transcript(
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace = runpy.run_path(str(ROOT / "examples" / "contracts.py"))
    result = namespace["result"]
    assert result.status == "success"
    assert masked(result.messages, result.trace_id) == CONTRACTS_TRANSCRIPT
    assert "success" in capsys.readouterr().out
