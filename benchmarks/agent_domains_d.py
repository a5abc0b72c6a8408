"""Tool domains for the generated request set, fourth part: bank accounts, server monitoring,
earthquakes, fuel prices (see ``agent_domains.py`` for the shape of a domain)."""

from __future__ import annotations

import random
from typing import Any, Literal

from agent_domains import Domain, Pair, alias

from minloop import tool

# --- bank accounts -----------------------------------------------------------------------------
ACCOUNTS = {"CH-3301": (4210.55, "CHF"), "CH-8812": (980.2, "CHF"), "DE-1170": (15320.0, "EUR")}
PAYMENTS = {("CH-3301", "2026-12-01"): [("Migros", -84.3), ("Salary", 5200.0), ("SBB", -56.0)],
            ("CH-8812", "2026-12-01"): [("Coop", -42.9)], ("DE-1170", "2026-12-01"): []}  # fmt: skip


@tool(timeout=2.0)
def account_balance(account_id: str) -> dict[str, Any]:
    """The current balance of a bank account.

    Args:
        account_id: The account's number, e.g. "CH-1000".
    """
    key = account_id.strip().upper()
    if key not in ACCOUNTS:
        raise LookupError(f"no account {account_id}")
    balance, currency = ACCOUNTS[key]
    return {"account_id": key, "balance": balance, "currency": currency}


@tool(timeout=2.0)
def account_payments(account_id: str, date: str) -> dict[str, Any]:
    """The payments in and out of a bank account on one day (negative amounts went out).

    Args:
        account_id: The account's number.
        date: The day, as YYYY-MM-DD.
    """
    key = account_id.strip().upper()
    if key not in ACCOUNTS:
        raise LookupError(f"no account {account_id}")
    rows = PAYMENTS.get((key, date.strip()), [])
    return {"account_id": key, "date": date, "payments": [{"party": p, "amount": a} for p, a in rows]}


def _bank(rng: random.Random) -> list[Pair]:
    a, b = rng.sample(["CH-3301", "CH-8812"], 2)
    pay = rng.choice([120, 250, 300])
    spent = -sum(x for _, x in PAYMENTS[("CH-3301", "2026-12-01")] if x < 0)
    return [
        ("one_call", f"What is the balance of account {a}?", f"账户 {a} 的余额是多少？", [ACCOUNTS[a][0]]),
        ("one_call", "How many payments were there on account CH-3301 on 2026-12-01?", "账户 CH-3301 在2026年12月1日有几笔交易？",
         [3.0]),
        ("one_call", f"In which currency is account {b} held?", f"账户 {b} 是什么币种？", [r"CHF|Swiss franc|瑞士法郎"]),
        ("two_step", f"What is the total balance of accounts {a} and {b}?", f"账户 {a} 和 {b} 的余额一共是多少？",
         [round(ACCOUNTS[a][0] + ACCOUNTS[b][0], 2)]),
        ("two_step", f"What will account {a} hold after I pay {pay} out of it?", f"从账户 {a} 付出{pay}之后，余额还剩多少？",
         [round(ACCOUNTS[a][0] - pay, 2)]),
        ("two_step", "How much went out of account CH-3301 on 2026-12-01 in total?", "2026年12月1日账户 CH-3301 一共支出了多少钱？",
         [round(spent, 2)]),
        ("not_found", "What is the balance of account CH-0000?", "账户 CH-0000 的余额是多少？", []),
        ("not_found", "What payments did account DE-1170 have on 2026-12-01?", "账户 DE-1170 在2026年12月1日有哪些交易？", []),
        ("not_returned", f"What interest rate does account {a} earn?", f"账户 {a} 的利率是多少？", []),
        ("not_returned", f"What is the credit limit of account {b}?", f"账户 {b} 的信用额度是多少？", []),
    ]  # fmt: skip


# --- server monitoring -------------------------------------------------------------------------
HOSTS = {"web-01": (37.5, 61.0, 41), "web-02": (72.25, 58.5, 12), "cache-01": (8.0, 83.0, 97)}
# CPU %, memory %, uptime (days); db-* hosts are behind a monitoring API that is down


@tool(timeout=2.0)
def host_metrics(host: str) -> dict[str, Any]:
    """A server's current CPU and memory use (percent) and uptime (days).

    Args:
        host: The server's host name, e.g. "web-01".
    """
    key = host.strip().lower()
    if key.startswith("db-"):
        raise ConnectionError("the monitoring API returned HTTP 502")
    if key not in HOSTS:
        return {"host": key, "found": False}
    cpu, memory, days = HOSTS[key]
    return {"host": key, "found": True, "cpu_percent": cpu, "memory_percent": memory, "uptime_days": days}


def _servers(rng: random.Random) -> list[Pair]:
    a, b = rng.sample(list(HOSTS), 2)
    return [
        ("one_call", f"What is the CPU use on {a} right now?", f"{a} 现在的 CPU 使用率是多少？", [HOSTS[a][0]]),
        ("one_call", f"How long has {b} been up?", f"{b} 已经运行了多少天？", [float(HOSTS[b][2])]),
        ("one_call", f"How much memory is {a} using?", f"{a} 的内存使用率是多少？", [HOSTS[a][1]]),
        ("two_step", f"What is the average CPU use of {a} and {b}?", f"{a} 和 {b} 的平均 CPU 使用率是多少？",
         [round((HOSTS[a][0] + HOSTS[b][0]) / 2, 2)]),
        ("two_step", f"Which uses more memory, {a} or {b}?", f"{a} 和 {b} 哪台内存用得更多？",
         [max(a, b, key=lambda h: HOSTS[h][1])]),
        ("two_step", f"How many hours has {a} been up?", f"{a} 已经运行了多少小时？", [float(HOSTS[a][2] * 24)]),
        ("not_found", "What is the CPU use on db-01?", "db-01 的 CPU 使用率是多少？", []),
        ("not_found", "How long has mail-03 been up?", "mail-03 已经运行多久了？", []),
        ("not_returned", f"What is the IP address of {a}?", f"{a} 的 IP 地址是多少？", []),
        ("not_returned", f"Which operating system version does {b} run?", f"{b} 运行的是哪个操作系统版本？", []),
    ]  # fmt: skip


# --- earthquakes -------------------------------------------------------------------------------
REGIONS = {"智利": "Chile", "冰岛": "Iceland", "日本": "Japan", "新西兰": "New Zealand"}
QUAKES = {("Chile", "2026-12-02"): [("03:14", 4.6, 33.0), ("17:40", 5.3, 71.5)],
          ("Iceland", "2026-12-02"): [("08:05", 3.1, 5.2), ("09:47", 3.4, 4.8), ("21:30", 2.9, 6.0)],
          ("Japan", "2026-12-02"): [("11:22", 4.9, 40.0)], ("New Zealand", "2026-12-02"): [],
          ("Chile", "2026-12-03"): [("06:51", 4.1, 28.0)], ("Iceland", "2026-12-03"): [("12:12", 3.8, 3.9)]}  # fmt: skip


@tool(timeout=2.0)
def earthquakes(region: str, date: str) -> dict[str, Any]:
    """The earthquakes recorded in a region on a day: time (UTC), magnitude and depth in km.

    Args:
        region: The country or region.
        date: The day, as YYYY-MM-DD.
    """
    name = alias(REGIONS, region, {r for r, _ in QUAKES})
    rows = QUAKES.get((name, date.strip()), [])
    return {
        "region": name,
        "date": date,
        "quakes": [{"time": t, "magnitude": m, "depth_km": d} for t, m, d in rows],
    }


def _quakes(rng: random.Random) -> list[Pair]:
    zh = {v: k for k, v in REGIONS.items()}
    a, b = rng.sample(["Chile", "Iceland"], 2)
    day2 = QUAKES[(a, "2026-12-02")]
    return [
        ("one_call", f"What was the strongest earthquake in {a} on 2026-12-02?", f"2026年12月2日{zh[a]}最强的地震是几级？",
         [max(m for _, m, _ in day2)]),
        ("one_call", f"How many earthquakes were recorded in {b} on 2026-12-02?", f"2026年12月2日{zh[b]}记录到几次地震？",
         [float(len(QUAKES[(b, "2026-12-02")]))]),
        ("one_call", "How deep was the earthquake in Japan on 2026-12-02?", "2026年12月2日日本那次地震有多深？", [40.0]),
        ("two_step", f"How many earthquakes were there in {a} on 2026-12-02 and 2026-12-03 together?",
         f"2026年12月2日和3日{zh[a]}一共发生了几次地震？", [float(len(day2) + len(QUAKES[(a, "2026-12-03")]))]),
        ("two_step", f"Where was the strongest earthquake of 2026-12-02 stronger, {a} or {b}?",
         f"2026年12月2日，{zh[a]}和{zh[b]}哪里的最强地震震级更高？",
         [(lambda w: f"{w}|{zh[w]}")(max(a, b, key=lambda r: max(m for _, m, _ in QUAKES[(r, "2026-12-02")])))]),
        ("two_step", f"What was the average magnitude in {a} on 2026-12-02?", f"2026年12月2日{zh[a]}地震的平均震级是多少？",
         [round(sum(m for _, m, _ in day2) / len(day2), 2)]),
        ("not_found", "What was the strongest earthquake in New Zealand on 2026-12-02?", "2026年12月2日新西兰最强的地震是几级？", []),
        ("not_found", "How many earthquakes were there in Atlantis on 2026-12-02?", "2026年12月2日亚特兰蒂斯发生了几次地震？", []),
        ("not_returned", f"How much damage did the earthquakes in {a} cause on 2026-12-02?", f"2026年12月2日{zh[a]}的地震造成了多少损失？", []),
        ("not_returned", f"Will there be an earthquake in {b} tomorrow?", f"{zh[b]}明天会不会地震？", []),
    ]  # fmt: skip


# --- fuel prices -------------------------------------------------------------------------------
STATIONS = {"Ringstrasse 12": {"petrol": 1.789, "diesel": 1.659}, "Hafenweg 3": {"petrol": 1.749, "diesel": 1.699,
            "lpg": 0.989}, "Alte Landstrasse 40": {"petrol": 1.819, "diesel": 1.629}}  # fmt: skip
FUEL_ZH = {"petrol": "汽油", "diesel": "柴油", "lpg": "液化气"}


@tool(timeout=2.0)
def fuel_price(station: str, fuel: Literal["petrol", "diesel", "lpg"]) -> dict[str, Any]:
    """The price of one litre of a fuel at a filling station, in euros.

    Args:
        station: The station's address.
        fuel: The fuel.
    """
    prices = STATIONS.get(station.strip().title())
    if prices is None:
        raise LookupError(f"no station at {station}")
    if fuel not in prices:
        return {"station": station, "fuel": fuel, "sold": False}
    return {"station": station.strip().title(), "fuel": fuel, "sold": True, "price_per_litre": prices[fuel]}


def _fuel(rng: random.Random) -> list[Pair]:
    a, b = rng.sample(list(STATIONS), 2)
    f = rng.choice(["petrol", "diesel"])
    litres = rng.choice([30, 40, 50])
    none = rng.choice(["Ringstrasse 12", "Alte Landstrasse 40"])
    return [
        ("one_call", f"How much is a litre of {f} at {a}?", f"{a} 的{FUEL_ZH[f]}一升多少钱？", [STATIONS[a][f]]),
        ("one_call", f"What does diesel cost per litre at {b}?", f"{b} 的柴油每升多少钱？", [STATIONS[b]["diesel"]]),
        ("one_call", "How much is LPG at Hafenweg 3?", "Hafenweg 3 的液化气多少钱一升？", [0.989]),
        ("two_step", f"What does it cost to fill {litres} litres of {f} at {a}?", f"在 {a} 加{litres}升{FUEL_ZH[f]}要多少钱？",
         [round(STATIONS[a][f] * litres, 2)]),
        ("two_step", f"Is {f} cheaper at {a} or at {b}?", f"{a} 和 {b} 哪里的{FUEL_ZH[f]}更便宜？",
         [min(a, b, key=lambda s: STATIONS[s][f]).split()[0]]),
        ("two_step", f"What do 10 gallons of {f} cost at {b}?", f"在 {b} 加10加仑{FUEL_ZH[f]}要多少钱？",
         [round(STATIONS[b][f] * 37.854, 2)]),
        ("not_found", "How much is petrol at Bahnhofstrasse 99?", "Bahnhofstrasse 99 的汽油多少钱？", []),
        ("not_found", f"How much is LPG at {none}?", f"{none} 的液化气多少钱？", []),
        ("not_returned", f"When does the station at {a} close?", f"{a} 的加油站几点关门？", []),
        ("not_returned", f"Does {b} have a car wash?", f"{b} 有洗车服务吗？", []),
    ]  # fmt: skip


DOMAINS_D = [
    Domain("bank", [account_balance, account_payments], _bank),
    Domain("servers", [host_metrics], _servers),
    Domain("earthquakes", [earthquakes], _quakes),
    Domain("fuel", [fuel_price], _fuel),
]
