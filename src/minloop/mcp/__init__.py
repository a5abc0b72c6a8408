"""MCP servers as minloop tools (the ``mcp`` extra: ``pip install "minloop[mcp]"``).

``MCPServer`` is one server, over stdio or streamable HTTP; ``connect`` opens several at once
and checks that their tool names do not clash. The ``mcp`` package is imported only when a
server is opened, so importing this module is cheap and says what to install when it is missing.
"""

from __future__ import annotations

from ..exceptions import MCPConnectionError
from .connect import connect, parse_target
from .content import attach
from .convert import MCPToolError
from .server import MCPServer

__all__ = ["MCPConnectionError", "MCPServer", "MCPToolError", "attach", "connect", "parse_target"]
