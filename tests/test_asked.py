"""A request that names what it asks for ("the humidity") when no tool that ran gives
anything of it: the answer is replaced by the plain statement of what the tools gave
(``asked.not_given``, read by ``EvidenceCheck``); and the same for a later day than the results
give (``asked.later``) and an action no tool does (``asked.unoffered``)."""

from __future__ import annotations

import json
from typing import Any

from minloop import tool
from minloop.decision import Replacement
from minloop.models.local.asked import later, not_given, unoffered
from minloop.models.local.evidence import EvidenceCheck


@tool
def get_weather(city: str) -> dict:
    """Get the current weather in a city: temperature and sky condition."""
    return {}


@tool
def find_contact(name: str) -> dict:
    """Find a person in the address book by name; returns their email and phone number."""
    return {}


MENU = [get_weather.spec(), find_contact.spec()]
WEATHER = {"city": "Paris", "temperature": 18, "unit": "celsius", "condition": "sunny"}
CONTACT = {"found": True, "name": "Ada Lovelace", "email": "ada@example.com", "phone": "+44 20 7946 0018"}


def conversation(request: str, name: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
    return [
        {"role": "user", "content": request},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": name, "content": json.dumps(result)},
    ]


def test_what_no_result_name_or_description_holds_is_not_given() -> None:
    asked = {
        "What's the humidity in Paris?": ("get_weather", WEATHER, "humidity"),
        "What is Ada Lovelace's home address?": ("find_contact", CONTACT, "home address"),
        "What's the weather like in Paris right now?": ("get_weather", WEATHER, None),  # the tool's name
        "What is Ada Lovelace's email address?": ("find_contact", CONTACT, None),  # a key, the description
        "What are the phone numbers of Ada and Alan?": ("find_contact", CONTACT, None),  # "numbers", "number"
        "What's the current temperature in Paris?": ("get_weather", WEATHER, None),  # "current" says when
        "How humid is Paris?": ("get_weather", WEATHER, None),  # not named after "what is": left alone
    }
    for request, (name, result, expected) in asked.items():
        assert not_given(conversation(request, name, result), MENU) == expected, request


def test_a_count_or_a_measure_is_looked_for_by_the_words_that_name_it() -> None:
    order = {"order_id": "C5502", "status": "processing", "carrier": "FedEx"}
    parcel = {"parcel": "X1", "weight_kg": 2.5, "status": "in transit"}
    city = {"city": "Tokyo", "population": 13960000}
    asked = {
        "How heavy is the parcel of order C5502?": (order, "heavy"),
        "How much does the parcel of order C5502 weigh?": (order, "weigh"),
        "How much does parcel X1 weigh?": (parcel, None),  # "weight_kg" names the weight
        "How many copies of order C5502 were sold?": (order, "copies"),
        "How many people live in Tokyo?": (city, None),  # "population" counts people
        "How many days until order C5502 arrives?": (order, None),  # days are counted from dates
        "How many euros is order C5502?": (order, None),  # a unit, not a thing counted
        "How old is Tokyo?": (city, "old"),
    }
    for request, (result, expected) in asked.items():
        assert not_given(conversation(request, "get_weather", result), MENU) == expected, request


def test_nothing_is_looked_for_before_a_tool_served() -> None:
    failed = {"error": "the weather service did not answer", "code": "ERR_TOOL_FAILED"}
    assert not_given(conversation("What's the humidity in Paris?", "get_weather", failed), MENU) is None
    assert not_given([{"role": "user", "content": "What's the humidity in Paris?"}], MENU) is None


def test_an_answer_from_the_nearest_field_is_replaced_by_what_the_tools_gave() -> None:
    messages = conversation("What's the humidity in Paris?", "get_weather", WEATHER)
    verdict = EvidenceCheck(menu=lambda _: MENU)("The humidity in Paris is 18 degrees Celsius.", messages)
    assert verdict == Replacement(
        "I can't answer that reliably from what the tools returned: get_weather gave city Paris, "
        "temperature 18, unit celsius, condition sunny, not what you asked for."
    )


def test_a_decline_a_chinese_request_and_an_answer_to_what_was_given_stay() -> None:
    check = EvidenceCheck(menu=lambda _: MENU)
    humidity = conversation("What's the humidity in Paris?", "get_weather", WEATHER)
    assert check("The weather tool does not give the humidity; it is 18 °C and sunny.", humidity) is None
    chinese = conversation("巴黎现在的湿度是多少？", "get_weather", WEATHER)
    assert check("巴黎现在18°C，晴。", chinese) is None
    weather = conversation("What's the weather like in Paris right now?", "get_weather", WEATHER)
    assert check("It is 18 degrees Celsius and sunny in Paris.", weather) is None


def test_a_chinese_request_is_read_in_its_translation() -> None:
    chinese = conversation("巴黎现在的湿度是多少？", "get_weather", WEATHER)
    check = EvidenceCheck(menu=lambda _: MENU, english=lambda text: "What is the humidity in Paris now?")
    assert check("巴黎的湿度是18度。", chinese) == Replacement(
        "我无法根据工具返回的结果可靠地回答这个问题：get_weather 只给出了 city Paris, temperature 18, "
        "unit celsius, condition sunny，没有你问的内容。"
    )
    assert check("工具没有提供湿度，巴黎现在18°C，晴。", chinese) is None  # a decline stays
    weather = conversation("巴黎现在天气怎么样？", "get_weather", WEATHER)
    asked = EvidenceCheck(menu=lambda _: MENU, english=lambda text: "What is the weather in Paris now?")
    assert asked("巴黎现在18°C，晴。", weather) is None


def test_a_later_day_than_the_results_give() -> None:
    for request in ("What will the weather be in Berlin next week?", "柏林明天会下雨吗？"):
        assert later(conversation(request, "get_weather", WEATHER)) is not None, request
    dated = {**WEATHER, "date": "2026-12-05"}
    assert later(conversation("What will the weather be in Paris tomorrow?", "get_weather", dated)) is None
    assert later(conversation("What's the weather in Paris?", "get_weather", WEATHER)) is None
    messages = conversation("What will the weather be in Berlin next week?", "get_weather", WEATHER)
    verdict = EvidenceCheck(menu=lambda _: MENU)("Next week Berlin will be 18 degrees and sunny.", messages)
    assert isinstance(verdict, Replacement)


@tool
def book_table(restaurant: str, time: str) -> dict:
    """Book a table at a restaurant."""
    return {}


@tool
def create_reservation(restaurant: str, time: str) -> dict:
    """Create a reservation at a restaurant."""
    return {}


def test_an_action_no_tool_does() -> None:
    book = [{"role": "user", "content": "Book me a table at Sakura in Paris for tonight."}]
    assert unoffered(book, MENU) == "book"  # "address book" is no booking
    assert unoffered(book, [*MENU, book_table.spec()]) is None
    assert unoffered([{"role": "user", "content": "帮我预订今晚巴黎 Sakura 餐厅的位子。"}], MENU) == "book"
    assert unoffered(book, [*MENU, create_reservation.spec()]) is None  # a reservation is a booking
    assert unoffered([{"role": "user", "content": "航班取消了吗？"}], MENU) is None  # a question
    assert unoffered([{"role": "user", "content": "Where is my order A1234?"}], MENU) is None
    messages = [*conversation(book[0]["content"], "get_weather", WEATHER)]
    verdict = EvidenceCheck(menu=lambda _: MENU)("It is 18 degrees and sunny in Paris.", messages)
    assert verdict == Replacement(
        "I can't answer that reliably from what the tools returned: get_weather gave city Paris, "
        "temperature 18, unit celsius, condition sunny, not what you asked for."
    )


OSLO = {"city": "Oslo", "temperature": 2, "unit": "celsius", "condition": "snow"}
ENGLISH = {
    "奥斯陆现在有多冷？": "What is the temperature in Oslo now?",
    "订单 B7781 现在是什么状态？": "What is the status of order B7781 now?",
    "订单 B7781 已送达。": "Order B7781 has been delivered.",
    "伦敦现在是晴天。": "It is sunny in London now.",
    "伦敦现在在下雨吗？": "Is it raining in London now?",
}


def test_a_decline_beside_a_result_that_gives_what_was_asked_is_sent_back_once() -> None:
    from minloop.models.local.notes import GIVEN

    check = EvidenceCheck(menu=lambda _: MENU, english=ENGLISH.get)
    cold = conversation("奥斯陆现在有多冷？", "get_weather", OSLO)
    assert check("抱歉，我无法提供奥斯陆的实时天气信息。", cold) == GIVEN["zh"]
    answered = [*cold, {"role": "assistant", "content": "抱歉。"}, {"role": "system", "content": GIVEN["zh"]}]
    assert check("抱歉，我无法提供奥斯陆的实时天气信息。", answered) is None  # once
    humid = conversation("What's the humidity in Paris?", "get_weather", WEATHER)
    assert (
        check("The weather tool does not give the humidity.", humid) is None
    )  # not given: the decline stays


def test_a_chinese_answer_is_read_in_english_before_it_is_called_unused() -> None:
    from minloop.models.local.notes import UNUSED

    check = EvidenceCheck(menu=lambda _: MENU, english=ENGLISH.get)
    order = {"order_id": "B7781", "status": "delivered", "carrier": "UPS"}
    messages = conversation("订单 B7781 现在是什么状态？", "get_order_status", order)
    assert check("订单 B7781 已送达。", messages) is None
    rain = {"city": "London", "temperature": 14, "condition": "light rain"}
    assert check("伦敦现在是晴天。", conversation("伦敦现在在下雨吗？", "get_weather", rain)) == UNUSED["zh"]


def test_a_chinese_answer_quoting_the_results_is_not_read_as_beyond_them() -> None:
    events = {"date": "2026-12-04", "events": [{"time": "14:00", "title": "Dentist appointment"}]}
    messages = conversation("我2026年12月4日的日程上有什么？", "list_calendar_events", events)
    check = EvidenceCheck(menu=lambda _: MENU, english=lambda text: "What is the schedule for 2026-12-04?")
    assert (
        check("2026年12月4日的日程上有 Dentist appointment。", messages) is None
    )  # "schedule": the translation's word
    assert isinstance(check("2026年12月4日的日程上是休息日。", messages), Replacement)


def test_an_email_quoted_in_a_chinese_answer_does_not_stand_for_what_was_asked() -> None:
    messages = conversation("Ada Lovelace 的家庭住址是什么？", "find_contact", CONTACT)
    check = EvidenceCheck(menu=lambda _: MENU, english=lambda text: "What is Ada Lovelace's home address?")
    answer = "Ada Lovelace的电子邮件地址是ada@example.com，电话号码是+44 20 7946 0018。"
    assert check(answer, messages) == Replacement(
        "我无法根据工具返回的结果可靠地回答这个问题：find_contact 只给出了 name Ada Lovelace, "
        "email ada@example.com, phone +44 20 7946 0018，没有你问的内容。"
    )


def test_a_key_of_the_results_quoted_in_a_chinese_answer_does_not_stand_for_what_was_asked() -> None:
    trains = {"departures": [{"departs": "07:04", "fare": 78.4, "currency": "EUR"}]}
    messages = conversation("2026年12月5日从巴黎到里昂的第一班火车还剩多少座位？", "get_train_times", trains)
    english = "How many seats are left on the first train from Paris to Lyon on 2026-12-05?"
    check = EvidenceCheck(menu=lambda _: MENU, english=lambda text: english)
    answer = "根据提供的信息，第一班火车在 departures 中的剩余座位数为78.4个。"
    assert check(answer, messages) == Replacement(
        "我无法根据工具返回的结果可靠地回答这个问题：get_train_times 只给出了 departures departs 07:04, "
        "fare 78.4, currency EUR，没有你问的内容。"
    )


def test_the_words_for_an_amount_of_money_stand_for_each_other() -> None:
    trains = {"departures": [{"departs": "07:04", "fare": 89.0, "currency": "EUR"}]}
    messages = conversation("What is the price of two seats on the 07:04 train?", "get_train_times", trains)
    assert not_given(messages) is None  # a fare is a price
    asked = conversation("What is the seat number on the 07:04 train?", "get_train_times", trains)
    assert not_given(asked) == "seat number"
