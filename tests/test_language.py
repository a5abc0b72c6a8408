"""Chinese numerals, place names to time zones, and value resolution in grounding."""

from __future__ import annotations

import json

import pytest

from minloop.builtins.clock import current_time
from minloop.language import (
    chinese_number,
    date_format,
    in_format,
    language_of,
    numbers_in,
    resolve_zone,
    user_language,
    zones_in,
)
from minloop.small.values import Evidence, ground_calls, resolve_values


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("一千二百三十四", 1234),
        ("两万", 20000),
        ("三点五", 3.5),
        ("二〇二六", 2026),
        ("一百零五", 105),
        ("十五", 15),
        ("一亿二千万", 1.2e8),
        ("一万亿", 1e12),
        ("壹佰", 100),
    ],
)
def test_chinese_numerals(text: str, value: float) -> None:
    assert chinese_number(text) == value


def test_a_unit_that_begins_with_a_chinese_multiplier_does_not_multiply() -> None:
    """千卡, 千克, 千米, 千瓦 are kcal, kg, km, kW: "250 千卡" states 250."""
    assert [numbers_in(t) for t in ("250 千卡", "250千克", "12 千米", "3.5 千瓦时")] == [
        [250.0],
        [250.0],
        [12.0],
        [3.5],
    ]
    assert 3000.0 in numbers_in("3千元") and 3e7 in numbers_in("3千万元")


def test_the_one_of_words_that_count_nothing_is_no_number() -> None:
    """一共 "in all", 一起 "together", 一样 "the same", 唯一 "only", 万一 "in case": no 1 stated."""
    assert numbers_in("《战争与和平》和《小王子》一共有几本？") == []
    assert numbers_in("他们一起去，价格一样，这是唯一的办法，万一下雨呢？") == []
    assert numbers_in("一份番茄炒蛋加一份海鲜饭一共多少？") == [1.0, 1.0]  # 一份: one serving
    assert numbers_in("第十一共有几层？三万一千人") == [11.0, 31000.0]  # inside a numeral it counts


def test_numbers_in_mixed_text() -> None:
    assert sorted(numbers_in("1.2万人，百分之五，3千万元，12,000 miles, five million")) == [
        0.05,
        1.2,
        3.0,
        5.0,
        12000.0,
        12000.0,
        1e6,
        5e6,
        3e7,
    ]
    assert chinese_number("百分") is None and numbers_in("百分之") == []
    assert sorted(numbers_in("现在是三点五分")) == [3.0, 5.0]  # a time, not 3.5
    assert sorted(numbers_in("born 01-01-1980, on 2024-05-01, at x = -1 and 2x - 4")) == [
        -1.0,
        1.0,
        1.0,
        1.0,
        2.0,
        4.0,
        5.0,
        1980.0,
        2024.0,
    ]  # a date's hyphens are no minus signs


def test_place_names_resolve_to_iana_zones_in_both_languages() -> None:
    for name in ("Tokyo", "东京", "東京", "asia/tokyo", "Asia/Tokyo", "日本", "Japan"):
        assert resolve_zone(name) == "Asia/Tokyo", name
    assert resolve_zone("纽约") == resolve_zone("New York") == "America/New_York"
    assert resolve_zone("Beijing") == resolve_zone("中国") == "Asia/Shanghai"
    assert resolve_zone("UTC") == "UTC" and resolve_zone("Atlantis") is None and resolve_zone("") is None
    assert zones_in("纽约和伦敦现在几点？") == ["America/New_York", "Europe/London"]
    assert zones_in("What time is it in New York and Tokyo?") == ["America/New_York", "Asia/Tokyo"]
    assert zones_in("现在北京时间几点？") == zones_in("北京今天天气怎么样？") == ["Asia/Shanghai"]
    assert (
        resolve_zone("北京时间") == resolve_zone("北京") == "Asia/Shanghai"
        and zones_in("What is 5 + 3?") == []
    )
    assert zones_in("Tokyo time, please") == ["Asia/Tokyo"]
    assert (
        zones_in("What day is Christmas? Darwin said so.") == []
    )  # zones named Indian/Christmas, Australia/Darwin


def test_language_of_the_user() -> None:
    assert language_of("现在几点？") == "zh" and language_of("What time is it?") == "en"
    assert (
        user_language([{"role": "user", "content": "现在东京几点了？"}, {"role": "tool", "content": "{}"}])
        == "zh"
    )


def test_evidence_finds_chinese_numbers_words_and_places() -> None:
    seen = Evidence("计算 一千二百三十四 乘以 5678，预算 1.2万，利率百分之五。现在东京几点了？")
    assert all(seen.has(v) for v in (1234, 5678, 12000, 0.05, 5, "东京", "Tokyo", "Asia/Tokyo"))
    assert not any(seen.has(v) for v in (1235, "北京", "London", "Europe/London"))
    assert seen.has("UTC") and seen.has("Etc/UTC")  # the neutral default, never an invention
    assert seen.has("1234 * 5678") and seen.has("12000 * 0.05") and seen.has("(1234 + 2) * 3")
    assert not seen.has("23.5 * 3") and not seen.has("1234 * 99")  # an operand the model made up


CLOCK = {"type": "function", "function": {"name": "current_time", "parameters": current_time.parameters()}}


def _call(arguments: dict[str, object]) -> dict[str, object]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "current_time", "arguments": json.dumps(arguments)},
            }
        ],
    }


@pytest.mark.parametrize(
    "arguments", [{"timezone": "Asia/Shanghai"}, {}, {"timezone": "东京"}, {"timezone": "Tokyo"}]
)
def test_a_time_zone_argument_is_the_place_the_user_named(arguments: dict[str, object]) -> None:
    message, missing = ground_calls(
        _call(arguments), [CLOCK], [{"role": "user", "content": "现在东京几点了？"}]
    )
    assert missing == {}
    assert message == _call({"timezone": "Asia/Tokyo"})


def test_beijing_time_is_chinas_zone_whatever_zone_the_model_wrote() -> None:
    message, missing = ground_calls(
        _call({"timezone": "UTC"}), [CLOCK], [{"role": "user", "content": "现在北京时间几点？"}]
    )
    assert (message, missing) == (_call({"timezone": "Asia/Shanghai"}), {})


def test_resolution_is_off_on_request_and_enums_take_their_member() -> None:
    message, _ = ground_calls(
        _call({"timezone": "Asia/Shanghai"}),
        [CLOCK],
        [{"role": "user", "content": "What time is it in Tokyo?"}],
        resolve=False,
    )
    assert message == _call({})  # the old behaviour: an ungrounded optional value is dropped
    schema = {"properties": {"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}
    assert resolve_values({"unit": "Fahr"}, schema, []) == {"unit": "fahrenheit"}
    assert resolve_values({"unit": "kelvin"}, schema, []) == {"unit": "kelvin"}  # the contract check answers


@pytest.mark.parametrize(
    ("description", "form"),
    [
        ("The date for the UV index, in the format mm-dd-yyyy.", ("mdy", "-")),
        ("The date (month-day-year) you want the air quality for.", ("mdy", "-")),
        ("Check-in date, YYYY-MM-DD", ("ymd", "-")),
        ("Start date in DD.MM.YYYY", ("dmy", ".")),
        ("The date of the flight.", None),
        ("Quantity in mm", None),
    ],
)
def test_a_description_names_the_format_of_its_dates(description: str, form: tuple[str, str] | None) -> None:
    assert date_format(description) == form


def test_a_date_is_written_in_the_named_format_when_it_is_unambiguous() -> None:
    assert [in_format(v, ("mdy", "-")) for v in ("2022-08-16", "2022/8/16", "16-08-2022", "08/16/2022")] == [
        "08-16-2022"
    ] * 4
    assert in_format("2023-03-10", ("dmy", "/")) == "10/03/2023"
    # month and day either way round, and what is no date, stay as the model wrote them
    assert [in_format(v, ("ymd", "-")) for v in ("03/04/2023", "next month", "2023-13-40")] == [
        "03/04/2023",
        "next month",
        "2023-13-40",
    ]
    schema = {"properties": {"date": {"type": "string", "description": "The date, mm-dd-yyyy."}}}
    assert resolve_values({"date": "2022-08-16"}, schema, []) == {"date": "08-16-2022"}


def test_the_language_the_user_writes_in_is_evidence_for_a_language_value() -> None:
    english = Evidence.of([{"role": "user", "content": "Analyze the sentiment of 'I love the food here!'"}])
    assert all(english.has(v) for v in ("en", "English", "en-US"))
    assert not any(english.has(v) for v in ("fr", "zh", "Chinese"))
    chinese = Evidence.of(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "分析这条评论的情感：菜很好吃"},
        ]
    )
    assert all(chinese.has(v) for v in ("zh", "Chinese", "中文", "zh-CN"))
    assert not chinese.has("en")


def test_the_clock_resolves_place_names_itself() -> None:
    assert current_time.fn("东京")["timezone"] == "Asia/Tokyo"
    assert current_time.fn("New York")["timezone"] == "America/New_York"
    with pytest.raises(ValueError, match="unknown time zone"):
        current_time.fn("Atlantis")
