"""Answer checks as a layer: ``AnswerChecking(check)`` holds every text answer to ``check``.

A check is ``check(text, messages)`` returning ``None`` (the answer stands), a note (the answer
goes back to the model with it), or ``Replacement(text)`` (the run ends with that text instead;
see ``minloop.decision``). ``Loop`` installs one for a model that brings its own check (the
embedded model's evidence check) unless ``Controls(answer_check=...)`` names another.
"""

from __future__ import annotations

from dataclasses import replace

from ..decision import AnswerCheck, combine_checks
from ..layer import Layer
from ..state import Prompt, RunState

__all__ = ["AnswerChecking"]


class AnswerChecking(Layer):
    """Adds ``check`` after any check the prompt already carries."""

    def __init__(self, check: AnswerCheck) -> None:
        self.check = check

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        check = self.check if prompt.answer_check is None else combine_checks(prompt.answer_check, self.check)
        return replace(prompt, answer_check=check)
