"""Tool calls written as text, before and after, on llama.cpp's own HTTP server.

Starts llama.cpp's server (from ``xllamacpp``, the model's chat template, ``use_jinja``) with a
bundled GGUF on 127.0.0.1, and runs each request of a set of 20 (half Chinese, five tools of
different shapes) through ``OpenAIModel`` in several ways (``--arms``): without reading text
calls (``Loop(text_calls=False)``, the behaviour before); with the loop's control message as it
was before it quoted the request (``read, control unquoted``); reading them but sending a call with
tools off with the tools and ``tool_choice: "none"`` (``OpenAIModel(tools_off="tool_choice")``);
reading them and sending a call with tools off without the tools but with the transcript's
calls as they are (``tools_off="omit"``); as minloop does by default (without the tools, the
calls and results written as text); the same on a new server for each request (llama.cpp's
server carries state from one request to the next: the 1.5B model answered "Add 2.5 and 4.25."
right on a new server and with the weather in New York after two weather requests); and the
default with the evidence check as the answer check.
Prints, side by side: requests whose tool ran, answers holding the right value, answers that
begin with JSON, and the median seconds per run. Then the false calls of the reader on the
replies of ``text_calls_set.NOT_CALLS``.

    python benchmarks/text_calls.py [--models qwen2.5-coder-0.5b,qwen2.5-coder-1.5b] [--limit N]
        [--arms read "read, new server"] [--show]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.serving import free_port
from text_calls_set import NOT_CALLS

from minloop import Controls, Loop, tool
from minloop.models.local.decoding import READ_CONTROL
from minloop.models.openai import OpenAIModel
from minloop.small.evidence import EvidenceCheck
from minloop.textcalls import read_calls, written_call

SERVER = Path(__file__).resolve().parents[1] / "tests" / "servers" / "llama_http.py"
RATES = {("USD", "EUR"): 0.92, ("EUR", "USD"): 1.09, ("USD", "JPY"): 151.0, ("CNY", "USD"): 0.14}


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The current weather in a city.

    Args:
        city: The city's name.
    """
    return {"city": city, "sky": "cloudy", "temperature_c": 18}


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool
def convert(amount: float, from_currency: str, to_currency: str) -> dict[str, Any]:
    """Convert an amount of money from one currency to another.

    Args:
        amount: The amount to convert.
        from_currency: ISO 4217 code of the currency it is in, e.g. "USD".
        to_currency: ISO 4217 code of the currency wanted, e.g. "EUR".
    """
    rate = RATES.get((from_currency.upper(), to_currency.upper()), 2.0)
    return {"amount": round(amount * rate, 2), "currency": to_currency.upper(), "rate": rate}


@tool
def search_books(query: str, limit: int = 3) -> list[dict[str, Any]]:
    """Search the library's catalogue for books.

    Args:
        query: Words to look for in titles and authors.
        limit: How many books to return at most.
    """
    return [{"title": "Dune", "author": "Frank Herbert", "year": 1965}][:limit]


@tool
def now() -> dict[str, str]:
    """The current date and time in UTC."""
    return {"utc": "2026-12-04T10:27:00Z", "weekday": "Friday"}


TOOLS = [get_weather, add, convert, search_books, now]
# (request, the tool it needs, a value the right answer holds)
REQUESTS = [
    ("What's the weather in Paris?", "get_weather", "18"),
    ("What is 1234 + 5678? Use the add tool.", "add", "6912"),
    ("Is it cloudy in London right now?", "get_weather", "cloud"),
    ("Add 2.5 and 4.25.", "add", "6.75"),
    ("Convert 100 USD to EUR.", "convert", "92"),
    ("How many yen is 20 US dollars?", "convert", "3020"),
    ("Find a book by Frank Herbert in the catalogue.", "search_books", "Dune"),
    ("Search the library for books about deserts.", "search_books", "Dune"),
    ("What time is it now in UTC?", "now", "10:27"),
    ("What day of the week is it today?", "now", "Friday"),
    ("北京今天天气怎么样？", "get_weather", "18"),
    ("用 add 工具算一下 1234 加 5678 等于多少？", "add", "6912"),
    ("上海现在的气温是多少度？", "get_weather", "18"),
    ("请计算 19 加 23。", "add", "42"),
    ("把 100 美元换成欧元是多少？", "convert", "92"),
    ("100 人民币能换多少美元？", "convert", "14"),
    ("在图书馆目录里搜索 Frank Herbert 的书。", "search_books", "Dune"),
    ("帮我找一本关于沙漠的书。", "search_books", "Dune"),
    ("现在的 UTC 时间是几点？", "now", "10:27"),
    ("今天星期几？", "now", ("Friday", "星期五", "周五")),
]


def serve(model: str) -> tuple[str, subprocess.Popen[str]]:
    from minloop.models.local.gguf import ensure_gguf

    port = free_port()
    command = [sys.executable, str(SERVER), str(ensure_gguf(model)), str(port)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    address = process.stdout.readline().strip() if process.stdout else ""
    if not address:
        raise SystemExit(f"llama.cpp's server did not start for {model}")
    return f"{address}/v1", process


ARMS = {  # label: (text calls read, how a call with tools off is sent, a new server per request)
    "off (before)": (False, "omit", False),
    "read, tools on": (True, "tool_choice", False),
    "read, calls kept": (True, "omit", False),
    "read": (True, "text", False),
    "read, new server": (True, "text", True),
    "read, evidence": (True, "text", False),  # answers held to the tool results (EvidenceCheck)
    "read, control as user": (True, "text", False),  # Controls(control_role="user")
    "read, no control": (True, "text", False),  # Controls(control_message=False)
    "read, control unquoted": (True, "text", False),  # the control message before it quoted the request
}
CONTROLS = {
    "read, control as user": lambda: Controls(control_role="user"),
    "read, no control": lambda: Controls(control_message=False),
    "read, control unquoted": lambda: Controls(control_text=READ_CONTROL),
    "read, evidence": lambda: Controls(answer_check=EvidenceCheck()),
}


def client(url: str, tools_off: str) -> OpenAIModel:
    extra = {"max_tokens": 200, "temperature": 0}
    return OpenAIModel("local", base_url=url, api_key="none", extra_body=extra, tools_off=tools_off)  # type: ignore[arg-type]


def score(
    server: tuple[str, str], arm: str, requests: list[tuple[str, str, Any]], show: bool = False
) -> dict[str, Any]:
    """Runs ``requests`` one way on the running server (address, model name), or on a new one each."""
    text_calls, tools_off, fresh = ARMS[arm]
    ran = right = as_json = 0
    seconds = []
    for prompt, name, value in requests:
        url, process = serve(server[1]) if fresh else (server[0], None)
        try:
            started = time.perf_counter()
            controls = CONTROLS.get(arm, Controls)()
            loop = Loop(client(url, tools_off), TOOLS, max_steps=4, text_calls=text_calls, controls=controls)
            result = loop.run_sync(prompt)
            seconds.append(time.perf_counter() - started)
        finally:
            if process is not None:
                process.kill()
                process.wait(10)
        output = result.output or ""
        called = [c.name for s in result.steps for c in s.tool_calls]
        good = any(v.lower() in output.lower() for v in ((value,) if isinstance(value, str) else value))
        ran, right = ran + (name in called), right + good
        if show and not good:
            print(f"  missed: {prompt!r} called {called} answered {output[:160]!r}")
        as_json += bool(
            read_calls(output, [t.name for t in TOOLS]) or output.lstrip().startswith(("{", "[", "```"))
        )
    return {"ran": ran, "right": right, "json": as_json, "median_s": statistics.median(seconds)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="qwen2.5-coder-0.5b,qwen2.5-coder-1.5b")
    parser.add_argument("--limit", type=int, default=len(REQUESTS))
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(ARMS), help="the ways to run")
    parser.add_argument("--show", action="store_true", help="print each request answered wrong")
    args = parser.parse_args()
    requests = REQUESTS[: args.limit]
    print(
        f"{len(requests)} requests ({sum(any('一' <= ch <= '鿿' for ch in r[0]) for r in requests)} Chinese)"
    )
    print(f"{'model':<22}{'text calls':<16}{'tool ran':>9}{'right':>7}{'JSON shown':>12}{'median s':>10}")
    for name in args.models.split(","):
        url, process = serve(name)
        try:
            for arm in args.arms:
                s = score((url, name), arm, requests, args.show)
                print(f"{name:<22}{arm:<16}{s['ran']:>9}{s['right']:>7}{s['json']:>12}{s['median_s']:>10.1f}")
        finally:
            process.kill()
            process.wait(10)
    names = [t.name for t in TOOLS] + ["get_weather", "add", "convert", "search", "now"]
    false = sum(bool(read_calls(text, names)) for text in NOT_CALLS)
    held = sum(written_call(text, names) for text in NOT_CALLS)
    print(f"false calls on {len(NOT_CALLS)} replies that hold JSON or code but are not calls: {false}")
    print(f"of them taken for calls written but not run (not shown as the answer): {held}")


if __name__ == "__main__":
    main()
