"""The decide part of a step: what did the model ask for, and what do we tell it next.

* ``decide`` turns an assistant message into ``Answer | CallTools | Blank | Unfinished``. ``tool_calls`` of
  ``None`` and ``[]`` both mean "no call"; a non-empty list is a call even when the model
  also sent text, and always ends the step. A legacy ``function_call`` reply is one call.
  The reply's text is its string ``content``, or its text (and refusal) content parts joined
  with newlines, or its ``refusal``; the stored message holds that text as a string.
* A step is *invalid* when the reply is blank (``Blank``: no answer, no call) or when every call in it
  failed for a reason the model caused: an unknown tool name (``ERR_TOOL_UNKNOWN``) or
  arguments that are not valid JSON or do not match the schema (``ERR_TOOL_ARGS_INVALID``).
  Tool-side failures (timeout, exception, schema mismatch of the output) do not count.
* Repetition guard: the same tool with the same arguments runs at most ``repeat_limit`` times
  (default 2: a retry is allowed) in a run. A further identical call is not executed; the
  model reads ``ERR_TOOL_REPEATED`` and the next call is sent with tools off, as after decay,
  so the loop ends with an answer instead of burning ``max_steps``.
* Answer check (optional): text without calls is not always a final answer ("Let me
  check...", a reply that does not validate, a claim no tool supports). With
  ``Controls(answer_check=fn)``, ``fn(text, messages)`` returns ``None`` to accept the answer or
  a note saying why not: the reply is kept in the transcript as ``Unfinished``, the step counts
  as invalid, and the note is sent to the model with the next call. A check may instead return
  ``Replacement(text)``: the run ends with ``text`` as the answer in place of the reply (the
  reply itself stays in the trace); a check does this when asking again did not help.
* Several checks (a typed output, a faithful-answer check, your own): ``combine_checks`` makes
  one of them; the first that rejects the answer gives the note.
* Decision decay: after ``decay_after`` consecutive invalid steps, the next model call gets
  ``tool_choice="none"`` and an instruction to answer directly, so the loop converges.
* Control message: after tool results are injected, the next call carries a message
  naming the three exits (answer / call tools / ask to clarify) and quoting the user's request
  (``{request}`` in a control text: the user's last message, cut to 300 characters). It is
  sent, not stored: the transcript in ``RunResult.messages`` stays the conversation itself, and
  ``Step.control`` records what was sent. Without the request quoted, a 1.5B model behind
  llama.cpp's server read the message as a new system prompt after the results and answered
  "Convert 100 USD to EUR." with the weather in New York.
* Calls written as text: a reply without ``tool_calls`` whose text is a call to a registered tool
  (``minloop.textcalls`` says which texts are) is that call, with ids, stored as an assistant
  message with ``tool_calls``; the text around the call stays its content. The loop reads it
  as the model replies (``textcalls.calls_written``), before any layer sees the reply, so
  every layer sees it as a call. Text written as
  calls that cannot be run (cut off, a call followed by more JSON, or any call while tools were
  off), JSON copied from a tool result (it carries the run's trace id), and the user's question
  (or, after tool results, any request) or a called tool's name given back as the reply, are a
  ``Blank`` step: not run, not shown as the answer, not kept in the transcript (the model would
  copy it), and the next call is sent with tools off, as after decay (asked again with tools on, a
  model that did this does it again).
  ``Controls(text_calls=False)`` turns this off.
* A reply the model stopped at its length cap (``ModelResponse.stopped``, see
  ``minloop.models.runaway``) is ``Blank`` too: cut off, it is neither the answer nor a call to
  run; the next call is sent with tools off and a note saying why. A reply stopped where it
  began to repeat itself is read as what it wrote before the repeat.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from .execute import MAX_RESULT_CHARS, ToolResult
from .messages import Message, ResultRole, ToolCall, tool_calls_of
from .models.base import Stopped, ToolChoice
from .textcalls import json_values, read_calls, written_call
from .tools import Tool

__all__ = [
    "Answer",
    "AnswerCheck",
    "Blank",
    "CallTools",
    "Controls",
    "Decision",
    "DecisionKind",
    "Replacement",
    "Unfinished",
    "combine_checks",
    "decide",
    "invalid_streak",
    "is_standard_control",
    "is_valid_step",
    "not_an_answer",
    "quoting",
    "reply_text",
]

DecisionKind: TypeAlias = Literal["answer", "tool_calls", "blank", "unfinished"]


@dataclass(frozen=True, slots=True)
class Replacement:
    """An answer check's verdict that ends the run with ``text`` instead of the model's reply."""

    text: str


AnswerCheck: TypeAlias = Callable[[str, Sequence[Message]], "str | Replacement | None"]
"""``check(text, messages)``: ``None`` accepts ``text`` as the final answer; a string rejects it and
says why (it is sent to the model with the next call); a ``Replacement`` is the final answer."""

CONTROL_TEXT = (
    'Use the tool results above to answer the user\'s request: "{request}" If they answer it, give '
    "the user the final answer; if more information is needed, call another tool; if the request "
    "is unclear, ask the user to clarify."
)
REQUEST = "{request}"  # in a control text: the user's last message, quoted
REQUEST_CHARS = 300
DECAY_TEXT = "Answer the user directly now, without calling any tools."
NOT_AN_ANSWER = (
    "Your last reply did not answer the request. Give the final answer now, or call a tool if "
    "information is missing."
)
LIMIT_TEXT = (
    "No more tools can be called. Give the user the final answer now from the tool results above; "
    "if they are not enough, say what is missing."
)
UNRUN_CALLS = "tool calls written as text that are not run"
COPIED_RESULT = "a tool result copied as the reply"
ECHOED = "the user's question or a called tool's name given back as the reply"
TOO_LONG = "a reply stopped at the length cap"
TOO_LONG_NOTE = "Your last reply was stopped: it ran past the length limit. Give a short final answer now."
MODEL_FAULTS = frozenset({"ERR_TOOL_UNKNOWN", "ERR_TOOL_ARGS_INVALID", "ERR_TOOL_REPEATED"})


@dataclass(frozen=True, slots=True)
class Controls:
    """The loop's decision controls (see the module docstring for what each does)."""

    decay_after: int = 2
    control_message: bool = True
    control_role: Literal["system", "developer", "user"] = "system"
    control_text: str = CONTROL_TEXT
    decay_text: str = DECAY_TEXT
    limit_text: str = LIMIT_TEXT
    result_role: ResultRole = "tool"
    fallback: Tool = field(default_factory=lambda: _default_fallback())
    repeat_limit: int = 2
    max_result_chars: int = MAX_RESULT_CHARS
    answer_check: AnswerCheck | None = None
    text_calls: bool = True


def _default_fallback() -> Tool:
    """``ask_for_clarification``, imported on first use so ``import minloop`` builds no tool."""
    from .fallback import ask_for_clarification

    return ask_for_clarification


@dataclass(frozen=True, slots=True)
class Answer:
    """Text without calls that the answer check (if any) accepted: the final answer."""

    message: Message
    kind: ClassVar[DecisionKind] = "answer"


@dataclass(frozen=True, slots=True)
class CallTools:
    """One or more tool calls (text beside them is kept, but the step goes on)."""

    message: Message
    calls: tuple[ToolCall, ...]
    kind: ClassVar[DecisionKind] = "tool_calls"


@dataclass(frozen=True, slots=True)
class Blank:
    """Neither an answer nor a call: no text and no calls (``why`` is ``None``), or text that is
    neither (``why`` says what: ``UNRUN_CALLS``, ``COPIED_RESULT``, ``ECHOED``, ``TOO_LONG``);
    ``note`` is sent to the model with the next call."""

    message: Message
    why: str | None = None
    note: str | None = None
    kind: ClassVar[DecisionKind] = "blank"


@dataclass(frozen=True, slots=True)
class Unfinished:
    """Text the answer check did not accept as a final answer; ``note`` says why."""

    message: Message
    note: str
    kind: ClassVar[DecisionKind] = "unfinished"


Decision: TypeAlias = Answer | CallTools | Blank | Unfinished


def decide(
    message: Message,
    step: int = 1,
    answer_check: AnswerCheck | None = None,
    messages: Sequence[Message] = (),
    tools: Collection[str] = (),
    *,
    tools_off: bool = False,
    stopped: Stopped | None = None,
) -> Decision:
    """Classify the model's reply; calls get unique ids if the model left them out.

    ``messages`` is the transcript so far, given to ``answer_check``; a text that is a call to
    one of ``tools`` (names) is that call, unless ``tools_off`` (the call was made with tools
    off). Text that is neither a call to run nor an answer (``not_an_answer``) is ``Blank``, and
    so is a reply stopped at the length cap (``stopped == "length"``: cut off, whatever it was
    becoming); the model is told so with the next call, made with tools off.
    """
    if stopped == "length":
        return Blank(message, TOO_LONG, TOO_LONG_NOTE)
    raw_calls = tool_calls_of(message) or _legacy_call(message)
    if not raw_calls and tools and (text := reply_text(message)):
        found = None if tools_off else read_calls(text, tools)
        if found is not None:
            message, raw_calls = {"role": "assistant", "content": found.text or None}, found.wire()
        elif (why := not_an_answer(text, tools, messages)) is not None:
            return Blank(message, why)
    if raw_calls:
        calls = _with_ids([ToolCall.from_wire(c) for c in raw_calls if isinstance(c, dict)], step)
        if calls:
            return CallTools(_clean_assistant(message, calls), calls)
    content = reply_text(message)
    if content is not None and content.strip():
        answer = {"role": "assistant", "content": content}
        note = None if answer_check is None else answer_check(content, messages)
        if isinstance(note, Replacement):
            return Answer({"role": "assistant", "content": note.text})
        return Answer(answer) if note is None else Unfinished(answer, note)
    return Blank(message)


def not_an_answer(text: str, tools: Collection[str], messages: Sequence[Message]) -> str | None:
    """Why a reply's text, not read as a call, is no answer either, or ``None``: calls to
    ``tools`` written as text that are not run, JSON copied from a tool result of ``messages``
    (it carries the run's trace id, which only the loop writes), or a question or a called
    tool's name given back (``_echoes``)."""
    if written_call(text, tools):
        return UNRUN_CALLS
    ids = [
        v["trace_id"] for v in json_values(text) if isinstance(v, dict) and isinstance(v.get("trace_id"), str)
    ]
    if ids and any(m.get("role") == "tool" and i in str(m.get("content")) for i in ids for m in messages):
        return COPIED_RESULT
    return ECHOED if _echoes(_one_line({"content": text}), messages) else None


def _echoes(said: str, messages: Sequence[Message]) -> bool:
    """Whether ``said`` is the user's last message, when that is a question or tools ran since,
    or the name of a tool called since: the bundled 0.5B model behind llama.cpp's server answered
    "今天星期几？" with "今天星期几？", and "What time is it now in UTC?" with "now", after the
    clock's result. A greeting given back ("hello") stays an answer."""
    called: set[str] = set()
    for message in reversed(messages):
        if message.get("role") == "user":
            request = _one_line(message)
            asked = bool(called) or request.endswith(("?", "？"))
            return said in called or (asked and said.casefold() == request.casefold())
        for call in tool_calls_of(message):
            fn = call.get("function") if isinstance(call, dict) else None
            called.add(str(fn.get("name")) if isinstance(fn, dict) else "")
    return False


def _one_line(message: Message) -> str:
    """A message's text with its whitespace runs as single spaces."""
    return " ".join((reply_text(message) or "").split())


def reply_text(message: Message) -> str | None:
    """The text of an assistant message: its string ``content``; else its ``text`` (and
    ``refusal``) content parts joined with newlines; else its ``refusal``; else ``None``."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [
        p.get(p.get("type"))
        for p in (content if isinstance(content, list) else [])
        if isinstance(p, dict) and p.get("type") in ("text", "refusal")
    ]
    texts = [t for t in parts if isinstance(t, str) and t]
    if texts:
        return "\n".join(texts)
    refusal = message.get("refusal")
    return refusal if isinstance(refusal, str) and refusal else None


def _legacy_call(message: Message) -> list[dict[str, Any]]:
    """A legacy ``function_call`` reply as a one-call ``tool_calls`` list (the loop assigns an id)."""
    fn = message.get("function_call")
    return [{"id": None, "type": "function", "function": fn}] if isinstance(fn, dict) else []


def is_valid_step(decision: Decision, results: Sequence[ToolResult]) -> bool:
    match decision:
        case Answer():
            return True
        case Blank() | Unfinished():
            return False
        case CallTools():
            return any(r.error not in MODEL_FAULTS for r in results)


def invalid_streak(streak: int, decision: Decision, results: Sequence[ToolResult], decay_after: int) -> int:
    """Invalid steps in a row after this one (``streak`` before it). A step that asked again for a
    call made twice already (``ERR_TOOL_REPEATED``) or wrote calls that are not run counts as
    ``decay_after`` at least: asked again with tools on, such a model does it again."""
    streak = 0 if is_valid_step(decision, results) else streak + 1
    unusable = isinstance(decision, Blank) and decision.why is not None
    if unusable or any(r.error == "ERR_TOOL_REPEATED" for r in results):
        return max(streak, decay_after)
    return streak


def combine_checks(*checks: AnswerCheck | None) -> AnswerCheck | None:
    """One answer check made of several (``None`` entries are skipped): the first to reject wins."""
    present = [c for c in checks if c is not None]
    if len(present) <= 1:
        return present[0] if present else None

    def check(text: str, messages: Sequence[Message]) -> str | Replacement | None:
        for one in present:
            note = one(text, messages)
            if note is not None:
                return note
        return None

    return check


def next_tool_choice(choice: ToolChoice | str, tool_steps: int, has_tools: bool) -> ToolChoice:
    """The ``tool_choice`` of the next call: a forced choice (``"required"``, one tool's name or
    its wire form) holds until the first tool step, then the loop goes back to ``"auto"``."""
    if tool_steps or choice in ("auto", "none") or not has_tools:
        return "auto" if choice != "none" else "none"
    if isinstance(choice, dict) or choice == "required":
        return choice  # type: ignore[return-value]
    return {"type": "function", "function": {"name": choice}}


def control_message(
    controls: Controls,
    *,
    decayed: bool,
    messages: Sequence[Message],
    note: str | None = None,
    at_limit: bool = False,
) -> Message | None:
    """The message sent after the transcript (``messages``) on the next call, if any: the answer
    asked for at a limit, decay, then the reason the last reply was not accepted, then the three
    exits after tool results; ``{request}`` in a text is the user's last message."""
    after_tools = bool(messages) and messages[-1].get("role") in ("tool", "function")
    if at_limit or decayed:
        last = controls.limit_text if at_limit else controls.decay_text
        text = last if note is None else f"{note}\n\n{last}"
        return {"role": controls.control_role, "content": quoting(text, messages)}
    if note is not None:
        return {"role": controls.control_role, "content": note}
    if after_tools and controls.control_message:
        return {"role": controls.control_role, "content": quoting(controls.control_text, messages)}
    return None


def quoting(text: str, messages: Sequence[Message]) -> str:
    """``text`` with ``{request}`` replaced by the user's last message (its text, on one line, cut
    to ``REQUEST_CHARS``), or by "(see above)" when there is none."""
    if REQUEST not in text:
        return text
    said = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    plain = _one_line(said) if said is not None else ""
    cut = plain if len(plain) <= REQUEST_CHARS else plain[: REQUEST_CHARS - 1] + "…"
    return text.replace(REQUEST, cut or "(see above)")


def is_standard_control(text: object) -> bool:
    """Whether ``text`` is the default control message after tool results, whatever it quotes."""
    head, _, tail = CONTROL_TEXT.partition(REQUEST)
    return isinstance(text, str) and text.startswith(head) and text.endswith(tail)


def _with_ids(calls: list[ToolCall], step: int) -> tuple[ToolCall, ...]:
    seen: set[str] = set()
    out = []
    for j, c in enumerate(calls, 1):
        if not c.id or c.id in seen:
            c = ToolCall(f"call_s{step}_{j}", c.name, c.arguments)
        seen.add(c.id)
        out.append(c)
    return tuple(out)


def _clean_assistant(message: Message, calls: tuple[ToolCall, ...]) -> Message:
    """The assistant message as stored: wire-format calls with string arguments and ids."""
    content = reply_text(message)
    return {
        "role": "assistant",
        "content": content or None,
        "tool_calls": [c.to_wire() for c in calls],
    }
