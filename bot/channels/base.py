"""What every channel is to the daemon and to the shared intake.

A channel package supplies three things to :mod:`bot.intake`: how its native update becomes
an :class:`board.envelope.Envelope` (and whether the sender may talk to the board), how a
:class:`board.envelope.Reply` is delivered, and which failures prove a send did not
happen (:class:`SendFailed` with a :class:`DeliveryOutcome`). Everything between (dedupe,
the durable claim, lanes, answering, resume) is the intake's. The record the registry
lists is in :mod:`bot.channels.plugin`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from board.envelope import Envelope, Reply

if TYPE_CHECKING:
    from aiohttp import web

__all__ = [
    "Admission",
    "Channel",
    "ChannelError",
    "ChannelTexts",
    "Courier",
    "DeliveryOutcome",
    "SendFailed",
    "SendProgress",
    "repeating",
]


class ChannelError(Exception):
    """A channel cannot start; ``str()`` says what to fix."""


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
    _announced: bool = False

    def part_key(self) -> str | None:
        """The key of the message about to be sent: :attr:`key`, with ``:i/n`` when the reply is in parts."""
        if self.key is None or not self.part:
            return self.key
        return f"{self.key}:{self.part}"

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


@dataclass(frozen=True)
class Admission:
    """The access gate's verdict on one sender in one place: ``notice`` is said to a
    denied sender (at most once per ``notice_key``, by default the sender; None: say
    nothing). A key such as ``rate:<sender>:<window>`` says a refusal once per window."""

    allowed: bool
    notice: str | None = None
    notice_key: str | None = None


@dataclass(frozen=True)
class ChannelTexts:
    """The fixed lines the intake says on a channel's behalf."""

    text_only: str = "I can only read text messages for now; please send your question as text."
    answer_failed: str = "Something went wrong while answering this (it is logged). Please try again in a moment."
    cannot_save: str = "I can't save anything right now, please try again shortly."
    working: str = "The board is working on it; the answer follows shortly."
    edited: str = ("I don't read edits to messages I've already received. If you changed your question, "
                   "please send it again as a new message.")
    #: Heads an answer sent once more because its request had left when Sabha stopped (or the connection dropped)
    #: and the service offers no way to know whether it arrived (:meth:`bot.intake.inbox.Inbox.send_again`).
    possibly_repeated: str = ("↻ Sent again: this answer was cut off while being sent (a restart or a dropped "
                              "connection), so Sabha cannot tell whether it reached you. If you already have it, "
                              "ignore this copy.")


class Courier(Protocol):
    """What the intake needs from a channel. A channel whose message ids are unique across
    all its chats may also say so with a class attribute ``message_ids_unique = True``: a
    redelivery is then recognised by its id alone (:class:`bot.intake.inbox.Inbox`). It may
    also have ``current(envelope) -> Envelope``: the stored envelope as the board should answer
    it now (WhatsApp: a sender merged into a person since it was stored). A channel that can
    turn its "working on it" notice into the answer has ``post_notice(reply) -> handle | None``
    (the notice sent, with what identifies it) and ``deliver_over(handle, reply, progress)``
    (the answer edited into that notice; the rest sent as usual; never the answer twice). A
    channel that shows an answer while it is written has ``stream(envelope)``: an async context
    manager giving a :class:`board.llm.stream.StreamSink` (or None) for the turn's duration; its
    ``deliver`` then puts the answer over what the stream showed, and ``may_redo(reply) -> bool``
    says whether a reply that was being sent when Sabha stopped may be delivered again (only an
    edit of a message already there: nothing can be posted twice)."""

    name: str
    texts: ChannelTexts

    def admit(self, envelope: Envelope) -> Admission:
        """Whether this sender may talk to the board here (deny by default)."""
        ...

    def conversation(self, envelope: Envelope) -> str:
        """The lane of a message: messages of one conversation are answered in order."""
        ...

    def typing(self, envelope: Envelope) -> AbstractAsyncContextManager[None]:
        """Show that the board is working on ``envelope`` while the context is open."""
        ...

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        """Deliver ``reply`` to where its question came from; raise :class:`SendFailed`."""
        ...


class Channel(Protocol):
    """What the daemon needs from a channel."""

    name: str

    def routes(self) -> list[web.RouteDef]:
        """aiohttp routes the channel serves (webhooks); added before the server starts."""
        ...

    async def start(self) -> None:
        """Connect and start receiving; raise :class:`ChannelError` with the fix when it cannot."""
        ...

    async def stop_intake(self) -> None:
        """Stop receiving new messages (work already received still finishes, or stays pending)."""
        ...

    async def stop(self) -> None:
        """Finish received work (bounded), then disconnect."""
        ...

    def status_lines(self) -> list[str]:
        """Human-readable state for ``/status``."""
        ...

    def describe(self) -> dict[str, Any]:
        """Machine-readable state for the health endpoint."""
        ...


#: How long the end of a ``repeating`` block waits for an action in flight before leaving it to finish alone.
REPEAT_SETTLE_S = 1.0
_finishing: set[asyncio.Task[None]] = set()


@asynccontextmanager
async def repeating(action: Callable[[], Awaitable[None]], every: float, name: str) -> AsyncIterator[None]:
    """Run ``action`` now and then every ``every`` seconds while the block runs (a typing
    indicator that the service shows for a few seconds only); ``action`` must not raise.

    At the end an action in flight is never cancelled: cancelling an HTTP request while it
    is being sent leaves its pooled connection unusable (httpx), and enough fast answers
    drained the pool ("Pool timeout" on every send). The loop is told to stop; the block
    waits up to :data:`REPEAT_SETTLE_S` for the action in flight, then lets it finish alone.
    """
    stop = asyncio.Event()

    async def loop() -> None:
        while not stop.is_set():
            await action()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)

    task = asyncio.create_task(loop(), name=name)
    try:
        yield
    finally:
        stop.set()
        done, _ = await asyncio.wait({task}, timeout=REPEAT_SETTLE_S)
        if not done:
            _finishing.add(task)
            task.add_done_callback(_finishing.discard)
