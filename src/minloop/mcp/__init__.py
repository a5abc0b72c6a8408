"""MCP servers as minloop tools (the ``mcp`` extra: ``pip install "minloop[mcp]"``).

``MCPServer`` is one server, over stdio or streamable HTTP; ``connect`` opens several at once
and checks that their tool names do not clash. The ``mcp`` package is imported only when a
server is opened, so importing this module is cheap and says what to install when it is missing.
"""

from __future__ import annotations

from ..exceptions import MCPConnectionError
from .connect import connect, parse_target
from .content import attach
from .convert import MCPLoginError, MCPToolError
from .login import client_credentials
from .server import MCPServer

__all__ = [
    "MCPConnectionError",
    "MCPLoginError",
    "MCPServer",
    "MCPToolError",
    "attach",
    "client_credentials",
    "connect",
    "parse_target",
]
