"""The default fallback tool for unknown tool names."""

from __future__ import annotations

from .tools import tool


@tool(timeout=1.0)
def ask_for_clarification(question: str) -> dict[str, str]:
    """Ask the user to clarify or rephrase the request.

    Args:
        question: The question to put to the user.
    """
    return {"question": question, "next": "ask the user this question in your answer"}
