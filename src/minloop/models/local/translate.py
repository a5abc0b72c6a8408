"""A user's message in English, translated by the embedded model itself, once per text.

The translation ranks a large English menu for a Chinese request, grounds a call's English
values ("MSFT" for "微软"), and lets the evidence check read what the request asks for. It must
be a translation, never an answer. Asked plainly, the 0.5B model answered most Chinese requests
instead ("伦敦现在几点？" became "London is currently 12:00 PM."); as a translator given the text
in quotes, it still answered a third of the development set's Chinese requests ("巴黎现在的湿度是多少？"
became "The current humidity in Paris is 55%.", "Ada Lovelace 的邮箱地址是什么？" an address it
made up). Three things keep it to translating:

* four worked examples before the text, as turns of the conversation;
* the translation is decoded under a grammar (``grammar``): one sentence (a full stop only
  inside a word, as in "ada.lovelace@example.com"), a question when the text is one (it ends with
  "?"), and no number, nor an e-mail address, but the text's own (a decimal one whole: allowed
  only "1" and "5" of "1.5", the 1.5B model wrote "1.５" with a wide digit, and the translation
  was not used);
* a date written in Chinese ("2026年12月10日") is written as ISO first, and a currency's Chinese
  name is followed by its code ("日元(JPY)"), which the model copies: it translated "日元" as
  "dollars".

A translation that states an e-mail address the text does not have is not used: ``english_of``
returns an empty string, and the request is ranked and grounded as it is.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from ...language import code_names
from .currencies import currencies_in
from .runtime import complete

__all__ = ["TRANSLATOR", "Translations", "english_of", "grammar", "iso_dates", "with_codes"]

TRANSLATOR = (
    "You are a translator. You never answer questions; you only translate them into English, "
    "keeping every name, code and number as written."
)
_SHOTS = (
    ("东京现在几点？", "What time is it in Tokyo now?"),
    ("帮我查一下订单 C5521 的物流。", "Check the shipping of order C5521 for me."),
    ("2025-03-02 从广州到成都的航班有哪些？", "Which flights go from Guangzhou to Chengdu on 2025-03-02?"),
    ("这家店的地址是什么？", "What is the address of this shop?"),
)
_CHINESE_DATE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?|[\uff10-\uff19]+")  # "1.5" whole; a wide "５" is a number too
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")


class Translations(dict[str, str]):
    """A model's English translations, by text (the last 256): ``now`` translates a text once.
    ``server`` gives the loaded runtime and its lock."""

    def __init__(self, server: Callable[[], tuple[Any, threading.Lock]]) -> None:
        super().__init__()
        self.server = server

    def now(self, text: str) -> str:
        """The translation of ``text``, made now unless made before (see ``english_of``)."""
        if text not in self:
            if len(self) >= 256:
                self.clear()
            self[text] = english_of(*self.server(), text)
        return self[text]


def iso_dates(text: str) -> str:
    """``text`` with its Chinese dates written as ISO dates: "2026年12月10日" is "2026-12-10"."""
    return _CHINESE_DATE.sub(lambda m: f"{m[1]}-{int(m[2]):02d}-{int(m[3]):02d}", text)


def with_codes(text: str) -> str:
    """``text`` with each currency's Chinese name followed by its code: "日元" is "日元(JPY)"."""
    for code in currencies_in(text):
        names = sorted((n for n in code_names(code) if not n.isascii() and len(n) > 1), key=len, reverse=True)
        name = next((n for n in names if n in text), None)
        if name is not None and code not in text:
            text = text.replace(name, f"{name}({code})", 1)
    return text


def english_of(server: Any, lock: threading.Lock, text: str) -> str:
    """The model's English translation of ``text`` (a short completion, tools off), or ``""``
    when what it wrote states a number or an address ``text`` does not have (see the module)."""
    source = with_codes(iso_dates(text))
    messages: list[dict[str, str]] = [{"role": "system", "content": TRANSLATOR}]
    for chinese, english in _SHOTS:
        messages += [_asked(chinese), {"role": "assistant", "content": english}]
    body: dict[str, Any] = {"messages": [*messages, _asked(source)], "max_tokens": 64, "temperature": 0.0}
    body["grammar"] = grammar(source)
    reply = complete(server, lock, body, whole=True)
    english = str(reply["choices"][0]["message"].get("content") or "").strip().strip('"')
    return english if _faithful(english, source) else ""


def grammar(source: str) -> str:
    """The GBNF grammar of a translation of ``source`` (see the module)."""
    numbers = sorted(set(_NUMBER.findall(source)), key=len, reverse=True)
    at = "" if "@" in source else "@"  # no address the text does not have
    digits = "0-9\\uFF10-\\uFF19"  # a wide digit ("５") is no way round the rule
    items = [f"[^{digits}?!.{at}\\n]", f'"." [^ {digits}?!.{at}\\n]', *(f'"{n}"' for n in numbers)]
    end = '"?"' if source.rstrip().endswith(("?", "？")) else "[.!]?"
    return f"root ::= ({' | '.join(items)})+ {end}"


def _asked(text: str) -> dict[str, str]:
    return {"role": "user", "content": f'Translate into English: "{text}"'}


def _faithful(english: str, source: str) -> bool:
    """Whether every number and address of ``english`` is in ``source``."""
    numbers = set(_NUMBER.findall(source))
    addresses = {a.lower() for a in _ADDRESS.findall(source)}
    return all(n in numbers for n in _NUMBER.findall(english)) and all(
        a.lower() in addresses for a in _ADDRESS.findall(english)
    )
