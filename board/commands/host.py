"""What a slash command may ask of the board that hosts it: the narrow :class:`CommandHost`.

:class:`board.commands.registry.CommandRegistry` implements this protocol; command modules depend
on it, never on :class:`board.app.Board`, so the wiring closet (:mod:`board.app.build`) registers
them without an import cycle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol

from board.envelope import Envelope
from board.routing.router import Route

__all__ = ["CommandHandler", "CommandHost"]

#: (the envelope, its route) -> the text of the reply
CommandHandler = Callable[[Envelope, Route], Awaitable[str]]


class CommandHost(Protocol):
    """The board as its commands see it."""

    def register_command(self, name: str, handler: CommandHandler, help_line: str, *,
                         owner_only: bool = False) -> None:
        """Add a slash command (``owner_only``: anyone else is told it is the owner's)."""
        ...

    def command_target(self, envelope: Envelope, route: Route) -> tuple[str, str] | str:
        """For ``/cmd [role]``: (role, session key), or an error text naming the valid roles."""
        ...

    def lock_for(self, key: str) -> asyncio.Lock:
        """The lock that keeps one session's turns in order."""
        ...
