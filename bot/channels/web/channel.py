"""The web chat channel: the owner's page in, the conversation's outbox out, the shared intake between.

A conversation is the owner's chat with one advisor: the envelope's ``chat_id`` is the advisor's
role and its ``role_hint`` too, so a plain message goes to that advisor, and ``@role`` addressing,
``/ask``, ``/meeting`` and every other command work as on the other channels. The page is the
owner's (behind the web UI's login), so every envelope is ``is_owner=True`` on channel ``web``,
and the owner's sessions are used (``board:<role>``, ``main`` for the chair): the same
conversation as the owner's direct chats elsewhere.

Receipt (:meth:`WebChatChannel.receive`): the message is stored by the intake (the durable claim;
the inbox's key ``(web, advisor, client id)`` makes a resubmit a no-op) and then recorded in the
conversation's outbox as the owner's line, before the POST answers 202; answers start after that
(:meth:`bot.intake.intake.IntakeHub.receiving`). Delivery (:meth:`WebChatChannel.deliver`) appends
the reply to the outbox (:mod:`.store`); appending is idempotent, so a reply whose delivery was cut
off by a crash is delivered again at the next start (``may_redo``), never twice. The page reads the
outbox over SSE and sees answers written token by token (:mod:`.answer_stream`, :mod:`.chat_feed`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from board.commands.about import CHAIR_ADDRESSING
from board.conversation.sessions import session_key
from board.envelope import Envelope, Reply, clean_text
from board.llm.stream import StreamSink
from board.roles import GENERAL
from board.room.meeting import MeetingEvent
from bot.channels.base import ChannelError
from bot.channels.parts import ChannelParts
from bot.channels.receipt import ReceivedVia, received
from bot.channels.web.answer_stream import WORKING, streaming
from bot.channels.web.chat_feed import ChatFeed
from bot.channels.web.config import WebChatSection
from bot.channels.web.guard import Guard, LockedGuard
from bot.channels.web.history import HistoryMark, SharedLine, history_mark, shared_history
from bot.channels.web.host import ChannelClosed
from bot.channels.web.meeting_card import MeetingNotes
from bot.channels.web.routes import chat_routes
from bot.channels.web.store import EntryKind, NewEntry, Outbox, OutboxEntry, question_key, reply_key
from bot.intake.courier import Admission, ChannelTexts, MayRedo, PostsNotice, ShowsInterruption, Streams
from bot.intake.delivery import SendProgress
from bot.intake.inbox import Arrival
from bot.intake.intake import Intake, IntakeHub, StorageUnavailable
from bot.intake.storage import is_storage_error

if TYPE_CHECKING:
    from aiohttp import web

    from bot.config import LoadedConfig

__all__ = ["INTERRUPTED", "OWNER", "WebChatChannel", "build"]

log = logging.getLogger("sabha.web.chat")

OWNER = "owner"  # the sender of every web message: the page is the owner's
INTERRUPTED = "⚠️ This answer was interrupted: please ask again."
TEXTS = ChannelTexts()
_KINDS = {"answer": EntryKind.ANSWER, "command": EntryKind.COMMAND, "error": EntryKind.ERROR,
          "meeting": EntryKind.MEETING, "progress": EntryKind.PROGRESS}


class _Streams:
    """How many SSE responses are open now (for the status)."""

    def __init__(self) -> None:
        self.open_now = 0

    @contextlib.contextmanager
    def open(self) -> Iterator[None]:
        self.open_now += 1
        try:
            yield
        finally:
            self.open_now -= 1


class WebChatChannel(Streams, PostsNotice[str], ShowsInterruption, MayRedo):
    """See the module docstring. What it can do besides a courier's basics, it declares (:mod:`bot.intake.courier`)."""

    name = "web"
    texts = TEXTS

    def __init__(self, parts: ChannelParts, settings: WebChatSection, *, hub: IntakeHub | None = None,
                 guard: Guard | None = None) -> None:
        if not settings.enabled:
            raise ChannelError("the web chat is off (web.chat.enabled: false)")
        self.uses = parts  # what it uses of the board (bot.channels.parts)
        parts.commands.describe_channel(self.name, CHAIR_ADDRESSING)
        self.settings = settings
        self.guard: Guard = guard or LockedGuard("no login is set up for the web pages (see README, 'Web')")
        self.owns_hub = hub is None
        self.hub = hub or IntakeHub()
        self.feed = ChatFeed()
        self.outbox = Outbox(parts.db, on_append=self.feed.appended)
        self.streams = _Streams()
        self.meetings = MeetingNotes(self.label)
        self.intake: Intake = self.hub.intake(parts.intake, self)
        self.max_chars = parts.max_message_chars
        self.state = "created"
        self.accepting = False
        self.started_at: float | None = None
        self.received = 0
        self.duplicates = 0

    def advisors(self) -> list[str]:
        """The roles a chat can be with (the board's souls, the chair first)."""
        roles = self.uses.souls.roles()
        return [GENERAL, *(r for r in roles if r != GENERAL)] if GENERAL in roles else roles

    def place_of(self, chat_id: str) -> str:
        """The conversation a reply for ``chat_id`` goes to: the advisor's when it is one, else the chat
        with the chair (a place no page shows, e.g. ``owner`` of meetings scheduled before the New
        meeting form used the chair's chat, would swallow reminders)."""
        if chat_id in self.advisors():
            return chat_id
        if chat_id != GENERAL:
            log.info("web chat: %r is no advisor's chat; its message goes to the chat with the chair", chat_id[:40])
        return GENERAL

    def label(self, role: str) -> str:
        """``<emoji> <Name>`` of ``role`` (the role itself when its soul cannot be read)."""
        try:
            return self.uses.souls.profile(role).label
        except (KeyError, ValueError, OSError):
            return role

    async def history(self, advisor: str) -> list[SharedLine]:
        """What the owner's conversation with ``advisor`` holds from elsewhere (the terminal, Telegram): shown
        when the page opens (:mod:`.history`). The conversation is the owner's session with the advisor,
        the one a message from this page goes to."""
        return await shared_history(self.uses.sessions, self._key(advisor), self.label)

    async def history_mark(self, advisor: str) -> HistoryMark | None:
        """Which session the owner's conversation with ``advisor`` is and when it was last written (None: read
        its history to know): a following page reads the history again only when this changes."""
        return await history_mark(self.uses.sessions, self._key(advisor), datetime.now(UTC))  # a file's time

    def _key(self, advisor: str) -> str:
        return session_key(advisor, is_owner=True, channel=self.name, chat_id=advisor)

    # -- receipt ---------------------------------------------------------------------------

    async def receive(self, advisor: str, text: str, client_id: str) -> tuple[OutboxEntry, bool]:
        """Store the owner's message ``text`` to ``advisor`` (the durable claim), then record it in the
        conversation's outbox; its row, and whether it is new (False: that client id was sent before,
        nothing more happens). Raises :class:`bot.intake.intake.StorageUnavailable` when it cannot be
        stored, :class:`.routes.ChannelClosed` when the channel is not taking messages."""
        text = clean_text(text)  # a lone surrogate ("\ud800" in the JSON) cannot be stored: U+FFFD instead
        if not self.accepting:
            raise ChannelClosed("The board is starting or stopping; send the message again in a moment.")
        key = question_key(client_id)
        seen = await self.outbox.get(advisor, key)
        if seen is not None:
            self.duplicates += 1
            log.info("web chat: message %s to %s was sent before (a resubmit); not answered again", client_id,
                     advisor)
            return seen, False
        envelope = Envelope(channel=self.name, text=text, sender=OWNER, chat_id=advisor, message_id=client_id,
                            sender_name="you", is_owner=True, role_hint=advisor)
        # answers start after the rows below are written
        with self.hub.receiving(), received(self.name, ReceivedVia.PAGE):
            await self.intake.receive([Arrival(envelope, self.conversation(envelope))])
            try:
                entry, fresh = await self.outbox.append(advisor, NewEntry(key, EntryKind.QUESTION, text,
                                                                          role=None, label="You"))
            except Exception as exc:
                if not is_storage_error(exc):
                    raise
                self.hub.storage.failed(exc, "recording a web chat message in its conversation")
                raise StorageUnavailable(str(exc)) from exc  # a resend finds it claimed: answered once
        if fresh:
            self.received += 1
        return entry, fresh

    # -- what the intake needs (bot.intake.courier.Courier) --------------------------------

    def admit(self, envelope: Envelope) -> Admission:
        """Only the owner writes here (the page is behind the owner's login); anything else is denied."""
        return Admission(envelope.is_owner and envelope.sender == OWNER)

    def conversation(self, envelope: Envelope) -> str:
        """One chat with one advisor is one conversation."""
        return f"web:{envelope.chat_id}"

    @contextlib.asynccontextmanager
    async def typing(self, envelope: Envelope) -> AsyncIterator[None]:
        """Nothing to do: the page shows the draft (:meth:`stream`) while the turn runs."""
        yield

    def stream(self, envelope: Envelope) -> contextlib.AbstractAsyncContextManager[StreamSink | None]:
        """The answer to ``envelope`` shown while it is written (:mod:`.answer_stream`)."""
        return streaming(self.feed, envelope, enabled=self.settings.stream)

    async def post_notice(self, reply: Reply) -> str | None:
        """A turn that is slow: its draft says the board is working on it (nothing stored: the notice
        is not the answer); the answer then replaces the draft."""
        if reply.reply_to is None:
            return None
        draft = self.feed.begin(reply.chat_id, reply.reply_to)
        if not draft.text:
            draft.status = WORKING
            self.feed.redraw(reply.chat_id, draft)
        return reply.reply_to

    async def deliver_over(self, notice: str, reply: Reply, progress: SendProgress) -> None:
        """The answer, in place of the "working on it" draft (:meth:`post_notice`)."""
        await self.deliver(reply, progress)

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        """Append ``reply`` to its conversation's outbox (idempotent: a reply there already is not added
        again). A storage error leaves nothing appended: it is raised for the intake to retry later."""
        await progress.leaving()
        entry = NewEntry(reply_key(reply.reply_to, reply.kind, reply.text), _KINDS.get(reply.kind, EntryKind.ANSWER),
                         reply.text, role=reply.role, label=reply.label or None, reply_to=reply.reply_to,
                         buttons=tuple((b.label, b.command) for b in reply.buttons))
        try:
            await self.outbox.append(self.place_of(reply.chat_id), entry)
        except BaseException:
            progress.in_flight = False  # the insert was rolled back: nothing of it is there
            raise
        progress.in_flight = False
        progress.posted += 1

    async def may_redo(self, reply: Reply) -> bool:
        """Always: delivering a reply again appends nothing when it is in the outbox already."""
        return True

    async def interrupted(self, chat_id: str, message_id: str) -> None:
        """The answer to ``message_id`` will not come: its draft goes, and the conversation says so."""
        self.feed.end(chat_id, message_id)
        try:
            await self.outbox.append(self.place_of(chat_id), NewEntry(f"x:{message_id}", EntryKind.NOTICE, INTERRUPTED,
                                                       label="Sabha", reply_to=message_id))
        except Exception as exc:  # noqa: BLE001 - a courtesy; the outcome is recorded either way
            log.warning("web chat: could not say that the answer to %s was interrupted: %s", message_id, exc)

    # -- meetings called from the chat ------------------------------------------------------

    async def _meeting(self, event: MeetingEvent) -> None:
        """A meeting called here: a link to its live page, then its decision card (:mod:`.meeting_card`)."""
        origin = event.origin
        if not self.accepting or origin is None or origin.channel != self.name:
            return
        line = self.meetings.line(event)
        if line is None:
            return
        entry = NewEntry(line.key, EntryKind.MEETING, line.body, label="🏛️ Board", reply_to=None)
        await self.outbox.append(self.place_of(origin.chat_id), entry)
        self.meetings.posted(line)

    # -- lifecycle ---------------------------------------------------------------------------

    def routes(self) -> list[web.RouteDef]:
        """The chat's page and endpoints under ``/ui/chat`` (:mod:`.routes`), behind the guard."""
        return chat_routes(self, self.guard)

    async def start(self) -> None:
        """Take up what is pending, then accept messages."""
        self.state = "starting"
        try:
            await self.intake.inbox.prune()
            await self.outbox.prune()
            self.uses.room.subscribe(self._meeting)
            self.accepting = True  # resumed answers may announce meetings
            await self.intake.resume()
        except BaseException:
            self.state = "failed"
            self.accepting = False
            raise
        self.started_at = time.monotonic()
        self.state = "running"
        log.info("web chat: running at %s (advisors: %s)", "/ui/chat", ", ".join(self.advisors()))

    async def stop_intake(self) -> None:
        """Stop taking messages (a page posting gets 503 and sends again later)."""
        self.accepting = False

    async def stop(self, grace: float | None = None) -> None:
        """Stop taking messages, let running answers finish (when this channel owns its hub), end the feeds."""
        if self.state not in ("running", "failed"):
            return
        self.state = "stopping"
        await self.stop_intake()
        await self.intake.wind_down(grace, owns_hub=self.owns_hub)
        self.feed.close()
        self.state = "stopped"
        log.info("web chat: stopped (received %d, resubmits %d)", self.received, self.duplicates)

    # -- status ------------------------------------------------------------------------------

    def status_lines(self) -> list[str]:
        """Lines for ``/status`` and ``sabha status``."""
        return [f"web: {self.state}, chat at /ui/chat; {self.streams.open_now} page(s) following, "
                f"received {self.received}, resubmits {self.duplicates}", self.intake.status_line()]

    def describe(self) -> dict[str, Any]:
        """Machine-readable status (the daemon's /healthz: counts only, nothing personal)."""
        return {"state": self.state, "pages": self.streams.open_now, "received": self.received,
                "resubmits": self.duplicates, "problem": None}


def build(parts: ChannelParts, loaded: LoadedConfig, hub: IntakeHub) -> WebChatChannel:
    """The plugin factory: the chat for ``loaded``'s web section, behind the web UI's login."""
    from bot.channels.web.config import chat_section
    from bot.channels.web.guard import daemon_guard

    return WebChatChannel(parts, chat_section(loaded), hub=hub, guard=daemon_guard())
