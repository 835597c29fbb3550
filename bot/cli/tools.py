"""``sabha tools``: the outside tools (MCP servers of ``mcp.servers``) from the terminal.

``tools list`` starts every enabled server, as the daemon would, and prints each one's state (ready, or failed and
why), its tools (``reads`` for one that only reads and runs when called; ``asks first`` for one that needs the
owner's consent) and which roles were given it; then stops them. ``tools test SERVER`` starts that server, lists
its tools, calls one harmless tool (one that only reads and needs no arguments, if it has one), prints the result as
the model would see it, and exits 0 (it works) or 1 (it does not start, or the call failed). ``tools approvals``,
``tools allow`` and ``tools deny`` (the owner's consent) are :mod:`bot.cli.tool_consent`'s.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit, note
from bot.cli.where import open_config

if TYPE_CHECKING:
    import mcp_types

    from board.tools.mcp import McpServers
    from bot.config import LoadedConfig

__all__ = ["add_parsers", "cmd_tools", "harmless_tool", "servers_for"]

#: Words in a tool's name that make it the likelier harmless pick.
_HARMLESS_WORDS = ("list", "status", "version", "current", "echo", "get")


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


def harmless_tool(tools: tuple[mcp_types.Tool, ...]) -> mcp_types.Tool | None:
    """A tool that only reads and needs no arguments (names that sound like listing or reading first)."""
    from board.tools.mcp.link import reads_only

    fit = [t for t in tools if reads_only(t) and not (t.input_schema or {}).get("required")]
    fit.sort(key=lambda t: next((i for i, w in enumerate(_HARMLESS_WORDS) if w in t.name.lower()),
                                len(_HARMLESS_WORDS)))
    return fit[0] if fit else None


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
        pick = harmless_tool(tools)
        if pick is None:
            emit("no tool that only reads and needs no arguments: none called")
            return 0
        emit(f"calling {spec.name}.{pick.name} ...")
        result = await manager.call(spec.name, pick.name, {})
    finally:
        await manager.close()
    emit(f"{'OK' if result.ok else 'FAIL'}   {spec.name}.{pick.name}: " + (result.error or "answered") + "; the model "
         "would see (quoted as data):")
    for line in _quoted_lines(result.data):
        emit(f"  {line}")
    return 0 if result.ok else 1


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
                         description="Start SERVER, list its tools and call one that only reads and needs no "
                                     "arguments; exit 0 when it works, 1 when it does not.")
    tp.add_argument("server", metavar="SERVER", help="its name under mcp.servers")
    p.set_defaults(handler=cmd_tools)
    from bot.cli.tool_consent import add_actions  # approvals, allow, deny: the owner's consent

    add_actions(tsub, common)
