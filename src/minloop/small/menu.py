"""The tools shown to a small model: a large menu narrowed to the few that can matter.

``ToolMenu`` ranks the menu against the user's messages before each decision when it has more
than ``above`` tools or its definitions take more than about ``tokens`` tokens
(``ranking.select_tools``: BM25 over each tool's name, description, parameters and enum
values), and shows only the chosen tools, plus those already called. A request in another
script than the tools (a Chinese request, English tools) is shown the whole menu; so is a
request that shares no word with any tool: the model decides.
"""

from __future__ import annotations

from dataclasses import replace

from ..layer import Layer
from ..models.base import ModelRequest
from ..state import Prompt, RunState
from .ranking import SELECT_ABOVE, SELECT_TOKENS, narrowing

__all__ = ["ToolMenu"]


class ToolMenu(Layer):
    """Shows a large menu's few tools that share words with the request (see the module)."""

    def __init__(self, above: int | None = SELECT_ABOVE, tokens: int | None = SELECT_TOKENS) -> None:
        self.above, self.tokens = above, tokens

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        if not prompt.tools or prompt.tool_choice == "none":
            return prompt
        request = ModelRequest(prompt.messages, prompt.tools, prompt.tool_choice)
        narrow, unranked = narrowing(request, self.above, self.tokens)
        if unranked or not narrow.tools:
            return prompt  # cannot be ranked, or no word matched: the model decides on the whole menu
        return replace(prompt, tools=narrow.tools, tool_choice=narrow.tool_choice)
