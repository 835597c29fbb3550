"""What the intake uses of the board: :class:`Answers`, the front door a stored message is handed to, and
:class:`IntakeParts`, that door with the store, the clock and the schedule, built once from the board's parts
by whoever builds the channels (:func:`bot.daemon.channel_parts`). The intake never sees the whole board.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from board.clock import Clock
    from board.envelope import Envelope, Reply
    from board.llm.stream import StreamSink
    from board.media.understand import MediaFetcher
    from board.schedule import Schedule
    from board.storage import Database

__all__ = ["Answers", "IntakeParts"]


class Answers(Protocol):
    """The front door (:meth:`board.app.Board.handle`): one message in, its reply out; never raises for bad input."""

    async def handle(self, envelope: Envelope, *, fetcher: MediaFetcher | None = None,
                     sink: StreamSink | None = None, spoken: bool = False, received_clean: bool = False,
                     read_files: bool = False) -> Reply:
        """The reply to ``envelope`` (its files fetched with ``fetcher`` and read, streamed into ``sink``)."""
        ...

    async def after(self, envelope: Envelope, reply: Reply) -> None:
        """The work ``reply``, delivered, leaves for outside its turn (:meth:`board.app.Board.after`); the caller
        holds the conversation, not a place under the turn cap. Never raises."""
        ...


@dataclass(frozen=True)
class IntakeParts:
    """The board's parts an intake uses: the door it hands messages to, the store its inbox lives in, the clock of
    its leases, and the schedule whose waiting work a new message releases (a WhatsApp window opened again)."""

    answers: Answers
    db: Database
    clock: Clock
    schedule: Schedule
