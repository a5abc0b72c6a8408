"""Answering in the user's language.

A small model given a Chinese request and English tool results answers in English about half
the time, and held to Chinese from its first word it reasons worse: it counts two names as
four. ``UserLanguage`` lets the model answer as it will, and when a Chinese request's answer
comes back in another language, asks the same model, tools off, to translate it into Chinese.
The translation is kept only when it states every number the answer stated; otherwise the
answer stands as it was written. Streamed, the deltas are the answer as first written. An
English request's answer is asked for in English while it is written
(``WhileDecoding.language``: the embedded model writes it in words, not as copied JSON).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..decision import reply_text
from ..language import Language, numbers_in, user_language
from ..layer import CallModel, Layer
from ..models.base import ModelRequest, WhileDecoding
from ..state import Reply, RunState
from ..textcalls import written_call

__all__ = ["TRANSLATE", "UserLanguage"]

_HAN = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[A-Za-z]+")

TRANSLATE: dict[Language, str] = {
    "zh": "把用户给出的回答翻译成简体中文。数字、人名、代码、日期和单位照原样保留。只写译文。",
}


class UserLanguage(Layer):
    """The answer in the language of the user's last message (see the module)."""

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        language = user_language(run.messages)
        if language not in TRANSLATE:  # held to it while written (the embedded model: in words)
            return await call(request.asking(WhileDecoding(language=language)))
        reply = await call(request)
        message = reply.response.message
        text = reply_text(message)
        if message.get("tool_calls") or request.output_schema is not None:
            return reply
        if not text or not text.strip() or _written_in(text) == language or reply.response.stopped:
            return reply
        if written_call(text, [str(t.get("function", {}).get("name")) for t in request.tools]):
            return reply  # a call written as text that cannot be run is no answer to translate either
        ask = [{"role": "system", "content": TRANSLATE[language]}, {"role": "user", "content": text}]
        again = await call(ModelRequest(ask, tool_choice="none").asking(WhileDecoding(language=language)))
        said = reply_text(again.response.message) or ""
        if again.response.message.get("tool_calls") or not _keeps_numbers(text, said):
            return reply
        usage = reply.response.usage + again.response.usage
        answer = {"role": "assistant", "content": said.strip()}
        return Reply(replace(reply.response, message=answer, usage=usage), reply.latency + again.latency)


def _keeps_numbers(text: str, translated: str) -> bool:
    """Whether ``translated`` is in another script and states every number ``text`` states."""
    written = numbers_in(translated)
    has = lambda n: any(abs(n - m) <= 1e-9 * max(1.0, abs(m)) for m in written)
    return _written_in(translated) != _written_in(text) and all(has(n) for n in numbers_in(text))


def _written_in(text: str) -> Language:
    """``"zh"`` for a text with as many Han characters as English words: "The book '白鲸记' is not
    available." is English that names a Chinese title."""
    return "zh" if len(_HAN.findall(text)) >= len(_WORD.findall(text)) else "en"
