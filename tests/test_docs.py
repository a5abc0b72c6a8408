"""The documentation: every Python block of the READMEs and docs/ runs, the Chinese pages carry
the English pages' code blocks unchanged, the site builds with no warning, and the built site
opens in headless Chromium with its navigation and search and no console errors."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "README.zh-CN.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```[^\n]*\n.*?^```\n", re.DOTALL | re.MULTILINE)
PYTHON = re.compile(r"^```python\n(.*?)^```\n", re.DOTALL | re.MULTILINE)
BLOCKS = [
    (page.relative_to(ROOT).as_posix(), index, block)
    for page in PAGES
    for index, block in enumerate(PYTHON.findall(page.read_text(encoding="utf-8")))
]
CHINESE = sorted((ROOT / "docs").glob("*.zh.md"))
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def served_loop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``minloop serve`` on a free loopback port, for the client calls of docs/serve.md."""
    from .serving import served

    with served(str(tmp_path_factory.mktemp("serve") / "runs.db")) as (base, _):
        yield base


@pytest.fixture
def logging_restored() -> Iterator[None]:
    """A page's example may configure loggers (docs/logging.md does): undo it for the tests after."""
    import logging

    loggers = [logging.getLogger(), *(logging.getLogger(n) for n in list(logging.root.manager.loggerDict))]
    saved = [(lg, lg.level, list(lg.handlers), lg.propagate) for lg in loggers]
    yield
    for lg, level, handlers, propagate in saved:
        lg.setLevel(level)
        lg.handlers[:] = handlers
        lg.propagate = propagate


@pytest.mark.usefixtures("logging_restored")
@pytest.mark.parametrize(("page", "index", "block"), BLOCKS, ids=[f"{p}[{i}]" for p, i, _ in BLOCKS])
def test_python_block_runs(page: str, index: int, block: str, request: pytest.FixtureRequest) -> None:
    if "http://127.0.0.1:8000" in block:  # a client of `minloop serve`: point it at a real one
        block = block.replace("http://127.0.0.1:8000", request.getfixturevalue("served_loop"))
    exec(compile(block, f"{page}[python block {index}]", "exec"), {"__name__": "__docs__"})


def test_every_page_with_examples_is_collected() -> None:
    pages = {page for page, _, _ in BLOCKS}
    assert {
        "README.md",
        "README.zh-CN.md",
        "docs/getting-started.md",
        "docs/loop.md",
        "docs/tools.md",
    } <= pages
    assert {"docs/runs.md", "docs/mcp.md", "docs/layers.md"} <= pages


@pytest.mark.parametrize(
    "english", [ROOT / "README.md", *(p.with_name(p.name.replace(".zh", "")) for p in CHINESE)]
)
def test_chinese_page_has_the_english_pages_code_blocks(english: Path) -> None:
    chinese = (
        english.with_name("README.zh-CN.md") if english.name == "README.md" else english.with_suffix(".zh.md")
    )
    assert FENCE.findall(chinese.read_text(encoding="utf-8")) == FENCE.findall(
        english.read_text(encoding="utf-8")
    )


def test_the_chinese_getting_started_loop_and_tools_pages_exist() -> None:
    assert {p.name for p in CHINESE} >= {"getting-started.zh.md", "loop.zh.md", "tools.zh.md"}


def test_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)]
    done = subprocess.run(mkdocs, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    requests: ClassVar[list[tuple[str, int]]] = []

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        self.requests.append((self.path, int(code)))

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _open(url: str, tmp_path: Path, screenshot: Path | None = None) -> tuple[str, str]:
    args = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--enable-logging=stderr", "--v=0", f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=8000"]  # fmt: skip
    if screenshot is not None:
        args += [f"--screenshot={screenshot}", "--window-size=1280,900"]
    else:
        args.append("--dump-dom")
    done = subprocess.run([*args, url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


@pytest.mark.parametrize(
    ("path", "switch"),
    [("/", '<a href="/zh/" hreflang="zh"'), ("/tools/", '<a href="../zh/tools/" hreflang="zh"'),
     ("/zh/loop/", '<a href="../../loop/" hreflang="en"')],
)  # fmt: skip
def test_site_opens_in_chromium_with_navigation_search_and_no_console_errors(
    served: str, tmp_path: Path, path: str, switch: str
) -> None:
    _Quiet.requests.clear()
    dom, log = _open(served + path, tmp_path)
    assert re.search(r'class="md-nav md-nav--primary"', dom)
    assert 'href="../runs/"' in dom or 'href="runs/"' in dom or 'href="../../runs/"' in dom
    assert 'class="md-search__input"' in dom and 'class="md-search-result"' in dom
    assert 'hreflang="zh"' in dom and 'hreflang="en"' in dom  # the language switch
    assert switch in dom  # it leads to the same page in the other language
    assert [line for line in log.splitlines() if "CONSOLE" in line] == []
    assert ("/search/search_index.json", 200) in _Quiet.requests or (
        "/zh/search/search_index.json",
        200,
    ) in _Quiet.requests
    assert [(p, code) for p, code in _Quiet.requests if code != 200] == []
    shot = tmp_path / "page.png"
    _open(served + path, tmp_path, shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_readme_commands_use_options_the_command_line_has() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^\.venv/bin/minloop run .*$", readme, re.MULTILINE)
    assert len(commands) == 2
    minloop = Path(sys.executable).with_name("minloop")
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run(
        [str(minloop), "run", "--help"], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    for command in commands:
        for option in re.findall(r" (--[a-z-]+)", command):
            assert option in done.stdout, f"{option} of {command!r} is not an option of minloop run"


def test_the_readmes_and_the_site_navigation_link_every_page() -> None:
    pages = {p.name for p in (ROOT / "docs").glob("*.md") if not p.name.endswith(".zh.md")}
    nav = set(
        re.findall(r"^  - [^:\n]+: (\S+\.md)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    )
    assert nav == pages
    for readme in ("README.md", "README.zh-CN.md"):
        text = (ROOT / readme).read_text(encoding="utf-8")
        linked = {f"{name}.md" for name in re.findall(r"\(docs/([a-z0-9-]+?)(?:\.zh)?\.md[)#]", text)}
        assert pages - {"index.md"} <= linked, (
            f"{readme} does not link {sorted(pages - {'index.md'} - linked)}"
        )


def test_the_command_line_pages_synopsis_uses_options_each_command_has() -> None:
    synopsis = FENCE.findall((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))[0]
    commands = [part.strip() for line in synopsis.splitlines() for part in line.split(" · ")]
    minloop = Path(sys.executable).with_name("minloop")
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    for command in (c for c in commands if c.startswith("minloop ")):
        words = command.split()
        name = words[1:3] if words[1] == "mcp" else words[1:2]
        name[-1] = name[-1].split("|")[0]
        done = subprocess.run(
            [str(minloop), *name, "--help"], capture_output=True, text=True, timeout=60, env=env
        )
        assert done.returncode == 0, done.stderr
        for option in re.findall(r"(--[a-z][a-z0-9-]*)", command.split("#")[0]):
            assert option in done.stdout, (
                f"{option} of {command!r} is not an option of minloop {' '.join(name)}"
            )
