"""How one delivery went, as a channel reports it to the intake: :class:`SendProgress` (how far it got, told
as each request leaves), :class:`SendFailed` (a send that did not happen, or may not have) and
:class:`DeliveryOutcome`. These are the intake's values: a channel imports them from here (with
:mod:`bot.intake.courier`, the rest of the intake's port), never the reverse.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["DeliveryOutcome", "SendFailed", "SendProgress"]


class DeliveryOutcome(StrEnum):
    """How a delivery ended, as far as Sabha can know."""

    SENT = "sent"
    #: the request left and its answer was lost: the intake waits for the service's confirmation where it has one,
    #: else sends it once more, marked as possibly repeated (never a third copy)
    MAY_HAVE_ARRIVED = "may_have_arrived"
    NOT_SENT = "not_sent"  # the service proved it did not post it


class SendFailed(Exception):
    """A reply could not be delivered; ``outcome`` says whether it may still have arrived."""

    def __init__(self, message: str, outcome: DeliveryOutcome = DeliveryOutcome.NOT_SENT) -> None:
        super().__init__(message)
        self.outcome = outcome


@dataclass
class SendProgress:
    """How far one delivery got, so a cancelled one is known to be untouched (and kept for later).

    A channel calls :meth:`leaving` right before each request that may post something, as its
    bytes start to leave (not while it waits for a connection: Telegram calls it from httpcore's
    trace, :mod:`bot.channels.telegram.departure`); the first call runs ``before_first_request``
    (the intake records "sending" there, as late as possible: a crash before it leaves the reply
    safely unsent, to be sent at the next start; a crash after it "may have arrived", and the
    next start sends it once more, marked as possibly repeated).
    """

    posted: int = 0  # messages the service confirmed
    in_flight: bool = False  # a request left and its outcome is not known (yet)
    before_first_request: Callable[[], Awaitable[None]] | None = None
    #: Telegram (the service) answered that a request posted nothing while nothing of this delivery
    #: is posted yet (a 429, a refusal): the "sending" mark is taken back, and set again (by
    #: ``before_first_request``) right before the retry leaves; a crash meanwhile leaves it unsent
    after_refusal: Callable[[], Awaitable[None]] | None = None
    note: str | None = None  # how it went, when there was a choice (e.g. edited over a streamed draft)
    #: What the service may echo back to confirm this delivery (WhatsApp's ``biz_opaque_callback_data``, in the
    #: status webhook of each message sent): :meth:`bot.intake.intake.Intake.confirmed`
    key: str | None = None
    #: Which message of a reply sent in several the next request is (``"i/n"``; empty: a reply in one message):
    #: each part carries its own key (:meth:`part_key`), so the service's status of one part is not taken for
    #: the whole reply's
    part: str = ""
    #: A copy sent once more (:meth:`bot.intake.inbox.Inbox.send_again`): as new messages, never an edit of the
    #: answer's earlier draft or notice (that edit may be what arrived: the copy would replace it, unmarked parts
    #: of the original left below)
    again: bool = False
    #: Messages of the reply an earlier try of this delivery certainly posted: this try starts after them, its
    #: first message headed by :attr:`heading` (the channel's ``possibly_repeated``): what arrived is not repeated
    skip: int = 0
    heading: str = ""
    #: Messages of the reply wholly posted so far, in order (:meth:`part_done`): what a copy sent once more skips
    parts_done: int = 0
    #: Told the number of messages of the reply wholly posted, each time one is and more follow (the intake stores
    #: it: after a stop, a copy sent once more starts after them); not while this is a copy sent once more
    after_part: Callable[[int], Awaitable[None]] | None = None
    _announced: bool = False

    def part_key(self) -> str | None:
        """The key of the message about to be sent: :attr:`key`, with ``:i/n`` when the reply is in parts."""
        if self.key is None or not self.part:
            return self.key
        return f"{self.key}:{self.part}"

    async def part_done(self, part: int, parts: int) -> None:
        """Message ``part`` of ``parts`` (1-based, in the order sent) is wholly posted (the service answered for
        it): when more follow, ``after_part`` hears it. A channel that reports parts must honour :attr:`skip` and
        :attr:`heading` (a marked copy then holds the reply as first sent: only the heading marks it)."""
        self.parts_done = max(self.parts_done, part)
        if part < parts and self.after_part is not None:
            await self.after_part(self.parts_done)

    async def leaving(self) -> None:
        """A request that may post something is about to leave."""
        if not self._announced:
            self._announced = True
            if self.before_first_request is not None:
                await self.before_first_request()
        self.in_flight = True

    async def nothing_posted(self) -> None:
        """The service answered that the last request posted nothing: when nothing of this delivery
        was posted, it is untouched again (see ``after_refusal``)."""
        self.in_flight = False
        if self.posted == 0 and self._announced:
            self._announced = False
            if self.after_refusal is not None:
                await self.after_refusal()

    @property
    def untouched(self) -> bool:
        """Nothing of this delivery can have reached the service."""
        return self.posted == 0 and not self.in_flight
