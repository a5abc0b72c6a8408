"""Nine ordinary tools a user might give the embedded model, with fixed data, plus the calculator.

They have the shapes real tools have: lookups by name or by id (weather, stock quote, order,
contact), a search returning a list (restaurants), several required arguments (exchange rate,
trains, flights), an enum (the weather's unit, the train's class), dates (calendar, trains,
flights), one service that is down (flight status) and lookups that find nothing (an unknown
order or contact, a search with no hits). Every result is in English, as most services answer.
Cities and people may be named in English or in Chinese.
"""

from __future__ import annotations

from typing import Any, Literal

from minloop import tool
from minloop.builtins import calculator

__all__ = ["CITIES", "RATES", "STOCKS", "TOOLS", "WEATHER"]

CITIES = {
    "巴黎": "Paris", "柏林": "Berlin", "伦敦": "London", "东京": "Tokyo", "北京": "Beijing",
    "上海": "Shanghai", "纽约": "New York", "马德里": "Madrid", "奥斯陆": "Oslo", "悉尼": "Sydney",
    "里昂": "Lyon", "马赛": "Marseille",
}  # fmt: skip
WEATHER = {  # temperature in Celsius, condition
    "Paris": (18, "sunny"), "Berlin": (12, "cloudy"), "London": (14, "light rain"),
    "Tokyo": (21, "clear"), "Beijing": (9, "windy"), "Shanghai": (16, "overcast"),
    "New York": (6, "snow"), "Madrid": (24, "sunny"), "Oslo": (2, "snow"), "Sydney": (27, "sunny"),
    "Lyon": (15, "cloudy"),
}  # fmt: skip
STOCKS = {  # price in US dollars, change today in percent
    "AAPL": (228.52, 1.2), "MSFT": (415.1, -0.8), "GOOGL": (172.3, 0.4), "TSLA": (251.44, -2.1),
    "NVDA": (131.88, 3.5), "AMZN": (197.12, 0.9), "BABA": (86.4, -1.5),
}  # fmt: skip
RATES = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 151.2, "CNY": 7.24, "CHF": 0.88, "HKD": 7.8}
ORDERS = {
    "A1234": {"status": "shipped", "estimated_delivery": "2026-12-08", "carrier": "DHL"},
    "B7781": {"status": "delivered", "delivered_on": "2026-11-28", "carrier": "UPS"},
    "C5502": {"status": "processing", "estimated_delivery": "2026-12-15", "carrier": "FedEx"},
}
CONTACTS = [
    {"name": "Ada Lovelace", "email": "ada.lovelace@example.com", "phone": "+44 20 7946 0018"},
    {"name": "Wang Wei", "chinese_name": "王伟", "email": "wang.wei@example.cn", "phone": "+86 10 5555 0142"},
    {"name": "Alan Turing", "email": "alan.turing@example.org", "phone": "+44 161 496 0735"},
]
RESTAURANTS = {
    "Paris": [
        ("Le Petit Bistro", "french", 4.6),
        ("Sakura", "japanese", 4.4),
        ("Trattoria Roma", "italian", 4.2),
    ],
    "Tokyo": [("Sushi Dai", "japanese", 4.8), ("Ramen Ichi", "japanese", 4.5), ("Cafe Bleu", "french", 4.1)],
    "Berlin": [("Curry Haus", "german", 4.3), ("Pho Saigon", "vietnamese", 4.5)],
}
EVENTS = {
    "2026-12-04": [
        {"time": "09:30", "title": "Team stand-up"},
        {"time": "14:00", "title": "Dentist appointment"},
    ],
    "2026-12-07": [{"time": "11:00", "title": "Budget review"}],
}
TRAINS = {  # (origin, destination, date): departures
    ("Paris", "Lyon", "2026-12-05"): [
        ("07:04", "09:02", 89.0),
        ("09:34", "11:30", 65.0),
        ("12:04", "14:00", 49.0),
    ],
    ("London", "Paris", "2026-12-05"): [("08:01", "11:20", 120.0), ("10:24", "13:47", 98.0)],
    ("Paris", "Marseille", "2026-12-05"): [("06:58", "10:15", 99.0), ("10:10", "13:25", 79.0)],
}


def _city(name: str) -> str:
    """A city's English name from English or Chinese, any case; ``LookupError`` if unknown."""
    key = name.strip()
    key = CITIES.get(key, key)
    for city in WEATHER:
        if city.lower() == key.lower():
            return city
    raise LookupError(f"unknown city: {name}")


@tool(timeout=2.0)
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Get the current weather in a city: temperature and sky condition.

    Args:
        city: The city's name, e.g. "Paris".
        unit: The temperature unit.
    """
    name = _city(city)
    celsius, condition = WEATHER[name]
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32, 1)
    return {"city": name, "temperature": temperature, "unit": unit, "condition": condition}


@tool(timeout=2.0)
def get_stock_quote(symbol: str) -> dict[str, Any]:
    """Get the latest share price of a company by its stock ticker symbol.

    Args:
        symbol: The ticker symbol, e.g. "AAPL" for Apple.
    """
    key = symbol.strip().upper()
    if key not in STOCKS:
        raise LookupError(f"unknown ticker symbol: {symbol}")
    price, change = STOCKS[key]
    return {"symbol": key, "price": price, "currency": "USD", "change_percent": change}


@tool(timeout=2.0)
def get_order_status(order_id: str) -> dict[str, Any]:
    """Look up the status and delivery date of an order by its order number.

    Args:
        order_id: The order number, e.g. "A1234".
    """
    key = order_id.strip().upper().lstrip("#")
    if key not in ORDERS:
        return {"order_id": key, "found": False}
    return {"order_id": key, "found": True, **ORDERS[key]}


@tool(timeout=2.0)
def get_exchange_rate(base: str, target: str) -> dict[str, Any]:
    """Get today's exchange rate between two currencies: how much one unit of base buys of target.

    Args:
        base: The currency converted from, as an ISO 4217 code such as "USD".
        target: The currency converted to, as an ISO 4217 code such as "EUR".
    """
    a, b = base.strip().upper(), target.strip().upper()
    for code in (a, b):
        if code not in RATES:
            raise LookupError(f"unknown currency code: {code}")
    return {"base": a, "target": b, "rate": round(RATES[b] / RATES[a], 4), "date": "2026-12-03"}


@tool(timeout=2.0)
def get_flight_status(flight_number: str, date: str) -> dict[str, Any]:
    """Get the status of a flight (on time, delayed, cancelled) on a date.

    Args:
        flight_number: The flight number, e.g. "BA117".
        date: The date of the flight, as YYYY-MM-DD.
    """
    raise ConnectionError("the flight status service is not responding")


@tool(timeout=2.0)
def search_restaurants(city: str, cuisine: str | None = None, max_results: int = 3) -> dict[str, Any]:
    """Search restaurants in a city, optionally by cuisine; returns names and ratings.

    Args:
        city: The city to search in.
        cuisine: The kind of food, e.g. "japanese".
        max_results: How many restaurants to return at most.
    """
    name = CITIES.get(city.strip(), city.strip()).title()
    found = [
        {"name": n, "cuisine": c, "rating": r}
        for n, c, r in RESTAURANTS.get(name, [])
        if cuisine is None or cuisine.strip().lower() in c
    ]
    return {"city": name, "results": found[: max(0, max_results)]}


@tool(timeout=2.0)
def find_contact(name: str) -> dict[str, Any]:
    """Find a person in the address book by name; returns their email and phone number.

    Args:
        name: The person's name.
    """
    wanted = name.strip().lower()
    for person in CONTACTS:
        names = {person["name"].lower(), person.get("chinese_name", "")}
        if wanted in names or any(wanted and wanted in n for n in names if n):
            return {"found": True, **{k: v for k, v in person.items() if k != "chinese_name"}}
    return {"found": False, "name": name}


@tool(timeout=2.0)
def list_calendar_events(date: str) -> dict[str, Any]:
    """List the events in the user's calendar on a date.

    Args:
        date: The day, as YYYY-MM-DD.
    """
    return {"date": date, "events": EVENTS.get(date.strip(), [])}


@tool(timeout=2.0)
def get_train_times(
    origin: str, destination: str, date: str, travel_class: Literal["first", "second"] = "second"
) -> dict[str, Any]:
    """Get the train departures between two cities on a date, with arrival times and fares.

    Args:
        origin: The departure city.
        destination: The arrival city.
        date: The day of travel, as YYYY-MM-DD.
        travel_class: The class of travel.
    """
    a, b = (CITIES.get(c.strip(), c.strip()).title() for c in (origin, destination))
    factor = 1.6 if travel_class == "first" else 1.0
    trains = TRAINS.get((a, b, date.strip()), [])
    departures = [
        {"departs": d, "arrives": r, "fare": round(p * factor, 2), "currency": "EUR"} for d, r, p in trains
    ]
    return {"origin": a, "destination": b, "date": date, "departures": departures}


TOOLS = [
    get_weather,
    get_stock_quote,
    get_order_status,
    get_exchange_rate,
    get_flight_status,
    search_restaurants,
    find_contact,
    list_calendar_events,
    get_train_times,
    calculator,
]
