"""The served loop as an A2A agent (the official ``a2a-sdk``): its card at
``/.well-known/agent-card.json``, JSON-RPC (message send and stream) at ``/a2a``.

A message starts a run and its task follows the run's status: working, then completed (the
answer as an artifact), failed, or input-required when the run paused for an approval or for a
tool server's questions; the next message on that task is the decision ("yes"/"是" approves,
anything else denies) or the answer (a JSON object: the form's fields, or by question key when
there are several; "decline"/"拒绝" or "cancel"/"取消") and resumes it.
A task, like a run, belongs to the token that sent its first message: the SDK's task store
keeps each caller's tasks apart, and another token finds no such task.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from a2a.auth.user import User
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import DefaultServerCallContextBuilder, create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

from ..exceptions import RunConflictError
from ..questions import UserAnswer
from ..result import RunResult
from ..runs.records import PendingCall
from .bodies import bearer
from .chat import FAILED
from .runs import tag_of

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.routing import Route

    from ..standard import Loop
    from .runs import Runs

__all__ = ["a2a_routes"]

YES = ("yes", "y", "approve", "ok", "是", "好", "同意", "批准")
DECLINE = ("decline", "no", "n", "拒绝", "不", "否")
CANCEL = ("cancel", "取消")

logger = logging.getLogger("minloop.serve")


class Caller(User):
    """Who sent an A2A request, as the task store scopes tasks: the tag of its token."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self.tag


class ByToken(DefaultServerCallContextBuilder):
    def build_user(self, request: Request) -> User:
        return Caller(tag_of(bearer(request)))


class LoopExecutor(AgentExecutor):
    """Runs the loop for each A2A message; remembers which run a paused task waits on."""

    def __init__(self, runs: list[Runs]) -> None:
        self.runs = runs
        self.paused: dict[str, str] = {}  # task id -> run id

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None and context.task_id and context.context_id
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        loop = self.runs[0].loop_for(context.call_context.user.user_name)
        text = context.get_user_input()
        run_id = self.paused.pop(context.task_id, None)
        try:
            await self._go(context, updater, loop, text, run_id)
        except Exception:  # a broken model or layer, a failed store: logged whole, the task fails
            logger.exception("an A2A task's run failed")
            await updater.failed(updater.new_agent_message([new_text_part(FAILED)]))

    async def _go(self, context: RequestContext, updater: TaskUpdater, loop: Loop, text: str,
                  run_id: str | None) -> None:  # fmt: skip
        assert context.task_id
        if run_id is None:
            result = await loop.run(text)
        else:
            pending = self.runs[0].store.load(run_id).pending
            try:
                result = await loop.resume(run_id, {p.call_id: _decision(p, text) for p in pending}, by="a2a")
            except RunConflictError as exc:  # an answer that does not fit: ask again
                self.paused[context.task_id] = run_id
                words = f"{exc}\n{_asks(pending)}"
                await updater.requires_input(updater.new_agent_message([new_text_part(words)]))
                return
        await self._report(result, updater, context.task_id)

    async def _report(self, result: RunResult, updater: TaskUpdater, task_id: str) -> None:
        if result.status == "success":
            await updater.add_artifact([new_text_part(result.output or "")], name="answer")
            await updater.complete()
        elif result.status == "paused":
            self.paused[task_id] = result.trace_id
            await updater.requires_input(updater.new_agent_message([new_text_part(_asks(result.pending))]))
        else:
            why = f"{result.status}: {result.error or result.output or ''}"
            await updater.failed(updater.new_agent_message([new_text_part(why)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def _asks(pending: Sequence[PendingCall]) -> str:
    """What a paused task asks its caller, in English and Chinese."""
    lines = []
    approve = "; ".join(f"{p.name}({p.arguments})" for p in pending if p.why != "question")
    if approve:
        lines.append(f"Approve {approve}? Reply yes or no. / 是否批准 {approve}？请回复 是 或 否。")
    for p in pending:
        for q in p.questions:
            what = (
                json.dumps(q.schema, ensure_ascii=False)
                if q.kind == "form"
                else f"a page on {q.host} / {q.host} 上的页面"
            )
            lines.append(
                f"{q.server} asks ({q.key}): {q.message} [{what}] / {q.server} 询问（{q.key}）：{q.message}"
            )
    if any(p.why == "question" for p in pending):
        lines.append(
            "Reply with a JSON object of the fields, or decline or cancel. / 请回复字段的 JSON 对象，或 拒绝、取消。"
        )
    return "\n".join(lines)


def _decision(pending: PendingCall, text: str) -> Any:
    """The caller's reply as the decision on one pending call."""
    word = text.strip().lower().rstrip(".!。！")
    if pending.why != "question":
        return word in YES
    if word in DECLINE or word in CANCEL:
        return UserAnswer("decline" if word in DECLINE else "cancel")
    try:
        given = json.loads(text)
    except ValueError:
        given = None
    if not isinstance(given, dict):
        return UserAnswer("accept" if word in YES else "decline")
    if len(pending.questions) == 1:
        return UserAnswer(content=given)
    return {k: UserAnswer(content=v if isinstance(v, dict) else None) for k, v in given.items()}


def agent_card(url: str, name: str, description: str) -> AgentCard:
    return AgentCard(
        name=name,
        description=description,
        version="1",
        supported_interfaces=[
            AgentInterface(url=f"{url}/a2a", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="loop", name=name, description=description, tags=["agent", "tools"])],
    )


def a2a_routes(runs: list[Runs], url: str, name: str = "minloop", description: str = "") -> list[Route]:
    """The agent card and the JSON-RPC endpoint for the served loop, reachable at ``url``."""
    card = agent_card(url, name, description or "An agent loop with tools, served by minloop.")
    handler: Any = DefaultRequestHandler(LoopExecutor(runs), InMemoryTaskStore(), card)
    return [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/a2a", ByToken())]
