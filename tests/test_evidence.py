"""The evidence check: facts in a final answer come from the user or a tool, or are not passed."""

from __future__ import annotations

import json

from minloop import Controls, Loop, tool
from minloop.builtins import calculator
from minloop.decision import Replacement
from minloop.small.evidence import AnswerWatch, EvidenceCheck, declines, unsupported
from minloop.small.values import Evidence
from minloop.testing import ScriptedModel, call, reply

from .conftest import TID, content, conversation, masked


@tool
def current_time() -> dict[str, str]:
    """Get the current date and time in Beijing (a fixed clock: no number of the test answers in it)."""
    return {"timezone": "Asia/Shanghai", "datetime": "2026-11-30T09:15:00+08:00", "weekday": "Monday"}


TOKYO = {
    "timezone": "Asia/Tokyo",
    "datetime": "2026-12-01T15:04:05+09:00",
    "weekday": "Tuesday",
    "utc_offset": "+0900",
}
TOKYO_VALUES = "timezone Asia/Tokyo, datetime 2026-12-01T15:04:05+09:00, weekday Tuesday, utc offset +0900"
TOKYO_SAID = {  # what the plain statement says the clock gave, in words
    "en": f"current_time gave {TOKYO_VALUES}, not what you asked for",
    "zh": f"current_time 只给出了 {TOKYO_VALUES}，没有你问的内容",
}
ASKED = [
    {"role": "user", "content": "现在东京几点了？"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "current_time", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": json.dumps(TOKYO)},
]


def test_facts_are_found_in_the_user_or_tool_messages() -> None:
    seen = Evidence.of(ASKED)
    assert unsupported("东京现在是2026年12月1日下午3点04分，星期二。", seen) == []  # 3 pm is 15:04
    assert unsupported("现在是下午三点零四分。", seen) == []
    assert unsupported("The time in Tokyo is 15:04 on Tuesday, December 1, 2026.", seen) == []
    assert unsupported("东京现在是13时48分，气温22°C。", seen) == ["13时48分", "22°C"]
    assert unsupported("北京今天天气晴朗，温度约为二十五度。", seen) == ["二十五"]
    assert unsupported("It is 15:04. Joe Biden says hello.", seen) == ["Joe Biden"]
    assert unsupported("Steps:\n1. read the clock\n2. answer", seen) == []  # list markers are not facts


def test_a_time_is_matched_as_a_time_and_a_quantity_not_by_a_clock_reading() -> None:
    at = {"time": "05:02", "datetime": "2026-12-01T05:02:23+09:00", "utc_offset": "+0900"}
    seen = Evidence.of(
        [{"role": "user", "content": "现在东京几点了？"}, {"role": "tool", "content": json.dumps(at)}]
    )
    assert unsupported("东京现在是05:02。", seen) == []
    assert unsupported("It is 5:02 am in Tokyo, December 1.", seen) == []
    assert unsupported("东京现在是早上5点02分。", seen) == []
    assert unsupported("东京现在是五点零二分。", seen) == []
    assert unsupported("东京现在是15:02。", seen) == ["15:02"]  # the hour of another reading
    assert unsupported("东京现在是25时58分。", seen) == ["25时58分"]
    assert unsupported("东京现在是 9:00。", seen) == ["9:00"]  # the UTC offset is no reading
    assert unsupported("气温23度，湿度2%。", seen) == ["23", "2%"]  # a second and a minute are no quantities
    evening = Evidence.of([{"role": "tool", "content": '{"time": "20:03"}'}])
    assert unsupported("It is 20°C and sunny.", evening) == ["20°C"]
    assert unsupported("It is 8 pm.", evening) == [] and unsupported("现在是晚上8点。", evening) == []
    assert unsupported("等一点时间。", evening) == []  # "一点" is "a little" as often as one o'clock


def test_numbers_are_matched_rounded_and_in_chinese() -> None:
    seen = Evidence.of(
        [{"role": "user", "content": "1234 乘以 5678"}, {"role": "tool", "content": '{"result": 7006652}'}]
    )
    assert unsupported("1234 × 5678 = 7,006,652", seen) == []
    assert unsupported("约等于七百万零六千六百五十二，大约700万。", seen) == []
    assert unsupported("结果是 7006653。", seen) == ["7006653"]


def test_the_check_asks_once_in_the_users_language_then_declines() -> None:
    check = EvidenceCheck()
    assert check("东京现在是下午3点04分。", ASKED) is None
    note = check("北京今天天气晴朗，温度约为22°C。", ASKED)
    assert note == (
        "你的回答中的 22°C 没有出现在任何工具结果或用户消息中。请只根据工具结果重新回答；"
        "如果工具结果里没有，请直接说明你没有这些信息，不要猜测。"
    )
    retried = [*ASKED, {"role": "assistant", "content": "北京今天天气晴朗，温度约为22°C。"}]
    assert check("温度约为22°C。", retried) == Replacement(
        f"我无法根据工具返回的结果可靠地回答这个问题：{TOKYO_SAID['zh']}。"
    )
    english = [{"role": "user", "content": "What's the weather in Paris?"}]
    assert check("It is sunny and 18 degrees.", english) == (
        "Your answer states 18, which no tool result and no user message gives. Answer again using only "
        "what the tool results say. If they do not give it, say plainly that you do not have that "
        "information; do not guess."
    )
    assert check("It is 18 degrees.", [*english, {"role": "assistant", "content": "x"}]) == Replacement(
        "I can't answer that reliably: the tools I have did not provide the information it needs."
    )  # no tool ran: nothing to quote


def test_loop_sends_the_note_and_keeps_the_rejected_reply() -> None:
    model = ScriptedModel(
        [
            reply(None, call("calculator", {"expression": "1234*5678"})),
            "结果是 7006653。",
            "1234 乘以 5678 等于 7006652。",
        ]
    )
    with model:
        result = Loop(model, [calculator], controls=Controls(answer_check=EvidenceCheck())).run_sync(
            "计算 1234 乘以 5678"
        )
    assert result.status == "success" and result.output == "1234 乘以 5678 等于 7006652。"
    assert [s.decision for s in result.steps] == ["tool_calls", "unfinished", "answer"]
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "计算 1234 乘以 5678"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "calculator", "arguments": '{"expression": "1234*5678"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1_1",
            "name": "calculator",
            "content": content(expression="1234*5678", result=7006652),
        },
        {"role": "assistant", "content": "结果是 7006653。"},
        {"role": "assistant", "content": "1234 乘以 5678 等于 7006652。"},
    ]
    note = model.requests[2].messages[-1]
    assert note == {
        "role": "system",
        "content": "你的回答中的 7006653 没有出现在任何工具结果或用户消息中。请只根据工具结果重新回答；"
        "如果工具结果里没有，请直接说明你没有这些信息，不要猜测。",
    }
    assert result.steps[2].control == note["content"] and TID not in note["content"]


def test_a_second_unsupported_answer_ends_with_a_plain_decline() -> None:
    model = ScriptedModel([reply(None, call("current_time", {})), "It is sunny and 22 C.", "Sunny, 22 C."])
    with model:
        result = Loop(model, [current_time], controls=Controls(answer_check=EvidenceCheck())).run_sync(
            "How is the weather in Beijing?"
        )
    assert [s.decision for s in result.steps] == ["tool_calls", "unfinished", "answer"]
    assert result.output == (
        "I can't answer that reliably from what the tools returned: current_time gave timezone "
        "Asia/Shanghai, datetime 2026-11-30T09:15:00+08:00, weekday Monday, not what you asked for."
    )  # the clock's reading in words, without its trace id: nothing the tool did not say
    assert result.messages[-2:] == [
        {"role": "assistant", "content": "It is sunny and 22 C."},
        {"role": "assistant", "content": result.output},
    ]


def test_the_loop_installs_the_layers_a_model_brings_unless_controls_name_a_check() -> None:
    model = ScriptedModel(["It is 22 C in Beijing.", "I have no weather tool, so I cannot tell."])
    model.layers = (EvidenceCheck(),)  # type: ignore[attr-defined]  # as LocalModel brings it
    with model:
        result = Loop(model, [current_time]).run_sync("What's the weather in Beijing?")
    assert [s.decision for s in result.steps] == ["unfinished", "answer"]
    assert result.output == "I have no weather tool, so I cannot tell."
    model = ScriptedModel(["It is 22 C in Beijing."])
    model.layers = (EvidenceCheck(),)  # type: ignore[attr-defined]
    with model:
        result = Loop(
            model, [current_time], controls=Controls(answer_check=lambda text, messages: None)
        ).run_sync("What's the weather in Beijing?")
    assert result.output == "It is 22 C in Beijing."
    model = ScriptedModel(["It is 22 C in Beijing.", "It is 23 C.", "It is 24 C."])
    model.layers = (EvidenceCheck(),)  # type: ignore[attr-defined]
    with model:  # the caller's own layer of the same class takes the model's place
        result = Loop(model, [current_time], layers=[EvidenceCheck(retries=2)]).run_sync("Beijing weather?")
    assert [s.decision for s in result.steps] == ["unfinished", "unfinished", "answer"]
    assert result.output.startswith("I can't answer that reliably")


def test_an_answer_that_uses_none_of_the_tool_results_is_sent_back() -> None:
    from minloop.small.evidence import UNUSED, draws_on_tools

    rain = [{"role": "user", "content": "Will it rain in Shanghai tomorrow?"}, *ASKED[1:]]
    assert draws_on_tools("Yes, it will rain in Shanghai tomorrow.", rain) is False
    assert EvidenceCheck()("Yes, it will rain in Shanghai tomorrow.", rain) == UNUSED["en"]
    # a Chinese answer to results with no Chinese in them: the words cannot be compared
    assert (
        EvidenceCheck()("上海明天会下雨。", [{"role": "user", "content": "上海明天会下雨吗？"}, *ASKED[1:]])
        is None
    )
    assert draws_on_tools("东京今天星期二。", ASKED) is True  # Tuesday, in the tool's words
    assert draws_on_tools("It is Tuesday in Tokyo.", ASKED) is True
    assert draws_on_tools("东京今天星期三。", ASKED) is False
    assert draws_on_tools("Team B", [{"role": "user", "content": "Who won?"}]) is None  # no tool ran
    for honest in ("I don't have weather data, only a clock.", "我没有天气工具，无法回答。", "Which city?"):
        assert EvidenceCheck()(honest, rain) is None


def test_a_claim_that_something_lacks_a_thing_is_no_decline() -> None:
    """ "I don't have that" declines; "The Park Hyatt does not have a pool" states a fact nobody gave."""
    assert declines("I don't have that information.") and declines("The tool does not have the humidity.")
    assert not declines("The Park Hyatt does not have a swimming pool.")
    down = {"error": "the parking service returned HTTP 503", "code": "ERR_TOOL_FAILED", "trace_id": "trc_1"}
    asked = conversation(
        "Does the Park Hyatt have a swimming pool?",
        ("parking_spaces", {"garage": "Park Hyatt"}, json.dumps(down)),
    )
    assert EvidenceCheck()("The Park Hyatt does not have a swimming pool.", asked) == Replacement(
        "I can't answer that reliably from what the tools returned: parking_spaces did not answer "
        "(the parking service returned HTTP 503)."
    )


def test_without_resending_an_answer_that_uses_no_tool_result_is_declined_at_once() -> None:
    from minloop.models.local import LocalModel

    check = EvidenceCheck(resend_unused=False)
    assert check in LocalModel().layers and check not in LocalModel().plain().layers
    rain = [{"role": "user", "content": "Will it rain in Shanghai tomorrow?"}, *ASKED[1:]]
    decline = Replacement(f"I can't answer that reliably from what the tools returned: {TOKYO_SAID['en']}.")
    assert check("Yes, it will rain in Shanghai tomorrow.", rain) == decline
    assert check("It is 22 C in Shanghai.", rain) == decline  # a fact no tool gave, and nothing a tool gave
    assert check("It is 22 C.", [{"role": "user", "content": "Weather?"}]) == Replacement(
        "I can't answer that reliably: the tools I have did not provide the information it needs."
    )  # no tool ran
    assert str(check("东京现在是15:04，气温22°C。", ASKED)).startswith(
        "你的回答中的 22°C"
    )  # used the clock: once more


def test_the_trace_id_in_a_tool_result_is_no_evidence() -> None:
    # A trace id stamps every tool result with the hour and random hex: "22" in it is no temperature.
    messages = [
        {"role": "user", "content": "What's the weather in Beijing?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "current_time", "arguments": "{}"}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": '{"datetime": "2026-11-30T09:15:00+08:00", "trace_id": "trc_261130222233_a22b22"}',
        },
    ]
    assert unsupported("It is sunny and 22 C.", Evidence.of(messages)) == ["22 C"]
    assert unsupported("It is 09:15.", Evidence.of(messages)) == []


def watched(pieces: list[str], messages: list[dict]) -> tuple[int | None, AnswerWatch]:
    """Feed the growing text to a watch: the index of the piece that stopped it (None: never), the watch."""
    watch = AnswerWatch(messages)
    texts = ["".join(pieces[: i + 1]) for i in range(len(pieces))]
    stopped = next((i for i, text in enumerate(texts) if watch(text)), None)
    return stopped, watch


def test_the_watch_stops_an_answer_at_the_end_of_its_first_unsupported_sentence() -> None:
    asked = [{"role": "user", "content": "Who won the 2018 World Cup?"}]
    pieces = [
        "France won the 2018 ",
        "World Cup. The final",
        " score was 4",
        "-2 against Croatia",
        ". It was",
        " fun.",
    ]
    stopped, watch = watched(pieces, asked)
    assert stopped == 4  # once "4-2 against Croatia. " is whole, not at "4"
    assert (
        "".join(pieces)[: watch.read]
        == "France won the 2018 World Cup. The final score was 4-2 against Croatia. "
    )
    # a number split over pieces is read whole; a list marker is no fact; Chinese sentences end at 。
    assert watched(["It is 9.", "5 km. ", "Bye."], [{"role": "user", "content": "9.5 km?"}])[0] is None
    assert watched(["Steps:\n1. ", "Open it.\n2. ", "Close it.\n"], asked)[0] is None
    assert (
        watched(
            ["埃菲尔铁塔高", "330米。", "它在巴黎。"], [{"role": "user", "content": "埃菲尔铁塔有多高？"}]
        )[0]
        == 1
    )
    stopped, watch = watched(["It is 9.", "5 km"], asked)
    assert (stopped, watch.read) == (None, 0)  # an unfinished sentence is not read
