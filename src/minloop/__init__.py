"""minloop: the minimal agent loop. Receive, decide, execute, inject; bounded and traceable."""

import typing

from .budget import Budget, Price
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
    from .streaming import LoopStream

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    if name == "LoopStream":  # loaded on first use: most programs never stream
        from .streaming import LoopStream

        return LoopStream
    raise AttributeError(f"module 'minloop' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "LoopStream"})


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
