"""A call a small model makes again and again: the loop runs it twice at most (``repeat_limit``),
and the statement that replaces an unsupported answer tells its result once, not the refusal."""

from __future__ import annotations

from minloop import Loop, tool
from minloop.small import EvidenceCheck
from minloop.testing import ScriptedModel, call, reply
from tests.conftest import content, masked, repeated


@tool
def clock() -> str:
    """Current time."""
    return "12:00"


def _clock(n: int) -> dict[str, object]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": f"c{n}", "type": "function", "function": {"name": "clock", "arguments": "{}"}}],
    }


def test_a_call_made_a_third_time_is_refused_and_its_result_is_told_once() -> None:
    clocks = [reply(None, call("clock", {}, id=f"c{n}")) for n in (1, 2, 3)]
    model = ScriptedModel([*clocks, "巴黎晴，22°C。", "晴，22°C。"])
    result = Loop(model, [clock], layers=[EvidenceCheck()]).run_sync("巴黎现在天气怎么样？")
    statement = "我无法根据工具返回的结果可靠地回答这个问题：clock 只给出了 12:00，没有你问的内容。"
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "巴黎现在天气怎么样？"},
        _clock(1),
        {"role": "tool", "tool_call_id": "c1", "name": "clock", "content": content(result="12:00")},
        _clock(2),
        {"role": "tool", "tool_call_id": "c2", "name": "clock", "content": content(result="12:00")},
        _clock(3),
        {"role": "tool", "tool_call_id": "c3", "name": "clock", "content": repeated("clock")},
        {"role": "assistant", "content": "巴黎晴，22°C。"},
        {"role": "assistant", "content": statement},
    ]
    assert [s.decision for s in result.steps] == ["tool_calls"] * 3 + ["unfinished", "answer"]
    assert [r.tool_choice for r in model.requests][3:] == ["none", "none"]
