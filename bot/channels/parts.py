"""What a channel uses of the board: :class:`ChannelParts`, built once from the board's parts where the channels
are built (:func:`bot.daemon.channel_parts`) and handed to each channel's constructor. A channel never sees the
whole board: it reads these typed parts, and its intake gets :attr:`ChannelParts.intake`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # types only: listing the channels imports none of these
    from board.answer import Money
    from board.clock import Clock
    from board.commands.registry import CommandRegistry
    from board.conversation.sessions import Sessions
    from board.decisions.ratify import DecisionBook
    from board.media.service import MediaService
    from board.memory.facts import FactStore
    from board.people import People
    from board.room.convene import BoardRoom
    from board.routing.router import Router
    from board.spending.allowance import SpendGate
    from board.storage import Database
    from board.workspace.souls import SoulStore
    from bot.intake.answers import IntakeParts

__all__ = ["ChannelParts"]


@dataclass(frozen=True, kw_only=True)
class ChannelParts:
    """The board's parts the channels use (each channel reads the ones it needs)."""

    intake: IntakeParts  # the front door, the store, the clock, the schedule: what a channel's intake uses
    souls: SoulStore  # the roles and their labels
    commands: CommandRegistry  # where a channel describes its addressing and registers its own commands
    room: BoardRoom  # meeting events (subscribed to by the channels that show meetings)
    decisions: DecisionBook  # decision changes (Telegram's decision buttons)
    media: MediaService  # spoken replies' audio, the media limits
    sessions: Sessions  # WhatsApp: a person's sessions merged when two identities turn out to be one
    facts: FactStore  # ... and their remembered facts
    people: People  # ... and their links to other channels' accounts
    spend: SpendGate  # WhatsApp's public spending cap
    money: Money  # WhatsApp's public terms
    router: Callable[[], Router]  # a router over the roles available right now
    max_message_chars: int  # board.max_message_chars: the longest message the board takes

    @property
    def db(self) -> Database:
        """The board's store (a channel's own tables live in it)."""
        return self.intake.db

    @property
    def clock(self) -> Clock:
        """The one clock everything time-bound reads."""
        return self.intake.clock
