"""A Chinese request in English, translated by the model itself (``minloop.small.translation``): a
translation, never an answer, and never a number or address the request does not have."""

from __future__ import annotations

import asyncio
from typing import Any

from minloop.small.translation import faithful, iso_dates, translated


def test_chinese_dates_are_written_as_iso_dates() -> None:
    assert iso_dates("LH401 航班2026年12月10日的状态如何？") == "LH401 航班2026-12-10的状态如何？"
    assert iso_dates("我2026年1月5号有什么安排？") == "我2026-01-05有什么安排？"
    assert iso_dates("12月10日") == "12月10日"  # no year: left as written


def test_a_translation_stating_what_the_request_does_not_have_is_notfaithful() -> None:
    source = "Ada Lovelace 的邮箱地址是什么？"
    assert faithful("What is Ada Lovelace's email address?", source)
    assert not faithful("Ada Lovelace's email address is ada@lovelace.com.", source)
    assert not faithful("The current humidity in Paris is 55%.", "巴黎现在的湿度是多少？")
    assert faithful(
        "What is the status of LH401 on 2026-12-10?", iso_dates("LH401 航班2026年12月10日的状态如何？")
    )


def test_a_decimal_number_must_be_written_whole_and_a_wide_digit_is_no_way_round() -> None:
    assert faithful("How many yuan is 1.5 bitcoin?", "1.5个比特币是多少人民币？")
    assert not faithful("How many yuan is 1.５ bitcoin?", "1.5个比特币是多少人民币？")
    assert not faithful("How many yuan is 15 bitcoin?", "1.5个比特币是多少人民币？")


def test_the_embedded_model_translates_questions_as_questions(local: Any) -> None:
    cases = {
        "巴黎现在的湿度是多少？": ("humidity",),
        "LH401 航班2026年12月10日的状态如何？": ("2026-12-10", "december 10, 2026"),
        "柏林下周的天气会怎么样？": ("next week",),
        "26.2英里是多少公里？": ("26.2",),  # a decimal number, whole
    }
    for chinese, words in cases.items():  # a date as the request writes it, or in English words
        english = asyncio.run(translated(local, chinese))
        assert english.endswith("?") and any(w in english.lower() for w in words), (chinese, english)
