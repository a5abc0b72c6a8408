"""A safe calculator: arithmetic parsed with ``ast`` and evaluated node by node (no ``eval``)."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from ..tools import tool

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "floor": math.floor,
    "ceil": math.ceil,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "min": min,
    "max": max,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
MAX_EXPONENT = 10_000
MAX_LENGTH = 500


def evaluate(expression: str) -> int | float:
    """The value of an arithmetic expression; ``ValueError`` says what is not allowed."""
    if len(expression) > MAX_LENGTH:
        raise ValueError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression.replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression: {exc.msg}") from None
    return _eval(tree.body)


def _eval(node: ast.AST) -> Any:
    match node:
        case ast.Constant(value=bool()):
            raise ValueError("booleans are not numbers here")
        case ast.Constant(value=int() | float() as value):
            return value
        case ast.Name(id=name) if name in _CONSTANTS:
            return _CONSTANTS[name]
        case ast.BinOp(left=left, op=op, right=right) if type(op) in _BINARY:
            a, b = _eval(left), _eval(right)
            if isinstance(op, ast.Pow) and abs(b) > MAX_EXPONENT:
                raise ValueError(f"exponent {b} is larger than {MAX_EXPONENT}")
            return _BINARY[type(op)](a, b)
        case ast.UnaryOp(op=op, operand=operand) if type(op) in _UNARY:
            return _UNARY[type(op)](_eval(operand))
        case ast.Call(func=ast.Name(id=name), args=args, keywords=[]) if name in _FUNCTIONS:
            return _FUNCTIONS[name](*(_eval(a) for a in args))
    raise ValueError(
        f"{ast.unparse(node)!r} is not allowed (numbers, + - * / // % **, {', '.join(_FUNCTIONS)})"
    )


@tool(timeout=2.0, idempotent=True)
def calculator(expression: str) -> dict[str, Any]:
    """Evaluate an arithmetic expression exactly, e.g. "(17 + 5) * 3" or "sqrt(2) ** 2".

    Args:
        expression: Numbers, + - * / // % ** and sqrt, log, sin, cos, round, abs, min, max, pi, e: to
            add (plus), subtract (minus), multiply, divide, calculate percentages, powers and roots.
    """
    try:
        value = evaluate(expression)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    return {"expression": expression, "result": value}
