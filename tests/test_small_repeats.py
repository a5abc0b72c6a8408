"""A call the conversation already answered, made again by a small model, is not sent: the model
is asked again with tools off (``minloop.small.Repeats``)."""

from __future__ import annotations

from minloop import Loop, tool
from minloop.small import Repeats, small_model_layers
from minloop.testing import ScriptedModel, call, reply
from tests.conftest import content, masked


@tool
def clock() -> str:
    """Current time."""
    return "12:00"


def test_a_call_already_answered_is_not_made_again_and_the_model_answers_with_tools_off() -> None:
    model = ScriptedModel(
        [reply(None, call("clock", {}, id="c1")), reply(None, call("clock", {}, id="c2")), "It is 12:00."]
    )
    result = Loop(model, [clock], layers=[Repeats()]).run_sync("现在几点？")
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "现在几点？"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "clock", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "clock", "content": content(result="12:00")},
        {"role": "assistant", "content": "It is 12:00."},
    ]
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "none"]


def test_a_call_with_other_arguments_is_made() -> None:
    @tool
    def double(n: int) -> int:
        """Twice n."""
        return 2 * n

    model = ScriptedModel(
        [reply(None, call("double", {"n": 2})), reply(None, call("double", {"n": 3})), "4 and 6."]
    )
    result = Loop(model, [double], layers=[Repeats()]).run_sync("Double 2 and 3.")
    assert result.output == "4 and 6." and [s.decision for s in result.steps] == [
        "tool_calls",
        "tool_calls",
        "answer",
    ]
    assert any(isinstance(layer, Repeats) for layer in small_model_layers())


def test_a_call_answered_for_an_earlier_message_is_made_again() -> None:
    model = ScriptedModel(
        [
            reply(None, call("clock", {}, id="c1")),
            "It is 12:00.",
            reply(None, call("clock", {}, id="c2")),
            "Still 12:00.",
        ]
    )
    loop = Loop(model, [clock], layers=[Repeats()])
    first = loop.run_sync("What time is it?")
    second = loop.run_sync([*first.messages, {"role": "user", "content": "And now?"}])
    assert masked(second.messages[4:], second.trace_id) == [
        {"role": "user", "content": "And now?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "clock", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "name": "clock", "content": content(result="12:00")},
        {"role": "assistant", "content": "Still 12:00."},
    ]
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "auto", "auto"]
