"""Questions answered in this process: ``Loop(..., ask_user=fn)`` for tools whose server asks.

When a call's server asks for the user's input (``minloop.questions``), ``ask_user(question)``,
sync or async, is called for each question; with every answer at hand the call is made again
with them and the server's state, as often as the server asks (up to ``MAX_ROUNDS`` times).
``None`` for any question leaves it unanswered: the model reads ``ERR_TOOL_INPUT_REQUIRED``.
With a run store, the store's layer does this instead, and ``None`` pauses the run.
"""

from __future__ import annotations

from typing import Any

from ..layer import Execute, Layer
from ..messages import ToolCall
from ..questions import MAX_ROUNDS, Answered, Answerer, Asked, answering, ask_all
from ..state import RunState
from ..tools import Tool

__all__ = ["Answering"]


class Answering(Layer):
    """Answers a call's questions with ``ask_user`` and makes the call again."""

    def __init__(self, ask_user: Answerer) -> None:
        self.ask_user = ask_user

    async def wrap_tool(self, run: RunState, call: ToolCall, tool: Tool, execute: Execute) -> Any:
        sent: Answered | None = None
        while True:
            try:
                with answering(sent):
                    return await execute()
            except Asked as asked:
                if asked.asking.round > MAX_ROUNDS:
                    raise Asked(asked.asking, f" (it asked {MAX_ROUNDS} times already)") from None
                answers = await ask_all(self.ask_user, asked.asking)
                if answers is None:
                    raise
                sent = Answered(asked.asking.state, answers, asked.asking.round + 1)
