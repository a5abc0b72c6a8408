"""A second set of ordinary tools, held out: the policy is not tuned on them (see ``other_tools_set.py``).

Other shapes and other words than ``user_tools.py``: air quality by city, a book by ISBN, cinema
showtimes (a search returning a list, with a date and an optional enum), a parcel by tracking
number and carrier (an enum among several required arguments), bus departures (two required
names), public holidays by country code and year (a number), a hotel's nightly rate on a date,
a coin's price in an enum of currencies, unit conversion, a parking service that is down, plus
the calculator. Every result is in English.
"""

from __future__ import annotations

from typing import Any, Literal

from minloop import tool
from minloop.builtins import calculator

__all__ = ["TOOLS"]

PLACES = {
    "德里": "Delhi", "苏黎世": "Zurich", "首尔": "Seoul", "开罗": "Cairo", "多伦多": "Toronto",
    "维也纳": "Vienna", "柏林": "Berlin", "罗马": "Rome",
}  # fmt: skip
AIR = {  # AQI, PM2.5 in µg/m³, level
    "Delhi": (182, 110.5, "unhealthy"), "Zurich": (18, 4.2, "good"), "Seoul": (64, 21.0, "moderate"),
    "Cairo": (121, 48.3, "unhealthy for sensitive groups"), "Toronto": (27, 6.1, "good"),
    "Vienna": (35, 8.8, "good"),
}  # fmt: skip
BOOKS = {
    "9780141439518": {"title": "Pride and Prejudice", "author": "Jane Austen", "year": 1813, "pages": 480},
    "9780262033848": {
        "title": "Introduction to Algorithms",
        "author": "Thomas H. Cormen",
        "year": 2009,
        "pages": 1312,
    },
    "9780553380163": {
        "title": "A Brief History of Time",
        "author": "Stephen Hawking",
        "year": 1998,
        "pages": 212,
    },
}
SHOWTIMES = {
    ("Seoul", "2026-12-05"): [
        {"title": "Dune: Part Two", "genre": "sci-fi", "times": ["18:30", "21:15"]},
        {"title": "Paddington in Peru", "genre": "family", "times": ["10:00", "13:40"]},
    ],
    ("Vienna", "2026-12-06"): [{"title": "Nosferatu", "genre": "horror", "times": ["22:10"]}],
}
PARCELS = {
    ("1Z999AA10123456784", "ups"): {
        "status": "in transit",
        "location": "Louisville, KY",
        "eta": "2026-12-09",
    },
    ("SF1234567890", "sf-express"): {
        "status": "out for delivery",
        "location": "Shenzhen",
        "eta": "2026-12-04",
    },
}
BUSES = {("Central Station", "42"): ["14:05", "14:20", "14:35"], ("Central Station", "7"): ["14:12", "14:52"]}
HOLIDAYS = {
    ("JP", 2027): [
        {"date": "2027-01-01", "name": "New Year's Day"},
        {"date": "2027-01-11", "name": "Coming of Age Day"},
        {"date": "2027-11-03", "name": "Culture Day"},
    ],
    ("FR", 2027): [
        {"date": "2027-01-01", "name": "New Year's Day"},
        {"date": "2027-07-14", "name": "Bastille Day"},
        {"date": "2027-12-25", "name": "Christmas Day"},
    ],
}
HOTELS = {"hotel adlon": ("Hotel Adlon", 320.0), "park hyatt": ("Park Hyatt", 410.0)}
COINS = {
    "bitcoin": {"usd": 97250.0, "eur": 89470.0, "cny": 704090.0},
    "ethereum": {"usd": 3620.0, "eur": 3330.4, "cny": 26208.8},
}
UNITS = {  # to metres or kilograms
    "km": ("length", 1000.0), "kilometre": ("length", 1000.0), "kilometer": ("length", 1000.0),
    "公里": ("length", 1000.0), "千米": ("length", 1000.0), "m": ("length", 1.0), "metre": ("length", 1.0),
    "meter": ("length", 1.0), "米": ("length", 1.0), "mi": ("length", 1609.344), "mile": ("length", 1609.344),
    "英里": ("length", 1609.344), "kg": ("mass", 1.0), "kilogram": ("mass", 1.0), "公斤": ("mass", 1.0),
    "千克": ("mass", 1.0), "lb": ("mass", 0.45359237), "pound": ("mass", 0.45359237), "磅": ("mass", 0.45359237),
}  # fmt: skip


def _place(name: str) -> str:
    key = PLACES.get(name.strip(), name.strip())
    for city in AIR:
        if city.lower() == key.lower():
            return city
    raise LookupError(f"unknown city: {name}")


@tool(timeout=2.0)
def get_air_quality(city: str) -> dict[str, Any]:
    """Get the current air quality in a city: the air quality index (AQI), PM2.5 and its level.

    Args:
        city: The city, e.g. "Vienna".
    """
    name = _place(city)
    aqi, pm25, level = AIR[name]
    return {"city": name, "aqi": aqi, "pm2_5": pm25, "level": level}


@tool(timeout=2.0)
def lookup_book(isbn: str) -> dict[str, Any]:
    """Look up a book by its ISBN: title, author, year of publication and number of pages.

    Args:
        isbn: The book's 13-digit ISBN.
    """
    key = isbn.replace("-", "").replace(" ", "")
    book = BOOKS.get(key)
    return {"isbn": key, "found": False} if book is None else {"isbn": key, "found": True, **book}


@tool(timeout=2.0)
def find_showtimes(
    city: str, date: str, genre: Literal["sci-fi", "family", "horror", "drama", "comedy"] | None = None
) -> dict[str, Any]:
    """Find the films showing in a city's cinemas on a day, with their start times.

    Args:
        city: The city.
        date: The day, as YYYY-MM-DD.
        genre: Only films of this genre.
    """
    name = PLACES.get(city.strip(), city.strip()).title()
    films = [f for f in SHOWTIMES.get((name, date.strip()), []) if genre is None or f["genre"] == genre]
    return {"city": name, "date": date, "films": films}


@tool(timeout=2.0)
def track_parcel(
    tracking_number: str, carrier: Literal["ups", "dhl", "fedex", "sf-express"]
) -> dict[str, Any]:
    """Track a parcel: where it is now, its status and the expected delivery date.

    Args:
        tracking_number: The tracking number on the shipping label.
        carrier: The company delivering it.
    """
    found = PARCELS.get((tracking_number.strip().upper(), carrier))
    if found is None:
        return {"tracking_number": tracking_number, "carrier": carrier, "found": False}
    return {"tracking_number": tracking_number, "carrier": carrier, "found": True, **found}


@tool(timeout=2.0)
def next_buses(stop: str, line: str) -> dict[str, Any]:
    """The next departures of a bus line from a stop.

    Args:
        stop: The name of the bus stop.
        line: The bus line's number.
    """
    key = (
        "Central Station" if stop.strip().lower() in ("central station", "中央车站") else stop.strip(),
        line.strip(),
    )
    return {"stop": key[0], "line": key[1], "departures": BUSES.get(key, [])}


@tool(timeout=2.0)
def public_holidays(country_code: str, year: int) -> dict[str, Any]:
    """List a country's public holidays in a year.

    Args:
        country_code: The country as a two-letter ISO 3166 code, e.g. "DE".
        year: The year.
    """
    code = country_code.strip().upper()
    if (code, year) not in HOLIDAYS:
        raise LookupError(f"no holiday data for {code} in {year}")
    return {"country": code, "year": year, "holidays": HOLIDAYS[(code, year)]}


@tool(timeout=2.0)
def hotel_rate(hotel: str, date: str) -> dict[str, Any]:
    """The price of one night in a hotel on a date, in euros.

    Args:
        hotel: The hotel's name.
        date: The night, as YYYY-MM-DD.
    """
    found = HOTELS.get(hotel.strip().lower())
    if found is None:
        return {"hotel": hotel, "found": False}
    return {"hotel": found[0], "date": date, "found": True, "price_per_night": found[1], "currency": "EUR"}


@tool(timeout=2.0)
def coin_price(coin: str, currency: Literal["usd", "eur", "cny"] = "usd") -> dict[str, Any]:
    """The price of one unit of a cryptocurrency.

    Args:
        coin: The cryptocurrency's name, e.g. "bitcoin".
        currency: The currency of the price.
    """
    prices = COINS.get(coin.strip().lower())
    if prices is None:
        raise LookupError(f"unknown coin: {coin}")
    return {"coin": coin.strip().lower(), "currency": currency, "price": prices[currency]}


@tool(timeout=2.0)
def convert_units(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert a length or a weight from one unit to another (km, m, mi, kg, lb).

    Args:
        value: The amount to convert.
        from_unit: The unit it is given in.
        to_unit: The unit wanted.
    """
    a, b = (UNITS.get(u.strip().lower().removesuffix("s")) for u in (from_unit, to_unit))
    if a is None or b is None or a[0] != b[0]:
        raise ValueError(f"cannot convert {from_unit} to {to_unit}")
    return {"value": value, "from": from_unit, "to": to_unit, "result": round(value * a[1] / b[1], 4)}


@tool(timeout=2.0)
def parking_spaces(garage: str) -> dict[str, Any]:
    """How many free spaces a parking garage has right now.

    Args:
        garage: The garage's name.
    """
    raise ConnectionError("the parking service returned HTTP 503")


TOOLS = [
    get_air_quality,
    lookup_book,
    find_showtimes,
    track_parcel,
    next_buses,
    public_holidays,
    hotel_rate,
    coin_price,
    convert_units,
    parking_spaces,
    calculator,
]
