"""minloop: the minimal agent loop. Receive, decide, execute, inject; bounded and traceable."""

import importlib
import typing

from .decision import Answer, Blank, CallTools, Controls, Decision, Replacement, Unfinished
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
from .execute import ErrorCode, ToolFailure, ToolResult, TransientToolError
from .layer import CallModel, Execute, Layer, StopRun
from .layers.context import ContextPolicy, WindowPolicy
from .layers.tracing import RecordingSink
from .log import TraceIdFilter, new_trace_id
from .loop import BaseLoop
from .messages import Message, ToolCall, check_transcript
from .models.base import (
    ArgumentsDelta,
    Model,
    ModelRequest,
    ModelResponse,
    StreamingModel,
    TextDelta,
    ToolCallStarted,
    Usage,
)
from .questions import Question, UserAnswer
from .result import RunResult, Status, Step
from .standard import Loop, run, run_sync
from .state import Continue, Final, Limit, Outcome, Prompt, Reply, RunState, Stop
from .tools import CallKey, Tool, tool, tool_from_schema

if typing.TYPE_CHECKING:
    from .layers.budget import Budget, Price
    from .layers.streaming import LoopStream, RunEnd, StepEnd, StreamEvent, ToolCallFinished, ToolCallResult
    from .runs.postgres import PostgresRunStore
    from .runs.records import PendingCall, RunStore, Verdict
    from .runs.sqlite import SQLiteRunStore

__version__ = "0.1.0"


__all__ = [
    "Answer",
    "ArgumentsDelta",
    "BaseLoop",
    "Blank",
    "Budget",
    "CallKey",
    "CallModel",
    "CallTools",
    "ContextOverflowError",
    "ContextPolicy",
    "Continue",
    "Controls",
    "Decision",
    "ErrorCode",
    "Execute",
    "Final",
    "Layer",
    "Limit",
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
    "Outcome",
    "PendingCall",
    "PostgresRunStore",
    "Price",
    "Prompt",
    "Question",
    "RecordingSink",
    "Replacement",
    "Reply",
    "RunEnd",
    "RunResult",
    "RunState",
    "RunStore",
    "SQLiteRunStore",
    "ScriptError",
    "Status",
    "Step",
    "StepEnd",
    "Stop",
    "StopRun",
    "StreamEvent",
    "StreamingModel",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallResult",
    "ToolCallStarted",
    "ToolDefinitionError",
    "ToolFailure",
    "ToolResult",
    "TraceIdFilter",
    "TranscriptError",
    "TransientToolError",
    "Unfinished",
    "Usage",
    "UserAnswer",
    "Verdict",
    "WindowPolicy",
    "check_transcript",
    "new_trace_id",
    "run",
    "run_sync",
    "tool",
    "tool_from_schema",
]

_LATER = {  # loaded on first use: most runs are neither budgeted, streamed nor stored
    "Budget": "layers.budget",
    "Price": "layers.budget",
    "LoopStream": "layers.streaming",
    "RunEnd": "layers.streaming",
    "StepEnd": "layers.streaming",
    "StreamEvent": "layers.streaming",
    "ToolCallFinished": "layers.streaming",
    "ToolCallResult": "layers.streaming",
    "PostgresRunStore": "runs.postgres",
    "SQLiteRunStore": "runs.sqlite",
    "PendingCall": "runs.records",
    "RunStore": "runs.records",
    "Verdict": "runs.records",
}


def __getattr__(name: str) -> object:
    if name in _LATER:
        return getattr(importlib.import_module(f".{_LATER[name]}", __name__), name)
    raise AttributeError(f"module 'minloop' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LATER})
