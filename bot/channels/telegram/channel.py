"""The Telegram channel: a forum topic per board member, DMs, commands and meetings.

:class:`TelegramChannel` runs python-telegram-bot v22 inside Sabha's event loop with the
manual lifecycle (``initialize/start/updater.start_polling`` ... ``stop/shutdown``), in
``polling`` mode or ``webhook`` mode (updates posted to a route on Sabha's aiohttp
server, checked against Telegram's secret-token header).

Each incoming message goes: access gate (:mod:`.telegram_inbound`, deny by default, no
model call for strangers) -> its lane (:mod:`.lanes`: one place answers in order,
different topics and chats concurrently) -> an :class:`board.envelope.Envelope` with the
topic's role as ``role_hint``, claimed in the durable inbox (:mod:`.inbox`: a redelivered
message is skipped; the envelope is kept) -> ``board.handle`` with "typing…" shown in the
topic -> the reply delivered by :class:`.outbound.Outbound` to the same chat and topic,
and the message marked answered. At start, messages a crash or a cut-short shutdown left
unanswered are queued first (:meth:`.inbox.Inbox.resume`). Meetings called from Telegram are
shown by :class:`.telegram_meeting.MeetingView`; topics are mapped and created by
:class:`.telegram_topics.Topics`.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import re
import time
from datetime import timedelta
from typing import Any

from aiohttp import web
from telegram import BotCommand, Message, Update
from telegram.error import InvalidToken, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ContextTypes,
    MessageHandler,
    filters,
)

from board.envelope import Envelope, Reply
from board.service import Board
from bot.channels.base import ChannelError
from bot.channels.telegram.config import TelegramSection
from bot.channels.telegram.inbound import AccessGate, Place, place_of, to_envelope
from bot.channels.telegram.meeting import STATUS_INTERVAL_S, MeetingView
from bot.channels.telegram.outbound import Outbound, SendFailed, SendProgress, Target
from bot.channels.telegram.ratelimit import FloodControl, RateSettings
from bot.channels.telegram.topics import Topics, TopicStore
from bot.config import LoadedConfig
from bot.intake.inbox import Inbox
from bot.intake.lanes import Lanes

log = logging.getLogger("sabha.telegram")

COMMANDS: tuple[tuple[str, str], ...] = (
    ("start", "Introduction"),
    ("help", "What you can say"),
    ("roles", "Who sits on the board"),
    ("ask", "Ask one role: /ask <role> <question>"),
    ("meeting", "Hold a board meeting: /meeting <topic>"),
    ("meetings", "Recent board meetings"),
    ("cancel", "Stop the meeting running here: /cancel [id]"),
    ("reset", "Start a fresh conversation: /reset [role]"),
    ("compact", "Summarise the older part of a conversation now: /compact [role]"),
    ("souls", "Soul files and their versions"),
    ("cost", "What the board has cost"),
    ("status", "Uptime, channels and topics"),
)

NOT_AUTHORISED = ("Sorry, this board only answers its members. Your Telegram user id is {user_id}: "
                  "ask the owner to add it to telegram.allowed_user_ids.")
TEXT_ONLY = "I can only read text messages for now; please send your question as text."
ANSWER_FAILED = "Something went wrong while answering this (it is logged). Please try again in a moment."

_ADDRESSED = re.compile(r"^/[A-Za-z0-9_]+@([A-Za-z0-9_]+)")
POLL_TIMEOUT_S = 30
DRAIN_TIMEOUT_S = 20.0


class TelegramChannel:
    """One bot on one (optional) forum; see the module docstring."""

    name = "telegram"

    def __init__(
        self,
        board: Board,
        settings: TelegramSection,
        *,
        poll_timeout: float = POLL_TIMEOUT_S,
        status_interval: float = STATUS_INTERVAL_S,
        drain_timeout: float = DRAIN_TIMEOUT_S,
        resume_max_age_s: float = 3600,
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
        self.board = board
        self.settings = settings
        self.poll_timeout = poll_timeout
        self.drain_timeout = drain_timeout
        self.resume_max_age_s = resume_max_age_s
        self.forum_id = settings.group_id
        chats = tuple(settings.allowed_chat_ids) + ((settings.group_id,) if settings.group_id is not None else ())
        self.gate = AccessGate(tuple(settings.allowed_user_ids), chats)
        self.inbox = Inbox(board.db, "telegram")
        self.lanes = Lanes("telegram")
        self.topics = Topics(settings.group_id, TopicStore(board.db), settings.topics) \
            if settings.group_id is not None else None
        rate = settings.rate_limit
        self.flood = FloodControl(RateSettings(group_per_minute=rate.group_per_minute,
                                               private_per_second=rate.private_per_second,
                                               global_per_second=rate.global_per_second))
        self.app: Application = self._build_app()
        self.outbound = Outbound(self.app.bot, self.flood, max_retries=rate.max_retries)
        self.meetings = MeetingView(self.outbound, forum_id=self.forum_id, topics=self.topics,
                                    status_interval=status_interval,
                                    label_for=lambda role: board.souls.profile(role).label)
        self.state = "created"
        self.started_at: float | None = None
        self.accepting = False
        self._told_unauthorised: set[int] = set()
        self.username: str | None = None

    def _build_app(self) -> Application:
        assert self.settings.token is not None
        builder = (
            ApplicationBuilder()
            .token(self.settings.token.get_secret_value())
            .base_url(self.settings.api_base_url)
            .get_updates_read_timeout(self.poll_timeout + 10)
        )
        if self.settings.mode == "webhook":
            builder = builder.updater(None)
        app = builder.build()
        # Service messages (pins, joins, topics created or closed by people) are not questions: no reply.
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & ~filters.StatusUpdate.ALL, self._on_message))
        app.add_error_handler(self._on_error)
        return app

    # -- the HTTP side ---------------------------------------------------------------

    def routes(self) -> list[web.RouteDef]:
        """Routes for Sabha's aiohttp server (the webhook, in webhook mode)."""
        if self.settings.mode != "webhook":
            return []
        return [web.post(self.settings.webhook_path, self._webhook)]

    async def _webhook(self, request: web.Request) -> web.Response:
        if not self.accepting:
            return web.Response(status=503, text="not accepting updates right now")
        expected = self.settings.webhook_secret.get_secret_value() if self.settings.webhook_secret else ""
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
            log.warning("telegram webhook: rejected a request from %s with a wrong secret token", request.remote)
            return web.Response(status=401, text="wrong secret token")
        try:
            data = await request.json()
            update = Update.de_json(data, self.app.bot)
        except Exception:  # noqa: BLE001 - a malformed body is the sender's problem
            log.warning("telegram webhook: ignored a body that is not an Update")
            return web.Response(status=400, text="not a Telegram update")
        await self.app.update_queue.put(update)
        return web.Response(text="ok")

    # -- lifecycle -------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, map topics, register commands and start receiving updates.

        Raises :class:`ChannelError` when the token is rejected or Telegram cannot be
        reached; topic problems are logged and do not stop the channel.
        """
        self.state = "starting"
        try:
            await self.app.initialize()
        except InvalidToken as exc:
            await self.app.bot.shutdown()  # initialize() failed: shutdown() would leak the pool
            self.state = "failed"
            raise ChannelError("Telegram rejected telegram.token (401 Unauthorized): copy the token from "
                               "@BotFather into TELEGRAM_BOT_TOKEN") from exc
        except TelegramError as exc:
            await self.app.bot.shutdown()
            self.state = "failed"
            raise ChannelError(f"cannot reach the Telegram Bot API at {self.settings.api_base_url}: {exc}") from exc
        self.username = self.app.bot.username
        try:
            await self.inbox.prune()
            if self.topics is not None:
                await self.topics.ensure(self.app.bot, self.board.souls.profiles(),
                                         auto_create=self.settings.auto_create_topics)
            await self._set_commands()
            room = getattr(self.board, "room", None)
            if room is not None and hasattr(room, "subscribe"):
                room.subscribe(self.meetings)
            await self.app.start()
            await self._resume()  # queued first: they were received before anything polling brings now
            self.accepting = True
            if self.settings.mode == "polling":
                assert self.app.updater is not None
                await self.app.updater.start_polling(poll_interval=0, timeout=int(self.poll_timeout),
                                                     allowed_updates=["message"])
            elif self.settings.webhook_url:
                assert self.settings.webhook_secret is not None
                await self.app.bot.set_webhook(url=self.settings.webhook_url, allowed_updates=["message"],
                                               secret_token=self.settings.webhook_secret.get_secret_value())
            else:
                log.info("telegram: webhook mode without telegram.webhook_url: expecting Telegram to post to %s "
                         "(register it with setWebhook yourself)", self.settings.webhook_path)
        except BaseException:
            self.accepting = False
            await self.lanes.drain(0)  # resumed work stays claimed-but-unanswered: taken up at the next start
            await self._shutdown_app()
            self.state = "failed"
            raise
        if not self.gate.allowed_user_ids:
            log.warning("telegram: telegram.allowed_user_ids is empty, so every message is denied; message the bot "
                        "and copy your id from the log into the config")
        self.started_at = time.monotonic()
        self.state = "running"
        mapped = ", ".join(f"{e.role}={e.thread_id}" for e in self.topics.entries.values()) if self.topics else "-"
        log.info("telegram: @%s running (%s), forum %s, topics: %s", self.username, self.settings.mode,
                 self.forum_id, mapped or "none")

    async def _set_commands(self) -> None:
        try:
            await self.app.bot.set_my_commands([BotCommand(c, d) for c, d in COMMANDS])
        except TelegramError as exc:
            log.warning("telegram: setMyCommands failed (%s); commands still work, the menu is not shown", exc)

    async def stop_intake(self) -> None:
        """Stop receiving updates (queued ones are still answered by :meth:`stop`)."""
        self.meetings.begin_stop()  # from now on an ended meeting's decision and minutes go out first
        if not self.accepting:
            return
        self.accepting = False
        updater = self.app.updater
        if updater is not None and updater.running:
            try:
                await updater.stop()
            except TelegramError as exc:
                log.warning("telegram: stopping the poller: %s", exc)

    async def stop(self) -> None:
        """Stop intake, answer what was already received (up to the drain timeout), shut down."""
        if self.state not in ("running", "stopping"):
            return
        self.state = "stopping"
        await self.stop_intake()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.drain_timeout
        while not self.app.update_queue.empty() and loop.time() < deadline:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0)
        remaining = deadline - loop.time()
        await asyncio.gather(self.lanes.drain(max(0.0, remaining)), self.meetings.drain(max(0.5, remaining)))
        await self._shutdown_app()
        self.state = "stopped"
        log.info("telegram: stopped (sent %d, failed %d, 429 retries %d)", self.outbound.sent,
                 self.outbound.failed, self.outbound.retried_429)

    async def _shutdown_app(self) -> None:
        try:
            if self.app.running:
                await self.app.stop()
            await self.app.shutdown()
        except Exception:  # noqa: BLE001 - shutting down anyway
            log.exception("telegram: shutdown failed")

    # -- inbound ---------------------------------------------------------------------

    async def _on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """PTB handler: put the message into its place's lane (no awaits: keeps order)."""
        message = update.message
        if message is None or (message.from_user is not None and message.from_user.is_bot):
            return
        place = place_of(message)
        self.lanes.submit(place.lane, lambda: self.process(message, place))

    async def process(self, message: Message, place: Place) -> None:
        """Answer one message (runs in its lane)."""
        user = message.from_user
        if not self.gate.allows(user.id if user else None, place):
            await self._maybe_tell_unauthorised(message, place)
            return
        text = message.text if message.text is not None else message.caption
        target = Target(place.chat_id, place.thread_id, reply_to=message.message_id)
        chat, msg_id = str(place.chat_id), str(message.message_id)
        if text is None or not text.strip():
            if await self.inbox.claim(chat, msg_id):  # dedupe first: a redelivered photo is told once
                await self._send_quietly(target, TEXT_ONLY)
                await self.inbox.done(chat, msg_id, "not_text")
            return
        addressed = _ADDRESSED.match(text)
        if addressed and self.username and addressed.group(1).lower() != self.username.lower():
            return  # a command for another bot in the same group
        role_hint = None
        if self.topics is not None and place.chat_id == self.forum_id:
            role_hint = self.topics.role_for(place.thread_id)
        envelope = to_envelope(message, text, role_hint=role_hint, owner_id=self.gate.owner_id)
        if not await self.inbox.claim(chat, msg_id, envelope):
            return
        await self._answer(envelope)

    async def _answer(self, envelope: Envelope, reply: Reply | None = None) -> None:
        """Answer a claimed message, or deliver the reply the board already gave (a message
        taken up again after a restart), and record in the inbox how far it got."""
        chat, msg_id = envelope.chat_id, envelope.message_id or ""
        if reply is None:
            target = Target(int(chat), envelope.thread_id, reply_to=int(msg_id) if msg_id.isdigit() else None)
            try:
                async with self.outbound.keep_typing(target):
                    reply = await self.board.handle(envelope)
            except Exception:  # noqa: BLE001 - the user gets an answer, the log the traceback
                log.exception("telegram: answering message %s in chat %s failed", msg_id, chat)
                reply = Reply.to(envelope, role="general", name="Sabha", emoji="⚠️", text=ANSWER_FAILED,
                                 kind="error")
        await self.inbox.sending(chat, msg_id, reply)
        progress = SendProgress()
        try:
            await self.outbound.deliver(reply, progress=progress)
        except SendFailed as exc:
            log.error("telegram: reply to message %s in chat %s not delivered: %s", msg_id, chat, exc)
            await self.inbox.done(chat, msg_id, "failed")
            return
        except asyncio.CancelledError:
            if progress.untouched:  # stopped while waiting for the chat's budget: send it at the next start
                await self.inbox.unsent(chat, msg_id)
            raise
        await self.inbox.done(chat, msg_id, "answered")

    async def _resume(self) -> None:
        """Queue the messages a crash or a cut-short shutdown left unanswered (before new ones)."""
        max_age = timedelta(seconds=self.resume_max_age_s)
        for item in await self.inbox.resume(max_age):
            envelope = item.envelope
            try:
                place = Place(int(envelope.chat_id), envelope.thread_id, envelope.is_group)
            except ValueError:
                log.warning("telegram: message %s has an unusable chat id %r; not answering it",
                            item.message_id, envelope.chat_id)
                await self.inbox.done(item.chat_id, item.message_id, "abandoned")
                continue
            sender = int(envelope.sender) if envelope.sender.lstrip("-").isdigit() else None
            if not self.gate.allows(sender, place):  # the config may have changed since
                await self.inbox.done(item.chat_id, item.message_id, "denied")
                continue
            self.lanes.submit(place.lane, lambda e=envelope, r=item.reply: self._answer(e, r))  # type: ignore[misc]

    async def _maybe_tell_unauthorised(self, message: Message, place: Place) -> None:
        user = message.from_user
        if place.is_group or user is None or not self.settings.reply_unauthorised:
            return
        if user.id in self._told_unauthorised:
            return
        self._told_unauthorised.add(user.id)
        await self._send_quietly(Target(place.chat_id), NOT_AUTHORISED.format(user_id=user.id))

    async def _send_quietly(self, target: Target, text: str) -> None:
        try:
            await self.outbound.send(target, text)
        except SendFailed as exc:
            log.warning("telegram: %s", exc)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram: error while handling an update: %s", context.error, exc_info=context.error)

    # -- status ----------------------------------------------------------------------

    def status_lines(self) -> list[str]:
        """Lines for ``/status``."""
        lines = [f"telegram: {self.state} as @{self.username or '?'} ({self.settings.mode})"]
        if self.forum_id is not None and self.topics is not None:
            mapped = ", ".join(f"{e.role} #{e.thread_id}" for e in sorted(self.topics.entries.values(),
                                                                        key=lambda e: e.role))
            lines.append(f"  forum {self.forum_id}: general in General; {mapped or 'no topics mapped'}")
            missing = self.topics.missing(self.board.souls.roles())
            if missing:
                lines.append(f"  roles without a topic: {', '.join(missing)}")
            if self.topics.problem:
                lines.append(f"  problem: {self.topics.problem}")
        else:
            lines.append("  no forum configured (telegram.group_id): DMs only")
        o = self.outbound
        lines.append(f"  busy places {self.lanes.busy}, queued {self.lanes.pending}; sent {o.sent}, failed {o.failed} "
                     f"({o.unknown} may have arrived), 429 retries {o.retried_429}; denied {self.gate.denied_count}, "
                     f"duplicates {self.inbox.duplicates}; taken up after a restart {self.inbox.resumed}, "
                     f"given up {self.inbox.abandoned}")
        return lines

    def describe(self) -> dict[str, Any]:
        """Machine-readable status (the daemon's /healthz)."""
        return {
            "state": self.state,
            "mode": self.settings.mode,
            "bot": self.username,
            "forum": self.forum_id,
            "topics": {e.role: e.thread_id for e in self.topics.entries.values()} if self.topics else {},
            "problem": self.topics.problem if self.topics else None,
        }


def build(board: Board, loaded: LoadedConfig, intake: Any) -> TelegramChannel:
    """The plugin factory: the channel for ``loaded``'s ``telegram`` section."""
    return TelegramChannel(board, loaded.config.telegram,
                           resume_max_age_s=loaded.config.inbox.resume_max_age_s)
