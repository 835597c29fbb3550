"""What every ``sabha`` subcommand shares, channels' included: printing and the user-facing error.

It imports nothing of Sabha's but the one masking function (channel packages import it; opening the board is
:func:`bot.cli.where.with_board`, handed to a channel's command)."""

from __future__ import annotations

import sys

from board.masking import mask

__all__ = ["UserError", "emit", "note"]


class UserError(Exception):
    """Something the user can fix; printed as one line, exit code 2."""


def emit(text: str = "") -> None:
    """Print one line to stdout now (no buffering: output may be piped into another program),
    every known secret masked (:func:`board.masking.mask`: an old transcript may hold one)."""
    sys.stdout.write(mask(text) + "\n")
    sys.stdout.flush()


def note(text: str) -> None:
    """Tell the person something on stderr (``sabha: ...``), apart from the command's output."""
    sys.stderr.write(mask(f"sabha: {text}\n"))
    sys.stderr.flush()
