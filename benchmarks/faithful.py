"""Faithful answers from the embedded model, in Chinese as in English, with the policy on and off.

    flock /tmp/minloop-cpu.lock .venv/bin/python benchmarks/faithful.py --out faithful.jsonl
    .venv/bin/python benchmarks/faithful.py --report faithful.jsonl

Runs every request of ``faithful_set.py`` (64, half Chinese) through ``Loop`` with the CLI's
built-in tools over a small fixture folder, once with ``LocalModel()`` (the evidence check and
value resolution on) and once with ``LocalModel(layers=small_model_layers(without=["evidence"]))``, one after the other per
request (the order alternates; one untimed request first fills the KV cache). ``--arms
en-notes`` adds, on the Chinese requests, the policy with its notes to the model in English;
``--arms uncut`` the policy with an equal evidence check named in ``Controls``, so the model
does not stop an answer at its first unsupported sentence (the same outcome, the whole answer
generated). Each run is judged by rules independent of the policy's own check:

* tool: the expected tool was called with the expected value (the expression evaluates to the
  result, the clock ran in the expected zone, the file tool got the expected file or text);
* faithful: every number in the answer is written in the request or in a tool result (exactly,
  rounded to at most two decimals, or as a 12-hour clock hour; a weekday's name such as 星期二 is
  not read as a number), and the answer is non-empty;
  for a request no tool can answer, or can answer only in part, the answer must also decline in
  words ("cannot", "don't have", "无法", "没有"...). An answer that only declines counts as faithful.

Lines are appended to ``--out`` as they finish, so a long run can go on in parts (``--start``,
``--stop``); ``--report`` prints accuracy per group and language and seconds per request.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from faithful_set import CLAIMS, FILES, ITEMS, Expected

from minloop import Controls, Loop, RunResult, ToolCall
from minloop.builtins import default_tools
from minloop.builtins.calculator import evaluate
from minloop.language import numbers_in
from minloop.models.local import LocalModel
from minloop.small import EvidenceCheck, small_model_layers

DECLINE = re.compile(
    r"can't|cannot|can not|unable|don't have|do not have|not able|no (?:tool|access|way|information|data)|"
    r"not available|(?:doesn't|does not|don't|do not|not) provide|sorry|don't know|do not know|couldn't|could not|"
    r"无法|不能|没有|抱歉|不知道|不清楚|暂无|未提供|不提供|不支持",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


# A day's name (星期二 is Tuesday), not a number.
_WEEKDAY = re.compile(r"(?:星期|周|礼拜|禮拜)[一二三四五六日天]")


def _numbers(text: str) -> set[float]:
    plain = _WEEKDAY.sub(" ", re.sub(r"(?<=\d),(?=\d{3})", "", text))
    return {abs(float(m)) for m in _DIGITS.findall(plain)} | {abs(n) for n in numbers_in(plain) if n >= 0}


def unsupported_numbers(answer: str, sources: str) -> list[float]:
    known = _numbers(sources)
    rounded = known | {round(n, k) for n in known for k in (0, 1, 2)}
    hours = {n - 12 for n in known if 13 <= n <= 23}
    return sorted(n for n in _numbers(answer) if n not in rounded and n not in hours and n not in (0.0, 1.0))


def tool_ok(result: RunResult, expected: Expected) -> bool | None:
    """Whether the expected tool ran (without error) on the expected value; None when no tool serves."""
    if expected is None:
        return None
    name, argument, value = expected
    for step in result.steps:
        for call, res in zip(step.tool_calls, step.results, strict=False):
            if call.name == name and not res.error and _value_ok(call, argument, value, res.content):
                return True
    return False


def _value_ok(call: ToolCall, argument: str, value: Any, content: str) -> bool:
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        return False
    got = args.get(argument) if isinstance(args, dict) else None
    if call.name == "calculator":
        try:
            return isinstance(got, str) and abs(float(evaluate(got)) - value) < 1e-6
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            return False
    if call.name == "current_time":  # the zone the clock actually ran in
        return f'"timezone": "{value}"' in content
    if call.name == "list_files":
        return got in (None, "*", "*.*", "**", "**/*")
    return isinstance(got, str) and value.lower() in got.lower()


def judge(result: RunResult, request: str, expected: Expected, group: str) -> dict[str, Any]:
    answer = result.output or ""
    tools = " ".join(str(m.get("content")) for m in result.messages if m.get("role") == "tool")
    row = {"group": group, "answer": answer, "invented": unsupported_numbers(answer, request + " " + tools)}
    return {"tool": tool_ok(result, expected), "faithful": faithful(row), "declined": bool(DECLINE.search(answer)),
            "invented": row["invented"]}  # fmt: skip


def faithful(row: dict[str, Any]) -> bool:
    """Supported or declined: no number from nowhere, and no unanswerable part answered anyway.

    A request no tool can answer must be declined in words. A mixed request passes when the
    answer declines, or when it says nothing about the part no tool answers (``CLAIMS``)."""
    answer = row["answer"] or ""
    if not answer.strip() or row["invented"]:
        return False
    if row["group"] == "answerable":
        return True
    return bool(DECLINE.search(answer)) or (row["group"] == "mixed" and not CLAIMS.search(answer))


def run_item(
    model: LocalModel, root: Path, request: str, controls: Controls | None = None
) -> tuple[RunResult, float]:
    started = time.perf_counter()
    result = Loop(model, default_tools(root), max_steps=6, controls=controls or Controls()).run_sync(request)
    return result, time.perf_counter() - started


def record(index: int, arm: str, result: RunResult, seconds: float) -> dict[str, Any]:
    """One run of request ``index`` as a line of the output: the answer, the calls, the judgement."""
    group, language, request, expected = ITEMS[index]
    return {
        "index": index,
        "arm": arm,
        "group": group,
        "language": language,
        "request": request,
        "answer": result.output,
        "status": result.status,
        "seconds": round(seconds, 2),
        "prompt": sum(s.usage.prompt_tokens for s in result.steps),
        "generated": sum(s.usage.completion_tokens for s in result.steps),
        "calls": [[c.name, c.arguments] for s in result.steps for c in s.tool_calls],
        **judge(result, request, expected, group),
    }


def write(out: Path, row: dict[str, Any], label: str) -> None:
    """Append ``row`` (from ``record``) to ``out`` as a JSON line and show it as one line."""
    with out.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(
        f"{row['index']:2d} {label} tool={row['tool']!s:5s} faithful={row['faithful']!s:5s} "
        f"{row['seconds']:5.1f}s {row['request'][:40]!r} -> {str(row['answer'])[:70]!r}",
        flush=True,
    )


def measure(out: Path, start: int, stop: int, arms: list[str]) -> None:
    root = Path(tempfile.mkdtemp(prefix="faithful-"))
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    english = EvidenceCheck(note_language="en", resend_unused=False)
    layers = [english if isinstance(layer, EvidenceCheck) else layer for layer in small_model_layers()]
    english_notes = LocalModel(layers=layers)
    models = {
        "on": LocalModel(),
        "off": LocalModel(layers=small_model_layers(without=["evidence"])),
        "en-notes": english_notes,
        "uncut": LocalModel(),
    }
    # the loop applies an equal check of its own: the model cannot tell it is its own and lets answers run
    uncut = Controls(answer_check=EvidenceCheck(resend_unused=False))
    models["on"].load()
    run_item(models["on"], root, "What is 2 + 2?")  # untimed: the first prompt fills the KV cache
    for index in range(start, min(stop, len(ITEMS))):
        group, language, request, expected = ITEMS[index]
        order = arms if index % 2 == 0 else arms[::-1]  # neither arm always goes first
        for arm in order if language == "zh" else [a for a in order if a != "en-notes"]:
            model = models[arm]
            result, seconds = run_item(model, root, request, uncut if arm == "uncut" else None)
            row = {
                **record(index, arm, result, seconds),
                "decisions": [s.decision for s in result.steps],
                "replies": [s.message.get("content") for s in result.steps if s.decision == "unfinished"],
            }
            write(out, row, f"{arm:3s} {language} {group:12s}")


def report(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [{**row, "faithful": faithful(row)} for row in rows]
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for group in (row["group"], "all"):
            cells[(row["arm"], group, row["language"])].append(row)
            cells[(row["arm"], group, "both")].append(row)
    print(f"{len(rows)} runs; figures are policy on | policy off")
    print(
        f"{'group':12s} {'lang':5s} {'n':>3s}  {'faithful (supported or declined)':>34s}  {'tool + values':>15s}  "
        f"{'s/request':>11s}"
    )
    for group in ("answerable", "unanswerable", "mixed", "all"):
        for language in ("en", "zh", "both"):
            on, off = cells.get(("on", group, language), []), cells.get(("off", group, language), [])
            if not on:
                continue
            print(
                f"{group:12s} {language:5s} {len(on):3d}  {_rate(on, 'faithful'):>16s} | {_rate(off, 'faithful'):<15s}"
                f"  {_rate(on, 'tool'):>6s} | {_rate(off, 'tool'):<6s}  {_mean(on):5.1f} | {_mean(off):<5.1f}"
            )
    on_time, off_time = _mean(cells[("on", "all", "both")]), _mean(cells[("off", "all", "both")])
    if off_time:
        print(f"time per request, policy on / off: {on_time / off_time:.2f}")
    english = cells.get(("en-notes", "all", "zh"), [])
    if english:
        done = {r["index"] for r in english}
        chinese = [r for r in cells[("on", "all", "zh")] if r["index"] in done]
        print(
            f"Chinese requests, notes in Chinese | in English (n={len(english)}): faithful "
            f"{_rate(chinese, 'faithful')} | {_rate(english, 'faithful')}, tool {_rate(chinese, 'tool')} | "
            f"{_rate(english, 'tool')}, s/request {_mean(chinese):.1f} | {_mean(english):.1f}"
        )
    uncut = cells.get(("uncut", "all", "both"), [])
    if uncut:
        done = {r["index"] for r in uncut}
        for group in ("answerable", "unanswerable", "mixed", "all"):
            pair = [cells[(arm, group, "both")] for arm in ("on", "uncut")]
            on, whole = ([r for r in rows if r["index"] in done] for rows in pair)
            if whole:
                print(
                    f"{group:12s} stopped at the first unsupported sentence | whole answer (n={len(whole)}): "
                    f"faithful {_rate(on, 'faithful')} | {_rate(whole, 'faithful')}, tokens generated "
                    f"{_tokens(on):.0f} | {_tokens(whole):.0f}, s/request {_mean(on):.1f} | {_mean(whole):.1f}"
                )


def _tokens(rows: list[dict[str, Any]]) -> float:
    return sum(r.get("generated", 0) for r in rows) / len(rows) if rows else 0.0


def _rate(rows: list[dict[str, Any]], key: str) -> str:
    judged = [r[key] for r in rows if r[key] is not None]
    return f"{sum(judged)}/{len(judged)} {100 * sum(judged) / len(judged):.0f}%" if judged else "-"


def _mean(rows: list[dict[str, Any]]) -> float:
    return sum(r["seconds"] for r in rows) / len(rows) if rows else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=Path("faithful.jsonl"))
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--stop", type=int, default=len(ITEMS))
    parser.add_argument(
        "--arms", nargs="+", choices=["on", "off", "en-notes", "uncut"], default=["on", "off"]
    )
    parser.add_argument("--report", type=Path)
    args = parser.parse_args()
    if args.report:
        report(args.report)
    else:
        measure(args.out, args.start, args.stop, args.arms)
        report(args.out)


if __name__ == "__main__":
    main()
