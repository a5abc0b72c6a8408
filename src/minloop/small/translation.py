"""A request written in another language than the tools, translated into English by the model
itself, once per request.

Tools are mostly described in English, and a call's values are often English ("Tokyo" for
"东京", "MSFT" for "微软"). ``Translation`` asks the run's own model, before the first decision
on a Chinese request with tools, for the request in English; the translation is given to the
model beside the request (a note), ranks the menu (``minloop.small.menu``) and grounds a call's
English values (``minloop.small.grounding``): ``english(run)`` reads it. It must be a
translation, never an answer: the model is told so and shown four worked examples, its text is
cut at the first line, and a translation that states a number or an address the request does
not have is not used (the 0.5B model, asked plainly, answered most Chinese requests instead).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..language import user_language
from ..layer import Layer
from ..messages import Message
from ..models.base import Model, ModelRequest, WhileDecoding
from ..state import Prompt, RunState

__all__ = ["TRANSLATOR", "Translation", "english", "faithful", "iso_dates", "translated"]

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
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?|[\uff10-\uff19]+")
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
MAX_CHARS = 300  # a translation longer than this is an answer being written
NOTE = 'The user\'s message in English: "{english}"'


class Translation(Layer):
    """Translates the first decision's Chinese request into English (see the module)."""

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        last = run.messages[-1] if run.messages else {}
        text = last.get("content")
        first = last.get("role") == "user" and isinstance(text, str)
        if not (first and prompt.tools and user_language(run.messages) == "zh"):
            return prompt
        done: dict[str, str] = run.local(Translation, dict)
        if text not in done:
            done[str(text)] = await translated(run.model, str(text))
        return _with_note(run, prompt)


def english(run: RunState) -> str | None:
    """The English translation of the run's last user message, when one was made and kept."""
    done: dict[str, str] = run.local(Translation, dict)
    said = [m.get("content") for m in run.messages if m.get("role") == "user"]
    return (done.get(said[-1]) or None) if said and isinstance(said[-1], str) else None


def _with_note(run: RunState, prompt: Prompt) -> Prompt:
    text = english(run)
    return replace(prompt, notes=(*prompt.notes, NOTE.format(english=text))) if text else prompt


async def translated(model: Model, text: str) -> str:
    """``model``'s English translation of ``text``, or ``""`` when it is not faithful."""
    source = iso_dates(text)
    messages: list[Message] = [{"role": "system", "content": TRANSLATOR}]
    for chinese, in_english in _SHOTS:
        messages += [_asked(chinese), {"role": "assistant", "content": in_english}]
    stop = WhileDecoding(
        stop=lambda written: "\n" in written.strip() or len(written) > MAX_CHARS, language="en"
    )
    request = ModelRequest([*messages, _asked(source)], (), "none", decoding=stop)
    response = await model.call(request)
    content: Any = response.message.get("content")
    line = str(content or "").strip().split("\n")[0].strip().strip('"')
    return line if faithful(line, source) and len(line) <= MAX_CHARS else ""


def iso_dates(text: str) -> str:
    """``text`` with its Chinese dates written as ISO dates: "2026年12月10日" is "2026-12-10"."""
    return _CHINESE_DATE.sub(lambda m: f"{m[1]}-{int(m[2]):02d}-{int(m[3]):02d}", text)


def _asked(text: str) -> Message:
    return {"role": "user", "content": f'Translate into English: "{text}"'}


def faithful(english: str, source: str) -> bool:
    """Whether every number and address of ``english`` is in ``source`` (and it says anything)."""
    numbers = set(_NUMBER.findall(source))
    addresses = {a.lower() for a in _ADDRESS.findall(source)}
    return (
        bool(english)
        and all(n in numbers for n in _NUMBER.findall(english))
        and all(a.lower() in addresses for a in _ADDRESS.findall(english))
    )
