"""Controls around a small model's steps, as layers: for any model, embedded or over HTTP.

``small_model_layers()`` returns them in their order, one per concern, each in its own module::

    menu         ToolMenu      a large menu narrowed to the tools that share words with the request
    language     UserLanguage  the answer in the user's language
    grounding    Grounding     a call resting on a required value nobody said is not made
    evidence     EvidenceCheck an answer stating facts no one gave is sent back, then replaced

``without=("menu", ...)`` leaves those out (``benchmarks/ablation.py`` removes each in turn).
The embedded model brings them (``LocalModel().layers``); any other model gets them with one
argument: ``Loop(OpenAIModel(...), tools, layers=small_model_layers())``. They use only what
every request has (the tools' schemas and descriptions, the values in the transcript, numbers,
dates, units, currencies, the language) and the one seam every layer uses (``minloop.layer``);
a model that reads its reply as it writes it is asked to stop early where they would refuse
the reply anyway (``minloop.models.base.WhileDecoding``), and any other model is checked after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..exceptions import MinloopError
from ..layer import Layer
from .evidence import EvidenceCheck
from .grounding import Grounding
from .language import UserLanguage
from .menu import ToolMenu

__all__ = [
    "LAYERS",
    "EvidenceCheck",
    "Grounding",
    "ToolMenu",
    "UserLanguage",
    "small_model_layers",
]

LAYERS: dict[str, Callable[[], Layer]] = {
    "menu": ToolMenu,
    "language": UserLanguage,
    "grounding": Grounding,
    "evidence": lambda: EvidenceCheck(resend_unused=False),  # an answer that used no result: replaced
}


def small_model_layers(*, without: Iterable[str] = ()) -> list[Layer]:
    """The small-model layers in their order (see the module), but those named in ``without``."""
    left_out = set(without)
    if unknown := sorted(left_out - LAYERS.keys()):
        raise MinloopError(
            f"no small-model layer is called {unknown[0]!r}: the names are {', '.join(LAYERS)}"
        )
    return [make() for name, make in LAYERS.items() if name not in left_out]
