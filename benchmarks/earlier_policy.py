"""The embedded model's policy as it was before its third round, for ``user_tools_dev.py --arms 0.5b-round-2``.

The third round added five rules; this model switches them off, in the same process as the
current one, so both are measured side by side on the same machine in one run:

* ``policy.insisted`` decides again after a first decline, or a first answer that only gives back
  the request's numbers (``declines``, ``restates_user``), and no longer counts the words of a
  tool's name that say what it does (``_ACTIONS``: "find", "list");
* the calculator's expression is written from the numbers (``policy.product``);
* the evidence check replaces an answer to an English request naming what no tool gave
  (``evidence.not_given``), sends back an answer that leaves out a computed number
  (``evidence.uncomputed``), and counts a result's number rounded to the answer's decimals as
  drawn from the results (``evidence._rounded_among``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from minloop.models.base import ModelRequest, ModelResponse
from minloop.models.local import LocalModel, evidence, policy

_POLICY: dict[str, Any] = {
    "declines": lambda answer: False,
    "restates_user": lambda answer, messages: False,
    "_ACTIONS": frozenset(),
    "product": lambda *arguments: None,
}
_EVIDENCE: dict[str, Any] = {
    "not_given": lambda *arguments: None,
    "uncomputed": lambda *arguments: None,
    "_rounded_among": evidence._among,
}


@contextmanager
def round_two() -> Iterator[None]:
    """The third round's rules switched off while the block runs."""
    switched = [(module, names) for module, names in ((policy, _POLICY), (evidence, _EVIDENCE))]
    saved = [(module, name, getattr(module, name)) for module, names in switched for name in names]
    for module, names in switched:
        for name, value in names.items():
            setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


class _Check:
    """The model's evidence check, run with the third round's rules off."""

    def __init__(self, check: Any) -> None:
        self.check = check

    def __call__(self, text: str, messages: Any) -> Any:
        with round_two():
            return self.check(text, messages)


class RoundTwo(LocalModel):
    """``LocalModel()`` with its policy as it was before the third round (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answer_check = _Check(self.answer_check)  # type: ignore[assignment]

    async def call(self, request: ModelRequest) -> ModelResponse:
        with round_two():
            return await super().call(request)
