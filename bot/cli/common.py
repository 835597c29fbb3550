"""What every ``sabha`` subcommand shares: printing, the user-facing error, an open board."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from board.service import Board
    from bot.config import LoadedConfig

__all__ = ["UserError", "emit", "with_board"]


class UserError(Exception):
    """Something the user can fix; printed as one line, exit code 2."""


def emit(text: str = "") -> None:
    """Print one line to stdout now (no buffering: output may be piped into another program)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


async def with_board(loaded: LoadedConfig, body: Callable[[Board], Awaitable[int]]) -> int:
    """Open the board, run ``body`` on it (printing meetings it starts), wait for running
    meetings, close it."""
    from bot.app import open_board
    from bot.cli import meetings as meeting_cli

    board = await open_board(loaded)
    board.room.subscribe(meeting_cli.console_meeting_printer())
    try:
        code = await body(board)
        if board.room.running():
            sys.stderr.write("sabha: waiting for the board meeting to finish (Ctrl-C cancels it)\n")
            await board.room.drain()
        return code
    finally:
        await board.close()
