"""Answering in the user's language.

A small model given a Chinese request and English tool results answers in English about half
the time. ``UserLanguage`` adds a note asking for the answer in Chinese to the calls after a
Chinese request's tool results, and asks a model that can hold its answer to a language while it writes it
(``WhileDecoding.language``: the embedded model begins the answer with a Chinese character) to
do so.
"""

from __future__ import annotations

from dataclasses import replace

from ..language import Language, user_language
from ..layer import CallModel, Layer
from ..models.base import ModelRequest, WhileDecoding
from ..state import Prompt, Reply, RunState

__all__ = ["NOTES", "UserLanguage"]

NOTES: dict[Language, str] = {"zh": "请用中文回答用户。"}


class UserLanguage(Layer):
    """The answer in the language of the user's last message (see the module)."""

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        after_results = bool(run.messages) and run.messages[-1].get("role") in ("tool", "function")
        note = NOTES.get(user_language(run.messages)) if after_results else None
        return replace(prompt, notes=(*prompt.notes, note)) if note else prompt

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        return await call(request.asking(WhileDecoding(language=user_language(run.messages))))
