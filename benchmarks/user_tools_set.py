"""The request set of ``user_tools_dev.py``: 90 requests over the tools of ``user_tools.py``, half Chinese.

Each item is ``(group, language, request, facts)``. The groups:

* ``one_call``: one call to one tool answers it;
* ``not_found``: the tool fails (the flight service is down, an unknown city or ticker) or finds
  nothing (an unknown order or person, a search with no hits, an empty day);
* ``not_returned``: asks for what no tool returns (humidity, a forecast, a market value, a
  driver's name, a booking);
* ``two_step``: needs two calls (two cities, two companies, two people, two train routes, which of
  two shares costs less or rose more) or a call and arithmetic (a share price in euros, ten shares, dollars in
  yen, two train tickets).

``facts`` are what a right answer states: each a pattern (case-insensitive) or a number (found
when a number in the answer equals it, rounded to what the answer writes). A ``not_found`` or
``not_returned`` request has none: it is right when declined without an invented value. The
Chinese requests say what the English ones say.
"""

from __future__ import annotations

Fact = str | float
Item = tuple[str, str, str, list[Fact]]

ARRIVAL = r"12-08|12/08|12\.08|December 8|Dec\.? 8|8(?:th)? (?:of )?Dec|12\s*月\s*(?:0?8|八)\s*[日号]"
SUNNY = r"sunny|sun|clear|晴"
RAIN = r"rain|雨"

_PAIRS: list[tuple[str, str, str, list[Fact]]] = [
    # one call answers it
    ("one_call", "What's the weather like in Paris right now?", "巴黎现在天气怎么样？", [18.0, SUNNY]),
    ("one_call", "How cold is it in Oslo at the moment?", "奥斯陆现在有多冷？", [2.0]),
    ("one_call", "Is it raining in London?", "伦敦现在在下雨吗？", [RAIN]),
    ("one_call", "What's the temperature in Tokyo in Fahrenheit?", "东京现在的气温是多少华氏度？", [69.8]),
    ("one_call", "What is Microsoft's share price?", "微软的股价是多少？", [415.1]),
    ("one_call", "How much does one Tesla share cost right now?", "特斯拉现在一股多少钱？", [251.44]),
    ("one_call", "When will my order A1234 arrive?", "我的订单 A1234 什么时候到？", [ARRIVAL]),
    (
        "one_call",
        "What's the status of order B7781?",
        "订单 B7781 现在是什么状态？",
        [r"deliver|送达|签收|交付|送到|已送"],
    ),
    ("one_call", "How many euros do I get for one US dollar?", "1美元能换多少欧元？", [0.92]),
    (
        "one_call",
        "What is the exchange rate from British pounds to Japanese yen?",
        "英镑兑日元的汇率是多少？",
        [191.39],
    ),
    ("one_call", "Find me a Japanese restaurant in Paris.", "帮我在巴黎找一家日本餐厅。", ["Sakura"]),
    (
        "one_call",
        "What is Ada Lovelace's email address?",
        "Ada Lovelace 的邮箱地址是什么？",
        [r"ada\.lovelace@example\.com"],
    ),
    ("one_call", "What is Wang Wei's phone number?", "王伟的电话号码是多少？", [r"5555[\s-]?0142"]),
    (
        "one_call",
        "What do I have in my calendar on 2026-12-04?",
        "我2026年12月4日的日程上有什么？",
        [r"stand-?up|站会|晨会|例会", r"dentist|牙"],
    ),
    (
        "one_call",
        "When does the first train from Paris to Lyon leave on 2026-12-05?",
        "2026年12月5日从巴黎到里昂的第一班火车几点出发？",
        [r"0?7[:：]04|7\s*点\s*0?4\s*分|七点零?四分"],
    ),
    (
        "one_call",
        "Did Tesla's share price go up or down today?",
        "特斯拉的股价今天是涨了还是跌了？",
        [r"down|fell|fall|drop|declin|lower|跌|下降|降了"],
    ),
    # the tool fails or finds nothing
    ("not_found", "Is flight BA117 on time on 2026-12-03?", "2026年12月3日的 BA117 航班准点吗？", []),
    (
        "not_found",
        "What's the status of flight LH401 on 2026-12-10?",
        "LH401 航班2026年12月10日的状态如何？",
        [],
    ),
    ("not_found", "Where is my order Z9999?", "我的订单 Z9999 到哪里了？", []),
    ("not_found", "What is Grace Hopper's email address?", "李娜的邮箱地址是什么？", []),
    ("not_found", "Find an Ethiopian restaurant in Oslo.", "在奥斯陆找一家埃塞俄比亚餐厅。", []),
    ("not_found", "What's on my calendar on 2026-12-25?", "我2026年12月25日有什么安排？", []),
    ("not_found", "What's the weather in Atlantis?", "亚特兰蒂斯的天气怎么样？", []),
    ("not_found", "What's the share price of the ticker QQXZ?", "股票代码 QQXZ 的股价是多少？", []),
    # asks for what no tool returns
    ("not_returned", "What's the humidity in Paris?", "巴黎现在的湿度是多少？", []),
    ("not_returned", "What is Apple's market capitalisation?", "苹果公司的市值是多少？", []),
    (
        "not_returned",
        "What's the name of the driver delivering my order A1234?",
        "给我送订单 A1234 的快递员叫什么名字？",
        [],
    ),
    ("not_returned", "What will the weather be in Berlin next week?", "柏林下周的天气会怎么样？", []),
    ("not_returned", "What's Ada Lovelace's home address?", "Ada Lovelace 的家庭住址是什么？", []),
    (
        "not_returned",
        "How many seats are left on the first train from Paris to Lyon on 2026-12-05?",
        "2026年12月5日从巴黎到里昂的第一班火车还剩多少座位？",
        [],
    ),
    ("not_returned", "How heavy is the parcel of order C5502?", "订单 C5502 的包裹有多重？", []),
    (
        "not_returned",
        "Book me a table at Sakura in Paris for tonight.",
        "帮我预订今晚巴黎 Sakura 餐厅的位子。",
        [],
    ),
    # two calls, or a call and arithmetic
    ("two_step", "Is it warmer in Paris or in Berlin right now?", "现在巴黎和柏林哪里更暖和？", [18.0, 12.0]),
    ("two_step", "What's the weather in Tokyo and in Sydney?", "东京和悉尼的天气怎么样？", [21.0, 27.0]),
    (
        "two_step",
        "What are the share prices of Apple and Amazon?",
        "苹果和亚马逊的股价分别是多少？",
        [228.52, 197.12],
    ),
    (
        "two_step",
        "What are the phone numbers of Ada Lovelace and Alan Turing?",
        "Ada Lovelace 和 Alan Turing 的电话号码分别是多少？",
        [r"7946[\s-]?0018", r"496[\s-]?0735"],
    ),
    (
        "two_step",
        "What is the status of order A1234, and of order C5502?",
        "订单A1234和C5502分别是什么状态？",
        [r"shipped|已发货|发货", r"processing|处理中|正在处理"],
    ),
    ("two_step", "What is Microsoft's share price in euros?", "微软的股价换算成欧元是多少？", [381.89]),
    ("two_step", "How much do 10 shares of Nvidia cost?", "买10股英伟达要多少钱？", [1318.8]),
    ("two_step", "How much is 250 US dollars in Japanese yen?", "250美元是多少日元？", [37800.0]),
    (
        "two_step",
        "When does the first train leave on 2026-12-05 from Paris to Lyon, and from Paris to Marseille?",
        "2026年12月5日从巴黎到里昂和从巴黎到马赛的第一班火车分别几点出发？",
        [r"0?7[:：]04|7\s*点\s*0?4\s*分", r"0?6[:：]58|6\s*点\s*58\s*分"],
    ),
    (
        "two_step",
        "Which costs less right now, an Apple share or an Amazon share?",
        "现在一股苹果和一股亚马逊，哪个更便宜？",
        [r"amazon|亚马逊|AMZN", 197.12],
    ),
    (
        "two_step",
        "How much do two second-class tickets on the 07:04 train from Paris to Lyon on 2026-12-05 cost?",
        "2026年12月5日巴黎到里昂07:04那班火车，两张二等座票一共多少钱？",
        [178.0],
    ),
    (
        "two_step",
        "On 2026-12-05, when do the first trains from Paris to Lyon and Marseille leave?",
        "2026年12月5日从巴黎到里昂和马赛的第一班火车分别几点出发？",
        [r"0?7[:：]04|7\s*点\s*0?4\s*分", r"0?6[:：]58|6\s*点\s*58\s*分"],
    ),
    (
        "two_step",
        "Which share rose more today, Tesla or Nvidia?",
        "特斯拉和英伟达今天哪个涨得多？",
        [r"nvidia|英伟达|NVDA", 3.5, 2.1],
    ),
]

ITEMS: list[Item] = [
    item for group, en, zh, facts in _PAIRS for item in ((group, "en", en, facts), (group, "zh", zh, facts))
]
GROUPS = ("one_call", "not_found", "not_returned", "two_step")
