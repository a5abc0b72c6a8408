"""Answers held to the evidence: facts in a final answer must come from the user or a tool.

``EvidenceCheck`` reads the facts an answer states (numbers, quantities, dates and times, in
digits or Chinese numerals, multi-word names such as "Joe Biden", addresses; see ``.facts``)
and looks for each in the user's and the tools' messages. An answer whose facts are all found
passes; otherwise it is sent back with a note naming what is unsupported, in the user's
language, and if the next answer is still unsupported the run ends with a plain statement that
it cannot answer reliably, quoting what the tools returned (``notes.plain_statement``).

An answer given after tools ran must also use them: when it states nothing only a tool result
gave and neither declines nor asks back, it is sent back the same way, unless it gives back what
the user stated (``restates_user``); an answer given without any tool is held to its facts
only, so chit-chat passes. When every call since the user spoke failed or found nothing, an
answer that does not say so is replaced at once.

It is both an answer check (``Controls(answer_check=EvidenceCheck())``) and a layer, which also
asks a model that reads its answer as it writes it to stop at the end of the first unsupported
sentence (``WhileDecoding.stop``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from ..decision import Replacement, combine_checks
from ..language import Language, numbers_in, user_language
from ..layer import CallModel, Layer
from ..models.base import ModelRequest, WhileDecoding
from ..models.runaway import sentences
from ..state import Prompt, Reply, RunState
from .declined import declines
from .drawn import LIST_MARKER, among, draws_on_tools, tool_values
from .facts import leaves, typed, unsupported
from .notes import NOTES, SEPARATOR, UNUSED, plain_statement
from .results import since_user, unserved
from .values import Evidence, conversation

__all__ = ["AnswerWatch", "EvidenceCheck", "declines", "restates_user", "unsupported"]

_HAN = "\u4e00-\u9fff"


@dataclass(frozen=True)
class EvidenceCheck(Layer):
    """The evidence check, as an answer check and as a layer (see the module).

    ``retries`` is how many times an unsupported answer is sent back before the run ends with
    the plain statement. The note sent back is in the user's language unless ``note_language``
    names one ("en" or "zh"). With ``resend_unused`` off, an answer that uses no tool result is
    not sent back but ends the run at once: it has no value to correct. As a layer it stands aside when the
    loop's ``Controls(answer_check=...)`` names a check of its own.
    """

    retries: int = 1
    note_language: Language | None = None
    resend_unused: bool = True

    def __call__(self, answer: str, messages: Sequence[Mapping[str, Any]]) -> str | Replacement | None:
        return self.check(answer, messages)

    def check(
        self, answer: str, messages: Sequence[Mapping[str, Any]], menu: Sequence[Mapping[str, Any]] = ()
    ) -> str | Replacement | None:
        """``None`` (the answer stands), a note sending it back, or the plain statement that
        replaces it. ``menu`` is the tools offered: a statement made when no tool ran names them."""
        language = user_language(messages)
        if unserved(messages) and not declines(answer):  # every call failed or found nothing
            return Replacement(plain_statement(messages, language))
        note, first_try = self.note_language or language, _rejected(messages) < self.retries
        evidence = Evidence.of(messages)
        facts = unsupported(answer, evidence)
        drawn = draws_on_tools(answer, messages)
        unused = not facts and drawn is False and not declines(answer) and not restates_user(answer, messages)
        if unused and _across_scripts(answer, tool_values(messages) or ""):
            unused = False  # "订单已送达" from "delivered": the words cannot be compared
        if not facts and not unused:
            return None
        if not first_try or not (drawn or self.resend_unused):
            return Replacement(plain_statement(messages, language, menu))
        if unused:
            return UNUSED[note]
        return NOTES[note].format(facts=SEPARATOR[note].join(facts[:5]))

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        if run.controls.answer_check is not None:
            return prompt
        menu = [tool.spec() for tool in run.tools.values()]
        own = partial(self.check, menu=menu)
        return replace(prompt, answer_check=combine_checks(prompt.answer_check, own))

    async def wrap_model(self, run: RunState, request: ModelRequest, call: CallModel) -> Reply:
        if run.controls.answer_check is not None or request.output_schema is not None:
            return await call(request)
        return await call(request.asking(WhileDecoding(stop=AnswerWatch(conversation(run, request)))))


class AnswerWatch:
    """Given an answer's text as it grows, says stop at the end of the first sentence that states
    a fact the evidence does not give. Only whole sentences are read, and the whitespace after
    them, so a number or a list marker is never judged half written."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.messages = messages
        self.evidence: Evidence | None = None  # read at the first whole sentence
        self.read = 0

    def __call__(self, text: str) -> bool:
        ends = [m.end() for m in sentences(text, self.read)]
        if not ends:
            return False
        self.read = ends[-1]
        self.evidence = self.evidence or Evidence.of(self.messages)
        return bool(unsupported(text[: self.read], self.evidence))


def restates_user(answer: str, messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``answer`` gives back what the user stated (a typed answer whose every value the
    user's messages hold, a text stating a number the user gave other than 0 and 1): it needs no
    tool, so a call made on the way does not make it unused."""
    user = "\n".join(str(m.get("content")) for m in messages if m.get("role") == "user")
    said, lowered = numbers_in(user), user.casefold()
    data = typed(answer)
    if data is None:
        stated = numbers_in(LIST_MARKER.sub(" ", answer))
        return any(v not in (0.0, 1.0) and among(v, said) for v in stated)
    values = [text for _, text in leaves(data) if text.strip()]
    numbers = [numbers_in(text) for text in values]
    found = (
        text.casefold() in lowered or (n and all(among(v, said) for v in n))
        for text, n in zip(values, numbers)
    )
    return bool(values) and all(found)


def _across_scripts(answer: str, results: str) -> bool:
    """Whether a Chinese answer speaks of results that have no Chinese in them."""
    has_han = lambda text: any("\u4e00" <= ch <= "\u9fff" for ch in text)
    return has_han(answer) and not has_han(results) and bool(results.strip())


def _rejected(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many replies without calls came since the user last spoke: none was accepted."""
    return sum(m.get("role") == "assistant" and not m.get("tool_calls") for m in since_user(messages))
