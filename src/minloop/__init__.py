"""minloop: the minimal agent loop. Receive, decide, execute, inject; bounded and traceable."""

import importlib
import typing

from .decision import Controls
from .driver import LoopRun
from .exceptions import (
    ContextOverflowError,
    MinloopError,
    MissingDependencyError,
    ModelError,
    ModelHTTPError,
    ModelLoadError,
    NestedModelCallError,
    ScriptError,
    ToolDefinitionError,
    TranscriptError,
)
from .execute import ErrorCode, ToolResult
from .log import TraceIdFilter, new_trace_id
from .loop import Loop, run, run_sync
from .messages import Message, ToolCall, check_transcript
from .models.base import Model, ModelRequest, ModelResponse, StreamingModel, Usage
from .result import RunResult, Status, Step
from .tools import Tool, tool, tool_from_schema

if typing.TYPE_CHECKING:
    from .budget import Budget, Price
    from .streaming import LoopStream

__version__ = "0.1.0"


__all__ = [
    "Budget",
    "ContextOverflowError",
    "Controls",
    "ErrorCode",
    "Loop",
    "LoopRun",
    "LoopStream",
    "Message",
    "MinloopError",
    "MissingDependencyError",
    "Model",
    "ModelError",
    "ModelHTTPError",
    "ModelLoadError",
    "ModelRequest",
    "ModelResponse",
    "NestedModelCallError",
    "Price",
    "RunResult",
    "ScriptError",
    "Status",
    "Step",
    "StreamingModel",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
    "ToolResult",
    "TraceIdFilter",
    "TranscriptError",
    "Usage",
    "check_transcript",
    "new_trace_id",
    "run",
    "run_sync",
    "tool",
    "tool_from_schema",
]

_LATER = {"Budget": "budget", "Price": "budget", "LoopStream": "streaming"}  # loaded on first use


def __getattr__(name: str) -> object:
    if name in _LATER:
        return getattr(importlib.import_module(f".{_LATER[name]}", __name__), name)
    raise AttributeError(f"module 'minloop' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LATER})
