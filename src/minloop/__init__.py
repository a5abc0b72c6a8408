"""minloop: the minimal agent loop. Receive, decide, execute, inject; bounded and traceable."""

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
from .streaming import LoopStream
from .tools import Tool, tool, tool_from_schema

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
