"""Test doubles for users' own test suites: no network beyond loopback, deterministic.

* ``ScriptedModel`` / ``FunctionModel``: models without a server.
* ``ChatServer``: a real Chat Completions HTTP server on 127.0.0.1 that plays scripted
  replies and faults (``Fault``), for testing HTTP paths end to end.
"""

from ..models.scripted import FunctionModel, ScriptedModel, call, reply
from .server import ChatServer, Fault, completion

__all__ = ["ChatServer", "Fault", "FunctionModel", "ScriptedModel", "call", "completion", "reply"]
