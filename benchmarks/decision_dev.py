"""Tune and check the embedded model's relevance gate on this project's own dev set (not BFCL).

    .venv/bin/python benchmarks/decision_dev.py [--model qwen2.5-coder-0.5b]

For each request the gate asks the model which offered tool fits it, "none" allowed, and reads
1 - P("none") from the first token of the name. The script prints that relevance per item, then
the accuracy of each threshold on relevant and irrelevant requests.
"""

from __future__ import annotations

import argparse
import time

from minloop import ModelRequest, tool
from minloop.builtins import calculator, current_time
from minloop.models.local import LocalModel


@tool
def get_weather(city: str, unit: str = "celsius") -> dict:
    """Get the current weather for a city."""
    return {}


@tool
def send_email(to: str, subject: str, body: str) -> dict:
    """Send an email to a recipient."""
    return {}


@tool
def get_stock_price(ticker: str) -> dict:
    """Get the latest price of a stock by its ticker symbol."""
    return {}


@tool
def convert_currency(amount: float, source: str, target: str) -> dict:
    """Convert an amount of money from one currency to another."""
    return {}


@tool
def book_flight(origin: str, destination: str, date: str) -> dict:
    """Book a flight between two cities on a date."""
    return {}


@tool
def area_of_circle(radius: float) -> dict:
    """Compute the area of a circle from its radius."""
    return {}


MENUS = {
    "travel": [get_weather, book_flight, convert_currency],
    "office": [send_email, current_time],
    "finance": [get_stock_price, convert_currency, calculator],
    "math": [area_of_circle, calculator],
}
ITEMS = [  # (menu, request, a tool serves it)
    ("travel", "What's the weather like in Lisbon right now?", True),
    ("travel", "Book me a flight from Paris to Rome on 2026-12-24.", True),
    ("travel", "How much is 250 US dollars in euros?", True),
    ("travel", "Tell me a fun fact about octopuses.", False),
    ("travel", "Who painted the Mona Lisa?", False),
    ("travel", "Write a short poem about the sea.", False),
    ("office", "Email bob@example.com that the meeting moved to 3 pm.", True),
    ("office", "What time is it in Asia/Tokyo?", True),
    ("office", "Hi, how are you today?", False),
    ("office", "Summarise the plot of Romeo and Juliet in one sentence.", False),
    ("office", "What is the capital of Canada?", False),
    ("finance", "What is Apple's stock price (AAPL)?", True),
    ("finance", "Convert 100 GBP to JPY.", True),
    ("finance", "What is 17.5% of 2,340?", True),
    ("finance", "Explain what a bond is in simple words.", False),
    ("finance", "Translate 'thank you' into German.", False),
    ("finance", "Recommend a good book about history.", False),
    ("math", "What is the area of a circle with radius 3?", True),
    ("math", "Compute (17 + 5) * 3.", True),
    ("math", "Who proved Fermat's last theorem?", False),
    ("math", "What's the weather in Oslo?", False),
    ("math", "Send an email to my boss saying I'm late.", False),
    ("office", "Get the stock price of Tesla.", False),
    ("travel", "Calculate the square root of 144.", False),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    args = parser.parse_args()
    model = LocalModel(args.model)
    model.load()
    scored = []
    started = time.perf_counter()
    for menu, prompt, relevant in ITEMS:
        specs = [t.spec() for t in MENUS[menu]]
        p = model.relevance(ModelRequest([{"role": "user", "content": prompt}], specs))
        scored.append((p, relevant))
        print(f"{p:5.2f} {'tool  ' if relevant else 'answer'} {menu:8} {prompt}")
    print(f"\n{(time.perf_counter() - started) / len(ITEMS):.2f}s per item")
    print(f"{'threshold':>9} {'relevant ok':>11} {'irrelevant ok':>13} {'balanced':>8}")
    for t in (0.75, 0.8, 0.85, 0.88, 0.9, 0.92, 0.94, 0.96, 0.98):
        rel = [p >= t for p, r in scored if r]
        irr = [p < t for p, r in scored if not r]
        print(
            f"{t:>9.2f} {sum(rel)}/{len(rel):<9} {sum(irr)}/{len(irr):<11} {(sum(rel) / len(rel) + sum(irr) / len(irr)) / 2:>8.0%}"
        )


if __name__ == "__main__":
    main()
