"""Tool selection for the embedded model: which tools a request gets to see on a large menu."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from minloop import ModelRequest
from minloop.small.ranking import SELECT_ABOVE, SELECT_TOKENS, menu_tokens, narrowed, select_tools, terms


def spec(name: str, description: str, **params: str) -> dict[str, Any]:
    properties = {p: {"type": "string", "description": d} for p, d in params.items()}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties},
        },
    }


MENU = [
    spec("get_weather", "Current weather for a city.", city="City name, e.g. Paris"),
    spec("calculator", "Evaluate an arithmetic expression.", expression="For example 2 * (3 + 4)"),
    spec("current_time", "The current time in an IANA time zone.", timezone="For example Asia/Tokyo"),
    spec("list_files", "List the files in a folder, with their sizes.", folder="Folder to list"),
    spec("send_email", "Send an email message.", to="Recipient address", subject="Subject line", body="Text"),
    spec(
        "translate_text", "Translate text into another language.", text="The text", target_language="Language"
    ),
    spec("stock_price", "Latest price of a stock by its ticker symbol.", ticker="For example AAPL"),
    spec("book_flight", "Book a flight between two airports.", origin="From", destination="To", date="Day"),
    spec("convert_currency", "Convert an amount between currencies.", amount="Amount", to_currency="Code"),
]
CHINESE_MENU = [
    spec("查询天气", "查询城市的当前天气。", city="城市名称"),
    spec("发送邮件", "给收件人发送一封电子邮件。", to="收件人地址"),
    spec("股票价格", "按股票代码查询最新股价。", ticker="股票代码"),
    spec("翻译文本", "把文本翻译成另一种语言。", text="要翻译的文本"),
]


def names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools]


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


class Narrowing:
    """``ranking.narrowed`` with its two thresholds, as the menu layer holds them."""

    def __init__(self, above: int | None = SELECT_ABOVE, tokens: int | None = SELECT_TOKENS) -> None:
        self.above, self.tokens = above, tokens

    def narrowed(self, request: ModelRequest) -> ModelRequest:
        return narrowed(request, self.above, self.tokens)


def test_terms_split_identifiers_stem_words_and_pair_chinese_characters() -> None:
    assert terms("getWeatherForecast list_files") == ["weather", "forecast", "list", "file"]
    assert terms("How many Python files are in this folder?") == ["mani", "file", "folder"]
    assert terms("divided divides divide") == ["divid"] * 3
    assert terms("multiplied multiply") == ["multipli"] * 2
    assert terms("preferring preference preferences") == ["prefer"] * 3
    assert terms("查询北京天气") == ["查询", "询北", "北京", "京天", "天气"]


def test_arithmetic_between_numbers_reads_as_the_operation() -> None:
    assert terms("What is 1234 * 5678?") == ["1234", "multipli", "5678"]
    assert terms("17 plus 25, times 3") == ["17", "plus", "25", "multipli", "3"]
    assert terms("2 ** 10 or 3^2, 8 / 2, 9 - 4") == [
        "2",
        "power",
        "10",
        "3",
        "power",
        "2",
        "8",
        "divid",
        "2",
        "9",
        "subtract",
        "4",
    ]
    assert terms("on 2024-05-01 at 10 times") == ["2024", "05", "01", "10", "time"]  # dates and clocks stay
    # the calculator's example "2 * (3 + 4)" says multiply; only its "times" is the clock's
    assert names(select_tools(MENU, user("What is 1234 times 5678?")).tools) == ["calculator"]
    assert names(select_tools(MENU, user("What is 1234 * 5678?")).tools) == ["calculator"]
    assert names(select_tools(MENU, user("What time is it in Tokyo?")).tools) == ["current_time"]
    divide = spec("divide", "Divide one number by another.", a="Dividend", b="Divisor")
    for text in ("What is 4800 / 12?", "What is 4800 divided by 12?"):
        assert names(select_tools([*MENU, divide], user(text)).tools) == ["divide"], text


def test_the_tools_that_match_the_request_are_chosen() -> None:
    assert names(select_tools(MENU, user("What's the weather in Paris today?")).tools) == ["get_weather"]
    assert names(select_tools(MENU, user("Email the report to bob@example.com")).tools) == ["send_email"]
    chosen = select_tools(MENU, user("How many files are in the src folder?"))
    assert names(chosen.tools) == ["list_files"] and chosen.comparable
    assert chosen.scores["list_files"] > 0 and chosen.scores["get_weather"] == 0


def test_a_tool_that_writes_unit_symbols_is_found_by_the_units_names() -> None:
    units = spec(
        "convert_units", "Convert a length or a weight from one unit to another (km, m, mi, kg, lb)."
    )
    menu = [*MENU, units]
    chosen = select_tools(menu, user("How many kilometres are 26.2 miles?"))
    assert "convert_units" in names(chosen.tools) and max(chosen.scores, key=chosen.scores.__getitem__) == (
        "convert_units"
    )
    assert names(select_tools(menu, user("What's the weather in Paris today?")).tools) == ["get_weather"]


def test_at_most_limit_tools_and_the_kept_ones_always() -> None:
    messages = user("Convert 100 dollars to euros, then book a flight to Paris and tell me the weather there")
    assert names(select_tools(MENU, messages).tools) == ["get_weather", "book_flight", "convert_currency"]
    assert names(select_tools(MENU, messages, limit=1).tools) == ["book_flight"]
    kept = select_tools(MENU, user("And in Berlin?"), keep=["get_weather"])
    assert names(kept.tools) == ["get_weather"]


def test_the_chosen_tools_keep_the_menus_order() -> None:
    chosen = select_tools(MENU, user("Book a flight and check the weather"))
    assert chosen.scores["book_flight"] > chosen.scores["get_weather"] > 0
    assert names(chosen.tools) == ["get_weather", "book_flight"]


def test_tools_far_below_the_best_match_are_not_shown() -> None:
    messages = user("Translate the subject line of my email to French")
    assert names(select_tools(MENU, messages).tools) == ["send_email"]  # translate_text scores 0.42 of it
    assert names(select_tools(MENU, messages, ratio=0.3).tools) == ["send_email", "translate_text"]


def test_a_near_alike_tool_below_the_best_is_not_shown_an_unlike_one_is() -> None:
    future_value = spec("future_value", "Future value of an investment.", rate="Interest rate", years="Years")
    finance = spec(
        "finance_calculate_future_value",
        "Calculate the future value of an investment given an initial investment, annual rate of return, and a time frame.",
        initial_investment="Initial amount",
        rate_of_return="Annual rate",
        years="Years",
    )
    text = "Calculate the future value of an investment of $20000 at an annual rate of return of 8% over 5 years."
    chosen = select_tools([future_value, *MENU, finance], user(text))
    assert 0.5 < chosen.scores["future_value"] / chosen.scores["finance_calculate_future_value"] < 0.7
    assert names(chosen.tools) == ["finance_calculate_future_value"]  # its words are all the other's
    chosen = select_tools(MENU, user("Email Bob the weather in Paris"))
    assert 0.5 < chosen.scores["send_email"] / chosen.scores["get_weather"] < 0.7
    assert names(chosen.tools) == ["get_weather", "send_email"]  # "email" is a word of its own


def test_each_part_of_a_request_that_asks_for_several_things_gets_its_tool() -> None:
    text = "Book the earliest flight on Friday from origin CDG to destination BER. Then what's the weather in Berlin?"
    chosen = select_tools(MENU, user(text))
    assert chosen.scores["get_weather"] < 0.5 * chosen.scores["book_flight"]  # far below, as a whole
    assert names(chosen.tools) == ["get_weather", "book_flight"]
    chosen = select_tools(MENU, user("What time is it in Tokyo? Also convert 100 dollars to euros."))
    assert names(chosen.tools) == ["current_time", "convert_currency"]
    assert names(select_tools(MENU, user("What time is it in Tokyo and what is 1234 * 5678?")).tools) == [
        "calculator",
        "current_time",
    ]
    chosen = select_tools(CHINESE_MENU, user("查一下北京的天气，然后把结果发邮件给小王"))
    assert names(chosen.tools) == ["查询天气", "发送邮件"]
    assert names(select_tools(CHINESE_MENU, user("北京今天天气怎么样？")).tools) == ["查询天气"]


def test_nothing_in_common_selects_nothing() -> None:
    chosen = select_tools(MENU, user("Write me a haiku about autumn leaves."))
    assert chosen.tools == [] and not chosen.found and chosen.comparable
    assert select_tools([], user("Book a flight. Then check the weather.")).tools == []  # no menu at all


def test_chinese_requests_select_chinese_tools() -> None:
    assert names(select_tools(CHINESE_MENU, user("北京今天天气怎么样？")).tools) == ["查询天气"]
    assert names(select_tools(CHINESE_MENU, user("请把这段话翻译成英文：你好")).tools)[0] == "翻译文本"
    assert select_tools(CHINESE_MENU, user("给我写一首关于秋天的诗")).tools == []


def test_a_request_in_another_script_than_the_tools_is_not_comparable() -> None:
    chosen = select_tools(MENU, user("东京现在几点？"))
    assert chosen.tools == [] and not chosen.comparable


def test_only_large_menus_are_narrowed() -> None:
    model = Narrowing(above=8)
    weather = ModelRequest(user("What's the weather in Paris?"), MENU)
    assert names(model.narrowed(weather).tools) == ["get_weather"]
    assert model.narrowed(ModelRequest(weather.messages, MENU[:8])).tools == MENU[:8]
    assert Narrowing(above=None).narrowed(weather) == weather
    haiku = model.narrowed(ModelRequest(user("Write a haiku."), MENU))
    assert (haiku.tools, haiku.tool_choice) == ([], "none")  # nothing matches: the model answers
    required = ModelRequest(user("Write a haiku."), MENU, "required")
    assert model.narrowed(required) == required  # a call is required: nothing to narrow to, whole menu
    assert (
        model.narrowed(ModelRequest(user("东京现在几点？"), MENU)).tools == MENU
    )  # cannot compare: whole menu
    called = [
        *user("What's the weather in Paris?"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"temperature": 18}'},
        {"role": "user", "content": "Now convert 20 dollars to euros."},
    ]
    assert names(model.narrowed(ModelRequest(called, MENU)).tools) == ["get_weather", "convert_currency"]
    forced = ModelRequest(
        user("Write a haiku."), MENU, {"type": "function", "function": {"name": "calculator"}}
    )
    assert names(model.narrowed(forced).tools) == ["calculator"]


def test_a_few_tools_with_long_definitions_are_narrowed() -> None:
    def long(name: str, words: str) -> dict:
        text = ((words + " ") * 200)[:680]  # 680 characters of description: ~180 tokens a tool
        return {"type": "function", "function": {"name": name, "description": text, "parameters": {}}}

    menu = [
        long("get_weather", "weather forecast city"),
        long("send_email", "email message"),
        long("search", "web"),
    ]
    assert 500 < menu_tokens(menu) < SELECT_TOKENS < menu_tokens([*menu, long("translate", "translate text")])
    request = ModelRequest(user("What's the weather in Paris?"), [*menu, long("translate", "translate text")])
    assert names(Narrowing().narrowed(request).tools) == ["get_weather"]  # 4 tools, over ~600 tokens
    assert Narrowing().narrowed(ModelRequest(request.messages, menu)).tools == menu  # under: whole
    assert Narrowing(tokens=None).narrowed(request) == request  # counted by tools only
    assert Narrowing(tokens=200).narrowed(ModelRequest(request.messages, menu)).tools == menu[:1]


def test_the_built_in_tools_are_shown_whole() -> None:
    from minloop.builtins import default_tools

    specs = [t.spec() for t in default_tools(".")]
    divide = ModelRequest(user("What is 4800 divided by 12?"), specs)
    assert menu_tokens(specs) < SELECT_TOKENS and Narrowing().narrowed(divide) == divide
    # narrowed, each request keeps its tool: the descriptions use the words people ask with
    for text, chosen in [
        ("What is 4800 divided by 12?", ["calculator"]),
        ("What is 1234 times 5678?", ["calculator"]),
        ("What day of the week is it in Sydney?", ["current_time"]),
        ("What is the budget written in notes.md?", ["read_file"]),
    ]:
        assert names(select_tools(specs, user(text)).tools) == chosen, text


def test_the_built_in_tools_with_two_mcp_servers_are_narrowed_to_the_tool_a_request_needs() -> None:
    from minloop.builtins import default_tools
    from minloop.mcp import connect
    from minloop.tools import tool_specs

    async def menu() -> list[dict]:
        async with connect(
            f"{sys.executable} -m mcp_server_time", f"{sys.executable} -m mcp_server_git"
        ) as extra:
            return tool_specs([*default_tools("."), *extra])

    specs = asyncio.run(menu())
    assert len(specs) == 19 and 2000 < menu_tokens(specs) < 2500
    for text, chosen in [
        ("What is 4800 divided by 12?", ["calculator"]),
        ("What is 1234 times 5678?", ["calculator"]),
        ("What day of the week is it in Sydney?", ["current_time"]),
    ]:
        assert names(Narrowing().narrowed(ModelRequest(user(text), specs)).tools) == chosen, text
    for text, needed in [
        ("What time is it in Tokyo?", "get_current_time"),  # a word behind convert_time's example
        ("Show the git log of the repository in /src/app.", "git_log"),  # 0.69 of read_file's score
        ("What changed in the working tree of /src/app?", "git_status"),
    ]:
        shown = names(Narrowing().narrowed(ModelRequest(user(text), specs)).tools)
        assert needed in shown and len(shown) <= 3, text
    chinese = ModelRequest(user("现在东京几点了？"), specs)
    assert Narrowing().narrowed(chinese) == chinese  # nothing to compare: the whole menu
