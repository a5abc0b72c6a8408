"""The shape of the package: size budgets, no import circles, the core imports nothing above it
(not even for types), and the four steps name no feature."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "minloop"
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
CORE = {
    "decision", "driver", "exceptions", "execute", "fallback", "guard", "layer", "log", "loop", "messages",
    "redact", "result", "schemas", "state", "tools", "workers", "models.__init__", "models.base", "envelope",
    "textcalls", "questions", "callshapes", "sources",
}  # fmt: skip
ROOMS = (
    "layers", "standard", "cli", "trace", "batch", "evals", "builtins", "testing", "factory", "doctor", "mcp",
    "models.local", "models.openai", "models.sse", "models.scripted", "models.written", "models.runaway",
    "models.unparsed", "models.send", "language", "runs", "serve", "small",
)  # fmt: skip
STEPS = ("loop", "driver", "state")  # the four steps themselves
FEATURE_WORDS = (
    r"(?<!time[ _])budget",
    "output_schema",
    "typed",
    "stream",
    "delta",
    "sink",
    "tracer",
    "trace event",
)
MAX_STEPS_LINES = 450


def modules() -> dict[str, Path]:
    return {".".join(p.relative_to(SRC).with_suffix("").parts): p for p in sorted(SRC.rglob("*.py"))}


def imports_of(name: str, path: Path, types: bool = False) -> set[str]:
    """The minloop modules ``name`` imports at module level or in functions; under TYPE_CHECKING
    too when ``types``."""
    package = name.split(".")[:-1]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)} if not types else set()  # fmt: skip
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


def code_files() -> list[str]:
    """Every Python file of the project: the package, its tests, benchmarks and examples."""
    return sorted(
        str(p.relative_to(ROOT))
        for d in ("src", "tests", "benchmarks", "examples")
        for p in (ROOT / d).rglob("*.py")
    )


@pytest.mark.parametrize("name", code_files())
def test_files_and_functions_stay_within_the_size_budgets(name: str) -> None:
    path = ROOT / name
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_FILE_LINES, f"{path} has {text.count(chr(10))} lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]  # fmt: skip
    assert not long, f"{path}: functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_every_module_is_core_or_in_a_room() -> None:
    assert all(name in CORE or name.startswith(ROOMS) or name == "__init__" for name in modules())


def test_the_core_imports_nothing_from_the_rooms_above_it() -> None:
    known = modules()
    for name in CORE:
        for target in imports_of(name, known[name], types=True):  # type-only and in-function imports too
            assert target in CORE or resolve(target, known) in CORE, f"core module {name} imports {target}"


def test_the_core_has_no_import_circles_even_for_types() -> None:
    known = modules()
    graph = {
        n: {r for t in imports_of(n, known[n], types=True) if (r := resolve(t, known)) and r != n}
        for n in CORE
    }
    assert_no_circles(graph)


def test_the_four_steps_name_no_feature_and_fit_one_budget() -> None:
    texts = {name: (SRC / f"{name}.py").read_text(encoding="utf-8") for name in STEPS}
    assert sum(t.count("\n") for t in texts.values()) <= MAX_STEPS_LINES
    for name, text in texts.items():
        named = [w for w in FEATURE_WORDS if re.search(w, text.lower())]
        assert not named, f"{name}.py names {named}"


def test_there_are_no_import_circles() -> None:
    known = modules()
    graph = {
        n: {r for t in imports_of(n, p) if (r := resolve(t, known)) and r != n} for n, p in known.items()
    }
    assert_no_circles(graph)


def assert_no_circles(graph: dict[str, set[str]]) -> None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt]
                raise AssertionError(f"import circle: {' -> '.join(cycle)}")
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])


def test_the_embedded_model_keeps_only_how_a_gguf_runs() -> None:
    """``models/local`` holds loading, the template, constrained decoding and the caches; what
    decides around a small model's steps is ``minloop.small``, which the model's room imports
    only to bring its default layers."""
    room = SRC / "models" / "local"
    assert sum(len(p.read_text(encoding="utf-8").splitlines()) for p in room.glob("*.py")) <= 1500
    texts = {p.name: p.read_text(encoding="utf-8") for p in room.glob("*.py")}
    # the default layers, and the moved evidence check's old path
    assert sorted(name for name, text in texts.items() if "from ...small" in text) == [
        "__init__.py",
        "evidence.py",
    ]


def test_the_small_model_layers_with_their_language_helpers_stay_within_their_budget() -> None:
    """What decides around a small model's steps (``minloop.small``) and the language helpers it
    reads text with (``minloop.language``): 2,500 lines at most, every module earning its place."""
    rooms = [SRC / "small", SRC / "language"]
    assert sum(len(p.read_text(encoding="utf-8").splitlines()) for r in rooms for p in r.glob("*.py")) <= 2500
