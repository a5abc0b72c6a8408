"""Built-in tools: real, offline and truthful. None of them can reach a model (S14)."""

from .clarify import ask_for_clarification

__all__ = ["ask_for_clarification"]
