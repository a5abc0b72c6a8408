"""Times given for a place are held to what the clock read for that place."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from minloop import Controls, Loop, tool
from minloop.builtins import current_time as clock
from minloop.builtins.clock import reading
from minloop.small.evidence import EvidenceCheck, unsupported
from minloop.small.times import instants, placed, shown
from minloop.small.values import Evidence
from minloop.testing import ScriptedModel, call, reply

from .conftest import content, masked


def read_at(zone: str, utc: str) -> dict[str, str]:
    """The built-in clock's result for ``zone`` at ``utc`` ("10:27:44") on 2026-12-03, UTC."""
    return reading(zone, datetime.fromisoformat(f"2026-12-03T{utc}").replace(tzinfo=UTC))


UTC_READING = read_at("UTC", "10:27:44")


@tool
def current_time(timezone: str = "UTC") -> dict[str, str]:
    """Get the current date and time in a time zone (a fixed clock that always reads UTC)."""
    return UTC_READING


def read(question: str, *results: dict[str, str]) -> list[dict[str, object]]:
    """A conversation in which the clock was read once per result."""
    return [
        {"role": "user", "content": question},
        *({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps(r)} for i, r in enumerate(results)),
    ]


def test_a_readings_time_given_for_another_place_is_unsupported() -> None:
    seen = Evidence.of(read("东京和纽约现在几点？", UTC_READING))
    assert unsupported("东京现在是10:27。", seen) == ["东京现在是10:27"]
    assert unsupported("东京和纽约现在都是10:27。", seen) == ["东京和纽约现在都是10:27"]
    assert unsupported("It is 10:27 in Tokyo.", seen) == ["It is 10:27 in Tokyo"]
    assert unsupported("现在是10:27（UTC）。", seen) == []  # the reading, for the place it was read for
    assert unsupported("The UTC time is 10:27.", seen) == []
    assert unsupported("It is 10:27.", seen) == []  # no place named: the reading itself


def test_a_time_is_right_for_a_place_when_a_readings_moment_shows_it_there() -> None:
    seen = Evidence.of(read("What time is it in Tokyo?", UTC_READING))
    assert unsupported("It's 10:27 UTC, which is 19:27 in Tokyo.", seen) == []
    assert unsupported("It's 10:27 UTC, which is 18:27 in Tokyo.", seen) == ["18:27"]
    tokyo = read_at("Asia/Tokyo", "10:27:44")
    new_york = read_at("America/New_York", "10:27:44")
    both = Evidence.of(read("东京和纽约现在几点？", tokyo, new_york))
    assert unsupported("东京现在是晚上7点27分，纽约是早上5点27分。", both) == []
    assert unsupported("In Tokyo it is 7:27 pm and in New York it is 5:27 am.", both) == []
    assert unsupported("In Tokyo it is 5:27 am and in New York it is 7:27 pm.", both) == [
        "In Tokyo it is 5:27 am",
        "in New York it is 7:27 pm",
    ]


def test_without_instants_times_for_places_are_not_judged_by_place() -> None:
    at = {"timezone": "UTC", "time": "10:27"}
    assert instants(json.dumps(at)) == [] and placed("东京现在是10:27。", json.dumps(at)) == {}
    assert unsupported("东京现在是10:27。", Evidence.of(read("东京现在几点？", at))) == []
    assert shown(json.dumps(UTC_READING)) == ["10:27 (UTC+00:00)"] and shown(json.dumps(at)) == ["10:27"]


def test_the_loop_sends_back_a_utc_reading_given_as_tokyos_time() -> None:
    model = ScriptedModel(
        [reply(None, call("current_time", {})), "东京和纽约现在都是10:27。", "现在 UTC 时间是 10:27。"]
    )
    with model:
        result = Loop(model, [current_time], controls=Controls(answer_check=EvidenceCheck())).run_sync(
            "东京和纽约现在几点？"
        )
    assert result.status == "success" and result.output == "现在 UTC 时间是 10:27。"
    assert [s.decision for s in result.steps] == ["tool_calls", "unfinished", "answer"]
    assert masked(result.messages, result.trace_id) == [
        {"role": "user", "content": "东京和纽约现在几点？"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "current_time", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1_1",
            "name": "current_time",
            "content": content(**UTC_READING),
        },
        {"role": "assistant", "content": "东京和纽约现在都是10:27。"},
        {"role": "assistant", "content": "现在 UTC 时间是 10:27。"},
    ]
    assert model.requests[2].messages[-1] == {
        "role": "system",
        "content": "你的回答中的 东京和纽约现在都是10:27 没有出现在任何工具结果或用户消息中。请只根据工具结果重新回答；"
        "如果工具结果里没有，请直接说明你没有这些信息，不要猜测。工具结果中的时间是 10:27 (UTC+00:00)。",
    }


def test_a_time_that_says_am_or_pm_is_read_on_the_24_hour_clock() -> None:
    new_york = read_at("America/New_York", "10:35:00")
    seen = Evidence.of(read("纽约今天星期几？", new_york))
    assert unsupported("It is 5:35 am in New York.", seen) == []
    assert unsupported("纽约现在是早上5点35分。", seen) == unsupported("纽约现在是5点35分。", seen) == []
    assert unsupported("It is 5:35 PM.", seen) == ["5:35 PM"]
    assert unsupported("纽约现在是下午5点35分。", seen) == ["下午5点35分"]
    # a place named earlier in the sentence is the place of a time after a comma
    assert unsupported("The time in New York is December 3, 2026, at 05:35 PM.", seen) == ["05:35 PM"]
    assert unsupported("In Tokyo it is December 3, 2026, at 05:35.", seen) == ["at 05:35"]


CLOCK = {"type": "function", "function": {"name": "current_time", "parameters": clock.parameters()}}


def calls(*zones: str | None) -> dict[str, object]:
    """An assistant message calling the clock once per zone (``None``: no zone written)."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_2_{j + 1}",
                "type": "function",
                "function": {
                    "name": "current_time",
                    "arguments": json.dumps({} if zone is None else {"timezone": zone}),
                },
            }
            for j, zone in enumerate(zones)
        ],
    }


def test_both_places_read_and_each_given_its_own_time_pass_the_check() -> None:
    tokyo = read_at("Asia/Tokyo", "11:37:38")
    new_york = read_at("America/New_York", "11:37:38")
    seen = Evidence.of(read("东京和纽约现在几点？", tokyo, new_york))
    answer = (
        "The Tokyo and New York times are currently 2026-12-03 at 20:37, Thursday, in Tokyo, "
        "and 2026-12-03 at 06:37, Thursday, in New York."
    )  # the 0.5B model's own answer: each place named after its time
    assert unsupported(answer, seen) == []
    assert unsupported("东京现在是06:37，纽约现在是20:37。", seen) == ["东京现在是06:37", "纽约现在是20:37"]
