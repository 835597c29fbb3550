"""``sabha mcp serve``: the board as an MCP server over stdio, for a desktop client or another agent.

The client starts it as a subprocess (Claude Desktop's ``mcpServers`` entry: ``"command": "sabha", "args":
["mcp", "serve", "--config", "/path/to/sabha.yaml"]``) and speaks the Model Context Protocol on its stdin and
stdout; stdout is the protocol's alone (the SDK diverts anything else written there to stderr), logs go to
stderr. It opens the board the way ``sabha ask`` does (the same config discovery, ``--config``, the personal
board when none is found), serves the tools of :mod:`bot.mcp_server.server` until the client closes stdin
(end of file), lets a meeting still running finish, and exits 0. The client acts as the board's owner.

``sabha mcp token`` prints a fresh random token for ``server.mcp.token`` (the HTTP endpoint on ``sabha run``).
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from bot.cli.common import emit, note
from bot.cli.where import open_config

__all__ = ["add_parsers", "cmd_serve", "cmd_token"]

log = logging.getLogger("sabha.mcp")


async def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the board over stdio until end of file on stdin."""
    from bot.app import open_board
    from bot.cli.keys import key_advice, keyless_models
    from bot.mcp_server.board_tools import BoardDesk, McpBoardParts
    from bot.mcp_server.server import board_server

    loaded = open_config(args, writes=True)
    for model, key_env in keyless_models(loaded, loaded.models()):
        note(f"warning: {key_advice(loaded, model, key_env)}")
    board = await open_board(loaded, report_missing_keys=False)
    try:
        parts = board.parts
        server = board_server(BoardDesk(McpBoardParts.of(parts)))
        note(f"MCP server on stdio for the board at {loaded.base_dir} ({len(parts.souls.roles())} advisors); "
             "it ends when the client closes the connection")
        await server.run_stdio_async()
        if parts.room.running():
            note("the client left; waiting for the board meeting it started to finish")
            await parts.room.drain()
    finally:
        await board.close()
    log.info("MCP client disconnected; board closed")
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    """A fresh token for ``server.mcp.token``."""
    import secrets

    emit(secrets.token_urlsafe(32))
    note("export it as SABHA_MCP_TOKEN where `sabha run` runs (server.mcp.token: ${SABHA_MCP_TOKEN}) and give it "
         "to the MCP client as 'Authorization: Bearer <token>'")
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha mcp serve`` and ``sabha mcp token``."""
    p = sub.add_parser("mcp", parents=[common], help="the board as an MCP server for other agents and desktop clients",
                       description="Expose the board to MCP clients (Claude Desktop, other agents): list the "
                                   "advisors, ask one, convene a meeting and get its decision, list decisions and "
                                   "open action items. `sabha mcp serve` speaks MCP on stdin/stdout; `sabha run` "
                                   "serves it over HTTP when server.mcp.enabled is true (docs/mcp-server.md).")
    msub = p.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    sp = msub.add_parser("serve", parents=[common], help="serve MCP on stdin/stdout (the client starts this command)",
                         description="Serve the board's MCP tools on stdin/stdout until the client closes stdin. "
                                     "Logs go to stderr; stdout carries only the protocol. The client acts as the "
                                     "board's owner.")
    sp.set_defaults(handler=cmd_serve)
    tp = msub.add_parser("token", parents=[common], help="print a fresh random token for server.mcp.token",
                         description="Print a random token (256 bits) to put in SABHA_MCP_TOKEN for the HTTP "
                                     "endpoint on `sabha run` (server.mcp.token: ${SABHA_MCP_TOKEN}).")
    tp.set_defaults(handler=cmd_token)
