"""BFCL: the Berkeley Function Calling Leaderboard's data and AST checker, for ``minloop eval bfcl``.

The non-live single-turn categories (``CATEGORIES``) are the ones scored by default. Three
live single-turn categories (``HELD_OUT``: user-contributed requests and functions) are
accepted only when asked for by name: minloop's decision policy is not tuned on them, so they
check that a gain carries over. Multi-turn and the other categories are refused. The data and the checker come from the
``bfcl-eval`` package, installed without its heavy dependencies (``scripts/install_eval.sh``
runs ``pip install --no-deps bfcl-eval``). Its AST checker imports
``bfcl_eval.constants.model_config``, which imports every model handler; ``load_checker``
puts a stand-in holding ``MODEL_CONFIG_MAPPING`` in its place for the import and removes it
afterwards.

A BFCL function doc becomes an OpenAI tool spec the way BFCL's own OpenAI handler does it:
``.`` in names becomes ``_``, the Python hint is appended to the description, and BFCL types
map to JSON schema (``dict`` -> ``object``, ``float`` -> ``number``, ``tuple`` -> ``array``,
``any`` -> ``string``). For the loop, each function is also a placeholder tool (``tool_from_schema``)
that validates its arguments against that schema and executes nothing.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exceptions import MinloopError, MissingDependencyError
from ..messages import Message, ToolCall
from ..tools import Tool, tool_from_schema

__all__ = [
    "CATEGORIES",
    "HELD_OUT",
    "Item",
    "checker_imports",
    "decode",
    "json_schema",
    "load_checker",
    "load_items",
    "placeholder_tool",
    "score",
    "tool_spec",
]

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
HELD_OUT = ("live_simple", "live_multiple", "live_irrelevance")
INSTALL_HINT = "bash scripts/install_eval.sh  (it runs: pip install --no-deps bfcl-eval)"
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
FLOAT_HINT = " This is a float type value."
CHECKER_MODEL = "minloop"
JSON_TYPES = {
    "string": "string",
    "any": "string",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "dict": "object",
    "object": "object",
}


@dataclass(frozen=True)
class Item:
    """One test case: the conversation, the available functions and (except for irrelevance) the answers."""

    id: str
    category: str
    messages: list[Message]
    functions: list[dict[str, Any]]
    answer: list[dict[str, Any]] | None


def data_dir() -> Path:
    try:
        import bfcl_eval
    except ImportError:
        raise MissingDependencyError("bfcl-eval (the BFCL data and checker)", INSTALL_HINT) from None
    return Path(bfcl_eval.__file__).parent / "data"


def load_items(
    category: str, limit: int | None = None, data: Path | None = None, *, spread: bool = False
) -> list[Item]:
    """The first ``limit`` items of a category, with their possible answers; with ``spread``,
    ``limit`` items evenly spaced over the whole category (the first item included)."""
    if category not in CATEGORIES + HELD_OUT:
        raise MinloopError(
            f"BFCL category {category!r} is not evaluated here; choose from "
            f"{', '.join(CATEGORIES + HELD_OUT)}"
        )
    data = data or data_dir()
    path = _one(
        sorted(p for p in data.glob("BFCL_v*.json") if re.fullmatch(rf"BFCL_v\d+_{category}\.json", p.name)),
        category,
        data,
    )
    questions = _jsonl(path, None if spread else limit)
    if spread and limit is not None and limit < len(questions):
        questions = [questions[i * len(questions) // limit] for i in range(limit)]
    answers = {}
    if "irrelevance" not in category:
        answers = {a["id"]: a["ground_truth"] for a in _jsonl(data / "possible_answer" / path.name)}
    return [
        Item(q["id"], category, q["question"][0], q["function"], answers.get(q["id"]) if answers else None)
        for q in questions
    ]


def _one(paths: list[Path], category: str, data: Path) -> Path:
    if not paths:
        raise MinloopError(f"no BFCL data for {category!r} in {data}")
    return paths[-1]  # the newest version


def _jsonl(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if limit is not None and len(rows) >= limit:
                break
            if line.strip():
                rows.append(json.loads(line))
    return rows


def tool_spec(function: dict[str, Any]) -> dict[str, Any]:
    """The Chat Completions ``tools`` entry for a BFCL function doc."""
    return {
        "type": "function",
        "function": {
            "name": function["name"].replace(".", "_"),
            "description": function.get("description", "") + PYTHON_HINT,
            "parameters": {**json_schema(function["parameters"]), "type": "object"},
        },
    }


def json_schema(node: dict[str, Any]) -> dict[str, Any]:
    """A BFCL parameter schema (``dict``, ``float``, ``tuple``, ``any``, ...) as JSON schema."""
    out = {
        k: copy.deepcopy(v) for k, v in node.items() if k not in ("type", "properties", "items", "optional")
    }
    kind = node.get("type", "string")
    out["type"] = JSON_TYPES.get(kind, "string")
    if kind == "float":
        out["format"] = "float"
        out["description"] = out.get("description", "") + FLOAT_HINT
    if isinstance(node.get("properties"), dict):
        out["properties"] = {name: json_schema(sub) for name, sub in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        out["items"] = json_schema(node["items"])
    return out


def placeholder_tool(function: dict[str, Any]) -> Tool:
    """A tool with the function's spec that validates its arguments against it and executes nothing."""
    spec = tool_spec(function)["function"]
    return tool_from_schema(spec["name"], spec["description"], spec["parameters"], _recorded)


async def _recorded(**_: Any) -> dict[str, str]:
    """Record the call (BFCL scores the call itself; nothing runs)."""
    return {"status": "recorded"}


def decode(calls: Sequence[ToolCall], names: dict[str, str]) -> list[dict[str, Any]] | None:
    """Calls in BFCL's form ``[{"math.factorial": {"number": 5}}]``; ``None`` if arguments are not a JSON object."""
    out = []
    for call in calls:
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            return None
        if not isinstance(args, dict):
            return None
        out.append({names.get(call.name, call.name): args})
    return out


@contextmanager
def checker_imports() -> Iterator[None]:
    """Import BFCL's checkers inside this block: ``bfcl_eval.constants.model_config`` (which
    imports every model handler) is a stand-in holding ``MODEL_CONFIG_MAPPING`` meanwhile, and a
    missing ``bfcl-eval`` raises ``MissingDependencyError`` with the install hint."""
    key = "bfcl_eval.constants.model_config"
    previous = sys.modules.get(key)
    if previous is None:
        standin = types.ModuleType(key)
        standin.MODEL_CONFIG_MAPPING = {CHECKER_MODEL: types.SimpleNamespace(underscore_to_dot=False)}  # type: ignore[attr-defined]
        sys.modules[key] = standin
    try:
        yield
    except ImportError:
        raise MissingDependencyError("bfcl-eval (the BFCL data and checker)", INSTALL_HINT) from None
    finally:
        if previous is None:
            del sys.modules[key]


def load_checker() -> Callable[..., dict[str, Any]]:
    """BFCL's ``ast_checker`` for Python, imported with a stand-in for its model registry."""
    with checker_imports():
        from bfcl_eval.constants.enums import Language
        from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    def check(
        functions: list[dict[str, Any]],
        prediction: list[dict[str, Any]],
        answer: list[dict[str, Any]],
        category: str,
    ) -> dict[str, Any]:
        return ast_checker(functions, prediction, answer, Language.PYTHON, category, CHECKER_MODEL)

    return check


def score(
    item: Item, prediction: list[dict[str, Any]] | None, check: Callable[..., dict[str, Any]]
) -> tuple[bool, str]:
    """Whether a prediction is correct, by BFCL's rules, and why not.

    Irrelevance: correct when no call was made (or none could be decoded, as BFCL counts it).
    Otherwise the AST checker decides, with names in BFCL's own spelling.
    """
    if "irrelevance" in item.category:
        return (not prediction, "" if not prediction else "made a call where none applies")
    if prediction is None:
        return False, "arguments are not a JSON object"
    if not prediction:
        return False, "no call"
    assert item.answer is not None
    try:
        result = check(item.functions, prediction, item.answer, item.category)
    except Exception as exc:
        return False, f"checker: {type(exc).__name__}: {exc}"
    return bool(result["valid"]), "; ".join(map(str, result.get("error") or []))


def names_of(functions: list[dict[str, Any]]) -> dict[str, str]:
    """Spec name -> BFCL name (``math_factorial`` -> ``math.factorial``)."""
    return {f["name"].replace(".", "_"): f["name"] for f in functions}
