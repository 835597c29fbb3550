"""What every ``sabha`` subcommand shares, channels' included: printing and the user-facing error.

It imports nothing of Sabha's (channel packages import it; opening the board is
:func:`bot.cli.where.with_board`, handed to a channel's command)."""

from __future__ import annotations

import sys

__all__ = ["UserError", "emit", "note"]


class UserError(Exception):
    """Something the user can fix; printed as one line, exit code 2."""


def emit(text: str = "") -> None:
    """Print one line to stdout now (no buffering: output may be piped into another program)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def note(text: str) -> None:
    """Tell the person something on stderr (``sabha: ...``), apart from the command's output."""
    sys.stderr.write(f"sabha: {text}\n")
    sys.stderr.flush()
