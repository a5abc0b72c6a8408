"""Stopping a reply that runs away, for every model.

A small model can loop: write a sentence again and again, or write on until the server's window
is full (the 0.5B model behind llama.cpp's server once wrote 7,719 tokens in 322 s for one
reply). ``Runaway`` reads a reply as it is written and says when to stop it: when it writes a
whole sentence again (``Repetition``), or when it passes ``max_tokens``. The embedded model
(``minloop.models.local``) and ``OpenAIModel`` use the same watch, streamed or not; a reply it
stopped comes back with ``ModelResponse.stopped`` saying why (``"repeated"``: its text is cut
where the repeat began; ``"length"``: it passed the cap), and the loop takes it as such (see
``minloop.decision``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from .base import ModelResponse, Stopped

__all__ = [
    "LOOP_BLOCK",
    "LOOP_SENTENCE",
    "Repetition",
    "Runaway",
    "Stopped",
    "sentences",
    "stopped_reply",
    "whole_reply",
]

_SENTENCE = re.compile(r"[^.!?。！？\n]*(?:[.!?](?=\s)|[。！？\n])\s*")
LOOP_SENTENCE = 20  # characters: a sentence this long written twice is a loop, not a refrain
LOOP_BLOCK = 8  # sentences: the longest run whose repeat is looked for


def sentences(text: str, start: int = 0) -> Iterator[re.Match[str]]:
    """The whole sentences of a growing text from ``start``, each with the whitespace after it:
    one ends with ".", "!" or "?" and whitespace (so "9." of "9.5" is not an end), or with
    "。", "！", "？" or a line break. What follows the last one is not yet a sentence."""
    return _SENTENCE.finditer(text, start)


class Repetition:
    """Stops a text that writes again, right after itself, what it just wrote: one sentence, or
    a run of up to ``LOOP_BLOCK`` sentences, of at least ``LOOP_SENTENCE`` characters (a line is a
    sentence too). A small model caught in a loop repeats it to the token limit; a sentence
    written again further on (the same line of code in two functions) is no loop. Call it with
    each piece; it returns True to stop. ``kept`` is the text up to where the repeat began."""

    def __init__(self) -> None:
        self.text = ""
        self.read = 0
        self.said: list[tuple[str, int]] = []  # each whole sentence, stripped, and where it starts
        self.kept: str | None = None  # set when the text was stopped

    def __call__(self, piece: str) -> bool:
        self.text += piece
        for match in sentences(self.text, self.read):
            self.read = match.end()
            if sentence := match.group().strip():
                self.said.append((sentence, match.start()))
            if (start := self._repeat()) is not None:
                self.kept = self.text[:start].rstrip()
                return True
        return False

    def _repeat(self) -> int | None:
        """Where the second copy begins, when the last sentences repeat the ones before them."""
        said = [s for s, _ in self.said]
        for size in range(1, min(LOOP_BLOCK, len(said) // 2) + 1):
            block = said[-size:]
            if block == said[-2 * size : -size] and len("".join(block)) >= LOOP_SENTENCE:
                return self.said[-size][1]
        return None


class Runaway:
    """Watches one reply as it grows: ``text(piece)`` for a piece of its text (checked for
    repeats), ``tokens(n)`` for tokens written in any part of it (text, calls, reasoning); each
    returns why to stop (``stopped``), or ``None`` to go on. ``max_tokens`` ``None``: no cap."""

    def __init__(self, max_tokens: int | None) -> None:
        self.max_tokens = max_tokens
        self.repetition = Repetition()
        self.written = 0
        self.stopped: Stopped | None = None

    def text(self, piece: str) -> Stopped | None:
        if self.stopped is None and self.repetition(piece):
            self.stopped = "repeated"
        return self.stopped

    def tokens(self, count: int = 1) -> Stopped | None:
        self.written += count
        if self.stopped is None and self.max_tokens is not None and self.written > self.max_tokens:
            self.stopped = "length"
        return self.stopped

    @property
    def kept(self) -> str | None:
        """The text up to where it began to repeat, when it did."""
        return self.repetition.kept


def whole_reply(response: ModelResponse, max_tokens: int | None) -> ModelResponse:
    """A reply that came whole, read as a stream would have been: cut where its text began to
    repeat itself, or marked when it passed ``max_tokens`` (as the server counted its tokens, or
    about four characters a token when it did not)."""
    text = response.message.get("content")
    text = text if isinstance(text, str) else ""
    watch = Runaway(max_tokens)
    if len(text) >= 2 * LOOP_SENTENCE and watch.text(text) is not None:  # a shorter text cannot repeat
        message = {**response.message, "content": watch.kept or None}
        return replace(response, message=message, stopped="repeated")
    if watch.tokens(response.usage.completion_tokens or len(text) // 4) is not None:
        return replace(response, stopped=response.stopped or "length")
    return response


def stopped_reply(response: ModelResponse, kept: str | None, at_cap: bool) -> ModelResponse:
    """``response`` as a watch stopped it while it was written: its text cut to ``kept``, where it
    began to repeat itself, or, an answer that ran to the length cap (``at_cap``), marked so. A
    call cut off is not marked: its arguments tell (the embedded model's own rule)."""
    if kept is not None:
        return replace(response, message={**response.message, "content": kept}, stopped="repeated")
    if at_cap and not response.message.get("tool_calls"):
        return replace(response, stopped="length")
    return response
