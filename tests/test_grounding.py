"""Argument grounding: values a call may use are the ones the conversation gives."""

from __future__ import annotations

import json
from collections.abc import Callable

from minloop.language import code_names
from minloop.models.local.watch import CallWatch
from minloop.small.values import Evidence, Grounds, ground_calls, prune, trim, ungrounded

BMI = {
    "type": "object",
    "properties": {
        "weight": {"type": "number"},
        "height": {"type": "number"},
        "unit": {"type": "string", "enum": ["metric", "imperial"]},
        "note": {"type": "string"},
        "verbose": {"type": "boolean"},
    },
    "required": ["weight", "height"],
}


def test_numbers_are_found_in_their_usual_spellings() -> None:
    seen = Evidence(
        "A car that travels 12,000 miles over five years, 100 million shares, a 5% rate, 2.5 kg, "
        "charges of 1e-9 and 2E-9 over the past decade."
    )
    assert all(
        seen.has(v) for v in (12000, 12000.0, 5, 100_000_000, 0.05, 5.0, 2.5, True, None, 1e-9, 2e-9, 10)
    )
    assert not any(seen.has(v) for v in (70, 1.75, 2021, 0.5))


def test_zero_and_one_are_found_only_when_written_or_implied() -> None:
    ampere = {
        "type": "object",
        "properties": {"enclosed_current": {"type": "number"}, "radius": {"type": "number"}},
        "required": ["enclosed_current", "radius"],
    }
    invented = {"enclosed_current": 1.0, "radius": 1.0}
    assert ungrounded(invented, ampere, Evidence("What are the components of Civil Law?")) == [
        "enclosed_current",
        "radius",
    ]
    assert ungrounded(invented, ampere, Evidence("A current of one amp at a radius of 1 m")) == []
    for text, value in [
        ("Roll the die once", 1),
        ("It doubles every hour", 1),
        ("Forecast the price for the next month", 1),
        ("An object starts from rest and accelerates at 3 m/s^2", 0),
        ("物体从静止开始加速", 0),
        ("每小时增加一倍", 1),
    ]:
        assert Evidence(text).has(value), text
    assert not Evidence("What are the rules of the game Uno?").has(1)
    assert not Evidence("谁发明了象棋？").has(0)


def test_a_value_that_repeats_its_description_is_not_grounded() -> None:
    books = {
        "type": "object",
        "properties": {
            "book": {"type": "string", "description": "The name of the holy book."},
            "chapter": {"type": "string", "description": "The chapter of the book"},
        },
        "required": ["book"],
    }
    asked = Evidence("Which holy book gives the name of the chapter on creation?")
    copied = {"book": "The name of the holy book.", "chapter": "the chapter of the book"}
    assert ungrounded(copied, books, asked) == ["book"]
    assert prune(copied, books, asked) == {"book": "The name of the holy book."}  # required: ungrounded says
    named = {"book": "The Bible", "chapter": "the chapter on creation"}
    assert ungrounded(named, books, Evidence("In the Bible, the chapter on creation")) == []


def test_lists_signs_dates_and_words_of_time_give_their_numbers() -> None:
    seen = Evidence(
        "Cash flows [200,300,400], the area under y = 3x^2 + 2x - 4, born 01-01-1980, "
        "compounded quarterly over the next week."
    )
    assert all(seen.has(v) for v in (200, 300, 400, -4, 3, 2, "01-01-1980", 1980, 4, 7))
    assert not any(seen.has(v) for v in (52, 12, 365, 500, -500))
    assert Evidence("下周东京的天气，按季度复利").has([7, 4]) and not Evidence("东京的天气").has(7)
    assert Evidence("monthly, weekly and daily").has([12, 52, 365])


def test_codes_are_found_by_the_names_of_what_they_stand_for() -> None:
    assert {"british pound", "英镑", "£"} <= code_names("GBP") and code_names("gbp") == code_names("GBP")
    assert {"french", "法语"} <= code_names("fr") and {"japan", "日本"} <= code_names("JP")
    assert "english" in code_names("en-US") and code_names("hello") == code_names("") == frozenset()
    said = Evidence("Convert 200 British pounds to Japanese yen, then say it in French.")
    assert said.has(["GBP", "JPY", "fr"]) and not said.has("EUR") and not said.has("de")
    assert Evidence("把100美元换成日元").has(["USD", "JPY"]) and Evidence("£5 in euros").has(["GBP", "EUR"])
    # a unit's symbol stands on its name: a conversion tool's "mi" and "km" for "miles" and "公里"
    assert {"miles", "英里"} <= code_names("mi") and "kilometres" in code_names("km")
    assert Evidence("How many kilometres are 26.2 miles?").has(["mi", "km"])
    assert Evidence("26.2英里是多少公里？").has(["mi", "km"]) and Evidence("3 pounds in grams").has(
        ["lb", "g"]
    )
    assert not Evidence("How many kilometres are 26.2 miles?").has("lb")


def test_a_padded_list_keeps_the_items_the_conversation_gives() -> None:
    said = Evidence("Nurseries in Toronto with annual plants; protein and carbs of two dozen eggs.")
    padded = {"plant_types": ["Annual", "Perennial", "Shrub"], "facts": ["Protein", "Carbohydrates", "Fat"]}
    assert trim(padded, said) == {"plant_types": ["Annual"], "facts": ["Protein", "Carbohydrates"]}
    assert trim({"plant_types": ["Tree", "Shrub"], "n": [24, 12]}, said) == {
        "plant_types": ["Tree", "Shrub"],
        "n": [24, 12],
    }
    spec = {
        "type": "function",
        "function": {
            "name": "find",
            "parameters": {
                "type": "object",
                "properties": {"plant_types": {"type": "array"}},
                "required": ["plant_types"],
            },
        },
    }
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "find", "arguments": json.dumps({"plant_types": padded["plant_types"]})},
    }
    message, missing = ground_calls(
        {"role": "assistant", "content": None, "tool_calls": [call]},
        [spec],
        [{"role": "user", "content": "annual plants"}],
    )
    assert missing == {} and json.loads(message["tool_calls"][0]["function"]["arguments"]) == {
        "plant_types": ["Annual"]
    }


def test_words_match_by_prefix_shared_stem_or_abbreviation() -> None:
    seen = Evidence("How many Python files and markdown notes mention restaurants in New York?")
    assert all(seen.has(v) for v in ("*.py", "*.md", "restaurant", "NY", "New York City", "Python 3 files"))
    assert not seen.has("London") and not seen.has("the text of the review")  # stop words do not count
    assert seen.has(["python", "markdown"]) and not seen.has(["python", "java"])
    assert seen.has({"city": "New York"}) and seen.has("") and seen.has([])
    assert Evidence("the biggest bank in the U.S. in 2020").has("USA")
    # "to" and "in" begin no word: "tomato" and "instant" are not found
    assert not Evidence("a vegan soup to make in an hour").has(["tomato", "onion", "instant"])
    assert not Evidence("the biggest bank in the country in 2020").has("USA")


def test_required_values_must_be_given_and_optional_inventions_are_dropped() -> None:
    asked = Evidence("My weight is 70 kg and I am 1.75 m tall.")
    invented = {"weight": 70, "height": 1.75, "unit": "imperial", "note": "adult male", "verbose": True}
    assert ungrounded(invented, BMI, asked) == []
    assert prune(invented, BMI, asked) == {"weight": 70, "height": 1.75, "unit": "imperial", "verbose": True}
    unrelated = Evidence("How many calories does an apple have?")
    assert ungrounded(invented, BMI, unrelated) == ["weight", "height"]


def test_options_are_kept_when_found_or_offered_by_the_schema() -> None:
    crime = {
        "type": "object",
        "properties": {
            "case_number": {"type": "string"},
            "details": {"type": "boolean"},
            "include_description": {"type": "boolean"},
            "kind": {"type": "string", "enum": ["felony", "misdemeanor"]},
            "rating": {"type": "number"},
            "round_to": {"type": "integer"},
            "county": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["case_number"],
    }
    written = {
        "case_number": "CA123456",
        "details": True,
        "include_description": False,
        "kind": "felony",
        "rating": 4.5,
        "round_to": 1,
        "county": "",
        "tags": [],
    }
    asked = Evidence("Look up details of a felony record CA123456 with a rating of at least 4.5")
    # a boolean, an enum member and an empty value stand as the model wrote them; a 1 that the
    # text does not give goes
    assert prune(written, crime, asked) == {k: v for k, v in written.items() if k != "round_to"}


def test_ground_calls_prunes_reports_and_leaves_what_the_loop_checks() -> None:
    spec = {"type": "function", "function": {"name": "bmi", "parameters": BMI}}
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bmi", "arguments": json.dumps({"weight": 70, "height": 1.75, "note": "x"})},
    }
    unknown = {"id": "c2", "type": "function", "function": {"name": "nope", "arguments": '{"a": 1}'}}
    broken = {"id": "c3", "type": "function", "function": {"name": "bmi", "arguments": "{weight: 70"}}
    message = {"role": "assistant", "content": None, "tool_calls": [call, unknown, broken]}
    conversation = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "I weigh 70 kg."},
        {"role": "assistant", "content": "How tall are you?"},
        {"role": "user", "content": "1.75 m"},
    ]
    grounded, missing = ground_calls(message, [spec], conversation)
    assert missing == {}
    assert grounded == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {**call, "function": {"name": "bmi", "arguments": '{"weight": 70, "height": 1.75}'}},
            unknown,
            broken,
        ],
    }
    # the assistant's own words are not evidence: only the user, system and tool messages are
    _, missing = ground_calls(
        message,
        [spec],
        [
            {"role": "user", "content": "I weigh 70 kg."},
            {"role": "assistant", "content": "You are 1.75 m tall."},
        ],
    )
    assert missing == {"bmi": ["height"]}


CRIME = {
    "type": "function",
    "function": {
        "name": "get_crime_rate",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "note": {"type": "string"},
                "year": {"type": "integer"},
                "state": {"type": "string"},
            },
            "required": ["city", "state"],
        },
    },
}
DECISION = (
    '{"name": "get_crime_rate", "arguments": {"city": "San Francisco", "note": "a, \\"b}", '
    '"year": 2020, "state": "California", "extra": [1, {"x": "}"}]}}'
)


def _fed(watch: CallWatch, text: str, size: int = 3) -> str | None:
    """The text ``watch`` had read when it said stop (``None`` when it never did)."""
    for i in range(0, len(text), size):
        if watch(text[i : i + size]):
            return watch.text
    return None


def test_a_call_is_stopped_at_its_first_invented_required_value() -> None:
    asked = [{"role": "user", "content": "The crime rate in San Francisco in 2020"}]
    watch = CallWatch([CRIME], refusing(asked))
    read = _fed(watch, DECISION)
    assert read is not None and read.endswith(
        '"state": "California", "'
    )  # stopped once the value was complete
    assert watch.refused == "get_crime_rate" and watch.arguments["state"] == "California"
    # given in the conversation, the call runs to its end; answers and unknown tools are not read
    given = [{"role": "user", "content": "The crime rate in San Francisco, California, in 2020"}]
    watch = CallWatch([CRIME], refusing(given))
    assert _fed(watch, DECISION) is None and watch.refused is None
    for other in ('{"answer": "The rate is not known."}', '{"name": "nope", "arguments": {"city": "x"}}'):
        watch = CallWatch([CRIME], refusing(asked))
        assert _fed(watch, other) is None and watch.refused is None


def refusing(messages: list[dict]) -> Callable[[str, dict], bool]:
    """What the grounding layer asks while a call is decoded: a required value nobody said."""
    grounds = Grounds([CRIME], messages, resolve=True)
    return lambda tool, arguments: bool(grounds.check(tool, arguments)[1])
