"""Test doubles for users' own test suites: no network beyond loopback, deterministic.

* ``ScriptedModel`` / ``FunctionModel``: models without a server.
* ``ChatServer``: a real Chat Completions HTTP server on 127.0.0.1 that plays scripted
  replies and faults (``Fault``), for testing HTTP paths end to end; streamed requests get
  server-sent events, and ``Fault(stream=...)`` breaks a stream (malformed line, cut, stall).
* Fault toolkit (``minloop.testing.faults``): tools that hang, raise, answer slowly, break
  their schema or flood their output; models that hallucinate tool names, send invalid
  arguments, blank replies or call tools forever; and the fault matrix the loop must survive.
"""

from ..layers.tracing import RecordingSink
from ..models.scripted import FunctionModel, ScriptedModel, call, reply
from .faults import (
    blank_model,
    failing_model,
    forever_caller,
    hallucinating_model,
    hanging_model,
    hanging_tool,
    huge_output_tool,
    invalid_json_model,
    no_call_model,
    raising_tool,
    schema_breaking_tool,
    slow_tool,
    text_and_call_model,
    unserializable_tool,
)
from .matrix import fault_matrix
from .server import ChatServer, Fault, completion

__all__ = [
    "ChatServer",
    "Fault",
    "FunctionModel",
    "RecordingSink",
    "ScriptedModel",
    "blank_model",
    "call",
    "completion",
    "failing_model",
    "fault_matrix",
    "forever_caller",
    "hallucinating_model",
    "hanging_model",
    "hanging_tool",
    "huge_output_tool",
    "invalid_json_model",
    "no_call_model",
    "raising_tool",
    "reply",
    "schema_breaking_tool",
    "slow_tool",
    "text_and_call_model",
    "unserializable_tool",
]
