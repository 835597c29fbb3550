"""``sabha tools``: the outside tools (MCP servers of ``mcp.servers``) from the terminal.

``tools list`` starts every enabled server, as the daemon would, and prints each one's state (ready, or failed and
why), its tools (``reads`` for one that only reads and runs when called; ``asks first`` for one that needs the
owner's consent) and which roles were given it; then stops them. ``tools test SERVER`` starts that server, lists
its tools, calls one harmless tool (one that only reads, its required arguments filled as the offline model fills
them: a timezone of UTC, a path of the folder the server works on: :func:`server_folder`), prints the result as
the model would see it (capped), and exits 0 (it works) or 1 (it does not start, or the call failed); a server
none of whose reading tools can be called so says so. ``tools approvals``,
``tools allow`` and ``tools deny`` (the owner's consent) are :mod:`bot.cli.tool_consent`'s.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit, note
from bot.cli.where import open_config

if TYPE_CHECKING:
    import mcp_types

    from board.tools.mcp import McpServers, ServerSpec
    from bot.config import LoadedConfig

__all__ = ["add_parsers", "cmd_tools", "harmless_tool", "server_folder", "servers_for"]

#: Words in a tool's name that make it the likelier harmless pick.
_HARMLESS_WORDS = ("list", "status", "version", "current", "echo", "get")
#: The options naming the folder a server works on (mcp-server-git's ``--repository`` ...).
_FOLDER_OPTIONS = ("--repository", "-r", "--repo", "--root", "--directory", "--dir", "--path")
#: How much of a result ``tools test`` prints.
_SHOWN_LINES, _SHOWN_CHARS = 40, 4000


def servers_for(loaded: LoadedConfig) -> tuple[McpServers, list[str]]:
    """The configured servers (not started) and the roles of the board, whose tools say who was given which."""
    from board.tools.mcp import McpServers
    from board.workspace.souls import SoulStore

    settings = loaded.board_settings()
    roles: list[str] = []
    grants: dict[str, tuple[str, ...] | None] = {}
    if settings.workspace.is_dir():
        souls = SoulStore(settings.workspace, settings.roster)
        roles = souls.roles()
        grants = {role: souls.profile(role).tools for role in roles if souls.has(role)}
    log_dir = settings.data_dir / "mcp" if settings.data_dir.is_dir() else None
    return McpServers(settings.mcp, grants=lambda role: grants.get(role), log_dir=log_dir), roles


def server_folder(spec: ServerSpec) -> str | None:
    """The folder a stdio server works on: its ``--repository`` (or ``--root`` ...) option, else its first
    argument that is a folder (the filesystem server's), else its ``cwd``; None: none known."""
    args = list(spec.args)
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in _FOLDER_OPTIONS:
            if eq:
                return value
            if i + 1 < len(args):
                return args[i + 1]
    return next((a for a in args if not a.startswith("-") and os.path.isdir(a)), None) or spec.cwd


def harmless_tool(tools: tuple[mcp_types.Tool, ...],
                  folder: str | None = None) -> tuple[mcp_types.Tool, dict[str, Any]] | None:
    """A tool that only reads and whose required arguments can be filled (:func:`board.llm.offline_tools.
    arguments_for`, a path with ``folder``), and those arguments: names that sound like listing or reading
    first, then the fewest arguments. None: no such tool."""
    from board.llm.base import ToolSpec
    from board.llm.offline_tools import arguments_for
    from board.tools.mcp.link import reads_only

    fit: list[tuple[int, int, mcp_types.Tool, dict[str, Any]]] = []
    for tool in tools:
        if not reads_only(tool):
            continue
        spec = ToolSpec(tool.name, tool.description or "", dict(tool.input_schema or {}), read_only=True)
        args = arguments_for(spec, "", folder=folder)
        if args is not None:
            rank = next((i for i, w in enumerate(_HARMLESS_WORDS) if w in tool.name.lower()), len(_HARMLESS_WORDS))
            fit.append((rank, len(args), tool, args))
    fit.sort(key=lambda f: (f[0], f[1]))
    return (fit[0][2], fit[0][3]) if fit else None


async def _list(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    manager, roles = servers_for(loaded)
    if not manager.settings.servers:
        emit(f"No MCP servers are configured (mcp.servers in {loaded.source or 'the config'}); see docs/tools.md.")
        return 0
    manager.start(s.name for s in manager.settings.servers)
    try:
        await manager.settled()
        rows: list[dict[str, Any]] = []
        for status in manager.states():
            rows.append({"server": status.name, "state": status.state.value, "transport": status.transport,
                         "where": status.where, "error": status.last_error,
                         "roles": list(manager.roles_of(status.name, roles)),
                         "tools": [{"name": name, "reads_only": reads} for name, reads in status.tools],
                         "refused": [{"name": name, "why": why} for name, why in status.refused]})
    finally:
        await manager.close()
    if args.json:
        emit(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    for row in rows:
        given = ", ".join(row["roles"]) or "no role (give it with mcp:" + row["server"] + " in a role's tools)"
        emit(f"{row['server']}: {row['state']} ({row['transport']}: {row['where']}); given to {given}")
        if row["error"]:
            emit(f"  error: {row['error']}")
        for tool in row["tools"]:
            emit(f"  {'reads     ' if tool['reads_only'] else 'asks first'}  {row['server']}.{tool['name']}")
        for tool in row["refused"]:
            emit(f"  refused     {row['server']} tool {tool['name']}: {tool['why']}")
    return 0


async def _test(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    manager, _roles = servers_for(loaded)
    spec = manager.settings.spec(args.server)
    if spec is None:
        names = ", ".join(s.name for s in manager.settings.servers) or "none"
        raise UserError(f"no MCP server {args.server!r} in mcp.servers (configured: {names})")
    emit(f"starting {spec.name} ({spec.transport}: {spec.where}) ...")
    manager.start([spec.name])
    try:
        await manager.settled()
        [status] = [s for s in manager.states() if s.name == spec.name]
        if not status.state.usable:
            emit(f"FAIL {spec.name}: {status.state.value}: {status.last_error or 'no answer'}")
            note(f"check the command or URL under mcp.servers.{spec.name}; a stdio server's errors are in "
                 f"{loaded.data_dir / 'mcp' / (spec.name + '.log')}")
            return 1
        tools = manager.listed(spec.name)
        emit(f"OK   {spec.name}: ready, {len(tools)} tool(s)")
        for tool in tools:
            kind = "reads     " if (tool.name, True) in status.tools else "asks first"
            emit(f"  {kind}  {tool.name}: {' '.join((tool.description or '').split())[:100]}")
        for name, why in manager.refused(spec.name):
            emit(f"  refused     {name}: {why}")
        pick = harmless_tool(tools, server_folder(spec))
        if pick is None:
            emit("no tool that only reads has arguments Sabha can fill (a timezone, the server's folder): none called")
            return 0
        tool, arguments = pick
        emit(f"calling {spec.name}.{tool.name} {json.dumps(arguments, ensure_ascii=False)} ...")
        result = await manager.call(spec.name, tool.name, arguments)
    finally:
        await manager.close()
    emit(f"{'OK' if result.ok else 'FAIL'}   {spec.name}.{tool.name}: " + (result.error or "answered") + "; the "
         "model would see (quoted as data):")
    for line in _capped(_quoted_lines(result.data)):
        emit(f"  {line}")
    return 0 if result.ok else 1


def _capped(lines: list[str]) -> list[str]:
    """The first lines of a result, at most :data:`_SHOWN_LINES` and :data:`_SHOWN_CHARS`, then how much more."""
    shown: list[str] = []
    size = 0
    for line in lines:
        if len(shown) >= _SHOWN_LINES or size + len(line) > _SHOWN_CHARS:
            break
        shown.append(line)
        size += len(line)
    left = sum(len(line) for line in lines[len(shown):])
    return [*shown, f"... {left} more characters"] if left else shown


def _quoted_lines(data: object) -> list[str]:
    """A result's quoted data as the lines the server sent (each was one JSON-quoted line)."""
    if not isinstance(data, dict) or not isinstance(data.get("quoted_data"), str):
        return [json.dumps(data, ensure_ascii=False, default=str)] if data is not None else []
    lines = []
    for line in data["quoted_data"].splitlines():
        try:
            lines.append(str(json.loads(line)))
        except ValueError:
            lines.append(line)
    return lines


async def cmd_tools(args: argparse.Namespace) -> int:
    """``sabha tools list|test``."""
    loaded = open_config(args, writes=False)
    action = {"list": _list, "test": _test}[args.tools_command]
    return await action(loaded, args)


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha tools``."""
    p = sub.add_parser("tools", parents=[common], help="outside tools: the MCP servers, their tools, a test call",
                       description="The MCP servers of mcp.servers: their state, their tools (reads: runs when an "
                                   "advisor calls it; asks first: needs the owner's consent) and the roles given "
                                   "them (mcp:<server> in a role's tools). See docs/tools.md.")
    tsub = p.add_subparsers(dest="tools_command", metavar="ACTION", required=True)
    tp = tsub.add_parser("list", parents=[common], help="every server: state, tools, roles",
                         description="Start every enabled server, show its state, tools and roles, stop it.")
    tp.add_argument("--json", action="store_true", help="machine-readable output")
    tp = tsub.add_parser("test", parents=[common], help="start one server, list its tools, call a harmless one",
                         description="Start SERVER, list its tools and call one that only reads (its required "
                                     "arguments filled: a timezone of UTC, a path of the server's folder); "
                                     "exit 0 when it works, 1 when it does not.")
    tp.add_argument("server", metavar="SERVER", help="its name under mcp.servers")
    p.set_defaults(handler=cmd_tools)
    from bot.cli.tool_consent import add_actions  # approvals, allow, deny: the owner's consent

    add_actions(tsub, common)
