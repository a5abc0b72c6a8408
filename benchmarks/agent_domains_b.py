"""Tool domains for the generated request set, second part: energy meters, museums, planets,
software packages (see ``agent_domains.py`` for the shape of a domain)."""

from __future__ import annotations

import random
from typing import Any, Literal

from agent_domains import Domain, Pair, alias, clock

from minloop import tool

# --- electricity meters ------------------------------------------------------------------------
METERS = {"EM-40211": {"2026-09": (212.0, 61.48), "2026-10": (265.0, 76.85), "2026-11": (318.0, 92.22)},
          "EM-77120": {"2026-09": (140.0, 40.6), "2026-10": (151.0, 43.79), "2026-11": (197.0, 57.13)}}  # fmt: skip
MONTHS_ZH = {"2026-09": "2026年9月", "2026-10": "2026年10月", "2026-11": "2026年11月"}
MONTHS_EN = {"2026-09": "September 2026", "2026-10": "October 2026", "2026-11": "November 2026"}


@tool(timeout=2.0)
def meter_usage(meter_id: str, month: str) -> dict[str, Any]:
    """Electricity used on a meter in one month (kWh) and what it cost (EUR).

    Args:
        meter_id: The meter's number, e.g. "EM-10000".
        month: The month, as YYYY-MM.
    """
    key = meter_id.strip().upper()
    if key not in METERS:
        raise LookupError(f"no meter {meter_id}")
    if month.strip() not in METERS[key]:
        return {"meter_id": key, "month": month, "readings": []}
    kwh, cost = METERS[key][month.strip()]
    return {"meter_id": key, "month": month.strip(), "kwh": kwh, "cost": cost, "currency": "EUR"}


def _energy(rng: random.Random) -> list[Pair]:
    meter = rng.choice(list(METERS))
    m1, m2 = sorted(rng.sample(list(MONTHS_EN), 2))
    kwh1, cost1 = METERS[meter][m1]
    kwh2, cost2 = METERS[meter][m2]
    return [
        ("one_call", f"How many kWh did meter {meter} use in {MONTHS_EN[m1]}?", f"电表 {meter} 在{MONTHS_ZH[m1]}用了多少度电？", [kwh1]),
        ("one_call", f"What did the electricity on meter {meter} cost in {MONTHS_EN[m2]}?",
         f"电表 {meter} {MONTHS_ZH[m2]}的电费是多少？", [cost2]),
        ("one_call", f"How much power did {meter} consume in {MONTHS_EN[m2]}?", f"{meter} 这个电表{MONTHS_ZH[m2]}耗电多少千瓦时？", [kwh2]),
        ("two_step", f"How many kWh did meter {meter} use in {MONTHS_EN[m1]} and {MONTHS_EN[m2]} together?",
         f"电表 {meter} {MONTHS_ZH[m1]}和{MONTHS_ZH[m2]}一共用了多少度电？", [kwh1 + kwh2]),
        ("two_step", f"How much more did meter {meter} cost in {MONTHS_EN[m2]} than in {MONTHS_EN[m1]}?",
         f"电表 {meter} {MONTHS_ZH[m2]}的电费比{MONTHS_ZH[m1]}多多少？", [round(cost2 - cost1, 2)]),
        ("two_step", f"What was the price per kWh on meter {meter} in {MONTHS_EN[m1]}?",
         f"电表 {meter} {MONTHS_ZH[m1]}每度电多少钱？", [round(cost1 / kwh1, 2)]),
        ("not_found", "How much electricity did meter EM-99999 use in October 2026?", "电表 EM-99999 在2026年10月用了多少电？", []),
        ("not_found", f"How many kWh did meter {meter} use in March 2026?", f"电表 {meter} 在2026年3月用了多少度电？", []),
        ("not_returned", f"Which supplier is meter {meter} with?", f"电表 {meter} 的供电公司是哪家？", []),
        ("not_returned", f"How much CO2 did meter {meter} cause in {MONTHS_EN[m1]}?", f"电表 {meter} {MONTHS_ZH[m1]}排放了多少二氧化碳？", []),
    ]  # fmt: skip


# --- museums -----------------------------------------------------------------------------------
MUSEUMS = {
    "卢浮宫": "Louvre",
    "大英博物馆": "British Museum",
    "普拉多博物馆": "Prado",
    "国立博物馆": "Rijksmuseum",
}
HOURS = {"Louvre": ("09:00", "18:00", "Tuesday"), "British Museum": ("10:00", "17:00", None),
         "Prado": ("10:00", "20:00", None), "Rijksmuseum": ("09:00", "17:00", None)}  # fmt: skip
TICKETS = {"Louvre": {"adult": 22.0, "child": 0.0, "senior": 22.0, "student": 0.0},
           "Prado": {"adult": 15.0, "child": 0.0, "senior": 7.5, "student": 7.5},
           "Rijksmuseum": {"adult": 22.5, "child": 0.0, "senior": 22.5, "student": 22.5}}  # fmt: skip
VISITOR_ZH = {"adult": "成人", "child": "儿童", "senior": "老人", "student": "学生"}


@tool(timeout=2.0)
def museum_hours(museum: str, date: str) -> dict[str, Any]:
    """Whether a museum is open on a day, and its opening and closing times.

    Args:
        museum: The museum's name.
        date: The day, as YYYY-MM-DD.
    """
    import datetime

    name = alias(MUSEUMS, museum, HOURS)
    opens, closes, shut = HOURS[name]
    weekday = datetime.date.fromisoformat(date.strip()).strftime("%A")
    if weekday == shut:
        return {"museum": name, "date": date, "open": False}
    return {"museum": name, "date": date, "open": True, "opens": opens, "closes": closes}


@tool(timeout=2.0)
def museum_ticket(
    museum: str, visitor: Literal["adult", "child", "senior", "student"] = "adult"
) -> dict[str, Any]:
    """The price of one entry ticket to a museum, in euros.

    Args:
        museum: The museum's name.
        visitor: Who the ticket is for.
    """
    name = alias(MUSEUMS, museum, HOURS)
    if name not in TICKETS:
        raise ConnectionError("the ticket service returned HTTP 503")
    return {"museum": name, "visitor": visitor, "price": TICKETS[name][visitor], "currency": "EUR"}


def _museums(rng: random.Random) -> list[Pair]:
    zh = {v: k for k, v in MUSEUMS.items()}
    a, b = rng.sample(list(TICKETS), 2)
    kind = rng.choice(["senior", "student"])
    adults = rng.choice([2, 3])
    opens, closes, _ = HOURS[b]
    hh, mm = (int(x) for x in closes.split(":"))
    return [
        ("one_call", f"How much is an adult ticket to the {a}?", f"{zh[a]}的成人票多少钱？", [TICKETS[a]["adult"]]),
        ("one_call", f"When does the {b} close on 2026-12-10?", f"2026年12月10日{zh[b]}几点关门？", [clock(hh, mm)]),
        ("one_call", f"What does a {kind} ticket to the {a} cost?", f"{zh[a]}的{VISITOR_ZH[kind]}票多少钱？", [TICKETS[a][kind]]),
        ("two_step", f"What do {adults} adult tickets to the {b} cost?", f"{adults}张{zh[b]}成人票一共多少钱？", [TICKETS[b]["adult"] * adults]),
        ("two_step", f"Which is cheaper for an adult, the {a} or the {b}?", f"{zh[a]}和{zh[b]}哪个成人票更便宜？",
         [(lambda w: f"{w}|{zh[w]}")(min(a, b, key=lambda m: (TICKETS[m]["adult"], m)))]),
        ("two_step", f"What do one adult and one {kind} ticket to the {a} cost together?",
         f"{zh[a]}一张成人票加一张{VISITOR_ZH[kind]}票一共多少钱？", [TICKETS[a]["adult"] + TICKETS[a][kind]]),
        ("not_found", "How much is an adult ticket to the British Museum?", "大英博物馆的成人票多少钱？", []),
        ("not_found", "When does the Guggenheim Bilbao open on 2026-12-10?", "2026年12月10日毕尔巴鄂古根海姆博物馆几点开门？", []),
        ("not_returned", f"Which exhibitions are on at the {a}?", f"{zh[a]}现在有什么展览？", []),
        ("not_returned", f"How crowded is the {b} today?", f"{zh[b]}今天人多吗？", []),
    ]  # fmt: skip


# --- planets -----------------------------------------------------------------------------------
PLANETS_ZH = {
    "水星": "Mercury",
    "金星": "Venus",
    "火星": "Mars",
    "木星": "Jupiter",
    "土星": "Saturn",
    "海王星": "Neptune",
}
PLANETS = {"Mercury": (4879, 0, 0.39, 4222.6), "Venus": (12104, 0, 0.72, 2802.0), "Mars": (6792, 2, 1.52, 24.7),
           "Jupiter": (142984, 95, 5.2, 9.9), "Saturn": (120536, 146, 9.54, 10.7), "Neptune": (49528, 16, 30.07, 16.1)}  # fmt: skip
# diameter (km), moons, distance from the sun (AU), day length (hours)


@tool(timeout=2.0)
def planet_facts(planet: str) -> dict[str, Any]:
    """Facts about a planet of the solar system: diameter, number of moons, distance from the sun
    and the length of its day.

    Args:
        planet: The planet's name.
    """
    name = alias(PLANETS_ZH, planet, PLANETS)
    km, moons, au, hours = PLANETS[name]
    return {
        "planet": name,
        "diameter_km": km,
        "moons": moons,
        "distance_from_sun_au": au,
        "day_length_hours": hours,
    }


def _planets(rng: random.Random) -> list[Pair]:
    zh = {v: k for k, v in PLANETS_ZH.items()}
    a, b = rng.sample(["Mars", "Jupiter", "Saturn", "Neptune"], 2)
    c = rng.choice(["Mercury", "Venus"])
    return [
        ("one_call", f"How many moons does {a} have?", f"{zh[a]}有几颗卫星？", [float(PLANETS[a][1])]),
        ("one_call", f"What is the diameter of {c} in kilometres?", f"{zh[c]}的直径是多少公里？", [float(PLANETS[c][0])]),
        ("one_call", f"How long is a day on {b}, in hours?", f"{zh[b]}上的一天有多少小时？", [PLANETS[b][3]]),
        ("two_step", f"How many moons do {a} and {b} have together?", f"{zh[a]}和{zh[b]}一共有多少颗卫星？",
         [float(PLANETS[a][1] + PLANETS[b][1])]),
        ("two_step", f"How much farther from the sun is {b} than {c}, in AU?", f"{zh[b]}比{zh[c]}离太阳远多少天文单位？",
         [round(PLANETS[b][2] - PLANETS[c][2], 2)]),
        ("two_step", f"What is the radius of {a} in kilometres?", f"{zh[a]}的半径是多少公里？", [PLANETS[a][0] / 2]),
        ("not_found", "How many moons does Pluto have?", "冥王星有几颗卫星？", []),
        ("not_found", "What is the diameter of the planet Vulcan?", "祝融星的直径是多少？", []),
        ("not_returned", f"What is the surface temperature of {a}?", f"{zh[a]}表面温度是多少？", []),
        ("not_returned", f"Who discovered {b}?", f"{zh[b]}是谁发现的？", []),
    ]  # fmt: skip


# --- software packages -------------------------------------------------------------------------
PACKAGES = {"tidyparse": ("3.2.1", "2026-10-14", "MIT"), "quickgraph": ("0.9.4", "2026-11-02", "Apache-2.0"),
            "loglens": ("1.18.0", "2026-09-21", "BSD-3-Clause"), "ferrite-db": ("5.0.2", "2026-11-27", "MPL-2.0")}  # fmt: skip
DOWNLOADS = {("tidyparse", "2026-10"): 48210, ("tidyparse", "2026-11"): 52877, ("quickgraph", "2026-10"): 9120,
             ("quickgraph", "2026-11"): 11304, ("loglens", "2026-10"): 130552, ("loglens", "2026-11"): 127019,
             ("ferrite-db", "2026-10"): 2240, ("ferrite-db", "2026-11"): 6011}  # fmt: skip


@tool(timeout=2.0)
def package_info(name: str) -> dict[str, Any]:
    """A software package's latest version, its release date and its licence.

    Args:
        name: The package's name.
    """
    key = name.strip().lower()
    if key not in PACKAGES:
        return {"name": name, "found": False}
    version, released, licence = PACKAGES[key]
    return {"name": key, "found": True, "latest_version": version, "released": released, "license": licence}


@tool(timeout=2.0)
def package_downloads(name: str, month: str) -> dict[str, Any]:
    """How many times a package was downloaded in a month.

    Args:
        name: The package's name.
        month: The month, as YYYY-MM.
    """
    key = (name.strip().lower(), month.strip())
    if key not in DOWNLOADS:
        raise LookupError(f"no download figures for {name} in {month}")
    return {"name": key[0], "month": key[1], "downloads": DOWNLOADS[key]}


def _packages(rng: random.Random) -> list[Pair]:
    a, b = rng.sample(list(PACKAGES), 2)
    version, released, licence = PACKAGES[a]
    return [
        ("one_call", f"What is the latest version of {a}?", f"{a} 的最新版本是多少？", [version.replace(".", r"\.")]),
        ("one_call", f"Under which licence is {b} published?", f"{b} 用的是什么许可证？", [PACKAGES[b][2].replace("-", "[- ]?")]),
        ("one_call", f"How many times was {b} downloaded in November 2026?", f"{b} 在2026年11月被下载了多少次？",
         [float(DOWNLOADS[(b, "2026-11")])]),
        ("two_step", f"How many downloads did {a} have in October and November 2026 together?",
         f"{a} 在2026年10月和11月一共被下载了多少次？", [float(DOWNLOADS[(a, "2026-10")] + DOWNLOADS[(a, "2026-11")])]),
        ("two_step", f"Which was downloaded more in October 2026, {a} or {b}?", f"2026年10月 {a} 和 {b} 哪个下载量更高？",
         [max(a, b, key=lambda p: DOWNLOADS[(p, "2026-10")])]),
        ("two_step", f"By how many did {b}'s downloads change from October to November 2026?",
         f"{b} 的下载量从2026年10月到11月变化了多少？", [float(abs(DOWNLOADS[(b, "2026-11")] - DOWNLOADS[(b, "2026-10")]))]),
        ("not_found", "What is the latest version of zephyr-utils?", "zephyr-utils 的最新版本是多少？", []),
        ("not_found", f"How many times was {a} downloaded in March 2025?", f"{a} 在2025年3月被下载了多少次？", []),
        ("not_returned", f"How many open issues does {a} have?", f"{a} 现在有多少个未解决的 issue？", []),
        ("not_returned", f"Who maintains {b}?", f"{b} 的维护者是谁？", []),
    ]  # fmt: skip


DOMAINS_B = [
    Domain("energy", [meter_usage], _energy),
    Domain("museums", [museum_hours, museum_ticket], _museums),
    Domain("planets", [planet_facts], _planets),
    Domain("packages", [package_info, package_downloads], _packages),
]
