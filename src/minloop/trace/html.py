"""A run as one self-contained HTML file: no network, no external asset, works from ``file://``.

The page has the run's header (status, model, tokens, duration, prompt), a timeline with one
row per step (the model call and each tool call as bars on a shared time axis, tokens and
error codes beside them), then one section per step where the decision, the arguments, the
results and the messages sent are expandable. Everything is rendered here; the page's only
script is the expand-all / collapse-all buttons.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

from .sqlite import Trace, TraceCall, TraceStep, decision_text

__all__ = ["render_html", "write_html"]

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1f2328;
background:#f6f8fa}
main{max-width:1180px;margin:0 auto;padding:20px}
h1{font-size:20px;margin:0 0 6px} h2{font-size:16px;margin:24px 0 8px}
.meta{color:#57606a} .meta b{color:#1f2328}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:12px 16px;margin:10px 0}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;margin-right:4px}
.ok{background:#dafbe1;color:#116329} .bad{background:#ffebe9;color:#a40e26}
.neutral{background:#eaeef2;color:#24292f}
.code{background:#ffebe9;color:#a40e26;font-family:ui-monospace,monospace}
.timeline{display:grid;grid-template-columns:210px 1fr auto;gap:4px 12px;align-items:center}
.axis{position:relative;height:18px;color:#57606a;font-size:11px;border-bottom:1px solid #d0d7de}
.axis span{position:absolute;transform:translateX(-50%);white-space:nowrap}
.axis span:first-child{transform:none} .axis span:last-child{transform:translateX(-100%)}
.track{position:relative;min-height:22px;
background:repeating-linear-gradient(90deg,#fff 0 24.9%,#eaeef2 25% 25.1%)}
.bar{position:absolute;height:6px;border-radius:3px;min-width:3px}
.bar.model{top:2px;background:#0969da} .bar.tool{background:#1a7f37} .bar.tool.err{background:#cf222e}
.label a{color:inherit;text-decoration:none;font-weight:600}
.nums{font-size:12px;color:#57606a;white-space:nowrap}
details{margin:6px 0} summary{cursor:pointer}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:8px;overflow:auto;max-height:420px;
white-space:pre-wrap;word-break:break-word;margin:6px 0;font-size:12px}
.legend i{display:inline-block;width:12px;height:8px;border-radius:2px;margin:0 4px 0 10px}
button{font:inherit;font-size:12px;margin-right:6px}
"""

SCRIPT = """
document.querySelectorAll('[data-toggle]').forEach(function (b) {
  b.addEventListener('click', function () {
    var open = b.dataset.toggle === 'open';
    document.querySelectorAll('details').forEach(function (d) { d.open = open; });
  });
});
"""


def write_html(trace: Trace, path: str | os.PathLike[str]) -> Path:
    """Write ``render_html(trace)`` to ``path`` (UTF-8) and return the path."""
    target = Path(path)
    target.write_text(render_html(trace), encoding="utf-8")
    return target


def render_html(trace: Trace) -> str:
    """The whole report as one HTML document."""
    sections = "".join(_step_section(s) for s in trace.steps)
    body = f"{_header(trace)}{_timeline(trace)}{sections}{_footer(trace)}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width"><title>minloop {escape(trace.trace_id)}</title>'
        f"<style>{STYLE}</style></head><body><main>{body}</main><script>{SCRIPT}</script></body></html>\n"
    )


def _header(trace: Trace) -> str:
    run, start = trace.run, trace.start
    status = "ok" if run.status == "success" else "neutral" if run.status == "running" else "bad"
    started = datetime.fromtimestamp(run.started).isoformat(sep=" ", timespec="seconds")
    facts = [
        ("model", escape(run.model)),
        ("started", started),
        ("steps", str(run.steps)),
        ("tokens", f"{run.total_tokens} ({run.prompt_tokens} prompt + {run.completion_tokens} completion)"),
        ("duration", _seconds(run.duration)),
        ("tools", escape(", ".join(start.get("tools", [])) or "none")),
    ]
    meta = " · ".join(f"{k} <b>{v}</b>" for k, v in facts)
    error = f'<p class="bad badge">{escape(run.error)}</p>' if run.error else ""
    return (
        f'<h1>Run <code id="trace-id">{escape(run.trace_id)}</code> '
        f'<span class="badge {status}" id="status">{escape(run.status)}</span></h1>'
        f'<p class="meta">{meta}</p>{error}<div class="card"><b>Prompt</b>{_pre(run.prompt)}'
        '<button data-toggle="open">Expand all</button>'
        '<button data-toggle="close">Collapse all</button></div>'
    )


def _timeline(trace: Trace) -> str:
    origin = trace.run.started
    last = max((e.time for e in trace.events), default=origin)
    span = max(last - origin, 1e-6)
    ticks = "".join(f'<span style="left:{p}%">{_seconds(span * p / 100)}</span>' for p in range(0, 101, 25))
    rows = "".join(_timeline_row(s, origin, span) for s in trace.steps)
    colors = (("model", "#0969da"), ("tool", "#1a7f37"), ("tool error", "#cf222e"))
    legend = "".join(f'<i style="background:{color}"></i>{name}' for name, color in colors)
    return (
        f'<h2>Timeline <span class="legend">{legend}</span></h2><div class="card timeline" id="timeline">'
        f'<div></div><div class="axis">{ticks}</div><div></div>{rows}</div>'
    )


def _timeline_row(step: TraceStep, origin: float, span: float) -> str:
    bars = []
    if step.model_latency is not None or step.model_error:
        model_time = step.model_latency or 0.0
        bars.append(_bar("model", step.started - origin, model_time, span, 2, f"model {_ms(model_time)}"))
    for i, call in enumerate(step.calls):
        kind = "tool err" if call.error else "tool"
        begin = (step.tools_started or step.started) - origin
        title = f"{call.name} {_ms(call.latency)}"
        bars.append(_bar(kind, begin, call.latency or 0.0, span, 11 + 7 * i, title))
    height = 22 + 7 * max(len(step.calls) - 1, 0)
    codes = "".join(f'<span class="badge code">{escape(c)}</span>' for c in step.errors)
    link = f'<a href="#step-{step.index}">step {step.index}</a>'
    label = f'<div class="label">{link} {_decision_badge(step)}{codes}</div>'
    nums = (
        f'<div class="nums">model {_ms(step.model_latency)} · tools {_ms(step.tool_latency)}'
        f" · {_tokens(step)} tok</div>"
    )
    return f'{label}<div class="track" style="height:{height}px">{"".join(bars)}</div>{nums}'


def _bar(kind: str, begin: float, length: float, span: float, top: int, title: str) -> str:
    left, width = 100 * begin / span, 100 * length / span
    style = f"left:{left:.3f}%;width:{width:.3f}%;top:{top}px"
    return f'<div class="bar {kind}" style="{style}" title="{escape(title)}"></div>'


def _step_section(step: TraceStep) -> str:
    facts = [
        f"tool_choice <b>{escape(json.dumps(step.tool_choice))}</b>",
        f"model <b>{_ms(step.model_latency)}</b>",
        f"tools <b>{_ms(step.tool_latency)}</b>",
        f"tokens <b>{_tokens(step)}</b>",
    ]
    if step.decayed:
        facts.append('<span class="badge neutral">decayed: tools off</span>')
    if step.valid is False:
        facts.append('<span class="badge bad">invalid round</span>')
    if not step.complete:
        facts.append('<span class="badge bad">incomplete</span>')
    error = f'<p class="badge bad model-error">{escape(step.model_error)}</p>' if step.model_error else ""
    calls = "".join(_call_details(c) for c in step.calls)
    sent = json.dumps(list(step.request), ensure_ascii=False, indent=2)
    return (
        f'<section class="card step" id="step-{step.index}" data-step="{step.index}">'
        f'<h2>Step {step.index} {_decision_badge(step)}</h2><p class="meta">{" · ".join(facts)}</p>{error}'
        '<details class="decision" open><summary>Decision: the model said</summary>'
        f"{_pre(_said(step))}</details>"
        f'{calls}<details class="request"><summary>Messages sent ({len(step.request)})</summary>{_pre(sent)}'
        "</details></section>"
    )


def _call_details(call: TraceCall) -> str:
    status = _call_status(call)
    rerouted = f" → {escape(call.rerouted_to)}" if call.rerouted_to else ""
    rerouted += f' <span class="nums">@ {escape(call.server)}</span>' if call.server else ""
    result = _pretty(call.content) if call.content is not None else "(no result)"
    return (
        f'<details class="call" data-call="{escape(call.id)}"><summary><b>{escape(call.name)}</b>{rerouted} '
        f'{status} <span class="nums">{_ms(call.latency)} · {escape(call.id)}</span></summary>'
        f"<b>Arguments</b>{_pre(_pretty(call.arguments))}<b>Result</b>{_pre(result)}</details>"
    )


def _call_status(call: TraceCall) -> str:
    if call.error:
        return f'<span class="badge code" data-code="{escape(call.error)}">{escape(call.error)}</span>'
    if call.content is None:
        return '<span class="badge neutral">no result</span>'
    return '<span class="badge ok">ok</span>'


def _footer(trace: Trace) -> str:
    end = trace.end
    if end is None:
        return '<div class="card" id="final"><b>The run never ended</b> (its process stopped mid-step).</div>'
    final = (end.get("final_message") or {}).get("content")
    return (
        _runs_notes(trace)
        + f'<div class="card" id="final"><b>Final message</b>{_pre(final or "(none)")}</div>'
    )


def _runs_notes(trace: Trace) -> str:
    """Where a resumed run went on (and who decided what), and the calls a paused run waits on."""
    items = [
        f"<li>resumed at step {int(r.get('from_step', 0))} (it was {escape(str(r.get('status_before')))})"
        + "".join(f"; {escape(decision_text(d))}" for d in r.get("decisions") or ())
        + "</li>"
        for r in trace.resumed
    ]
    items += [
        f"<li>waiting for a decision: {escape(str(p.get('name')))}({escape(str(p.get('arguments')))}) "
        f"· {escape(str(p.get('call_id')))} · step {p.get('step')}</li>"
        for p in trace.pending
    ]
    return (
        f'<div class="card" id="resumes"><b>Pause and resume</b><ul>{"".join(items)}</ul></div>'
        if items
        else ""
    )


def _said(step: TraceStep) -> str:
    if step.response is None:
        return step.model_error or "(no reply recorded)"
    text = step.response.get("content")
    calls = [f"→ {c.name}({c.arguments})" for c in step.calls]
    parts = [text if isinstance(text, str) else "", *calls]
    return "\n".join(p for p in parts if p) or "(blank reply)"


def _decision_badge(step: TraceStep) -> str:
    kind = step.decision or ("model error" if step.model_error else "unfinished")
    style = "ok" if kind == "answer" else "neutral" if kind == "tool_calls" else "bad"
    return f'<span class="badge {style} decision">{escape(kind)}</span>'


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text


def _pre(text: Any) -> str:
    return f"<pre>{escape(str(text))}</pre>"


def _tokens(step: TraceStep) -> str:
    usage = step.usage or {}
    return f"{usage.get('prompt_tokens', 0)}+{usage.get('completion_tokens', 0)}"


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 0.001:
        return f"{seconds * 1000:.2g} ms"
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def _seconds(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds:.2f} s" if seconds >= 0.1 else f"{seconds * 1000:.0f} ms"
