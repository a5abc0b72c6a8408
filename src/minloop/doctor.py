"""``minloop doctor FILE``: lint a saved transcript for the seed's pitfalls and explain each fix.

``diagnose(messages)`` reports what ``minloop.messages.transcript_problems`` finds (the walk
behind ``check_transcript``, same rule names), which keeps going after a violation, so every problem of a transcript is
reported at once: a result that does not follow its call (S16), an id that matches no call
(S16, S21), dict content (S17), no user message (S4), and the rest. It never raises: any value
can be diagnosed. An empty list means ``check_transcript`` accepts the transcript.

``doctor_command`` is the command-line front end: it reads a JSON list of messages, or an
object with a ``"messages"`` key (such as the output of ``minloop run --json``), prints a
report, and exits 1 when there are findings (2 when the file cannot be read).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from .messages import RESULT_ROLES, ROLES, transcript_problems

__all__ = ["FIXES", "Finding", "diagnose", "doctor_command"]

FIXES: dict[str, str] = {
    "not_a_list": 'Save the transcript as a JSON list of messages, or as an object whose "messages" key holds '
                  "that list (the output of `minloop run --json`).",
    "not_an_object": 'Every item must be a message object such as {"role": "user", "content": "..."}; '
                     "remove this item or wrap it in one.",
    "invalid_role": f"Use one of the roles {', '.join(sorted(ROLES))}.",
    "no_user_message": 'Add at least one {"role": "user", "content": "..."} message: the model needs a '
                       "request to answer (S4).",
    "missing_content": "Give the message a string content; an assistant message needs content, tool_calls "
                       "or both.",
    "content_not_string": "Assistant content is text, or null when the message carries tool_calls.",
    "bad_tool_calls": 'Make tool_calls a list of {"id": ..., "type": "function", "function": {"name": ..., '
                      '"arguments": "<JSON string>"}}: every call needs an id and a name, and its arguments '
                      "are a JSON string (json.dumps them).",
    "duplicate_tool_call_id": "Give every tool call in the message its own id.",
    "orphan_tool_result": "Put each tool result immediately after the assistant message whose tool_calls it "
                          "answers; move logs, status notes and system messages after the results (S16).",
    "tool_call_id_mismatch": "Set tool_call_id to the id of the call this result answers "
                             "(tool_calls[i].id of the assistant message just before); with a wrong id the "
                             "model never sees its result and the loop stops after one round (S16, S21).",
    "duplicate_tool_result": "Keep one result per call: remove the repeated tool message.",
    "unanswered_tool_call": "Append one tool message per call right after this assistant message, before "
                            'anything else; if a call never ran, answer it with an error such as '
                            '{"error": "not executed"} (S16, S21).',
    "missing_name": 'A legacy function message carries the tool name: add "name".',
    "content_not_json": 'Tool content must be a JSON string: wrap plain text as json.dumps({"result": text}) '
                        "(S17).",
    "bad_content_part": 'Multimodal content is a list of JSON objects such as {"type": "text", "text": "..."}; '
                        "convert bytes and other Python objects to strings first.",
}
TOOL_CONTENT_FIX = "Serialize the result with json.dumps(...) before appending it: tool content is a JSON " \
                   "string, never a dict or a list (S17)."


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: the message ``index`` (``None`` for the whole list), the rule it breaks, what is
    wrong, and how to fix it."""

    index: int | None
    rule: str
    problem: str
    fix: str


def diagnose(messages: Any) -> list[Finding]:
    """Every rule violation in ``messages``, in message order; ``[]`` when the transcript is valid."""
    findings = []
    for index, rule, problem in transcript_problems(messages):
        fix = FIXES[rule]
        if rule == "content_not_string" and _role_at(messages, index) in RESULT_ROLES:
            fix = TOOL_CONTENT_FIX
        findings.append(Finding(index, rule, problem, fix))
    return sorted(findings, key=lambda f: (f.index is None, f.index or 0))


def _role_at(messages: Any, index: int | None) -> Any:
    item = messages[index] if index is not None else None
    return item.get("role") if isinstance(item, dict) else None


def load_transcript(file: Path) -> Any:
    """The messages saved in ``file``: a JSON list, or the ``"messages"`` of a JSON object."""
    data = json.loads(file.read_text(encoding="utf-8"))
    return data["messages"] if isinstance(data, dict) and "messages" in data else data


def doctor_command(
    file: Annotated[Path, typer.Argument(help="A JSON list of messages, or the output of `minloop run --json`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as one JSON document.")] = False,
) -> None:
    """Check a saved transcript against the transcript rules and explain how to fix each problem."""
    try:
        messages = load_transcript(file)
    except (OSError, ValueError, RecursionError) as exc:
        problem = Text.assemble(("error:", "bold red"), f" cannot read {file}: {exc}")
        Console(stderr=True).print(problem, soft_wrap=True)
        raise typer.Exit(2) from None
    findings = diagnose(messages)
    count = len(messages) if isinstance(messages, list) else 0
    if as_json:
        doc = {"file": str(file), "messages": count, "findings": [asdict(f) for f in findings]}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    elif not findings:
        Console().print(Text.assemble(("ok", "green"), f" {file}: {count} messages, no findings"))
    else:
        Console().print(_report(file, count, findings))
    raise typer.Exit(1 if findings else 0)


def _report(file: Path, count: int, findings: list[Finding]) -> Group:
    head = Text.assemble((f"{len(findings)} finding(s)", "bold red"), f" in {file} ({count} messages)")
    parts: list[Text | Table] = [head]
    for f in findings:  # Text, not markup: problems and fixes hold brackets such as tool_calls[0]
        where = "transcript" if f.index is None else f"message {f.index}"
        parts.append(Text.assemble("\n", (where, "bold"), "  ", (f.rule, "bold yellow")))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column()
        grid.add_row("  problem", Text(f.problem))
        grid.add_row("  fix", Text(f.fix, "green"))
        parts.append(grid)
    return Group(*parts)
