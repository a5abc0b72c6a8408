"""Tool domains for the generated request set, third part: tides, ski resorts, school grades,
parcel shipping (see ``agent_domains.py`` for the shape of a domain)."""

from __future__ import annotations

import random
import time
from typing import Any, Literal

from agent_domains import Domain, Pair, alias, clock

from minloop import tool

# --- tides -------------------------------------------------------------------------------------
HARBOURS = {"布雷斯特": "Brest", "圣马洛": "Saint-Malo", "普利茅斯": "Plymouth"}
TIDES = {("Brest", "2026-12-12"): ([("05:41", 6.2), ("18:02", 6.0)], [("11:58", 1.4), ("23:59", 1.6)]),
         ("Saint-Malo", "2026-12-12"): ([("06:20", 11.3), ("18:44", 11.0)], [("00:47", 2.1), ("13:05", 2.4)]),
         ("Plymouth", "2026-12-12"): ([("06:07", 5.1), ("18:31", 4.9)], [("00:14", 1.1), ("12:29", 1.3)])}  # fmt: skip


@tool(timeout=2.0)
def tide_table(harbour: str, date: str) -> dict[str, Any]:
    """High and low tides at a harbour on a day: times and water heights in metres.

    Args:
        harbour: The harbour's name.
        date: The day, as YYYY-MM-DD.
    """
    name = alias(HARBOURS, harbour, {h for h, _ in TIDES})
    high, low = TIDES.get((name, date.strip()), ([], []))
    return {"harbour": name, "date": date, "high_tides": [{"time": t, "height_m": h} for t, h in high],
            "low_tides": [{"time": t, "height_m": h} for t, h in low]}  # fmt: skip


def _tides(rng: random.Random) -> list[Pair]:
    zh = {v: k for k, v in HARBOURS.items()}
    a, b = rng.sample(list(HARBOURS.values()), 2)
    (t1, h1), _ = TIDES[(a, "2026-12-12")][0]
    (l1, lh1), _ = TIDES[(a, "2026-12-12")][1]
    (_, hb), _ = TIDES[(b, "2026-12-12")][0]
    hh, mm = (int(x) for x in t1.split(":"))
    lhh, lmm = (int(x) for x in l1.split(":"))
    return [
        ("one_call", f"When is the first high tide in {a} on 2026-12-12?", f"2026年12月12日{zh[a]}第一次涨潮是几点？", [clock(hh, mm)]),
        ("one_call", f"How high is the morning high tide in {a} on 2026-12-12?", f"2026年12月12日{zh[a]}早上的高潮水位有多高？", [h1]),
        ("one_call", f"When is the first low tide in {a} on 2026-12-12?", f"2026年12月12日{zh[a]}第一次退潮是几点？", [clock(lhh, lmm)]),
        ("two_step", f"What is the range between the first high and the first low tide in {a} on 2026-12-12, in metres?",
         f"2026年12月12日{zh[a]}第一次高潮和第一次低潮相差多少米？", [round(h1 - lh1, 1)]),
        ("two_step", f"How high is the first high tide in {a} on 2026-12-12, in feet?",
         f"2026年12月12日{zh[a]}第一次高潮的水位是多少英尺？", [round(h1 * 3.28084, 1)]),
        ("two_step", f"Where is the first high tide higher on 2026-12-12, {a} or {b}?",
         f"2026年12月12日，{zh[a]}和{zh[b]}哪里的第一次高潮更高？", [(lambda w: f"{w}|{zh[w]}")(a if h1 > hb else b)]),
        ("not_found", "When is high tide in Dover on 2026-12-12?", "2026年12月12日多佛几点涨潮？", []),
        ("not_found", f"When is high tide in {a} on 2027-06-01?", f"2027年6月1日{zh[a]}几点涨潮？", []),
        ("not_returned", f"What is the water temperature in {a} on 2026-12-12?", f"2026年12月12日{zh[a]}的水温是多少？", []),
        ("not_returned", f"How big are the waves in {b} on 2026-12-12?", f"2026年12月12日{zh[b]}的浪有多大？", []),
    ]  # fmt: skip


# --- ski resorts -------------------------------------------------------------------------------
RESORTS = {"采尔马特": "Zermatt", "霞慕尼": "Chamonix", "圣安东": "St. Anton", "韦尔比耶": "Verbier"}
SNOW = {"Zermatt": (145, 12, 38, 52), "Chamonix": (98, 5, 31, 49), "St. Anton": (121, 20, 72, 88)}
# depth (cm), new snow in 24 h (cm), lifts open, lifts in all
PASSES = {"Zermatt": 92.0, "Chamonix": 69.0, "St. Anton": 71.0, "Verbier": 79.0}  # one day, EUR


@tool(timeout=1.0)
def snow_report(resort: str) -> dict[str, Any]:
    """Today's snow report of a ski resort: snow depth, new snow and how many lifts are open.

    Args:
        resort: The resort's name.
    """
    name = alias(RESORTS, resort, PASSES)
    if name not in SNOW:
        time.sleep(3)  # the resort's report never comes in time
    depth, new, open_, lifts = SNOW[name]
    return {
        "resort": name,
        "snow_depth_cm": depth,
        "new_snow_cm": new,
        "lifts_open": open_,
        "lifts_total": lifts,
    }


@tool(timeout=2.0)
def lift_pass(resort: str, days: int = 1) -> dict[str, Any]:
    """The price of a ski lift pass at a resort, in euros.

    Args:
        resort: The resort's name.
        days: For how many days.
    """
    name = alias(RESORTS, resort, PASSES)
    return {"resort": name, "days": days, "price": round(PASSES[name] * days * (0.9 if days >= 3 else 1), 2),
            "currency": "EUR"}  # fmt: skip


def _ski(rng: random.Random) -> list[Pair]:
    zh = {v: k for k, v in RESORTS.items()}
    a, b = rng.sample(list(SNOW), 2)
    days = rng.choice([3, 5, 6])
    depth, new, open_, lifts = SNOW[a]
    return [
        ("one_call", f"How deep is the snow in {a} today?", f"{zh[a]}今天的积雪有多深？", [float(depth)]),
        ("one_call", f"How many lifts are open in {b}?", f"{zh[b]}开了几条缆车？", [float(SNOW[b][2])]),
        ("one_call", f"What does a {days}-day lift pass in {a} cost?", f"{zh[a]}的{days}天缆车票多少钱？",
         [round(PASSES[a] * days * 0.9, 2)]),
        ("two_step", f"How many lifts are closed in {a} today?", f"{zh[a]}今天有几条缆车没开？", [float(lifts - open_)]),
        ("two_step", f"Which resort has more snow today, {a} or {b}?", f"{zh[a]}和{zh[b]}今天哪个雪更厚？",
         [(lambda w: f"{w}|{zh[w]}")(max(a, b, key=lambda r: SNOW[r][0]))]),
        ("two_step", f"What do one-day passes in {a} and {b} cost together?", f"{zh[a]}和{zh[b]}的一日缆车票加起来多少钱？",
         [PASSES[a] + PASSES[b]]),
        ("not_found", "How deep is the snow in Verbier today?", "韦尔比耶今天积雪多深？", []),
        ("not_found", "What does a one-day pass in Aspen cost?", "阿斯彭的一日缆车票多少钱？", []),
        ("not_returned", f"What is the avalanche risk in {a} today?", f"{zh[a]}今天的雪崩风险是几级？", []),
        ("not_returned", f"How much is a hotel room in {b}?", f"{zh[b]}的酒店房间多少钱一晚？", []),
    ]  # fmt: skip


# --- school grades -----------------------------------------------------------------------------
GRADES = {("S-1042", "autumn"): {"mathematics": 88, "history": 74, "chemistry": 91},
          ("S-1042", "spring"): {"mathematics": 93, "history": 79, "chemistry": 85},
          ("S-2210", "autumn"): {"mathematics": 67, "history": 90, "chemistry": 72},
          ("S-2210", "spring"): {"mathematics": 71, "history": 94, "chemistry": 70}}  # fmt: skip
COURSE_ZH = {"mathematics": "数学", "history": "历史", "chemistry": "化学"}
TERM_ZH = {"autumn": "秋季学期", "spring": "春季学期"}


@tool(timeout=2.0)
def term_grades(student_id: str, term: Literal["autumn", "spring"]) -> dict[str, Any]:
    """A student's grades (0 to 100) in each course of a term.

    Args:
        student_id: The student's number, e.g. "S-1000".
        term: The term.
    """
    key = (student_id.strip().upper(), term)
    if key not in GRADES:
        return {"student_id": key[0], "term": term, "found": False}
    return {"student_id": key[0], "term": term, "found": True, "grades": GRADES[key]}


def _grades(rng: random.Random) -> list[Pair]:
    student = rng.choice(["S-1042", "S-2210"])
    c1, c2 = rng.sample(list(COURSE_ZH), 2)
    term = rng.choice(["autumn", "spring"])
    g = GRADES[(student, term)]
    autumn, spring = GRADES[(student, "autumn")][c1], GRADES[(student, "spring")][c1]
    return [
        ("one_call", f"What grade did {student} get in {c1} in the {term} term?",
         f"{student} 在{TERM_ZH[term]}的{COURSE_ZH[c1]}成绩是多少？", [float(g[c1])]),
        ("one_call", f"What was {student}'s {c2} grade in the {term} term?", f"{student} {TERM_ZH[term]}{COURSE_ZH[c2]}考了多少分？",
         [float(g[c2])]),
        ("one_call", f"Which course did {student} score highest in during the {term} term?",
         f"{student} 在{TERM_ZH[term]}哪门课分数最高？", [(lambda w: f"{w}|{COURSE_ZH[w]}")(max(g, key=lambda c: g[c]))]),
        ("two_step", f"What is {student}'s average of {c1} and {c2} in the {term} term?",
         f"{student} {TERM_ZH[term]}{COURSE_ZH[c1]}和{COURSE_ZH[c2]}的平均分是多少？", [(g[c1] + g[c2]) / 2]),
        ("two_step", f"By how many points did {student}'s {c1} grade change from autumn to spring?",
         f"{student} 的{COURSE_ZH[c1]}成绩从秋季学期到春季学期变化了多少分？", [float(abs(spring - autumn))]),
        ("two_step", f"What is {student}'s total across all courses in the {term} term?",
         f"{student} 在{TERM_ZH[term]}所有课程的总分是多少？", [float(sum(g.values()))]),
        ("not_found", "What grades did S-9031 get in the autumn term?", "S-9031 秋季学期的成绩是多少？", []),
        ("not_found", "What was S-7777's mathematics grade in the spring term?", "S-7777 春季学期数学考了多少分？", []),
        ("not_returned", f"Who teaches {student} {c1}?", f"{student} 的{COURSE_ZH[c1]}老师是谁？", []),
        ("not_returned", f"How many days was {student} absent in the {term} term?", f"{student} 在{TERM_ZH[term]}缺勤了几天？", []),
    ]  # fmt: skip


# --- parcel shipping ---------------------------------------------------------------------------
COUNTRIES_ZH = {"JP": "日本", "BR": "巴西", "CA": "加拿大", "DE": "德国", "KP": "朝鲜"}
ZONES = {"DE": (6.5, 2), "CA": (19.0, 6), "JP": (22.0, 5), "BR": (27.5, 9)}  # base EUR, days


@tool(timeout=2.0)
def shipping_cost(weight_kg: float, country_code: str) -> dict[str, Any]:
    """The price of sending a parcel abroad, in euros, and how many days it takes.

    Args:
        weight_kg: The parcel's weight in kilograms.
        country_code: The destination as a two-letter ISO country code, e.g. "FR".
    """
    code = country_code.strip().upper()
    if code not in ZONES:
        raise ValueError(f"no parcel service to {country_code}")
    base, days = ZONES[code]
    return {"country": code, "weight_kg": weight_kg, "price": round(base + 3.0 * max(0.0, weight_kg - 1), 2),
            "currency": "EUR", "delivery_days": days}  # fmt: skip


def _price(code: str, kg: float) -> float:
    return round(ZONES[code][0] + 3.0 * max(0.0, kg - 1), 2)


def _shipping(rng: random.Random) -> list[Pair]:
    a, b = rng.sample(["JP", "BR", "CA", "DE"], 2)
    kg, kg2 = rng.choice([2, 3, 4]), rng.choice([5, 6])
    return [
        ("one_call", f"How much does it cost to send a {kg} kg parcel to {COUNTRIES_ZH[a]}?".replace(COUNTRIES_ZH[a], {
            "JP": "Japan", "BR": "Brazil", "CA": "Canada", "DE": "Germany"}[a]), f"寄一个{kg}公斤的包裹到{COUNTRIES_ZH[a]}要多少钱？",
         [_price(a, kg)]),
        ("one_call", f"How many days does a parcel to country code {b} take?", f"寄到国家代码 {b} 的包裹要几天？", [float(ZONES[b][1])]),
        ("one_call", f"What is the price of shipping {kg2} kg to {b}?", f"寄{kg2}公斤到 {b} 多少钱？", [_price(b, kg2)]),
        ("two_step", f"What do two parcels cost together: {kg} kg to {a} and {kg2} kg to {b}?",
         f"两个包裹一共多少钱：{kg}公斤寄到 {a}，{kg2}公斤寄到 {b}？", [round(_price(a, kg) + _price(b, kg2), 2)]),
        ("two_step", f"How much does it cost to send a parcel of {round(kg2 * 2.20462)} pounds to {a}?",
         f"寄一个{round(kg2 * 2.20462)}磅的包裹到 {a} 要多少钱？", [_price(a, round(kg2 * 2.20462) * 0.45359237)]),
        ("two_step", f"Is it cheaper to send {kg} kg to {a} or to {b}?", f"寄{kg}公斤，到 {a} 和到 {b} 哪个更便宜？",
         [min(a, b, key=lambda c: _price(c, kg)) + "|" + COUNTRIES_ZH[min(a, b, key=lambda c: _price(c, kg))]]),
        ("not_found", "How much is it to send 2 kg to country code KP?", "寄2公斤到国家代码 KP 多少钱？", []),
        ("not_found", "What does a 1 kg parcel to AQ cost?", "寄1公斤的包裹到 AQ 多少钱？", []),
        ("not_returned", f"How much is insurance for a parcel to {a}?", f"寄到 {a} 的包裹保险多少钱？", []),
        ("not_returned", f"What is the tracking number of my parcel to {b}?", f"我寄到 {b} 的包裹单号是多少？", []),
    ]  # fmt: skip


DOMAINS_C = [
    Domain("tides", [tide_table], _tides),
    Domain("ski", [snow_report, lift_pass], _ski),
    Domain("grades", [term_grades], _grades),
    Domain("shipping", [shipping_cost], _shipping),
]
