"""minloop: the minimal agent loop. Receive, decide, execute, inject; bounded and traceable."""

from .decision import Controls
from .exceptions import (
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
from .loop import Loop, run, run_sync
from .run import Run
from .messages import Message, ToolCall, check_transcript
from .models.base import Model, ModelRequest, ModelResponse, Usage
from .result import RunResult, Status, Step
from .tools import Tool, tool
from .tracing import TraceIdFilter, new_trace_id

__version__ = "0.1.0"

__all__ = [
    "Controls",
    "ErrorCode",
    "Loop",
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
    "Run",
    "RunResult",
    "ScriptError",
    "Status",
    "Step",
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
]
