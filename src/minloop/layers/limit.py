"""The answer at the limit: ``Loop(..., answer_at_limit=True)``.

At ``max_steps``, or at a budget, the run would stop without an answer. With ``AnswerAtLimit``
the loop makes one more call instead, tools off, asking for the final answer from what was
gathered (``Controls.limit_text``). The run then ends with the limit's status and
``RunResult.forced_by`` naming the limit (whatever the model replied to that call). A call the
model makes there is not run: text written beside it is taken as the answer at the limit (and
checked like any answer); a call with no text is a ``blank`` step.
"""

from __future__ import annotations

from dataclasses import replace

from ..decision import Blank, CallTools, Decision, control_message, decide, reply_text
from ..layer import Layer
from ..result import Step
from ..state import Limit, Outcome, Prompt, Reply, RunState, Stop

__all__ = ["AnswerAtLimit"]


class AnswerAtLimit(Layer):
    """Turns the call at a limit into a request for the final answer, tools off."""

    def _limits(self, run: RunState) -> dict[int, Limit]:
        """The limits this run's steps were asked to answer at, by step."""
        return run.local(self, dict[int, Limit])

    async def before_model(self, run: RunState, prompt: Prompt) -> Prompt:
        limit = prompt.limit
        if limit is None:
            return prompt
        self._limits(run)[run.index] = limit
        control = control_message(run.controls, decayed=prompt.decayed, messages=run.messages, note=run.note,
                                  at_limit=True)  # fmt: skip
        text = control["content"] if control else None
        return replace(prompt, limit=None, forced_by=limit.name, tool_choice="none", control=text)

    async def after_model(self, run: RunState, reply: Reply, decision: Decision) -> Decision:
        if run.index not in self._limits(run) or not isinstance(decision, CallTools):
            return decision
        text = reply_text(decision.message)  # tools are off: a call here is not run
        if text is None or not text.strip():
            return Blank(decision.message)
        check = run.prompt.answer_check if run.prompt else None
        return decide({"role": "assistant", "content": text}, run.index, check, run.messages)

    async def after_step(self, run: RunState, step: Step, outcome: Outcome) -> Outcome:
        limit: Limit | None = self._limits(run).pop(step.index, None)
        if limit is None:
            return outcome
        if step.decision == "unfinished":
            text = f"{limit.reason}; the answer at the limit was not accepted: {run.note}"
            return Stop(limit.status, text, limit.name)
        return Stop(limit.status, limit.reason, limit.name)
