"""The Telegram channel: a forum topic per board member, DMs, commands and meetings.

:class:`TelegramChannel` talks to the Bot API through python-telegram-bot's
:class:`telegram.Bot` inside Sabha's event loop. Updates arrive by ``polling`` (Sabha's
own loop on ``getUpdates``) or ``webhook`` (posted to a route on Sabha's aiohttp server,
checked against Telegram's secret-token header). Either way an update is validated
(:mod:`.inbound`) and stored by the shared intake (:mod:`bot.intake`) *before* Telegram
learns it arrived: the polling loop moves its ``offset`` past an update only after
:meth:`bot.intake.intake.Intake.receive` returned, and the webhook answers 200 only then
(503 when the state db cannot be written, so Telegram retries; an update that cannot be read
as a message is skipped and logged on both paths, the webhook answering 200). An album's
items are one message (:mod:`.albums`; polling holds an album at a batch's end back, unconfirmed,
for its other items; the webhook keeps each posted item and stores the album once complete,
:mod:`.album_staging`). Everything after that
(order, answer, delivery, resume) is the intake's; this module supplies the Telegram
parts: who may talk (:class:`.inbound.AccessGate`), where a message's lane is, how to
show typing and how to deliver a reply (:class:`.outbound.Outbound`).

Media: a photo, voice note, document, sticker, location ... arrives as attachment
*references* (:mod:`.attachments`: ``file_id``, no download), stored with the message like
text; the intake fetches the bytes in the conversation's lane through :meth:`TelegramChannel.fetch_media`
(``getFile`` + a streamed download, :mod:`.files`). An answer spoken aloud (``Reply.voice``)
goes out with ``sendVoice`` after its text, in the same topic.

Meetings called from Telegram are shown by :class:`.meeting.MeetingView`; forum topics
are mapped and created by :class:`.topics.Topics`.

Buttons: a reply's buttons are an inline keyboard under its last message; a press
(``callback_query``) is stored by the intake as the presser sending the button's command, then
answered with ``answerCallbackQuery`` (:mod:`.buttons` says with what, and why not the outcome);
a decision's buttons say its verdict once it is ruled on (:class:`.buttons.ButtonPosts`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import web
from telegram import Bot, BotCommand
from telegram.error import Conflict, InvalidToken, TelegramError, TimedOut
from telegram.request import HTTPXRequest

from board.commands.about import TOPIC_ADDRESSING
from board.envelope import Envelope, Reply
from board.llm.stream import StreamSink
from board.media.attachment import Attachment, MediaKind
from board.media.blobs import BlobSink
from board.room.subscribers import ToldAtOnce
from board.routing.router import command_addressee
from bot.channels.base import ChannelError, FollowsLeader, Reconfigures, ServesWebhook
from bot.channels.meeting_posts import MeetingPosts
from bot.channels.parts import ChannelParts
from bot.channels.reach import Reach, Unreachable
from bot.channels.receipt import ReceivedVia, received, received_request
from bot.channels.telegram.album_items import AlbumItems
from bot.channels.telegram.album_staging import AlbumStage, WebhookAlbums
from bot.channels.telegram.albums import AlbumHold, album_key, chat_of, merge
from bot.channels.telegram.attachments import attachments_of, sticker_words
from bot.channels.telegram.buttons import ButtonPosts, toast
from bot.channels.telegram.config import TelegramSection
from bot.channels.telegram.departure import departure_hooks
from bot.channels.telegram.files import FileRequest, TelegramFiles, file_base_url
from bot.channels.telegram.format import render
from bot.channels.telegram.inbound import (
    UPDATES,
    AccessGate,
    Place,
    TgCallbackQuery,
    TgMessage,
    TgUpdate,
    parse_update,
    press_envelope,
    quoted_message_id,
    to_envelope,
)
from bot.channels.telegram.meeting import STATUS_INTERVAL_S, MeetingView
from bot.channels.telegram.outbound import Outbound, Target, answered, network_failure
from bot.channels.telegram.ratelimit import FloodControl, RateSettings
from bot.channels.telegram.role_bots import RoleBots
from bot.channels.telegram.stream import INTERRUPTED, DraftKey, Drafts, DraftStore
from bot.channels.telegram.topics import Topics, TopicStore
from bot.channels.webhook import BodyTooLarge, DeskVerdict, read_body
from bot.intake.config import InboxSection
from bot.intake.courier import (
    Admission,
    ChannelTexts,
    FetchesMedia,
    MayRedo,
    PostsNotice,
    ShowsInterruption,
    Streams,
)
from bot.intake.delivery import SendFailed, SendProgress
from bot.intake.inbox import Arrival, InboundKind
from bot.intake.intake import Intake, IntakeHub, StorageUnavailable
from bot.intake.storage import is_storage_error

if TYPE_CHECKING:
    from bot.config import LoadedConfig
    from bot.replicas.leader import Leadership

__all__ = ["ANSWER_FAILED", "COMMANDS", "NOT_AUTHORISED", "TEXT_ONLY", "TelegramChannel", "build"]

log = logging.getLogger("sabha.telegram")

COMMANDS: tuple[tuple[str, str], ...] = (
    ("start", "Introduction"),
    ("help", "What you can say"),
    ("roles", "Who sits on the board"),
    ("ask", "Ask one role: /ask <role> <question>"),
    ("meeting", "Hold a board meeting: /meeting <topic>"),
    ("meetings", "Recent board meetings"),
    ("cancel", "Stop the meeting running here: /cancel [id]"),
    ("wrap", "End the meeting running here after this round: /wrap [id]"),
    ("pause", "Start no new round of the meeting here: /pause [id]"),
    ("resume", "Go on with a paused meeting: /resume [id]"),
    ("extend", "One more round for the meeting here: /extend [id]"),
    ("start_meeting", "Start a meeting that waits for your Start: /start_meeting <n>"),
    ("cancel_meeting", "Drop a meeting that waits for your Start: /cancel_meeting <n>"),
    ("actions", "Open action items from board meetings"),
    ("done", "Close an action item: /done <n>"),
    ("due", "Set an action item's due date: /due <n> <when>"),
    ("snooze", "Put off an action item's reminder: /snooze <n> [2h]"),
    ("decisions", "Board decisions and where they stand"),
    ("decision", "One decision: who ruled on it and when"),
    ("ratify", "Ratify a board decision: /ratify [id]"),
    ("veto", "Veto a board decision: /veto [id] [reason]"),
    ("revisit", "Send a decision back to the board: /revisit [id] <reason>"),
    ("review", "Schedule a decision's review meeting: /review <id> <when>"),
    ("predictions", "Predictions members made in meetings"),
    ("resolve", "Say how a prediction turned out: /resolve <n> yes|no|unknown"),
    ("stats", "Each advisor's track record (Brier score)"),
    ("every", "Standing work here: /every monday 9am brief"),
    ("standing", "Standing work: /standing [pause|resume|remove <n>]"),
    ("recall", "Search what was said and decided: /recall <words>"),
    ("allow", "Let an advisor run the tool call it asked for: /allow [n] [always]"),
    ("deny", "Refuse an advisor's tool call: /deny [n]"),
    ("reset", "Start a fresh conversation: /reset [role]"),
    ("compact", "Summarise the older part of a conversation now: /compact [role]"),
    ("memory", "What the board remembers about you"),
    ("forget", "Make the board forget a fact about you: /forget <key>|all"),
    ("files", "What this chat has attached"),
    ("link", "Make your accounts on other channels one person: /link [code]"),
    ("unlink", "Undo /link for this account"),
    ("souls", "Soul files and their versions"),
    ("cost", "What the board has cost"),
    ("status", "Uptime, channels and topics"),
)

NOT_AUTHORISED = ("Sorry, this board only answers its members. Your Telegram user id is {user_id}: "
                  "ask the owner to add it to telegram.allowed_user_ids.")
TEXTS = ChannelTexts()
TEXT_ONLY = TEXTS.text_only
ANSWER_FAILED = TEXTS.answer_failed

BAD_TOKEN = ("Telegram rejected telegram.token (401 Unauthorized): copy the token from @BotFather into "
             "TELEGRAM_BOT_TOKEN")
POLL_TIMEOUT_S = 30
MAX_WEBHOOK_BYTES = 1 << 20  # Telegram's updates are small; anything this big is not one
POLL_BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)



class _Bot(Bot):
    """PTB's Bot plus ``getUpdates`` as raw JSON. PTB's ``get_updates`` parses a whole batch
    at once, so one malformed update would fail them all; Sabha validates each update
    itself (:func:`.inbound.parse_update`) and skips only the bad one."""

    async def get_raw_updates(self, offset: int | None, timeout: float, limit: int | None = None) -> list[Any]:
        data: dict[str, Any] = {"timeout": int(timeout), "allowed_updates": list(UPDATES)}
        if offset is not None:
            data["offset"] = offset
        if limit is not None:
            data["limit"] = limit
        result = await self._post("getUpdates", data, read_timeout=timeout + 10)
        return result if isinstance(result, list) else []


class TelegramChannel(Streams, PostsNotice[int], ShowsInterruption, MayRedo, FetchesMedia,
                      Reconfigures[TelegramSection], FollowsLeader, ServesWebhook):
    """One bot on one (optional) forum; see the module docstring. What it can do besides a courier's basics, it
    declares (:mod:`bot.intake.courier`, :mod:`bot.channels.base`)."""

    name = "telegram"
    texts = TEXTS

    def __init__(
        self,
        parts: ChannelParts,
        settings: TelegramSection,
        *,
        hub: IntakeHub | None = None,
        poll_timeout: float = POLL_TIMEOUT_S,
        status_interval: float = STATUS_INTERVAL_S,
        resume_max_age_s: float = 3600,
        shutdown_grace_s: float = 20.0,
        role_tokens: Mapping[str, str] | None = None,
    ) -> None:
        if not settings.enabled or settings.token is None:
            raise ChannelError("telegram.token is not set: export TELEGRAM_BOT_TOKEN (from @BotFather)")
        # PTB 22 deprecates int retry_after; opt in to timedelta so 429s do not warn.
        os.environ.setdefault("PTB_TIMEDELTA", "1")
        # Bot API URLs contain the token: httpx logs each request URL at INFO and PTB logs
        # its URLs at DEBUG, so keep both quieter than that whatever the root level is.
        for name, floor in (("httpx", logging.WARNING), ("telegram", logging.INFO)):
            logger = logging.getLogger(name)
            logger.setLevel(max(floor, logger.level))
        self.uses = parts  # what it uses of the board (bot.channels.parts)
        parts.commands.describe_channel(self.name, TOPIC_ADDRESSING)  # /help: a topic's role answers in its topic
        self.settings = settings
        self.poll_timeout = poll_timeout
        self.forum_id = settings.group_id
        self.owns_hub = hub is None
        if hub is None:
            hub = IntakeHub(InboxSection(resume_max_age_s=resume_max_age_s, shutdown_grace_s=shutdown_grace_s))
        self.hub = hub
        chats = tuple(settings.allowed_chat_ids) + ((settings.group_id,) if settings.group_id is not None else ())
        self.gate = AccessGate(tuple(settings.allowed_user_ids), chats)
        self.topics = Topics(settings.group_id, TopicStore(parts.db), settings.topics) \
            if settings.group_id is not None else None
        rate = settings.rate_limit
        self.flood = FloodControl(RateSettings(group_per_minute=rate.group_per_minute,
                                               private_per_second=rate.private_per_second,
                                               global_per_second=rate.global_per_second))
        self.bot = self._build_bot()
        self.outbound = Outbound(self.bot, self.flood, max_retries=rate.max_retries)
        self.reach = Reach(self.name, f"the Telegram Bot API at {settings.api_base_url}", self._probe)
        self.outbound.reach = self.reach
        # advisors as themselves (board.agents.<role>.telegram_token): their statements and forum answers
        self.role_bots = RoleBots.of(role_tokens or {}, self.outbound, base_url=settings.api_base_url,
                                     flood=self.flood, max_retries=rate.max_retries)
        self.role_bots.tell = self._tell_owner
        self.drafts = Drafts(self.outbound, DraftStore(parts.db), enabled=settings.stream,
                             interval=settings.stream_edit_interval_s)
        self.buttons = ButtonPosts(parts.db, self.outbound)
        parts.decisions.subscribe(self.buttons.changed)
        self.meetings = MeetingView(self.outbound, forum_id=self.forum_id, topics=self.topics,
                                    status_interval=status_interval,
                                    label_for=lambda role: parts.souls.profile(role).label,
                                    posted=self.buttons.record, room=parts.room,
                                    record=MeetingPosts(parts.db, self.name), texts=self.texts,
                                    role_bots=self.role_bots)
        self.intake: Intake = hub.intake(parts.intake, self)
        self.state = "created"
        self.problem: str | None = None
        self.started_at: float | None = None
        self.accepting = False
        self.username: str | None = None
        self.invalid_updates = 0
        self._offset: int | None = None
        self._confirmed: int | None = None
        self._poller: asyncio.Task[None] | None = None
        #: albums at the end of a getUpdates batch, held for their other items
        self.albums = AlbumHold(wait_s=settings.album_wait_s)
        #: webhook mode: an album's items staged as posted, stored as one message once complete (.album_staging)
        self.album_posts = WebhookAlbums(AlbumStage(parts.db), self._store_album, wait_s=settings.album_wait_s,
                                         retry_s=hub.settings.storage_retry_s)
        self.album_items = AlbumItems(parts.db)  # every stored album item: one sent again is a duplicate
        #: Replicas in polling mode: poll only while this one leads (None: always; bot.replicas.leader).
        self.leadership: Leadership | None = None
        self._connector: asyncio.Task[None] | None = None

    def reconfigure(self, section: TelegramSection) -> None:
        """Apply what may change while running (a config reload, SIGHUP): who may talk to the
        board (``allowed_user_ids``, ``allowed_chat_ids``). The rest needs a restart."""
        chats = tuple(section.allowed_chat_ids) + ((self.forum_id,) if self.forum_id is not None else ())
        self.gate.allowed_user_ids = tuple(section.allowed_user_ids)
        self.gate.allowed_chat_ids = chats
        self.gate.denied_users.clear()  # a newly denied id is logged again
        self.gate.denied_chats.clear()
        self.settings = self.settings.model_copy(update={"allowed_user_ids": list(section.allowed_user_ids),
                                                         "allowed_chat_ids": list(section.allowed_chat_ids)})

    def follow(self, leadership: Leadership) -> None:
        """Replicas in polling mode: poll only while ``leadership`` says this replica leads (before :meth:`start`)."""
        self.leadership = leadership

    @property
    def webhook_path(self) -> str:
        """``telegram.webhook_path`` (a route only in webhook mode: :meth:`routes`)."""
        return self.settings.webhook_path

    def _build_bot(self) -> _Bot:
        assert self.settings.token is not None
        # Every running turn may hold a connection for its reply and one for its typing
        # indicator, and meetings post beside them: size the pool to the cap on turns.
        pool = 2 * self.hub.settings.max_concurrent_turns + 8
        # Replies are marked "sending" as their request starts to leave, not while it waits for a connection.
        request = FileRequest(connection_pool_size=pool, pool_timeout=30.0, httpx_kwargs=departure_hooks())
        updates = HTTPXRequest(connection_pool_size=1, read_timeout=self.poll_timeout + 10)
        bot = _Bot(self.settings.token.get_secret_value(), base_url=self.settings.api_base_url,
                   base_file_url=file_base_url(self.settings.api_base_url), request=request,
                   get_updates_request=updates)
        self.files = TelegramFiles(bot, request)
        return bot

    # -- what the intake needs (bot.intake.courier.Courier) -----------------------------

    def admit(self, envelope: Envelope) -> Admission:
        """Deny by default (see :mod:`.inbound`); strangers in a DM are told their id once."""
        try:
            place = Place.of_envelope(envelope)
        except ValueError:
            return Admission(False)
        sender = int(envelope.sender) if envelope.sender.lstrip("-").isdigit() else None
        if self.gate.allows(sender, place):
            return Admission(True)
        if place.is_group or sender is None or not self.settings.reply_unauthorised:
            return Admission(False)
        return Admission(False, NOT_AUTHORISED.format(user_id=sender))

    def conversation(self, envelope: Envelope) -> str:
        """A chat's topic (or the chat, for DMs and General) is one conversation."""
        return f"{envelope.chat_id}/{envelope.thread_id or '-'}"

    @contextlib.asynccontextmanager
    async def typing(self, envelope: Envelope) -> AsyncIterator[None]:
        """Typing… in the message's topic while its turn runs, once it has run ``telegram.typing_after_s`` (Telegram
        recommends the indicator only for an answer that takes a noticeable time; a meeting it calls posts after the
        reply)."""
        self.meetings.expect(envelope.chat_id, envelope.message_id)
        async with self.outbound.keep_typing(self._target(envelope), after=self.settings.typing_after_s):
            yield

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        """Send a reply to where its question came from (over its streamed draft, when it has one)."""
        await self._deliver_answer(reply, progress, None)

    def stream(self, envelope: Envelope) -> contextlib.AbstractAsyncContextManager[StreamSink | None]:
        """The answer to ``envelope`` shown while it is written (:mod:`.stream`; None when off)."""
        return self.drafts.streaming(envelope, self._target(envelope))

    async def post_notice(self, reply: Reply) -> int | None:
        """Send a "working on it" notice; its message id, for :meth:`deliver_over` (the answer's
        draft, when it is out already: then nothing is sent)."""

        async def post() -> int | None:
            sent = await self.outbound.deliver(reply)
            return sent[0].message_id if len(sent) == 1 else None

        return await self.drafts.notice(reply, post)

    async def deliver_over(self, notice: int, reply: Reply, progress: SendProgress) -> None:
        """The answer edited into the notice ``notice`` (sent anew if Telegram refuses the edit)."""
        await self._deliver_answer(reply, progress, notice)

    async def interrupted(self, chat_id: str, message_id: str) -> None:
        """The answer to message ``message_id`` will not come (given up at a restart, or its delivery
        failed): its streamed draft, if one is out, is edited into :data:`INTERRUPTED` instead of
        showing a partial answer for ever, and its record goes. A failure is logged, never raised."""
        key = DraftKey(str(chat_id), str(message_id))
        try:
            stored = await self.drafts.store.get(key)
            if stored is None:
                return
            if stored.message_id is not None:
                await self.outbound.edit(Target(chat_id=int(chat_id)), stored.message_id, INTERRUPTED)
            await self.drafts.store.forget(key)
        except Exception as exc:  # noqa: BLE001 - a courtesy; the outcome is recorded either way
            log.warning("telegram: could not mark the draft of the answer to message %s in chat %s as interrupted "
                        "(%s)", message_id, chat_id, exc)

    async def may_redo(self, reply: Reply) -> bool:
        """Whether a reply that was being sent when Sabha stopped may be delivered again: yes when
        it is one message edited over its recorded draft (an edit repeated posts nothing twice)."""
        key = DraftKey.of_reply(reply)
        stored = await self.drafts.store.get(key) if key is not None else None
        return stored is not None and stored.message_id is not None and reply.voice is None \
            and len(render(reply.text, reply.label)) == 1

    async def _deliver_answer(self, reply: Reply, progress: SendProgress, over: int | None) -> None:
        """The reply edited over its streamed draft or notice (a draft recorded before a restart
        too), else sent; the draft's record goes once the answer is out. ``progress.note`` says which.
        A meeting the question called posts after it (:meth:`MeetingView.replied`), sent or not."""
        try:
            await self._deliver_over_draft(reply, progress, over)
        finally:
            self.meetings.replied(reply.chat_id, reply.reply_to)

    async def _deliver_over_draft(self, reply: Reply, progress: SendProgress, over: int | None) -> None:
        key = DraftKey.of_reply(reply)
        stored = await self.drafts.stored(key) if key is not None else None
        message_id = stored.message_id if stored is not None and stored.message_id is not None else over
        if progress.again:  # a marked copy: new messages below what may have arrived, never an edit over it
            message_id = None
        if message_id is not None:
            if key is not None:
                await self.drafts.settle(key)
            forget = self.drafts.store.forget
            # The draft is gone: its record goes before the answer is sent anew, so a restart after that
            # send does not take the answer for one it may edit over the draft again (a second copy).
            edited = await self.outbound.deliver_over(
                message_id, reply, progress,
                before_resend=(lambda: forget(key)) if stored is not None and key is not None else None)
            progress.note = "edited over its draft" if edited else "its draft was gone: sent as a new message"
        else:
            if stored is not None and not progress.again:
                log.warning("telegram: the streamed draft of the answer to chat %s was being sent when Sabha "
                            "stopped; its id is unknown, so the answer is sent as a new message", reply.chat_id)
                progress.note = "the draft's id was not recorded: sent as a new message"
            await self._deliver_as_role(reply, progress)
        if stored is not None and key is not None:
            await self.drafts.store.forget(key)
        await self._speak(reply)

    async def _deliver_as_role(self, reply: Reply, progress: SendProgress) -> None:
        """A new message: in the forum, from the role's own bot when it has one (:mod:`.role_bots`); from the main
        bot when it has none, or Telegram refuses it (then said once, and sent by the main bot)."""
        if self.forum_id is None or reply.chat_id != str(self.forum_id) or not self.role_bots.sends_as(reply.role):
            await self.outbound.deliver(reply, progress=progress)
            return
        try:
            await self.role_bots.outbound_for(reply.role).deliver(reply, progress=progress)
        except SendFailed as exc:
            if not await self.role_bots.on_failure(reply.role, exc):
                raise
            await self.outbound.deliver(reply, progress=progress)

    async def _tell_owner(self, line: str) -> None:
        """One line for the owner: in the forum's General topic, else in the owner's DM (best effort)."""
        owner = self.settings.allowed_user_ids[0] if self.settings.allowed_user_ids else None
        where = self.forum_id if self.forum_id is not None else owner
        if where is not None:
            await self.outbound.send(Target(where), line)

    async def _speak(self, reply: Reply) -> None:
        """The answer's voice note (``reply.voice``), after its text; a failure is logged, never
        resends the text (the text is the answer; the voice a courtesy)."""
        if reply.voice is None:
            return
        blob = self.uses.media.blobs.get(reply.voice)
        if blob is None:
            log.warning("telegram: the spoken answer to chat %s is gone from the media store; sent as text only",
                        reply.chat_id)
            return
        try:
            data = await asyncio.to_thread(blob.path.read_bytes)
            await self.outbound.send_voice(Target.of(reply), data)
        except (OSError, SendFailed) as exc:
            log.warning("telegram: the spoken answer to chat %s was not sent (%s); the text was", reply.chat_id, exc)

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        """An attachment's bytes, through ``getFile`` and the file route (see :mod:`.files`)."""
        await self.files.fetch(attachment, sink)

    @staticmethod
    def _target(envelope: Envelope) -> Target:
        return Target(int(envelope.chat_id), envelope.thread_id, reply_to=quoted_message_id(envelope.message_id))

    # -- reading updates ---------------------------------------------------------------

    def _readable(self, raw_updates: list[Any], parsed: list[TgUpdate | None] | None = None) -> list[TgUpdate]:
        """The updates of a batch that can be read (``parsed``: read already, None where not); the others
        logged and skipped."""
        updates: list[TgUpdate] = []
        for i, raw in enumerate(raw_updates):
            update = parsed[i] if parsed is not None else None
            if update is None:
                try:
                    update = parse_update(raw)
                except ValueError as exc:
                    self._skipped(_update_id(raw), exc)
                    continue
            updates.append(update)
        return updates

    async def arrivals(self, updates: list[TgUpdate]) -> tuple[list[Arrival], list[list[TgMessage]]]:
        """(the messages of a batch, the albums among them): an album's items are one arrival, at its first
        item (:mod:`.albums`); items stored already are left out (:class:`.album_items.AlbumItems`), so an
        album sent again with a late item is stored as that item alone."""
        albums: dict[tuple[int, str], list[TgMessage]] = {}
        for update in updates:
            key = album_key(update)
            if key is not None and update.message is not None:
                albums.setdefault(key, []).append(update.message)
        arrivals: list[Arrival] = []
        stored: list[list[TgMessage]] = []
        for update in updates:
            key = album_key(update)
            if key is None:
                arrival = self._update_arrival(update)
            elif key in albums:  # its first item: the album is read here, its later items skipped
                items = await self.album_items.fresh(albums.pop(key))
                arrival = self._album_arrival(items) if items else None
                stored.append(items)
            else:
                continue
            if arrival is not None:
                arrivals.append(arrival)
        return arrivals, stored

    def _skipped(self, update_id: object, problem: Exception) -> None:
        """An update that cannot be read as a message: counted and logged, then confirmed (polling and
        webhook alike), since Telegram would offer it again unchanged for ever."""
        self.invalid_updates += 1
        log.warning("telegram: skipped update %s: %s", update_id, problem)

    def _album_arrival(self, items: list[TgMessage]) -> Arrival | None:
        """One arrival for an album's items (the first's id and place; every item's attachments)."""
        if len(items) > 1:
            log.info("telegram: album %s in chat %s: %d items read as one message (%s)", items[0].media_group_id,
                     items[0].chat.id, len(items), items[0].message_id)
        return self._arrival(items[0], album=items)

    def _update_arrival(self, update: TgUpdate) -> Arrival | None:
        """The message of an update (a new one, or an edit of one), or None."""
        if update.message is not None:
            return self._arrival(update.message)
        if update.edited_message is not None:
            return self._arrival(update.edited_message, edited=True)
        if update.callback_query is not None:
            envelope = self._press(update.callback_query)
            return Arrival(envelope, self.conversation(envelope), InboundKind.TEXT) if envelope is not None else None
        return None

    def _press(self, query: TgCallbackQuery) -> Envelope | None:
        """A button press as the presser sending the button's command where the button is."""
        role_hint = None
        if self.topics is not None and query.message is not None and query.message.chat.id == self.forum_id:
            role_hint = self.topics.role_for(Place.of(query.message).thread_id)
        return press_envelope(query, role_hint=role_hint, owner_id=self.gate.owner_id)

    async def _answer_presses(self, raw_updates: list[Any]) -> None:
        """Answer the button presses of a batch that was stored (see :mod:`.buttons`)."""
        for raw in raw_updates:
            if isinstance(raw, dict) and "callback_query" in raw:
                with contextlib.suppress(ValueError):
                    await self._answer_press(parse_update(raw))

    async def _answer_press(self, update: TgUpdate) -> None:
        query = update.callback_query
        if query is None:
            return
        envelope = self._press(query)
        admitted = envelope is not None and self.gate.allows(int(envelope.sender), Place.of_envelope(envelope))
        note = toast(envelope, admitted=admitted, owner_only=self.uses.commands.owner_only)
        await self.outbound.answer_press(query.id, note.text, alert=note.alert)

    def _arrival(self, message: TgMessage, *, edited: bool = False, album: list[TgMessage] | None = None
                 ) -> Arrival | None:
        user = message.from_user
        if message.is_service:
            log.info("telegram: skipped service message %s in chat %s (%s): a notice, not a question; no reply",
                     message.message_id, message.chat.id, ", ".join(message.service_keys))
            return None
        if user is not None and user.is_bot:
            log.debug("telegram: ignored message %s from bot %s", message.message_id, user.id)
            return None
        place = Place.of(message)
        text, attachments = self._content(message, edited, album or [message])
        kind = InboundKind.EDITED if edited else InboundKind.TEXT if text is not None or attachments \
            else InboundKind.UNSUPPORTED
        if place.is_group and self._for_another_bot(text):
            log.debug("telegram: ignored message %s in chat %s: a command for another bot", message.message_id,
                      place.chat_id)
            return None
        role_hint = None
        if self.topics is not None and place.chat_id == self.forum_id:
            role_hint = self.topics.role_for(place.thread_id)
        envelope = to_envelope(message, text or "", role_hint=role_hint, owner_id=self.gate.owner_id, edited=edited,
                               attachments=attachments)
        return Arrival(envelope, self.conversation(envelope), kind)

    def _content(self, message: TgMessage, edited: bool, items: list[TgMessage]) -> tuple[str | None,
                                                                                         tuple[Attachment, ...]]:
        """(text, attachments) of a message, an edit of one (text only) or an album (``items``)."""
        if edited:
            return message.body, ()
        cap = self.uses.media.settings.limit_for(self.name, MediaKind.IMAGE)
        if len(items) == 1:
            text = message.body if message.body is not None else sticker_words(message)
            return text, attachments_of(message, cap)
        return merge(items, [attachments_of(item, cap) for item in items])

    def _for_another_bot(self, text: str | None) -> bool:
        """``/command@name`` naming a bot that is not this one (in a group: not ours to answer)."""
        addressee = command_addressee(text or "")
        return addressee is not None and self.username is not None and addressee.lower() != self.username.lower()

    # -- polling -----------------------------------------------------------------------

    async def _poll(self) -> None:
        """Long-poll ``getUpdates``; move the offset only past what the intake has stored."""
        failures = 0
        while self.accepting:
            try:
                updates = await self.bot.get_raw_updates(self._offset, self.poll_timeout)
            except asyncio.CancelledError:
                raise
            except InvalidToken as exc:
                self.problem = f"Telegram rejected the token: {exc}"
                log.error("telegram: the token was rejected while polling (%s); fix TELEGRAM_BOT_TOKEN and restart",
                          exc)
                self.state = "failed"
                return
            except (TelegramError, OSError) as exc:
                failures += 1
                wait = POLL_BACKOFF_S[min(failures, len(POLL_BACKOFF_S)) - 1]
                unreachable = network_failure(exc) if isinstance(exc, TelegramError) else None
                if unreachable:  # the reachability watcher said it once and says when it is back
                    self.reach.lost(unreachable)
                    self.problem = None  # the reach's problem says it better than a dropped poll's did
                    log.debug("telegram: getUpdates cannot reach the Bot API (%s); retrying in %.0f s", unreachable,
                              wait)
                    await asyncio.sleep(wait)
                    continue
                self.problem = f"getUpdates failed: {_short(exc)}"
                if isinstance(exc, Conflict):
                    log.warning("telegram: another process is polling this bot (%s); retrying in %.0f s", exc, wait)
                elif not isinstance(exc, TimedOut):
                    log.warning("telegram: getUpdates failed (%s); retrying in %.0f s", _short(exc), wait)
                await asyncio.sleep(wait if not isinstance(exc, TimedOut) else 0)
                continue
            self.reach.reached()
            if failures:
                log.info("telegram: getUpdates works again")
                failures = 0
                self.problem = None
            if updates:
                with received(self.name, ReceivedVia.POLL, len(updates)):
                    await self._take_batch(updates)

    async def _take_batch(self, updates: list[Any]) -> None:
        """Store a batch, then move the offset past what was stored. Albums at its end that may go on in
        the next batch are held back (:mod:`.albums`): what came before them is stored and confirmed to
        Telegram now, the offset stays at the first of them (not stored, not confirmed) and the next poll
        comes after a short wait, for their other items."""
        parsed = [_parsed(raw) for raw in updates]
        ready, held = self.albums.split(updates, parsed)
        if ready and not await self._store(ready, parsed[:len(ready)]):
            return
        held_at = _update_id(held[0]) if held else None
        if held_at is None:
            return
        self._offset = held_at
        if ready:
            await self._confirm_offset()  # what was stored is confirmed before the wait: a crash then loses nothing
        log.info("telegram: holding back an album in update %s for %.1f s, for its other items",
                 self._offset, self.albums.wait_s)
        await asyncio.sleep(self.albums.wait_s)

    async def _store(self, raw_updates: list[Any], parsed: list[TgUpdate | None] | None = None) -> bool:
        """Store ``raw_updates`` and confirm them (the next poll's offset); False when they were not stored."""
        try:
            await self._receive(self._readable(raw_updates, parsed))
        except StorageUnavailable:
            await asyncio.sleep(self.hub.settings.storage_retry_s)  # not confirmed: Telegram offers them again
            return False
        except Exception:  # a bug in one update's path must not end polling (its offset never moved)
            log.exception("telegram: storing %d update(s) failed; storing them one at a time", len(raw_updates))
            if not await self._receive_one_by_one(raw_updates):
                return False
        await self._answer_presses(raw_updates)
        last = max((i for i in map(_update_id, raw_updates) if i is not None), default=None)
        if last is not None:
            self._offset = last + 1
        return True

    async def _receive(self, updates: list[TgUpdate]) -> None:
        """Store ``updates`` with the intake, then record their albums' items (before Telegram is told).
        Raises :class:`StorageUnavailable` when either could not be written."""
        try:
            arrivals, albums = await self.arrivals(updates)
        except Exception as exc:
            if is_storage_error(exc):
                raise StorageUnavailable(str(exc)) from exc
            raise
        await self.intake.receive(arrivals)
        try:
            await self.album_items.record(albums)
        except Exception as exc:
            if is_storage_error(exc):
                raise StorageUnavailable(str(exc)) from exc
            raise

    async def _poll_while_leading(self) -> None:
        """:meth:`_poll`, but among replicas only while this one leads polling; a standby waits, and on
        taking over starts from Telegram's unconfirmed updates (what was stored already is a duplicate)."""
        leadership = self.leadership
        if leadership is None:
            await self._poll()
            return
        while self.accepting:
            if not leadership.leading:
                log.info("telegram: standing by; another replica polls getUpdates")
                await leadership.wait_leading()
                self._offset = None
                log.info("telegram: this replica polls getUpdates now")
            poll = asyncio.create_task(self._poll(), name="telegram getUpdates (leader)")
            lost = asyncio.create_task(leadership.wait_lost(), name="telegram leadership watch")
            try:
                await asyncio.wait({poll, lost}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (poll, lost):
                    task.cancel()
                await asyncio.gather(poll, lost, return_exceptions=True)
            if poll.done() and not poll.cancelled() and not lost.done():
                return  # polling ended on its own (a rejected token)

    async def _receive_one_by_one(self, updates: list[Any]) -> bool:
        """Store ``updates`` one at a time after their batch failed: an update that still cannot be stored
        (not the disk: a bug) is skipped and logged, so the others are stored and polling goes on. False
        when storage itself failed (nothing confirmed: Telegram offers them again)."""
        for raw in updates:
            try:
                await self._receive(self._readable([raw]))
            except StorageUnavailable:
                await asyncio.sleep(self.hub.settings.storage_retry_s)
                return False
            except Exception as exc:  # noqa: BLE001 - logged whole; the rest of the batch goes on
                self.invalid_updates += 1
                log.error("telegram: skipped update %s: it could not be stored (%s: %s); this is a bug in Sabha, "
                          "please report it with this log line", _update_id(raw), type(exc).__name__, _short(exc))
        return True

    async def _confirm_offset(self) -> None:
        """Tell Telegram what is stored (the next start would skip it as a duplicate anyway)."""
        if self._offset is None:
            return
        with contextlib.suppress(TelegramError, OSError):
            await self.bot.get_raw_updates(self._offset, 0, limit=1)

    # -- webhook -----------------------------------------------------------------------

    def routes(self) -> list[web.RouteDef]:
        """Routes for Sabha's aiohttp server (the webhook, in webhook mode)."""
        if self.settings.mode != "webhook":
            return []
        return [web.post(self.settings.webhook_path, self._webhook)]

    def front_desk(self, headers: Mapping[str, str], body: bytes) -> DeskVerdict:
        """On the front desk (:mod:`bot.channels.held.desk`): an update carrying ``telegram.webhook_secret`` is
        stored, then acknowledged; one without it is refused (401) as :meth:`_take` does."""
        expected = self.settings.webhook_secret.get_secret_value() if self.settings.webhook_secret else ""
        given = headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            return DeskVerdict(401, "wrong secret token")
        return DeskVerdict()

    def webhook_senders(self, body: bytes) -> frozenset[str] | None:
        """The chat of a stored update (its message's, or the message its button press is on); None when it has
        none."""
        try:
            update = json.loads(body)
            chats = {str(part["chat"]["id"]) if "chat" in part else str(part["message"]["chat"]["id"])
                     for part in update.values() if isinstance(part, dict) and ("chat" in part or "message" in part)}
        except (ValueError, AttributeError, TypeError, KeyError):
            return None
        return frozenset(f"telegram:{chat}" for chat in chats) or None

    async def _webhook(self, request: web.Request) -> web.Response:
        return await received_request(self.name, request, self._take)

    async def _take(self, request: web.Request) -> web.Response:
        if not self.accepting:
            return web.Response(status=503, text="not accepting updates right now")
        expected = self.settings.webhook_secret.get_secret_value() if self.settings.webhook_secret else ""
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            log.warning("telegram webhook: rejected a request from %s with a wrong secret token", request.remote)
            return web.Response(status=401, text="wrong secret token")
        try:
            body = await read_body(request, MAX_WEBHOOK_BYTES)
        except BodyTooLarge as exc:
            log.warning("telegram webhook: %s", exc)
            return web.Response(status=413, text=str(exc))
        update = self._read_update(body)
        if update is None:
            return web.Response(status=400, text="not a Telegram update")
        if isinstance(update, Exception):
            return web.Response(text="ok")  # skipped and logged, as polling skips it: a retry would not help
        key = album_key(update)
        if key is not None and update.message is not None:
            return await self._stage_album_item(key, update.message, body)
        chat = chat_of(update)
        if chat is not None:  # an album held for this chat came first: it is stored first
            await self.album_posts.flush_chat(chat)
        with self.hub.receiving():  # acknowledging an update comes before starting answers
            try:
                await self._receive([update])
            except StorageUnavailable:
                return web.Response(status=503, text="cannot store the update right now; retry later")
        await self._answer_press(update)
        return web.Response(text="ok")

    async def _stage_album_item(self, key: tuple[int, str], message: TgMessage, body: bytes) -> web.Response:
        """Keep an album's item as posted, then 200 (503 when it could not be kept); the album is stored
        with the intake as one message once complete (:mod:`.album_staging`)."""
        try:
            await self.album_posts.add(key, message.message_id, body.decode("utf-8", "replace"))
        except Exception as exc:
            if not is_storage_error(exc):
                raise
            log.warning("telegram webhook: could not keep album item %s (%s); Telegram posts it again",
                        message.message_id, _short(exc))
            return web.Response(status=503, text="cannot store the update right now; retry later")
        return web.Response(text="ok")

    async def _store_album(self, items: list[TgMessage]) -> bool:
        """Store an album gathered from webhook requests as one arrival, without its items stored already
        (one posted again is a duplicate); False when it could not be stored."""
        with self.hub.receiving():
            try:
                await self._receive([TgUpdate(update_id=0, message=m) for m in items])
            except StorageUnavailable:
                return False
        return True

    def _read_update(self, body: bytes) -> TgUpdate | Exception | None:
        """A webhook body read as polling reads an update: the update; the problem (logged) when it is an
        update (an object with an ``update_id``) that cannot be read as a message; None when it is not an
        update at all (not JSON, nested too deeply, no ``update_id``)."""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than json can read
            self.invalid_updates += 1
            why = "nested too deeply" if isinstance(exc, RecursionError) else _short(exc)
            log.warning("telegram webhook: rejected a body that is not a Telegram update: %s", why)
            return None
        update_id = _update_id(data)
        if update_id is None:
            self.invalid_updates += 1
            log.warning("telegram webhook: rejected a body that is not a Telegram update: no integer update_id")
            return None
        try:
            return parse_update(data)
        except ValueError as exc:
            self._skipped(update_id, exc)
            return exc

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, map topics, register commands, take up what is pending, start receiving.

        Raises :class:`ChannelError` when the token is rejected (the one fatal problem).
        When Telegram cannot be reached, the channel stays ``connecting`` (its
        :meth:`describe` says why) and keeps trying in the background with backoff while
        the rest of the daemon runs. Topic problems are logged and do not stop the channel.
        """
        self.state = "starting"
        try:
            await self.bot.initialize()
        except InvalidToken as exc:
            await self._shutdown_bot()
            self.state = "failed"
            raise ChannelError(BAD_TOKEN) from exc
        except (TelegramError, OSError) as exc:
            self.state = "connecting"
            self.problem = f"cannot reach the Telegram Bot API at {self.settings.api_base_url}: {_short(exc)}"
            log.warning("telegram: %s; retrying in the background (the rest of Sabha runs meanwhile)", self.problem)
            self._connector = asyncio.create_task(self._connect_later(), name="telegram connect")
            return
        await self._begin()

    async def _connect_later(self) -> None:
        """Retry the connection with backoff until it works (or the token is rejected), then start."""
        failures = 0
        while True:
            wait = POLL_BACKOFF_S[min(failures, len(POLL_BACKOFF_S) - 1)]
            failures += 1
            await asyncio.sleep(wait)
            try:
                await self.bot.initialize()
            except InvalidToken:
                self.state = "failed"
                self.problem = BAD_TOKEN
                log.error("telegram: %s; then restart Sabha", BAD_TOKEN)
                await self._shutdown_bot()
                return
            except (TelegramError, OSError) as exc:
                self.problem = (f"cannot reach the Telegram Bot API at {self.settings.api_base_url}: {_short(exc)} "
                                f"({failures} attempts)")
                log.warning("telegram: still cannot reach the Bot API (%s); retrying in %.0f s", _short(exc),
                            POLL_BACKOFF_S[min(failures, len(POLL_BACKOFF_S) - 1)])
                continue
            break
        log.info("telegram: reached the Bot API after %d retries", failures)
        self.problem = None
        try:
            await self._begin()
        except Exception as exc:
            self.problem = f"start-up failed after connecting: {_short(exc)}"
            log.exception("telegram: start-up failed after connecting; restart Sabha")

    async def _begin(self) -> None:
        """Everything after the first successful contact: topics, commands, resume, receiving."""
        self.username = self.bot.username
        try:
            await self.intake.inbox.prune()
            await self.drafts.store.prune()
            await self.album_items.prune()
            if self.topics is not None:
                await self.topics.ensure(self.bot, self.uses.souls.profiles(),
                                         auto_create=self.settings.auto_create_topics)
            await self._set_commands()
            await self.role_bots.check()
            # it posts from the events alone: told each at once, not after the items' dating (ToldAtOnce)
            self.uses.room.subscribe(ToldAtOnce(self.meetings))
            await self.intake.resume()  # queued first: they were received before anything new
            self.accepting = True
            if self.settings.mode != "polling":  # albums posted before a restart, held for their other items
                await self.album_posts.resume()
            if self.settings.mode == "polling":
                await self.bot.delete_webhook()
                self._poller = asyncio.create_task(self._poll_while_leading(), name="telegram getUpdates")
            elif self.settings.webhook_url:
                assert self.settings.webhook_secret is not None
                await self.bot.set_webhook(url=self.settings.webhook_url, allowed_updates=list(UPDATES),
                                           secret_token=self.settings.webhook_secret.get_secret_value())
            else:
                log.info("telegram: webhook mode without telegram.webhook_url: expecting Telegram to post to %s "
                         "(register it with setWebhook yourself)", self.settings.webhook_path)
        except BaseException:
            self.accepting = False
            if self.owns_hub:
                await self.hub.drain(0)  # resumed work stays stored: taken up at the next start
            await self._shutdown_bot()
            self.state = "failed"
            raise
        if not self.gate.allowed_user_ids:
            log.warning("telegram: telegram.allowed_user_ids is empty, so every message is denied; message the bot "
                        "and copy your id from the log into the config")
        self.started_at = time.monotonic()
        self.state = "running"
        self.reach.start()
        mapped = ", ".join(f"{e.role}={e.thread_id}" for e in self.topics.entries.values()) if self.topics else "-"
        log.info("telegram: @%s running (%s), forum %s, topics: %s", self.username, self.settings.mode,
                 self.forum_id, mapped or "none")

    async def _probe(self) -> None:
        """``getMe``: does the Bot API answer? (any answer counts; see :class:`bot.channels.reach.Reach`)."""
        try:
            await self.bot.get_me()
        except TelegramError as exc:
            unreachable = network_failure(exc)
            if unreachable:
                raise Unreachable(unreachable) from exc
            if not answered(exc):
                raise Unreachable(_short(exc)) from exc

    async def _set_commands(self) -> None:
        try:
            await self.bot.set_my_commands([BotCommand(c, d) for c, d in COMMANDS])
        except TelegramError as exc:
            log.warning("telegram: setMyCommands failed (%s); commands still work, the menu is not shown", exc)

    async def stop_intake(self) -> None:
        """Stop receiving updates (what is stored is answered, or kept for the next start)."""
        self.meetings.begin_stop()  # from now on an ended meeting's decision and minutes go out first
        if self._connector is not None and not self._connector.done():
            self._connector.cancel()  # still connecting: give up
            with contextlib.suppress(asyncio.CancelledError):
                await self._connector
            if self.state == "connecting":
                self.state = "stopping"
        if not self.accepting:
            return
        self.accepting = False
        self.album_posts.close()  # what is staged stays staged: held again at the next start
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
            self._poller = None

    async def stop(self, grace: float | None = None) -> None:
        """Stop intake, let running answers finish (when this channel owns its intake hub),
        post what meetings left, shut down."""
        if self.state not in ("running", "stopping", "failed"):
            return
        self.state = "stopping"
        await self.stop_intake()
        await self.intake.wind_down(grace, owns_hub=self.owns_hub, alongside=self.meetings.drain)
        await self.reach.stop()
        if self.settings.mode == "polling":
            await self._confirm_offset()
        await self._shutdown_bot()
        self.state = "stopped"
        log.info("telegram: stopped (sent %d, failed %d, 429 retries %d)", self.outbound.sent,
                 self.outbound.failed, self.outbound.retried_429)

    async def _shutdown_bot(self) -> None:
        try:
            await self.bot.shutdown()
        except Exception:
            log.exception("telegram: shutdown failed")
        await self.role_bots.close()

    # -- status ------------------------------------------------------------------------

    def status_lines(self) -> list[str]:
        """Lines for ``/status``."""
        lines = [f"telegram: {self.state} as @{self.username or '?'} ({self.settings.mode})"]
        if self.forum_id is not None and self.topics is not None:
            mapped = ", ".join(f"{e.role} #{e.thread_id}" for e in sorted(self.topics.entries.values(),
                                                                        key=lambda e: e.role))
            lines.append(f"  forum {self.forum_id}: general in General; {mapped or 'no topics mapped'}")
            missing = self.topics.missing(self.uses.souls.roles())
            if missing:
                lines.append(f"  roles without a topic: {', '.join(missing)}")
            if self.topics.problem:
                lines.append(f"  problem: {self.topics.problem}")
        else:
            lines.append("  no forum configured (telegram.group_id): DMs only")
        if self.problem:
            lines.append(f"  problem: {self.problem}")
        if self.reach.problem and self.reach.problem != self.problem:
            lines.append(f"  problem: {self.reach.problem}")
        o = self.outbound
        lines.append(f"  sent {o.sent}, failed {o.failed} ({o.unknown} may have arrived), 429 retries "
                     f"{o.retried_429}; invalid updates {self.invalid_updates}")
        lines.append(self.intake.status_line())
        return lines

    def describe(self) -> dict[str, Any]:
        """Machine-readable status (the daemon's /healthz)."""
        return {
            "state": self.state,
            "mode": self.settings.mode,
            "bot": self.username,
            "forum": self.forum_id,
            "topics": {e.role: e.thread_id for e in self.topics.entries.values()} if self.topics else {},
            "problem": self.problem or self.reach.problem or (self.topics.problem if self.topics else None),
        }


def _update_id(raw: Any) -> int | None:
    """A raw update's ``update_id`` (None when it has none)."""
    update_id = raw.get("update_id") if isinstance(raw, dict) else None
    return update_id if isinstance(update_id, int) and not isinstance(update_id, bool) else None


def _parsed(raw: Any) -> TgUpdate | None:
    try:
        return parse_update(raw)
    except ValueError:
        return None


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def build(parts: ChannelParts, loaded: LoadedConfig, hub: IntakeHub) -> TelegramChannel:
    """The plugin factory: the channel for ``loaded``'s ``telegram`` section."""
    tokens = {role: agent.telegram_token.get_secret_value() for role, agent in loaded.config.board.agents.items()
              if agent.telegram_token is not None}
    return TelegramChannel(parts, loaded.config.telegram, hub=hub, role_tokens=tokens)
