"""The held-out request set: 62 requests over the tools of ``other_tools.py``, half Chinese.

Written before the policy was tuned and not used to tune it: it checks that what helps on
``user_tools_set.py`` helps on tools and phrasings the policy was not shaped by. Same form and
groups as ``user_tools_set.py`` (``(group, language, request, facts)``).
"""

from __future__ import annotations

from user_tools_set import Fact, Item

DELIVERY = r"12-04|12/04|12\.04|December 4|Dec\.? 4|4(?:th)? (?:of )?Dec|12\s*月\s*(?:4|四)\s*[日号]|out for delivery|派送|配送"
FIRST_42 = r"14[:：]05|2[:：]05\s*(?:pm|p\.m\.)|14\s*点\s*0?5\s*分|下午两点零?五分"
FIRST_7 = r"14[:：]12|2[:：]12\s*(?:pm|p\.m\.)|14\s*点\s*12\s*分|下午两点十二分"

_PAIRS: list[tuple[str, str, str, list[Fact]]] = [
    # one call answers it
    (
        "one_call",
        "What's the air quality index in Delhi right now?",
        "德里现在的空气质量指数是多少？",
        [182.0],
    ),
    (
        "one_call",
        "Is the air clean in Zurich today?",
        "苏黎世今天空气好吗？",
        [r"good|良好|优|(?<!\d)18(?!\d)"],
    ),
    (
        "one_call",
        "Who wrote the book with ISBN 9780141439518?",
        "ISBN 为 9780141439518 的书是谁写的？",
        [r"Austen|奥斯汀|奥斯丁"],
    ),
    (
        "one_call",
        "How many pages does the book 978-0262033848 have?",
        "ISBN 978-0262033848 这本书有多少页？",
        [1312.0],
    ),
    (
        "one_call",
        "Which films are showing in Seoul on 2026-12-05?",
        "2026年12月5日首尔的电影院在放什么电影？",
        [r"Dune|沙丘", r"Paddington|帕丁顿"],
    ),
    (
        "one_call",
        "Where is my UPS parcel 1Z999AA10123456784 now?",
        "我的 UPS 包裹 1Z999AA10123456784 现在在哪里？",
        [r"Louisville|路易斯维尔"],
    ),
    (
        "one_call",
        "When will my SF Express parcel SF1234567890 be delivered?",
        "我的顺丰快递 SF1234567890 什么时候送到？",
        [DELIVERY],
    ),
    (
        "one_call",
        "When does the next number 42 bus leave Central Station?",
        "中央车站的42路公交车下一班几点发车？",
        [FIRST_42],
    ),
    (
        "one_call",
        "What is the first public holiday in Japan in 2027?",
        "日本2027年的第一个公共假日是什么？",
        [r"New Year|元旦|新年"],
    ),
    (
        "one_call",
        "How much is a night at the Hotel Adlon on 2026-12-10?",
        "2026年12月10日阿德隆酒店（Hotel Adlon）住一晚多少钱？",
        [320.0],
    ),
    ("one_call", "What is one bitcoin worth in euros?", "一个比特币值多少欧元？", [89470.0]),
    ("one_call", "How many kilometres are 26.2 miles?", "26.2英里是多少公里？", [42.1648]),
    # the tool fails or finds nothing
    ("not_found", "How many free spaces does the Opera garage have?", "歌剧院停车场现在还有多少空位？", []),
    ("not_found", "Track my DHL parcel JD0123456789.", "帮我查一下 DHL 包裹 JD0123456789 到哪了。", []),
    ("not_found", "Which book has the ISBN 9780000000002?", "ISBN 9780000000002 是哪本书？", []),
    ("not_found", "What's the air quality in Springfield?", "斯普林菲尔德的空气质量怎么样？", []),
    ("not_found", "What films are on in Vienna on 2026-12-24?", "2026年12月24日维也纳有什么电影上映？", []),
    ("not_found", "What are Germany's public holidays in 2027?", "德国2027年有哪些公共假日？", []),
    # asks for what no tool returns
    ("not_returned", "What's the ozone level in Seoul?", "首尔的臭氧浓度是多少？", []),
    (
        "not_returned",
        "How many copies has the book 9780553380163 sold?",
        "ISBN 9780553380163 这本书卖了多少册？",
        [],
    ),
    (
        "not_returned",
        "How heavy is my UPS parcel 1Z999AA10123456784?",
        "我的 UPS 包裹 1Z999AA10123456784 有多重？",
        [],
    ),
    ("not_returned", "Does the Park Hyatt have a swimming pool?", "柏悦酒店（Park Hyatt）有游泳池吗？", []),
    (
        "not_returned",
        "What rating do critics give Nosferatu, showing in Vienna on 2026-12-06?",
        "2026年12月6日在维也纳上映的《Nosferatu》评分是多少？",
        [],
    ),
    ("not_returned", "What will bitcoin cost next month?", "比特币下个月会是什么价格？", []),
    # two calls, or a call and arithmetic
    (
        "two_step",
        "Which city has cleaner air right now, Zurich or Seoul?",
        "苏黎世和首尔现在哪里的空气更干净？",
        [18.0, 64.0],
    ),
    (
        "two_step",
        "What is the AQI in Cairo and in Toronto?",
        "开罗和多伦多的空气质量指数分别是多少？",
        [121.0, 27.0],
    ),
    (
        "two_step",
        "When do the next buses of lines 42 and 7 leave Central Station?",
        "中央车站42路和7路公交车的下一班分别是几点？",
        [FIRST_42, FIRST_7],
    ),
    (
        "two_step",
        "Who wrote ISBN 9780141439518 and who wrote ISBN 9780553380163?",
        "ISBN 9780141439518 和 ISBN 9780553380163 的作者分别是谁？",
        [r"Austen|奥斯汀|奥斯丁", r"Hawking|霍金"],
    ),
    (
        "two_step",
        "How much do 3 nights at the Park Hyatt from 2026-12-10 cost?",
        "从2026年12月10日起在柏悦酒店（Park Hyatt）住3晚要多少钱？",
        [1230.0],
    ),
    ("two_step", "How much are 5 ethereum in US dollars?", "5个以太坊值多少美元？", [18100.0]),
    ("two_step", "How much is 1.5 bitcoin in Chinese yuan?", "1.5个比特币是多少人民币？", [1056135.0]),
]

ITEMS: list[Item] = [
    item for group, en, zh, facts in _PAIRS for item in ((group, "en", en, facts), (group, "zh", zh, facts))
]
