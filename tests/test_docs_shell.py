"""The shell commands of the READMEs and docs/ run, in a temporary directory, and exit as
documented: 0, or the code a comment on the line names ("# exit 1").

A command is not run when a rule below says why (it needs the embedded model, a server, the
network, or it installs or never ends), or when its block is marked in the page with
``<!-- not run: the reason -->`` on the line before it. Every other command runs, so a block
that is neither runnable nor marked fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from minloop.cli.app import app
from minloop.testing import ChatServer, call, reply

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "README.zh-CN.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
SHELL = {"bash", "sh", "shell", "console", ""}  # an untagged block reads as commands too
NOT_SHELL = {"python", "json", "text"}
MARKER = re.compile(r"<!-- not run: ([^>\n]+?) -->\s*\Z")
EXIT = re.compile(r"#.*?\bexit (\d+)")

# What a command starts with (after .venv/bin/) -> why it is shown and not run here.
NOT_RUN = {
    "bash quickstart.sh": "it sets the project up: a virtualenv and the model download",
    "pip install": "it installs packages from the network",
    "python -m pytest": "it is the whole test suite, this test among them",
    "python benchmarks/": "a benchmark of the embedded model, minutes long",
    "minloop serve": "a server that runs until it is stopped",
    "curl ": "a client of a running minloop serve (docs/serve.md's Python clients run against one)",
    "llama-server ": "llama.cpp's model server, which runs until it is stopped",
    "minloop model-server": "llama.cpp's model server, which runs until it is stopped",
    "ollama ": "Ollama downloads a model and serves it until it is stopped",
}
MODEL_COMMANDS = ("minloop run ", "minloop resume ")  # without --base-url: the embedded model
MODEL_REASON = "it needs the embedded model (a download)"
MCP_URL_REASON = (
    "it reaches an MCP server by URL, one the reader runs (tests/test_mcp_content.py runs these commands)"
)


def why_not_run(command: str) -> str | None:
    """The rule that keeps ``command`` from running here, or None: it runs."""
    bare = command.removeprefix(".venv/bin/")
    for prefix, reason in NOT_RUN.items():
        if bare.startswith(prefix):
            return reason
    if bare.startswith(MODEL_COMMANDS) and "--base-url" not in bare:
        return MODEL_REASON
    if bare.startswith("minloop mcp ") and "http://" in bare:
        return MCP_URL_REASON
    return None


def commands(block: str) -> list[str]:
    """The block's commands: one per line, a trailing backslash joins the next; comments skipped."""
    joined = re.sub(r"\s*\\\n\s*", " ", block)
    return [
        line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]


def shell_blocks() -> list[tuple[str, int, str | None, str]]:
    """(page, index, the marker's reason or None, block) for every shell block."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for index, match in enumerate(m for m in FENCE.finditer(text) if m.group(1).strip() in SHELL):
            marker = MARKER.search(text[: match.start()].rstrip() + "\n")
            found.append(
                (page.relative_to(ROOT).as_posix(), index, marker and marker.group(1), match.group(2))
            )
    return found


BLOCKS = shell_blocks()
RUN = [
    (page, index, block)
    for page, index, reason, block in BLOCKS
    if reason is None and any(why_not_run(c) is None for c in commands(block))
]


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trace database holding one real ``minloop run``, against a scripted server on 127.0.0.1."""
    db = tmp_path_factory.mktemp("recorded") / "traces.db"
    script = [reply(None, call("calculator", {"expression": "6*7"}, id="c1")), reply("6*7 is 42.")]
    with ChatServer(script) as server:
        args = ["run", "What is 6*7?", "--model", "gpt-x", "--base-url", server.base_url]
        done = CliRunner().invoke(app, [*args, "--trace-db", str(db), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["status"] == "success"
    return db


@pytest.mark.parametrize(("page", "index", "block"), RUN, ids=[f"{p}[{i}]" for p, i, _ in RUN])
def test_shell_block_runs_and_exits_as_documented(
    page: str, index: int, block: str, recorded_run: Path, tmp_path: Path
) -> None:
    runnable = [c for c in commands(block) if why_not_run(c) is None]
    work = tmp_path / "work"
    work.mkdir()
    (work / ".venv").symlink_to(Path(sys.executable).parents[1])  # for `.venv/bin/minloop ...`
    db = tmp_path / "traces.db"
    db.write_bytes(recorded_run.read_bytes())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT / "src"), "HOME": str(tmp_path), "MINLOOP_TRACE_DB": str(db),
           "NO_COLOR": "1", "COLUMNS": "200"}  # fmt: skip
    for command in runnable:
        done = subprocess.run(
            ["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=120
        )
        expected = int(m.group(1)) if (m := EXIT.search(command)) else 0
        assert done.returncode == expected, f"{page}: {command}\n{done.stdout}\n{done.stderr}"


def test_every_shell_block_runs_or_says_why_not() -> None:
    held = {why_not_run(c) for _, _, reason, block in BLOCKS if reason is None for c in commands(block)}
    assert held - {None} == {
        *NOT_RUN.values(),
        MODEL_REASON,
        MCP_URL_REASON,
    }  # every rule is needed by some page
    ran = {page for page, _, _ in RUN}
    assert {"docs/traces.md", "docs/batch.md"} <= ran
    not_run = {page: reason for page, _, reason, _ in BLOCKS if reason}
    assert set(not_run) == {"README.md", "README.zh-CN.md"}  # the approval walk-through: a paused run


def test_every_code_block_is_shell_or_says_what_it_is() -> None:
    tags = {m.group(1).strip() for page in PAGES for m in FENCE.finditer(page.read_text(encoding="utf-8"))}
    assert tags <= SHELL | NOT_SHELL


def test_the_rules_keep_the_model_server_and_install_commands_and_nothing_else() -> None:
    assert why_not_run('.venv/bin/minloop run "Hi" --tools my_tools:word_count') is not None
    assert why_not_run('minloop run "Hi" --model gpt-x --base-url http://127.0.0.1:1/v1') is None
    assert why_not_run("minloop trace show last") is None
    assert why_not_run('minloop mcp tools "python -m mcp_server_time"') is None
    assert why_not_run("minloop mcp read http://127.0.0.1:3001/mcp demo://x") is not None
    assert why_not_run("pip install minloop") is not None
    assert why_not_run("minloop serve --loop myapp.agent:loop") is not None
    assert commands("# a comment\nminloop a \\\n  --b\n\nminloop c  # note\n") == [
        "minloop a --b",
        "minloop c  # note",
    ]
