"""What the front door needs of the board: the frozen :class:`Door` (a typed subset of the board's parts).

The wiring closet (:mod:`board.app`) fills it when it builds the board; the front door never sees the
whole board, so what answering a message may touch is written here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from board.agent.locks import SessionLocks
from board.agent.runner import AgentRunner
from board.answer.money import Money
from board.answer.sitting import MeetingSeats
from board.commands.memory import MemoryTalk
from board.commands.registry import CommandRegistry
from board.envelope import Envelope
from board.media.service import MediaService
from board.people import People
from board.routing.router import Router
from board.spending.allowance import SpendGate
from board.spending.budget import Budget
from board.workspace.souls import SoulStore

__all__ = ["Door"]


@dataclass(frozen=True, kw_only=True)
class Door:
    """The parts a message's answer uses, and the two settings admission reads."""

    souls: SoulStore
    router: Callable[[], Router]  # a router over the roles available right now
    locks: SessionLocks
    budget: Budget
    spend: SpendGate
    money: Money
    people: People
    media: MediaService
    runner: AgentRunner
    commands: CommandRegistry
    memory_talk: MemoryTalk | None  # "what do you remember about me", answered from the store (memory on)
    max_message_chars: int
    meetings_enabled: bool
    #: told of every owner's message after admission: where the owner is (consent asks and tells them there)
    owner_seen: Callable[[Envelope], Awaitable[None]] | None = None
    #: the running meetings' tables: a message written where one runs may be a contribution (board.answer.sitting)
    seats: MeetingSeats | None = None
