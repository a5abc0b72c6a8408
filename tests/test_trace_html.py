"""The HTML report, loaded in real headless Chromium (Debian's package; ``.ci/run`` installs it)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from minloop import Loop, tool
from minloop.testing import ScriptedModel, call, reply
from minloop.trace.html import render_html, write_html
from minloop.trace.sqlite import SQLiteSink, Trace, TraceStore

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(timeout=0.05)
def slow() -> str:
    """Take too long."""
    time.sleep(0.5)
    return "late"


@tool
def broken() -> str:
    """Fail."""
    raise RuntimeError("disk on fire")


def chromium(tmp_path: Path, *args: str) -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail(
            "chromium is not installed; install Debian's package: apt-get install chromium (.ci/run does)"
        )
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    done = subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Dom(HTMLParser):
    """The report's facts as the browser rendered them: steps, error codes per step, timeline rows."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[int] = []
        self.codes: dict[int, list[str]] = {}
        self.rows: list[str] = []
        self.bars: list[str] = []
        self.current = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("data-step"):
            self.current = int(a["data-step"] or 0)
            self.steps.append(self.current)
        if a.get("data-code"):
            self.codes.setdefault(self.current, []).append(str(a["data-code"]))
        if tag == "a" and (a.get("href") or "").startswith("#step-"):
            self.rows.append(str(a["href"]))
        if "bar" in (a.get("class") or "").split():
            self.bars.append(str(a["class"]))


def report_trace(tmp_path: Path) -> Trace:
    turns = [
        reply(None, call("add", {"a": 1, "b": "x"})),
        reply("Trying again.", call("add", {"a": 1, "b": 2}), call("nope"), call("slow")),
        reply(None, call("broken")),
        "1 + 2 = 3; the rest failed.",
    ]
    with ScriptedModel(turns) as model, SQLiteSink(tmp_path / "t.db") as sink:
        result = Loop(model, [add, slow, broken], sinks=[sink]).run_sync("Add 1 and 2, <b>please</b>")
    with TraceStore(tmp_path / "t.db") as store:
        return store.trace(result.trace_id)


def test_report_renders_every_step_and_error_code_in_chromium(tmp_path: Path) -> None:
    trace = report_trace(tmp_path)
    page = write_html(trace, tmp_path / "report.html")
    dom_text = chromium(tmp_path, "--virtual-time-budget=2000", "--dump-dom", page.as_uri())
    dom = Dom()
    dom.feed(dom_text)
    assert dom.steps == [1, 2, 3, 4]
    assert dom.codes == {
        1: ["ERR_TOOL_ARGS_INVALID"],
        2: ["ERR_TOOL_UNKNOWN", "ERR_TOOL_TIMEOUT"],
        3: ["ERR_TOOL_FAILED"],
    }
    assert dom.rows == ["#step-1", "#step-2", "#step-3", "#step-4"]
    assert dom.bars == [
        "bar model",
        "bar tool err",
        "bar model",
        "bar tool",
        "bar tool err",
        "bar tool err",
        "bar model",
        "bar tool err",
        "bar model",
    ]
    assert f'<code id="trace-id">{trace.trace_id}</code>' in dom_text
    assert "Add 1 and 2, &lt;b&gt;please&lt;/b&gt;" in dom_text  # escaped, not markup
    assert "RuntimeError: disk on fire" in dom_text and "1 + 2 = 3; the rest failed." in dom_text
    shot = tmp_path / "report.png"
    chromium(
        tmp_path,
        "--virtual-time-budget=2000",
        "--window-size=1280,1800",
        f"--screenshot={shot}",
        page.as_uri(),
    )
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", header[16:24]) == (1280, 1800)


def test_report_is_self_contained(tmp_path: Path) -> None:
    page = render_html(report_trace(tmp_path))
    assert re.findall(r"\bsrc\s*=", page) == []
    assert re.findall(r'\bhref\s*=\s*"([^"]*)"', page) == ["#step-1", "#step-2", "#step-3", "#step-4"]
    assert re.findall(r"https?:|<link|@import|url\(", page) == []
    assert page.count("<script>") == 1 and page.count("<style>") == 1
