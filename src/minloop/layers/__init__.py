"""The built-in layers, each a control around the four steps (``minloop.layer``).

``minloop.Loop`` installs them from its keywords; they can also be given to
``BaseLoop(..., layers=[...])`` directly, in an order of your choosing. Each lives in a module
of its own, loaded when first used.
"""

import importlib

__all__ = [
    "AnswerAtLimit",
    "AnswerChecking",
    "Approval",
    "Approver",
    "Budget",
    "Budgeting",
    "Caching",
    "ConcurrencyCap",
    "ContextFitting",
    "ContextPolicy",
    "ContextReport",
    "Event",
    "LoopStream",
    "OutputSpec",
    "Price",
    "RecordingSink",
    "ResultCache",
    "Retry",
    "Retrying",
    "SQLiteResultCache",
    "Spent",
    "Streaming",
    "TraceSink",
    "Tracing",
    "TypedOutput",
    "WindowPolicy",
]

_HOMES = {
    "AnswerAtLimit": "limit",
    "AnswerChecking": "checks",
    "Approval": "approval",
    "Approver": "approval",
    "Budget": "budget",
    "Budgeting": "budget",
    "Caching": "cache",
    "ConcurrencyCap": "concurrency",
    "ContextFitting": "context",
    "ContextPolicy": "context",
    "ContextReport": "context",
    "Event": "tracing",
    "LoopStream": "streaming",
    "OutputSpec": "output",
    "Price": "budget",
    "RecordingSink": "tracing",
    "ResultCache": "cache",
    "Retry": "retry",
    "Retrying": "retry",
    "SQLiteResultCache": "cache",
    "Spent": "budget",
    "Streaming": "streaming",
    "TraceSink": "tracing",
    "Tracing": "tracing",
    "TypedOutput": "output",
    "WindowPolicy": "context",
}


def __getattr__(name: str) -> object:
    if name in _HOMES:
        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module 'minloop.layers' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
