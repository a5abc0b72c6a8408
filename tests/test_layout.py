"""The shape of the package: size budgets, no import circles, the core imports nothing above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "minloop"
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
CORE = {
    "__init__", "budget", "context", "decision", "driver", "events", "exceptions", "execute", "fallback", "guard",
    "log", "loop", "messages", "output", "redact", "result", "schemas", "state", "streaming", "tools",
    "models.__init__", "models.base", "envelope",
}  # fmt: skip
ROOMS = (
    "cli", "trace", "batch", "evals", "builtins", "testing", "factory", "doctor", "mcp", "models.local", "language",
)  # fmt: skip


def modules() -> dict[str, Path]:
    return {".".join(p.relative_to(SRC).with_suffix("").parts): p for p in sorted(SRC.rglob("*.py"))}


def imports_of(name: str, path: Path) -> set[str]:
    """The minloop modules ``name`` imports at module level or in functions, not under TYPE_CHECKING."""
    package = name.split(".")[:-1]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)}  # fmt: skip
    for node in ast.walk(tree):
        if id(node) in skip or not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        base = package[: len(package) - node.level + 1]
        target = ".".join([*base, *(node.module.split(".") if node.module else [])])
        found.add(target)
        if not node.module:  # `from . import x`: the submodule x, or a name of the package itself
            found.update(f"{target}.{a.name}".lstrip(".") for a in node.names)
    return found


def resolve(target: str, known: dict[str, Path]) -> str | None:
    for candidate in (target, f"{target}.__init__"):
        if candidate in known:
            return candidate
    return None


@pytest.mark.parametrize("name", sorted(modules()))
def test_files_and_functions_stay_within_the_size_budgets(name: str) -> None:
    path = modules()[name]
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_FILE_LINES, f"{path} has {text.count(chr(10))} lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]  # fmt: skip
    assert not long, f"{path}: functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_core_imports_nothing_from_the_rooms_above_it() -> None:
    known = modules()
    for name in CORE:
        for target in imports_of(name, known[name]):
            assert not target.startswith(ROOMS), f"core module {name} imports {target}"


def test_there_are_no_import_circles() -> None:
    known = modules()
    graph = {
        n: {r for t in imports_of(n, p) if (r := resolve(t, known)) and r != n} for n, p in known.items()
    }
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt]
                raise AssertionError(f"import circle: {' -> '.join(cycle)}")
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
