"""An answer sent back is answered again from what is there: tools off, and briefly.

When a check sent the last answer back (its note goes with the next call, see
``minloop.decision``), ``AnswerAgain`` makes that call with tools off: the results are all the
model has, and a small model told its answer was unsupported otherwise calls a tool again with
the same invented values. The new answer is short (``brief``: a model that reads its answer as
it writes it stops after the first sentence past ``BRIEF_CHARS``), unless the note asks for
more: the values of a result the answer left out.
"""

from __future__ import annotations

from dataclasses import replace

from ..layer import CallModel, Layer
from ..models.base import ModelRequest, WhileDecoding
from ..state import Prompt, Reply, RunState
from .evidence import asks_more, is_note

__all__ = ["BRIEF_CHARS", "AnswerAgain", "brief"]

BRIEF_CHARS = 160  # about the 64 tokens of a short answer


def brief(text: str) -> bool:
    """Stop an answer at the end of the first sentence past ``BRIEF_CHARS`` characters."""
    return len(text) > BRIEF_CHARS and text.rstrip()[-1:] in ".!?。！？"


class AnswerAgain(Layer):
    """The call after an answer the evidence check sent back: tools off, brief (see the module)."""

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        return replace(prompt, tool_choice="none") if run.note and is_note(run.note) else prompt

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        if run.note and is_note(run.note) and not asks_more(run.note):
            request = request.asking(WhileDecoding(stop=brief))
        return await call(request)
