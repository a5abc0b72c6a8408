"""A comparison answered without the values it rests on: sent back once, with them.

Asked "苏黎世和首尔现在哪里的空气更干净？", the 1.5B model answered "苏黎世的空气更干净。" beside an
AQI of 18 for Zurich and 64 for Seoul; asked "Is it warmer in Paris or in Berlin right now?", "It
is warmer in Paris than in Berlin right now." Neither gives a number, so the user cannot see
what the answer rests on, and the first, whose comparison the check cannot read (no "than" or
"比", and a comparative that names no key of the results), was called unused and replaced,
though the results had answered.

``unweighed`` gives the note that sends such an answer back once: the request asks which of two
things is more or less (a comparative, and "which", "or", "哪", "还是"...), two results served,
the answer names one of the two things, and it states none of the numbers that differ between
the results. The note gives those numbers. The answer given to it is held to the results as any
other; when it fails where the first answer's comparison was right (``kept``), the first stands.
The check reads the transcript, which has the answer sent back but not the note: which note it
got is read again from that answer.

An answer that gives one thing's value only ("Zurich has cleaner air right now with an AQI of
18") is left as it is: sent back, the 1.5B model added "Seoul has cleaner air right now with an
AQI of 64", which says the opposite.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...language import Language, numbers_in
from .compare import compared, differing, named, placed, shown_names
from .drawn import rounded_among
from .policy import since_user
from .results import served

__all__ = ["VALUES", "VALUES_STARTS", "kept", "sent_for_values", "unweighed"]

VALUES: dict[Language, str] = {
    "en": "Your answer does not give the values it rests on: the results give {first} for {one}, and "
    "{second} for {two}. Answer again, with these values.",
    "zh": "你的回答没有给出所依据的数值：工具结果中 {one} 是 {first}，{two} 是 {second}。请带上这些数值重新回答。",
}
VALUES_STARTS = [note.split("{")[0] for note in VALUES.values()]
_ASKS = re.compile(r"\b(?:which|who|where|or|than)\b|哪|还是|比", re.IGNORECASE)
_COMPARATIVE = re.compile(
    r"\b(?:more|less|most|least|better|worse|[a-z]{2,}i?er)\b|更|比较|最", re.IGNORECASE
)
_NOT_COMPARATIVE = frozenset({
    "weather", "number", "order", "other", "water", "after", "under", "over", "never", "ever", "answer",
    "letter", "center", "centre", "computer", "paper", "customer", "member", "user", "hour", "tower",
    "power", "register", "filter", "folder", "server", "browser", "driver", "partner", "manager", "owner",
    "player", "teacher", "river", "summer", "winter", "september", "october", "november", "december",
})  # fmt: skip


def unweighed(answer: str, messages: Sequence[Mapping[str, Any]], language: Language) -> str | None:
    """The note sending back a comparison that states none of the numbers it rests on (see the
    module), else ``None``."""
    done = served(messages)
    if len(done) != 2 or not _compares(since_user(messages)[0]):
        return None
    values = differing(done[0].result, done[1].result)
    stated = [abs(n) for n in numbers_in(answer)]
    given = [abs(v) for pair in values.values() for v in pair]
    if not values or any(rounded_among(n, given) for n in stated):
        return None  # a value is given
    if all(placed(answer, o, alias) is None for o, alias in zip(done, named(messages), strict=True)):
        return None  # it names neither thing: no comparison of them
    one, two = shown_names(messages)
    shown = [", ".join(f"{k.replace('_', ' ')} {v[i]:g}" for k, v in values.items()) for i in (0, 1)]
    return VALUES[language].format(first=shown[0], one=one, second=shown[1], two=two)


def kept(messages: Sequence[Mapping[str, Any]], supported: Callable[[str], bool]) -> str | None:
    """The answer sent back for its values, when its comparison was right and every fact of it
    ``supported``: it stands when the answer given to the note fails."""
    found = _weighed(messages)
    if found is None:
        return None
    text, before = found
    return text if compared(text, before) is True and supported(text) else None


def sent_for_values(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the answer last sent back since the user spoke was sent back for its values."""
    return _weighed(messages) is not None


def _weighed(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[str, Sequence[Mapping[str, Any]]] | None:
    """The last answer sent back since the user spoke (the conversation before it too), when it
    was for its values: a comparison it did not get wrong, without them."""
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        if message.get("role") == "user" or message.get("tool_calls"):
            return None
        if message.get("role") == "assistant":
            text, before = str(message.get("content")), messages[:at]
            weighed = compared(text, before) is not False and unweighed(text, before, "en") is not None
            return (text, before) if weighed else None
    return None


def _compares(request: str) -> bool:
    """Whether a request asks which of two things is more or less."""
    comparative = any(m.group().lower() not in _NOT_COMPARATIVE for m in _COMPARATIVE.finditer(request))
    return comparative and bool(_ASKS.search(request))
