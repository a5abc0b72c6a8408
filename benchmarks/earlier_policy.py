"""The embedded model's policy as it was before its fourth round, for ``user_tools_dev.py --arms 0.5b-round-3``.

The fourth round added these rules; this model switches them off, in the same process as the
current one, so both are measured side by side on the same machine in one run:

* a Chinese request is translated with worked examples, under a grammar (one sentence, a
  question kept a question, no number or address the request does not have), its dates and
  currencies written as ISO dates and codes first (``translate.english_of``; round 3 asked
  plainly, ``_english_of`` below);
* the evidence check reads what a Chinese request asks for in its translation, and replaces an
  answer about a later day than the results give, or to a request for an action no tool does
  (``asked.beyond``; round 3 read English requests' "what is" only);
* a first call whose value holds both things the request joins with "and" ("Ada Lovelace and Alan
  Turing's phone numbers") is made once for each (``policy.split``);
* ``insist.insisted`` also counts a tool as named by the first sentence of its description
  ("share price", ``named_by``);
* a call that copies its tool's example takes the request's one value of the same shape
  (``copied.reshaped``), and is asked for once more also when the policy forced it, with the
  example's first token banned (``copied.banning``);
* the evidence check holds e-mail addresses and links to the evidence (``evidence._ADDRESS``),
  sends a decline back once when the results give what the request names after "what is"
  (``asked.given``), and reads a Chinese answer in its English translation before it calls it
  unused ("已送达" for "delivered");
* the plain statement made when no tool ran names the tools the request names, which could not
  be called with what it gives, rather than saying none provides it (``notes.UNCALLED``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from minloop.models.base import ModelRequest, ModelResponse
from minloop.models.local import LocalModel, copied, evidence, insist, notes, policy, select, translate
from minloop.models.local.asked import not_given
from minloop.models.local.runtime import complete
from minloop.models.local.select import terms


def _english_of(server: Any, lock: threading.Lock, text: str) -> str:
    """Round 3's translation: the text in quotes, asked plainly."""
    system = "You are a translator. You never answer questions; you only translate them."
    body = {
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": f'Translate this text into English: "{text}"'},
        ],
        "max_tokens": 64,
        "temperature": 0.0,
    }
    reply = complete(server, lock, body, whole=True)
    return str(reply["choices"][0]["message"].get("content") or "").strip().strip('"')


def _beyond(
    messages: Sequence[Mapping[str, Any]], menu: Any, english: str | None, language: str, answer: str = ""
) -> str | None:
    return not_given(messages, menu) if language == "en" else None


def _named_by(spec: Mapping[str, Any]) -> set[str]:
    return set(terms(str((spec.get("function") or {}).get("name")))) - select._ACTIONS


_asked_again = copied.asked_again


def _once(request: ModelRequest, *arguments: Any) -> Any:
    return None if request.tool_choice != "auto" else _asked_again(request, *arguments)


_SWITCHED: list[tuple[Any, dict[str, Any]]] = [
    (translate, {"english_of": _english_of}),
    (notes, {"named_by": lambda spec: set()}),
    (evidence, {"beyond": _beyond, "given": lambda *arguments: False, "_ADDRESS": re.compile(r"(?!x)x")}),
    (insist, {"named_by": _named_by}),
    (policy, {"split": lambda response, *rest: response}),
    (
        copied,
        {"reshaped": lambda *arguments: None, "asked_again": _once, "banning": lambda body, *rest: body},
    ),
]


@contextmanager
def round_three() -> Iterator[None]:
    """The fourth round's rules switched off while the block runs."""
    saved = [(module, name, getattr(module, name)) for module, names in _SWITCHED for name in names]
    for module, names in _SWITCHED:
        for name, value in names.items():
            setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


class _Check:
    """The model's evidence check, run with the fourth round's rules off."""

    def __init__(self, check: Any) -> None:
        self.check = check

    def __call__(self, text: str, messages: Any) -> Any:
        with round_three():
            return self.check(text, messages)


class RoundThree(LocalModel):
    """``LocalModel()`` with its policy as it was before the fourth round (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        unread = (
            replace(self.answer_check, english=None) if self.answer_check else None
        )  # answers not translated
        self.answer_check = _Check(unread)  # type: ignore[assignment]

    async def call(self, request: ModelRequest) -> ModelResponse:
        with round_three():
            return await super().call(request)
