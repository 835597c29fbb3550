"""The intake's port: what a channel must do for the intake (:class:`Courier`), what it may do besides
(the capabilities), and the values they exchange (:class:`Admission`, :class:`ChannelTexts`; a delivery's
progress and outcome are in :mod:`bot.intake.delivery`).

Channels depend on this module, never the reverse: :mod:`bot.intake` imports nothing from
:mod:`bot.channels`. A channel *declares* each optional capability it has by inheriting it (a method
capability is a Protocol whose methods are abstract: a channel that declares one and misses or renames
a method cannot be built, and mypy says so; a flag is a marker class). :meth:`Capabilities.of` resolves
them once, when the intake is built; the intake reads them afterwards as typed fields, so nothing is
looked up by name at the moment of use and a missing feature is a type error, not a silent no-op.

The capabilities (:class:`Capability` names them):

- :class:`UniqueMessageIds`: message ids are unique across all the channel's chats: a redelivery is
  recognised by its id alone (:class:`bot.intake.inbox.Inbox`);
- :class:`ConfirmsDelivery`: the service confirms each delivered message (WhatsApp's status webhook): a
  reply that may have arrived waits for that confirmation before it is sent once more;
- :class:`ResolvesSender`: ``current(envelope)``, the stored envelope as the board should answer it now
  (WhatsApp: a sender merged into a person since it was stored);
- :class:`DecidesAtTurn`: ``at_turn(envelope, for_board)``, what the channel decides of a stored message as its
  turn begins, in its conversation's order, instead of while its webhook waits for the acknowledgement
  (WhatsApp: the sticky role the message is answered by, and the role it addresses for the next ones);
- :class:`PostsNotice`: the "working on it" notice becomes the answer: ``post_notice(reply)`` sends it
  and returns what identifies it, ``deliver_over(notice, reply, progress)`` edits the answer into it (the
  rest sent as usual; never the answer twice);
- :class:`Streams`: ``stream(envelope)``, an async context manager giving a
  :class:`board.llm.stream.StreamSink` (or None) for the turn's duration; ``deliver`` then puts the
  answer over what the stream showed;
- :class:`MayRedo`: ``may_redo(reply)``, whether a reply that was being sent when Sabha stopped may be
  delivered again (only an edit of a message already there: nothing can be posted twice);
- :class:`ShowsInterruption`: ``interrupted(chat_id, message_id)``, the channel says so where it showed
  a partial answer that will not be finished (a streamed draft);
- :class:`FetchesMedia`: ``fetch_media(attachment, sink)``, the channel's download of an attachment
  (:class:`board.media.understand.MediaFetcher`).
"""

from __future__ import annotations

from abc import abstractmethod
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from board.envelope import Envelope, Reply

if TYPE_CHECKING:
    from board.llm.stream import StreamSink
    from board.media.attachment import Attachment
    from board.media.blobs import BlobSink
    from bot.intake.delivery import SendProgress

__all__ = [
    "Admission",
    "Capabilities",
    "Capability",
    "ChannelTexts",
    "ConfirmsDelivery",
    "Courier",
    "DecidesAtTurn",
    "FetchesMedia",
    "MayRedo",
    "PostsNotice",
    "ResolvesSender",
    "ShowsInterruption",
    "Streams",
    "UniqueMessageIds",
]

#: What identifies a posted notice to its channel (Telegram: a message id; the web chat: an entry id).
NoticeT = TypeVar("NoticeT")


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
    """What the intake needs from every channel. What a channel may do besides, it declares by
    inheriting the capabilities of this module (see the module docstring)."""

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
        """Deliver ``reply`` to where its question came from; raise :class:`bot.intake.delivery.SendFailed`."""
        ...


class Capability(StrEnum):
    """The optional things a courier can do (one per field of :class:`Capabilities`)."""

    UNIQUE_IDS = "unique_ids"
    CONFIRMS = "confirms"
    SENDER = "sender"
    AT_TURN = "at_turn"
    NOTICE = "notice"
    STREAM = "stream"
    REDO = "redo"
    INTERRUPTION = "interruption"
    MEDIA = "media"


class UniqueMessageIds:
    """Declared by a courier whose message ids are unique across all its chats (a marker: no methods)."""

    __slots__ = ()


class ConfirmsDelivery:
    """Declared by a courier whose service confirms each delivered message (a marker: the confirmation
    arrives through :meth:`bot.intake.intake.Intake.confirmed`)."""

    __slots__ = ()


@runtime_checkable
class ResolvesSender(Protocol):
    """A stored message's envelope as the board should answer it now."""

    @abstractmethod
    def current(self, envelope: Envelope) -> Envelope:
        """``envelope`` with its sender as known now (identities merged since it was stored)."""


@runtime_checkable
class DecidesAtTurn(Protocol):
    """What a channel decides of a stored message in its conversation's order, as its turn begins (the lane runs a
    conversation's messages one after another, in the order they were stored): off the acknowledgement's path, and
    decided the same whenever the turn comes (at once, after a burst, after a restart)."""

    @abstractmethod
    async def at_turn(self, envelope: Envelope, for_board: bool) -> Envelope:
        """``envelope`` (after :meth:`ResolvesSender.current`) as its turn begins; ``for_board``: the board answers
        it (a text), not a fixed line. Runs before every try of the turn: what it writes is written idempotently."""


@runtime_checkable
class PostsNotice(Protocol[NoticeT]):
    """The "working on it" notice, edited into the answer when the answer comes."""

    @abstractmethod
    async def post_notice(self, reply: Reply) -> NoticeT | None:
        """Send the notice ``reply``; what identifies it (None: nothing to edit later)."""

    @abstractmethod
    async def deliver_over(self, notice: NoticeT, reply: Reply, progress: SendProgress) -> None:
        """Deliver ``reply`` over the notice ``notice`` (the rest as usual; never the answer twice)."""


@runtime_checkable
class Streams(Protocol):
    """The answer shown while it is written."""

    @abstractmethod
    def stream(self, envelope: Envelope) -> AbstractAsyncContextManager[StreamSink | None]:
        """The sink of the turn answering ``envelope`` while the context is open (None: not shown)."""


@runtime_checkable
class MayRedo(Protocol):
    """A reply that was being sent when Sabha stopped, delivered again where that cannot post it twice."""

    @abstractmethod
    async def may_redo(self, reply: Reply) -> bool:
        """Whether ``reply`` may be delivered again (an edit of a message already there)."""


@runtime_checkable
class ShowsInterruption(Protocol):
    """A partial answer the channel showed is marked as stopped when its answer will not come."""

    @abstractmethod
    async def interrupted(self, chat_id: str, message_id: str) -> None:
        """The answer to ``message_id`` in ``chat_id`` will not come; never raises."""


@runtime_checkable
class FetchesMedia(Protocol):
    """The channel's download of an attachment: a :class:`board.media.understand.MediaFetcher` (not imported
    here: this module stays light for the channels that import it)."""

    @abstractmethod
    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        """Stream ``attachment``'s bytes into ``sink`` (a fresh link each call)."""


@dataclass(frozen=True)
class Capabilities:
    """What one courier can do besides the :class:`Courier` basics, resolved once (:meth:`of`) and read as
    fields: a flag, or the courier itself typed as the capability (None: it cannot)."""

    unique_ids: bool = False
    confirms: bool = False
    sender: ResolvesSender | None = None
    at_turn: DecidesAtTurn | None = None
    notice: PostsNotice[Any] | None = None
    stream: Streams | None = None
    redo: MayRedo | None = None
    interruption: ShowsInterruption | None = None
    media: FetchesMedia | None = None

    @classmethod
    def of(cls, courier: Courier) -> Capabilities:
        """The capabilities ``courier`` has."""
        return cls(unique_ids=isinstance(courier, UniqueMessageIds),
                   confirms=isinstance(courier, ConfirmsDelivery),
                   sender=courier if isinstance(courier, ResolvesSender) else None,
                   at_turn=courier if isinstance(courier, DecidesAtTurn) else None,
                   notice=courier if isinstance(courier, PostsNotice) else None,
                   stream=courier if isinstance(courier, Streams) else None,
                   redo=courier if isinstance(courier, MayRedo) else None,
                   interruption=courier if isinstance(courier, ShowsInterruption) else None,
                   media=courier if isinstance(courier, FetchesMedia) else None)

    def kinds(self) -> frozenset[Capability]:
        """The capabilities present, by name."""
        present = {Capability.UNIQUE_IDS: self.unique_ids, Capability.CONFIRMS: self.confirms,
                   Capability.SENDER: self.sender is not None, Capability.AT_TURN: self.at_turn is not None,
                   Capability.NOTICE: self.notice is not None,
                   Capability.STREAM: self.stream is not None, Capability.REDO: self.redo is not None,
                   Capability.INTERRUPTION: self.interruption is not None, Capability.MEDIA: self.media is not None}
        return frozenset(kind for kind, has in present.items() if has)
