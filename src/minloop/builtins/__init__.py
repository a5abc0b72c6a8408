"""Built-in tools: real, offline and truthful. None of them can reach a model: they hold
no model and the loop's guard refuses one called from inside a tool."""

from __future__ import annotations

import os

from ..fallback import ask_for_clarification
from ..tools import Tool
from .calculator import calculator
from .clock import current_time
from .files import file_tools

__all__ = ["ask_for_clarification", "calculator", "current_time", "default_tools", "file_tools"]


def default_tools(root: str | os.PathLike[str] = ".") -> list[Tool]:
    """The CLI's tool set: calculator, clock and read-only file tools over ``root``."""
    return [calculator, current_time, *file_tools(root)]
