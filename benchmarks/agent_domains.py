"""Tool domains for the generated request set (``agent_set.py``), first half: eight domains.

Each domain is a few ordinary tools with fixed data, and a function that writes its requests from
a random source: ``(group, English, Chinese, facts)`` per request, in the four groups of
``agent_set.GROUPS``. Names a user may write in Chinese are accepted in either language, as a
service with localised names would. Results are in English.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from minloop import Tool, tool

Fact = str | float
Pair = tuple[str, str, str, list[Fact]]


@dataclass(frozen=True)
class Domain:
    name: str
    tools: list[Tool]
    requests: Callable[[random.Random], list[Pair]]


def clock(hh: int, mm: int) -> str:
    """A time of day as an answer may write it (07:04, 7:04, 7点04分)."""
    return rf"(?<!\d)0?{hh}[:：]{mm:02d}|(?<!\d){hh}\s*点\s*0?{mm}\s*分?"


def day(month: int, dom: int) -> str:
    """A date of 2026/2027 as an answer may write it."""
    names = "January February March April May June July August September October November December"
    name = names.split()[month - 1]
    return (
        rf"{month:02d}-{dom:02d}|(?<!\d){month}/{dom}(?!\d)|{name[:3]}\w*\.? {dom}(?!\d)|"
        rf"{dom}(?:st|nd|rd|th)? (?:of )?{name[:3]}|{month}\s*月\s*{dom}\s*[日号]"
    )


def alias(table: dict[str, str], name: str, known: Any) -> str:
    """``name`` (English or Chinese, any case) as a key of ``known``; ``LookupError`` if unknown."""
    key = table.get(name.strip(), name.strip())
    for candidate in known:
        if candidate.lower() == key.lower():
            return str(candidate)
    raise LookupError(f"not found: {name}")


# --- a lending library -------------------------------------------------------------------------
TITLES = {"霍比特人": "The Hobbit", "沙丘": "Dune", "白鲸记": "Moby-Dick", "战争与和平": "War and Peace",
          "百年孤独": "One Hundred Years of Solitude", "小王子": "The Little Prince"}  # fmt: skip
COPIES = {"The Hobbit": (6, 2), "Dune": (4, 0), "Moby-Dick": (3, 3), "War and Peace": (5, 1),
          "One Hundred Years of Solitude": (4, 3), "The Little Prince": (8, 5)}  # fmt: skip
LOANS = {
    "M-2041": [("Dune", 2026, 12, 11), ("The Hobbit", 2026, 12, 19)],
    "M-3318": [("War and Peace", 2026, 12, 9)],
    "M-5120": [],
}


@tool(timeout=2.0)
def book_availability(title: str) -> dict[str, Any]:
    """How many copies of a book the library owns and how many are on the shelf now.

    Args:
        title: The book's title.
    """
    try:
        name = alias(TITLES, title, COPIES)
    except LookupError:
        return {"title": title, "found": False}
    total, free = COPIES[name]
    return {"title": name, "found": True, "copies_total": total, "copies_available": free}


@tool(timeout=2.0)
def member_loans(member_id: str) -> dict[str, Any]:
    """The books a library member has borrowed, with their due dates.

    Args:
        member_id: The member's card number, e.g. "M-1000".
    """
    key = member_id.strip().upper()
    if key not in LOANS:
        raise LookupError(f"no member {member_id}")
    loans = [{"title": t, "due": f"{y}-{m:02d}-{d:02d}"} for t, y, m, d in LOANS[key]]
    return {"member_id": key, "loans": loans}


def _library(rng: random.Random) -> list[Pair]:
    zh = {v: k for k, v in TITLES.items()}
    a, b, c = rng.sample([t for t in COPIES if COPIES[t][1]], 3)
    _, t, _, m, d = ("M-2041", *LOANS["M-2041"][rng.randrange(2)])
    return [
        ("one_call", f"How many copies of {a} are on the shelf right now?", f"《{zh[a]}》现在架上有几本？",
         [float(COPIES[a][1])]),
        ("one_call", f"How many copies of {b} does the library own?", f"图书馆一共有几本《{zh[b]}》？",
         [float(COPIES[b][0])]),
        ("one_call", f"When is {t} due back on card M-2041?", f"借书证 M-2041 借的《{zh[t]}》哪天到期？", [day(m, d)]),
        ("two_step", f"How many copies of {a} and {c} are available altogether?",
         f"《{zh[a]}》和《{zh[c]}》现在一共有几本可借？", [float(COPIES[a][1] + COPIES[c][1])]),
        ("two_step", f"How many copies of {b} are currently lent out?", f"《{zh[b]}》现在借出去了几本？",
         [float(COPIES[b][0] - COPIES[b][1])]),
        ("two_step", f"Which has more copies on the shelf, {a} or {c}?", f"《{zh[a]}》和《{zh[c]}》哪本架上的更多？",
         [(a if COPIES[a][1] > COPIES[c][1] else c).split()[-1] + "|" + zh[a if COPIES[a][1] > COPIES[c][1] else c]]),
        ("not_found", "How many copies of The Silent Orchard are available?", "《寂静果园》现在有几本可借？", []),
        ("not_found", "What books does card M-9999 have on loan?", "借书证 M-9999 借了哪些书？", []),
        ("not_returned", f"Who wrote {a}?", f"《{zh[a]}》的作者是谁？", []),
        ("not_returned", f"How many pages does {b} have?", f"《{zh[b]}》有多少页？", []),
    ]  # fmt: skip


# --- a company directory -----------------------------------------------------------------------
PEOPLE = {"Maria Lopez": ("sales", "Madrid", "4417"), "Kenji Sato": ("legal", "Tokyo", "2093"),
          "Li Na": ("engineering", "Shanghai", "3380"), "Omar Haddad": ("sales", "Dubai", "4521"),
          "Emma Berg": ("engineering", "Oslo", "3312"), "Zhang Wei": ("finance", "Beijing", "5106")}  # fmt: skip
PEOPLE_ZH = {"李娜": "Li Na", "张伟": "Zhang Wei"}
OFFICES_ZH = {
    "Madrid": "马德里",
    "Tokyo": "东京",
    "Shanghai": "上海",
    "Dubai": "迪拜",
    "Oslo": "奥斯陆",
    "Beijing": "北京",
}
TEAMS = ("sales", "legal", "engineering", "finance", "design")
TEAMS_ZH = {
    "sales": "销售部",
    "legal": "法务部",
    "engineering": "工程部",
    "finance": "财务部",
    "design": "设计部",
}


@tool(timeout=2.0)
def find_employee(name: str) -> dict[str, Any]:
    """Look up a colleague in the company directory: team, office and phone extension.

    Args:
        name: The colleague's full name.
    """
    try:
        who = alias(PEOPLE_ZH, name, PEOPLE)
    except LookupError:
        return {"name": name, "found": False}
    team, office, extension = PEOPLE[who]
    return {"name": who, "found": True, "team": team, "office": office, "extension": extension}


@tool(timeout=2.0)
def team_members(team: Literal["sales", "legal", "engineering", "finance", "design"]) -> dict[str, Any]:
    """List the people in one of the company's teams.

    Args:
        team: The team.
    """
    return {"team": team, "members": [n for n, p in PEOPLE.items() if p[0] == team]}


def _directory(rng: random.Random) -> list[Pair]:
    zh = {v: k for k, v in PEOPLE_ZH.items()}
    a, b = rng.sample(list(PEOPLE), 2)
    team = rng.choice(["sales", "engineering"])
    count = sum(p[0] == team for p in PEOPLE.values())
    both = sum(p[0] in ("sales", "legal") for p in PEOPLE.values())
    return [
        ("one_call", f"What is {a}'s phone extension?", f"{zh.get(a, a)}的分机号是多少？", [float(PEOPLE[a][2])]),
        ("one_call", f"Which office does {b} work in?", f"{zh.get(b, b)}在哪个办公室工作？",
         [PEOPLE[b][1] + "|" + OFFICES_ZH[PEOPLE[b][1]]]),
        ("one_call", f"How many people are in the {team} team?", f"{TEAMS_ZH[team]}有几个人？", [float(count)]),
        ("two_step", f"What are the extensions of {a} and {b}?", f"{zh.get(a, a)}和{zh.get(b, b)}的分机号分别是多少？",
         [float(PEOPLE[a][2]), float(PEOPLE[b][2])]),
        ("two_step", "How many people work in sales and legal together?", "销售部和法务部一共有多少人？", [float(both)]),
        ("two_step", f"Do {a} and {b} work in the same office? Name both offices.",
         f"{zh.get(a, a)}和{zh.get(b, b)}在同一个办公室吗？说出两个办公室。", [f"{o}|{OFFICES_ZH[o]}" for o in (PEOPLE[a][1], PEOPLE[b][1])]),
        ("not_found", "What is Pierre Dubois's extension?", "Pierre Dubois 的分机号是多少？", []),
        ("not_found", "Who is in the design team?", "设计部有哪些人？", []),
        ("not_returned", f"What is {a}'s salary?", f"{zh.get(a, a)}的工资是多少？", []),
        ("not_returned", f"When did {b} join the company?", f"{zh.get(b, b)}是哪一年入职的？", []),
    ]  # fmt: skip


# --- recipes -----------------------------------------------------------------------------------
DISHES = {"宫保鸡丁": "kung pao chicken", "番茄炒蛋": "tomato egg stir-fry", "罗宋汤": "borscht",
          "西班牙海鲜饭": "paella", "凯撒沙拉": "caesar salad"}  # fmt: skip
NUTRITION = {"kung pao chicken": (430, 27, 15, 10), "tomato egg stir-fry": (250, 14, 10, 8),
             "borscht": (180, 6, 25, 60), "paella": (520, 24, 20, 40), "caesar salad": (310, 9, 15, 0)}  # fmt: skip
# kcal per serving, protein (g), preparation (min), cooking (min)


@tool(timeout=2.0)
def dish_nutrition(dish: str, servings: int = 1) -> dict[str, Any]:
    """Calories (kcal) and protein (grams) in servings of a dish.

    Args:
        dish: The dish's name.
        servings: How many servings.
    """
    try:
        name = alias(DISHES, dish, NUTRITION)
    except LookupError:
        return {"dish": dish, "found": False}
    kcal, protein, _, _ = NUTRITION[name]
    return {"dish": name, "found": True, "servings": servings, "kcal": kcal * servings,
            "protein_g": protein * servings}  # fmt: skip


@tool(timeout=2.0)
def dish_times(dish: str) -> dict[str, Any]:
    """How long a dish takes: preparation and cooking, in minutes.

    Args:
        dish: The dish's name.
    """
    try:
        name = alias(DISHES, dish, NUTRITION)
    except LookupError:
        return {"dish": dish, "found": False}
    return {
        "dish": name,
        "found": True,
        "prep_minutes": NUTRITION[name][2],
        "cook_minutes": NUTRITION[name][3],
    }


def _recipes(rng: random.Random) -> list[Pair]:
    zh = {v: k for k, v in DISHES.items()}
    a, b = rng.sample([d for d in NUTRITION if NUTRITION[d][3]], 2)
    n = rng.choice([2, 3, 4])
    return [
        ("one_call", f"How many calories are in one serving of {a}?", f"一份{zh[a]}有多少卡路里？", [float(NUTRITION[a][0])]),
        ("one_call", f"How much protein is in {n} servings of {b}?", f"{n}份{zh[b]}含多少克蛋白质？",
         [float(NUTRITION[b][1] * n)]),
        ("one_call", f"How long does {a} need to cook?", f"{zh[a]}要煮多长时间？", [float(NUTRITION[a][3])]),
        ("two_step", f"How many calories are one serving of {a} and one of {b} together?",
         f"一份{zh[a]}加一份{zh[b]}一共多少卡路里？", [float(NUTRITION[a][0] + NUTRITION[b][0])]),
        ("two_step", f"How long does {b} take in total, preparation and cooking?", f"做{zh[b]}从准备到煮好一共要多少分钟？",
         [float(NUTRITION[b][2] + NUTRITION[b][3])]),
        ("two_step", f"Which has more calories per serving, {a} or {b}?", f"{zh[a]}和{zh[b]}哪个每份热量更高？",
         [zh[max(a, b, key=lambda d: NUTRITION[d][0])] + "|" + max(a, b, key=lambda d: NUTRITION[d][0]).split()[0]]),
        ("not_found", "How many calories are in a serving of moussaka?", "一份穆萨卡有多少卡路里？", []),
        ("not_found", "How long does beef wellington take to cook?", "惠灵顿牛排要煮多久？", []),
        ("not_returned", f"How much does it cost to make {a}?", f"做一份{zh[a]}要花多少钱？", []),
        ("not_returned", f"How much sugar is in {b}?", f"{zh[b]}里有多少克糖？", []),
    ]  # fmt: skip


# --- car rental --------------------------------------------------------------------------------
RENT_CITIES = {"马德里": "Madrid", "里斯本": "Lisbon", "米兰": "Milan", "布拉格": "Prague"}
DAILY = {"Madrid": {"economy": 31.0, "compact": 38.0, "suv": 64.0, "van": 82.0},
         "Lisbon": {"economy": 27.0, "compact": 33.0, "suv": 59.0, "van": 75.0},
         "Milan": {"economy": 35.0, "compact": 41.0, "suv": 71.0, "van": 90.0}}  # fmt: skip
BRANCHES = {"Madrid": [("Barajas Airport", "06:00", "23:30"), ("Atocha Station", "08:00", "20:00")],
            "Lisbon": [("Lisbon Airport", "07:00", "23:00")], "Milan": [("Centrale", "08:00", "19:00")],
            "Prague": []}  # fmt: skip
CAR_ZH = {"economy": "经济型", "compact": "紧凑型", "suv": "SUV", "van": "面包车"}


@tool(timeout=2.0)
def rental_quote(
    city: str, pickup_date: str, car_class: Literal["economy", "compact", "suv", "van"]
) -> dict[str, Any]:
    """The daily price of renting a car in a city from a pickup date, in euros.

    Args:
        city: The city to pick the car up in.
        pickup_date: The pickup day, as YYYY-MM-DD.
        car_class: The size of car.
    """
    name = alias(RENT_CITIES, city, DAILY)
    return {"city": name, "pickup_date": pickup_date, "car_class": car_class,
            "price_per_day": DAILY[name][car_class], "currency": "EUR"}  # fmt: skip


@tool(timeout=2.0)
def rental_branches(city: str) -> dict[str, Any]:
    """The car rental's branches in a city, with their opening hours.

    Args:
        city: The city.
    """
    name = alias(RENT_CITIES, city, BRANCHES)
    return {"city": name, "branches": [{"name": n, "opens": o, "closes": c} for n, o, c in BRANCHES[name]]}


def _rental(rng: random.Random) -> list[Pair]:
    zh = {v: k for k, v in RENT_CITIES.items()}
    c1, c2 = rng.sample(list(DAILY), 2)
    k1, k2 = rng.sample(list(CAR_ZH), 2)
    days = rng.choice([3, 4, 5])
    date, date_zh = "2026-12-18", "2026年12月18日"
    return [
        ("one_call", f"How much is a {k1} car per day in {c1} from {date}?", f"{date_zh}在{zh[c1]}租一辆{CAR_ZH[k1]}车每天多少钱？",
         [DAILY[c1][k1]]),
        ("one_call", "When does the Atocha Station branch in Madrid close?", "马德里阿托查车站的租车网点几点关门？", [clock(20, 0)]),
        ("one_call", f"How many rental branches are there in {c2}?", f"{zh[c2]}有几个租车网点？", [float(len(BRANCHES[c2]))]),
        ("two_step", f"What would {days} days of a {k2} car in {c2} cost, picking up on {date}?",
         f"{date_zh}起在{zh[c2]}租{days}天{CAR_ZH[k2]}车一共多少钱？", [DAILY[c2][k2] * days]),
        ("two_step", f"How much more per day is a {k1} than a {k2} in {c1} on {date}?",
         f"{date_zh}在{zh[c1]}，{CAR_ZH[k1]}车比{CAR_ZH[k2]}车每天贵多少？", [abs(DAILY[c1][k1] - DAILY[c1][k2])]),
        ("two_step", f"Is a {k1} car cheaper in {c1} or in {c2} on {date}?", f"{date_zh}租{CAR_ZH[k1]}车，{zh[c1]}和{zh[c2]}哪里更便宜？",
         [(lambda w: w + "|" + zh[w])(min(c1, c2, key=lambda c: DAILY[c][k1]))]),
        ("not_found", "Where can I rent a car in Prague?", "在布拉格哪里可以租车？", []),
        ("not_found", f"How much is an economy car per day in Oslo from {date}?", f"{date_zh}在奥斯陆租经济型车每天多少钱？", []),
        ("not_returned", f"How much is the insurance for a {k1} car in {c1}?", f"在{zh[c1]}租{CAR_ZH[k1]}车的保险多少钱？", []),
        ("not_returned", f"What fuel policy does the {c2} branch have?", f"{zh[c2]}的租车网点是什么燃油政策？", []),
    ]  # fmt: skip


DOMAINS_A = [
    Domain("library", [book_availability, member_loans], _library),
    Domain("directory", [find_employee, team_members], _directory),
    Domain("recipes", [dish_nutrition, dish_times], _recipes),
    Domain("car_rental", [rental_quote, rental_branches], _rental),
]
