"""Built-in tools are real, offline, truthful and confined."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from minloop import ToolCall
from minloop.builtins import ask_for_clarification, calculator, current_time, file_tools
from minloop.builtins.calculator import evaluate
from minloop.execute import ExecContext, execute_calls
from minloop.log import run_logger


def call(tools: list, name: str, **args: object) -> tuple[str | None, dict]:
    ctx = ExecContext({t.name: t for t in tools}, ask_for_clarification, "trc_t", run_logger("trc_t"))
    [result] = asyncio.run(execute_calls([ToolCall("c", name, json.dumps(args))], ctx))
    body = json.loads(result.content)
    body.pop("trace_id")
    return result.error, body


def test_calculator_is_exact_and_refuses_code() -> None:
    assert evaluate("(17 + 5) * 3") == 66
    assert evaluate("2 ^ 10") == 1024
    assert evaluate("max(3, sqrt(16))") == 4
    assert call([calculator], "calculator", expression="7 / 2") == (
        None,
        {"expression": "7 / 2", "result": 3.5},
    )
    for attack in [
        "__import__('os').system('id')",
        "().__class__",
        "open('x')",
        "[1] * 10",
        "10 ** 100000",
        "True + 1",
    ]:
        code, body = call([calculator], "calculator", expression=attack)
        assert code == "ERR_TOOL_FAILED" and body["error"].startswith("ValueError"), attack
    assert call([calculator], "calculator", expression="1/0")[1]["error"] == "ValueError: division by zero"


def test_clock_tells_the_real_time_in_a_zone() -> None:
    code, body = call([current_time], "current_time", timezone="Asia/Shanghai")
    assert code is None and body["timezone"] == "Asia/Shanghai" and body["utc_offset"] == "+0800"
    told = datetime.fromisoformat(body["datetime"])
    assert abs((datetime.now(ZoneInfo("Asia/Shanghai")) - told).total_seconds()) < 5
    code, body = call([current_time], "current_time", timezone="Mars/Olympus")
    assert code == "ERR_TOOL_FAILED" and "unknown time zone" in body["error"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("print('a')\n")
    (tmp_path / "pkg" / "big.py").write_text("# TODO: grow\n" + "x = 1\n" * 100)
    (tmp_path / "notes.md").write_text("todo: write docs\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.py").write_text("")
    (tmp_path / "node_modules" / "dep").mkdir(parents=True)  # installed packages are not the project's
    (tmp_path / "node_modules" / "dep" / "huge.py").write_text("# TODO: vendored\n" * 500)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret")
    os.symlink(outside / "secret.txt", tmp_path / "link.txt")
    return tmp_path


def test_list_files_counts_real_files(tree: Path) -> None:
    code, body = call(file_tools(tree), "list_files", pattern="*.py")
    assert code is None
    assert body == {
        "count": 2,
        "largest": {"path": "pkg/big.py", "bytes": 613},
        "total_bytes": 11 + 13 + 600,
        "files": [{"path": "pkg/big.py", "bytes": 613}, {"path": "pkg/a.py", "bytes": 11}],
        "truncated": False,
    }


def test_list_files_without_a_pattern_lists_every_file(tree: Path) -> None:
    # No default pattern is written into the schema: shown "*" as the default, the 0.5B model
    # copied it for "How many Python files are in this folder?" and counted every file.
    spec = next(t.spec() for t in file_tools(tree) if t.name == "list_files")
    assert spec["function"]["parameters"]["properties"]["pattern"]["default"] is None
    for arguments in ({}, {"pattern": None}, {"pattern": "*"}):
        code, body = call(file_tools(tree), "list_files", **arguments)
        assert code is None and body["count"] == 3  # the link out of the folder is not followed
        assert [f["path"] for f in body["files"]] == ["pkg/big.py", "notes.md", "pkg/a.py"]


def test_list_files_lists_the_five_largest_and_counts_them_all(tmp_path: Path) -> None:
    for i in range(12):
        (tmp_path / f"m{i:02d}.py").write_text("x" * (i + 1))
    code, body = call(file_tools(tmp_path), "list_files", pattern="*.py")
    assert code is None
    assert body == {
        "count": 12,
        "largest": {"path": "m11.py", "bytes": 12},
        "total_bytes": sum(range(1, 13)),
        "files": [{"path": f"m{i:02d}.py", "bytes": i + 1} for i in range(11, 6, -1)],
        "truncated": True,
    }


def test_read_and_search(tree: Path) -> None:
    tools = file_tools(tree)
    assert call(tools, "read_file", path="notes.md")[1] == {
        "path": "notes.md",
        "chars": 17,
        "content": "todo: write docs\n",
        "truncated": False,
    }
    code, body = call(tools, "search_files", query="TODO")
    assert (code, body) == (
        None,
        {
            "query": "TODO",
            "count": 2,
            "file_count": 2,
            "files": [{"path": "notes.md", "lines": 1}, {"path": "pkg/big.py", "lines": 1}],
            "matches": [
                {"path": "notes.md", "line": 1, "text": "todo: write docs"},
                {"path": "pkg/big.py", "line": 1, "text": "# TODO: grow"},
            ],
            "truncated": False,
        },
    )


def test_search_names_the_files_most_matched_first_and_quotes_a_few_lines(tmp_path: Path) -> None:
    for i in range(12):
        (tmp_path / f"f{i:02d}.txt").write_text("needle\n" * (1 + i % 3) + "hay\n")
    (tmp_path / "long.txt").write_text("needle " + "x" * 300 + "\n")
    code, body = call(file_tools(tmp_path), "search_files", query="Needle", pattern="*.txt")
    assert code is None and (body["count"], body["file_count"], body["truncated"]) == (25, 13, True)
    assert body["files"][:4] == [
        {"path": "f02.txt", "lines": 3},
        {"path": "f05.txt", "lines": 3},
        {"path": "f08.txt", "lines": 3},
        {"path": "f11.txt", "lines": 3},
    ]
    assert len(body["files"]) == 10 and body["files"][-1]["lines"] == 1
    assert [(m["path"], m["line"]) for m in body["matches"]] == [
        ("f00.txt", 1),
        ("f01.txt", 1),
        ("f01.txt", 2),
        ("f02.txt", 1),
        ("f02.txt", 2),
    ]
    whole = call(file_tools(tmp_path), "search_files", query="needle", pattern="long.txt")[1]
    assert whole["matches"][0]["text"] == "needle " + "x" * 113  # 120 characters of the line


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "link.txt", "pkg/../../x"])
def test_file_tools_refuse_to_leave_the_root(tree: Path, path: str) -> None:
    code, body = call(file_tools(tree), "read_file", path=path)
    assert code == "ERR_TOOL_FAILED" and "outside the allowed directory" in body["error"]
    assert "s3cret" not in json.dumps(body)


def test_symlinked_files_leading_out_are_not_listed(tree: Path) -> None:
    code, body = call(file_tools(tree), "list_files", pattern="*.txt")
    assert body["count"] == 0
    code, body = call(file_tools(tree), "list_files", pattern="pkg/*")
    assert [f["path"] for f in body["files"]] == ["pkg/big.py", "pkg/a.py"]


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    for rel in ("a.txt", "keys.txt", "sub/b.txt", "sub/deep/c.py", "笔记.txt"):
        (tmp_path / rel).write_text(rel)
    return tmp_path


@pytest.mark.parametrize(
    ("pattern", "paths"),
    [
        ("**/*.txt", ["a.txt", "keys.txt", "sub/b.txt", "笔记.txt"]),  # the top folder too
        ("*.txt", ["a.txt", "keys.txt", "sub/b.txt", "笔记.txt"]),  # a name, in any folder
        ("**/*", ["a.txt", "keys.txt", "sub/b.txt", "sub/deep/c.py", "笔记.txt"]),
        ("sub/*", ["sub/b.txt"]),  # with a "/", * stays in one folder
        ("sub/**/*.py", ["sub/deep/c.py"]),
        ("sub/**", ["sub/b.txt", "sub/deep/c.py"]),
        ("[ak]*.txt", ["a.txt", "keys.txt"]),
        ("笔*", ["笔记.txt"]),
    ],
)
def test_list_files_follows_the_usual_glob_rules(nested: Path, pattern: str, paths: list[str]) -> None:
    code, body = call(file_tools(nested), "list_files", pattern=pattern)
    assert code is None and sorted(f["path"] for f in body["files"]) == sorted(paths)
    assert body["count"] == len(paths)


def test_the_file_tools_say_which_glob_rules_they_follow(tmp_path: Path) -> None:
    specs = {t.name: t.spec()["function"] for t in file_tools(tmp_path)}
    listing = specs["list_files"]["parameters"]["properties"]["pattern"]["description"]
    assert (
        listing
        == 'Glob on the file name in any folder, e.g. "*.py", or on the path with a "/": "src/*.md", "**/*.txt"; none for every file.'
    )
    searching = specs["search_files"]["parameters"]["properties"]["pattern"]["description"]
    assert searching == 'Glob on the file name, e.g. "*.md", as in list_files.'
