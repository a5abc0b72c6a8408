"""``minloop mcp``: a server's tools, resources and prompts on the command line; and the MCP
options of ``minloop run`` (``--mcp``, ``--mcp-header``, ``--mcp-resource``)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from ..exceptions import MinloopError
from .view import err, out

if TYPE_CHECKING:
    from ..mcp import MCPServer

__all__ = ["McpHeaderOpt", "McpResourceOpt", "mcp_app", "open_servers", "parse_headers", "read_resources"]

McpHeaderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--mcp-header",
        help="A header sent to every MCP server given by URL, 'Name: value' (e.g. \"Authorization: Bearer "
        '$TOKEN"); never written to a trace, a run store or a log. Repeatable.',
    ),
]
McpResourceOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--mcp-resource",
        help="Read this resource (a URI) from the --mcp servers and add its text to the prompt. Repeatable.",
    ),
]
ServerArg = Annotated[str, typer.Argument(help="The server: a command line (quote it) or an http(s) URL.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]

mcp_app = typer.Typer(no_args_is_help=True, help="An MCP server's tools, resources and prompts.")


def parse_headers(items: Sequence[str]) -> dict[str, str]:
    """``Name: value`` items as a dict; a ``MinloopError`` names an item that is not one."""
    headers: dict[str, str] = {}
    for item in items:
        name, colon, value = item.partition(":")
        if not colon or not name.strip():
            shown = item if ":" in item else item[:20]
            raise MinloopError(f"--mcp-header {shown!r}: write it as 'Name: value', e.g. 'X-Api-Key: abc'")
        headers[name.strip()] = value.strip()
    return headers


async def open_servers(
    targets: Sequence[str], headers: dict[str, str], stack: AsyncExitStack
) -> list[MCPServer]:
    """Each server opened on ``stack``, the ``headers`` given to those reached by URL; the MCP
    client's warnings are ``warning:`` lines on stderr while the stack is open."""
    from ..mcp import MCPServer, parse_target

    shown = logging.getLogger("minloop.mcp")
    handler = _WarningLine()
    shown.addHandler(handler)
    stack.callback(shown.removeHandler, handler)
    servers = [parse_target(t) for t in targets]
    if headers and not any(s.url for s in servers):
        raise MinloopError("--mcp-header is for servers given by URL; none of the --mcp servers is one")
    opened = []
    for s in servers:
        server = MCPServer(s.target, prefix=s.prefix, headers=headers) if s.url and headers else s
        opened.append(await stack.enter_async_context(server))
    return opened


async def read_resources(servers: Sequence[MCPServer], uris: Sequence[str]) -> dict[str, str]:
    """Each resource's text, read from the first server that has it."""
    texts: dict[str, str] = {}
    for uri in uris:
        refused = []
        for server in servers:
            try:
                texts[uri] = await server.read(uri)
                break
            except MinloopError as exc:
                refused.append(str(exc))
        else:
            why = "; ".join(refused) or "no --mcp server was given"
            raise MinloopError(f"--mcp-resource {uri!r}: no server could read it ({why})")
    return texts


class _WarningLine(logging.Handler):
    """What an MCP server or the MCP client warns about, as one ``warning:`` line on stderr."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        err.print(f"[bold yellow]warning:[/] {escape(record.getMessage())}", soft_wrap=True)


def _with_server(target: str, headers: list[str] | None, ask: Callable[[MCPServer], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with AsyncExitStack() as stack:
            (server,) = await open_servers([target], parse_headers(headers or []), stack)
            return await ask(server)

    try:
        return asyncio.run(main())
    except MinloopError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None


def _show(value: Any, as_json: bool, lines: Callable[[Any], list[str]]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
        return
    for line in lines(value):
        out.print(line, soft_wrap=True, highlight=False, markup=False)


@mcp_app.command("tools")
def tools_command(server: ServerArg, header: McpHeaderOpt = None, as_json: JsonOpt = False) -> None:
    """The server's tools, and the protocol the connection settled on."""

    async def ask(s: MCPServer) -> dict[str, Any]:
        listed = [{"name": t.name, "description": t.description} for t in s.tools]
        return {**s.about(), "tools": listed}

    shown = _with_server(server, header, ask)
    _show(shown, as_json, lambda v: [f"{v['name']} · protocol {v['protocol']} · {v['transport']}"]
          + [f"  {t['name']}: {t['description']}" for t in v["tools"]])  # fmt: skip


@mcp_app.command("resources")
def resources_command(server: ServerArg, header: McpHeaderOpt = None, as_json: JsonOpt = False) -> None:
    """The server's resources and resource templates."""
    shown = _with_server(server, header, lambda s: s.resources())
    _show(shown, as_json, lambda v: [f"{r.get('uri') or r['uri_template']}  {r['name']}"
                                     + (f": {r['description']}" if r["description"] else "") for r in v]
          or ["the server offers no resources"])  # fmt: skip


@mcp_app.command("read")
def read_command(
    server: ServerArg,
    uri: Annotated[str, typer.Argument(help="The resource's URI.")],
    header: McpHeaderOpt = None,
) -> None:
    """Print the text of one of the server's resources."""
    sys.stdout.write(_with_server(server, header, lambda s: s.read(uri)) + "\n")


@mcp_app.command("prompts")
def prompts_command(server: ServerArg, header: McpHeaderOpt = None, as_json: JsonOpt = False) -> None:
    """The server's prompts and their arguments (* for a required one)."""
    shown = _with_server(server, header, lambda s: s.prompts())

    def line(p: dict[str, Any]) -> str:
        names = ", ".join(a["name"] + "*" * a["required"] for a in p["arguments"])
        return f"{p['name']}({names})" + (f": {p['description']}" if p["description"] else "")

    _show(shown, as_json, lambda v: [line(p) for p in v] or ["the server offers no prompts"])


@mcp_app.command("prompt")
def prompt_command(
    server: ServerArg,
    name: Annotated[str, typer.Argument(help="The prompt's name.")],
    arg: Annotated[
        list[str] | None, typer.Option("--arg", help="An argument, NAME=VALUE. Repeatable.")
    ] = None,
    header: McpHeaderOpt = None,
) -> None:
    """Print one of the server's prompts, filled with the arguments, as JSON messages."""
    unnamed = [a for a in arg or [] if "=" not in a]
    if unnamed:
        err.print(f"[bold red]error:[/] --arg {escape(repr(unnamed[0]))}: give NAME=VALUE", soft_wrap=True)
        raise typer.Exit(2)
    given = dict(a.partition("=")[::2] for a in arg or [])
    messages = _with_server(server, header, lambda s: s.prompt(name, given))
    sys.stdout.write(json.dumps(messages, ensure_ascii=False, indent=2) + "\n")
