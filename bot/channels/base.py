"""What every channel is to the daemon, and what it may do besides.

A channel is a :class:`bot.intake.courier.Courier` (the intake's port: how an update becomes an
:class:`board.envelope.Envelope` admitted or not, how a :class:`board.envelope.Reply` is delivered,
which failures prove a send did not happen) that the daemon starts and stops (:class:`Channel`).
Everything between receipt and delivery (dedupe, the durable claim, lanes, answering, resume) is the
intake's. What a channel may do for the daemon besides, it declares by inheriting the capabilities
below (abstract methods: a declared one that is missing or renamed is a mypy error and the channel
cannot be built); :meth:`ChannelCapabilities.of` resolves them, read as typed fields:

- :class:`Reconfigures`: ``reconfigure(section)`` applies what may change while running (SIGHUP:
  :mod:`bot.ops.reload`);
- :class:`FollowsLeader`: ``follow(leadership)``: replicas, receive only while this one leads
  (:mod:`bot.replicas.leader`; Telegram polling);
- :class:`ServesWebhook`: ``webhook_path``: its ``POST`` route is a webhook, held while the daemon
  starts (:mod:`bot.channels.held`); ``front_desk(headers, body)``: what the front desk does with one
  (:mod:`bot.channels.held.desk`).

The record the registry lists is in :mod:`bot.channels.plugin`.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from bot.intake.courier import Courier

if TYPE_CHECKING:
    from collections.abc import Mapping

    from aiohttp import web

    from bot.channels.webhook import DeskVerdict
    from bot.replicas.leader import Leadership

__all__ = [
    "Channel",
    "ChannelCapabilities",
    "ChannelError",
    "FollowsLeader",
    "Reconfigures",
    "ServesWebhook",
    "repeating",
]

#: A channel's config section (``TelegramSection``, ``WhatsAppSection``).
SectionT = TypeVar("SectionT", contravariant=True)


class ChannelError(Exception):
    """A channel cannot start; ``str()`` says what to fix."""


class Channel(Courier, Protocol):
    """What the daemon needs from a channel: a courier (the intake's and the schedule's replies go out
    through its ``deliver``) that the daemon starts and stops."""

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


@runtime_checkable
class Reconfigures(Protocol[SectionT]):
    """What may change while running is applied from a re-read config section."""

    @abstractmethod
    def reconfigure(self, section: SectionT) -> None:
        """Apply the live keys of ``section`` (the channel's section of the re-read config)."""


@runtime_checkable
class FollowsLeader(Protocol):
    """With replicas, the channel receives only while this replica leads."""

    @abstractmethod
    def follow(self, leadership: Leadership) -> None:
        """Receive only while ``leadership`` says this replica leads (given before :meth:`Channel.start`)."""


@runtime_checkable
class ServesWebhook(Protocol):
    """The channel's ``POST`` route at :attr:`webhook_path` is a service's webhook (when it serves one)."""

    @property
    @abstractmethod
    def webhook_path(self) -> str:
        """The path of the webhook route (the channel's ``settings.webhook_path``)."""

    @abstractmethod
    def front_desk(self, headers: Mapping[str, str], body: bytes) -> DeskVerdict:
        """What the front desk (:mod:`bot.channels.held.desk`) does with a ``POST`` to :attr:`webhook_path`:
        store it (signed or carrying the secret, a kind the channel takes as a message or a notification), relay it
        to the main port (its answer is written by the channel) or refuse it. Runs on the front desk's thread: a
        pure check, nothing the main loop changes."""

    @abstractmethod
    def webhook_senders(self, body: bytes) -> frozenset[str] | None:
        """Who a stored request to :attr:`webhook_path` is from (keys of their conversations, any spelling unique to
        the channel); None when it cannot say. Requests of different senders are handed over together
        (:func:`bot.channels.held.hold.waves`), a sender's one after the other, in the order they came."""


@dataclass(frozen=True)
class ChannelCapabilities:
    """What one channel can do for the daemon besides :class:`Channel`, resolved once (:meth:`of`): the
    channel typed as each capability it declared, or None."""

    reconfigure: Reconfigures[Any] | None = None
    leader: FollowsLeader | None = None
    webhook: ServesWebhook | None = None

    @classmethod
    def of(cls, channel: Channel) -> ChannelCapabilities:
        """The capabilities ``channel`` has."""
        return cls(reconfigure=channel if isinstance(channel, Reconfigures) else None,
                   leader=channel if isinstance(channel, FollowsLeader) else None,
                   webhook=channel if isinstance(channel, ServesWebhook) else None)


#: How long the end of a ``repeating`` block waits for an action in flight before leaving it to finish alone.
REPEAT_SETTLE_S = 1.0
_finishing: set[asyncio.Task[None]] = set()


@asynccontextmanager
async def repeating(action: Callable[[], Awaitable[None]], every: float, name: str, *,
                    after: float = 0.0) -> AsyncIterator[None]:
    """Run ``action`` once the block has run ``after`` seconds (at once by default) and then every ``every``
    seconds while it runs (a typing indicator that the service shows for a few seconds only); ``action`` must not
    raise. A block that ends sooner runs it never.

    At the end an action in flight is never cancelled: cancelling an HTTP request while it
    is being sent leaves its pooled connection unusable (httpx), and enough fast answers
    drained the pool ("Pool timeout" on every send). The loop is told to stop; the block
    waits up to :data:`REPEAT_SETTLE_S` for the action in flight, then lets it finish alone.
    """
    stop = asyncio.Event()

    async def loop() -> None:
        if after > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), after)
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
