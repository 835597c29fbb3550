"""The Discord channel: the gateway in (discord.py), REST out, the shared intake between.

A ``MESSAGE_CREATE`` is queued as it arrives and claimed in the intake by one receiver, in order and in batches
(:meth:`bot.intake.intake.Intake.receive`: stored before anything else happens; a message id seen before, a
replay after a ``RESUME`` or a message read again from history, is stored once and answered once). Where a
message sits and who it is to the board is :mod:`.inbound`'s; who may talk is :mod:`.access`'s. The gateway has
no acknowledgement: after a restart, a new session, what was sent meanwhile is read from each place's history
(:mod:`.catchup`).

Answers go where their question was: into the thread the question started (created from it on the first
answer), the thread or forum post it was asked in, or the DM; headed by the advisor's name, split at 2,000
characters, shown while written (:mod:`.stream`) and then edited into their final text (:mod:`.outbound`).

Readiness (``/readyz``): not ready while REST cannot be reached (:class:`bot.channels.reach.Reach`, probing
``GET /users/@me``) or the gateway is not connected (between a drop and the ``RESUMED`` or ``READY`` after it).

Seams for the rest of the channel (buttons, slash commands, attachments, meetings): ``DiscordChannel.interactions``
(an ``INTERACTION_CREATE`` handler), ``DiscordChannel.components`` (the discord.py view under a reply with
buttons), ``DiscordChannel.attachments_of`` (a message's files as :class:`board.media.attachment.Attachment`
references, stored with it) and the ``FetchesMedia`` capability's ``fetch_media``, to be declared with the
attachments' reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import aiohttp
import discord
from aiohttp import web

from board.commands.about import CHAIR_ADDRESSING, Addressing
from board.envelope import Button, Envelope, Reply
from board.llm.stream import StreamSink
from board.media.attachment import Attachment
from board.media.blobs import BlobSink
from board.roles import GENERAL
from board.spending.allowance import MEETINGS_CLOSED, PublicTerms
from bot.channels.base import ChannelError, Reconfigures, repeating
from bot.channels.discord.access import SCOPE, DiscordAccessPolicy
from bot.channels.discord.catchup import catch_up
from bot.channels.discord.config import DM_PREFIX, DiscordSection
from bot.channels.discord.features import ChannelSide, DiscordFeatures
from bot.channels.discord.format import MAX_CHARS, headed, split_text
from bot.channels.discord.gateway import BoardClient, GatewayHooks, incoming_of, point_at, point_at_gateway
from bot.channels.discord.inbound import Ignored, Incoming, Where, place_of
from bot.channels.discord.interactions import interaction_of
from bot.channels.discord.outbound import DiscordOutbound, failure, nonce_of
from bot.channels.discord.store import PlaceStore
from bot.channels.discord.stream import StreamedAnswer
from bot.channels.parts import ChannelParts
from bot.channels.public_limits import CAP_REACHED
from bot.channels.reach import Reach, Unreachable
from bot.channels.receipt import ReceivedVia, received
from bot.channels.seen_once import SeenOnce
from bot.intake.courier import Admission, ChannelTexts, FetchesMedia, ResolvesSender, Streams, UniqueMessageIds
from bot.intake.delivery import SendProgress
from bot.intake.inbox import Arrival
from bot.intake.intake import Intake, IntakeHub, StorageUnavailable

if TYPE_CHECKING:
    from bot.config import LoadedConfig

__all__ = ["DiscordChannel", "build", "public_terms"]

log = logging.getLogger("sabha.discord")

TEXTS = ChannelTexts()
TYPING_REFRESH_S = 8.0  # Discord shows "is typing" for about 10 s
RECEIVE_RETRY_S = 1.0  # the state db refused a batch: tried again this often while the channel runs
QUESTION_NAME_CHARS = 90  # a thread started for a question is named after its first words
NOT_OURS_KEPT = 4096  # channels remembered as not the board's (the oldest forgotten first)
ADDRESSING = Addressing((
    ("<message> in an advisor's channel", "that advisor answers, in a thread started from your message"),
    ("@finance <question> in the board channel", "that advisor answers in a thread (plain words: the chair)"),
    ("<message> in a thread", "the thread's advisor answers there"),
    *CHAIR_ADDRESSING.rows[1:]))

Components = Callable[[tuple[Button, ...]], Any]  # the discord.py view for a reply's buttons (None: none)
AttachmentsOf = Callable[[discord.Message], tuple[Attachment, ...]]  # a message's files, as references


class DiscordChannel(UniqueMessageIds, ResolvesSender, Streams, FetchesMedia, Reconfigures[DiscordSection]):
    """One bot in one server; see the module docstring. Discord's message ids (snowflakes) are unique across
    every channel, so a message is recognised by its id alone."""

    name = "discord"
    texts = TEXTS

    def __init__(self, parts: ChannelParts, settings: DiscordSection, *, hub: IntakeHub | None = None) -> None:
        if not settings.enabled or settings.token is None:
            raise ChannelError("discord.token and discord.application_id must be set (see docs/discord.md)")
        self.uses = parts
        self.settings = settings
        parts.commands.describe_channel(self.name, ADDRESSING)
        point_at(settings.api_base_url)
        self.owns_hub = hub is None
        self.hub = hub or IntakeHub()
        self.places = PlaceStore(parts.db)
        self.access = DiscordAccessPolicy(settings, parts.db,
                                          closed=lambda usd: parts.spend.closed("public", SCOPE, usd))
        parts.money.set_public_terms(public_terms(settings))
        self.interactions: Callable[[discord.Interaction], Awaitable[None]] | None = None  # components' seam
        self.components: Components | None = None  # components' seam: the view under a reply's buttons
        self.attachments_of: AttachmentsOf | None = None  # attachments' seam: a message's files, as references
        self.client = BoardClient(GatewayHooks(message=self._arrived, ready=self._ready, resumed=self._resumed,
                                               disconnected=self._disconnected, interaction=self._interaction))
        self._questions: dict[str, str] = {}  # a question's first words, to name the thread it starts
        self.outbound = DiscordOutbound(self.client, self.places, thread_name=self._questions.get)
        self.reach = Reach(self.name, f"Discord's API at {settings.api_base_url}", self._probe)
        self.intake: Intake = self.hub.intake(parts.intake, self)
        self.features = DiscordFeatures(parts, settings, ChannelSide(  # buttons, slash commands, files, meetings
            client=self.client, outbound=self.outbound, places=self.places, is_owner=self.access.is_owner,
            is_public=self.access.is_public, may_use=self._may_use, lane=self.conversation,
            receive=self.intake.receive, texts=self.texts))
        self.interactions = self.features.interactions.handle
        self.components = self.features.view
        self.attachments_of = self.features.attachments
        self.drafts: dict[tuple[str, str], StreamedAnswer] = {}
        self.state = "created"
        self.gateway_problem: str | None = "the gateway is not connected yet"
        self.counts = {"received": 0, "ignored": 0, "caught_up": 0, "too_old": 0}
        self._queue: asyncio.Queue[discord.Message] = asyncio.Queue()
        self._live_held: list[discord.Message] | None = None  # the gateway's messages while a catch-up runs
        self._tasks: list[asyncio.Task[None]] = []
        self._logged = SeenOnce()
        self._not_ours: OrderedDict[str, None] = OrderedDict()  # channels found not the board's: not asked again
        self._accepting = False

    def reconfigure(self, section: DiscordSection) -> None:
        """Apply what may change while running (SIGHUP): access, the allowlist, the public limits, streaming. The
        places (channels, board and forum channels) and the token need a restart."""
        self.access.apply(section)
        self.settings = self.settings.model_copy(update={
            "access": section.access, "allowed_user_ids": list(section.allowed_user_ids),
            "public_rate_per_minute": section.public_rate_per_minute, "public_daily_usd": section.public_daily_usd,
            "stream": section.stream, "stream_edit_interval_s": section.stream_edit_interval_s,
            "catch_up_hours": section.catch_up_hours})
        self.uses.money.set_public_terms(public_terms(self.settings))

    # -- what the intake needs (bot.intake.courier.Courier) -----------------------------

    def admit(self, envelope: Envelope) -> Admission:
        """Allowlist or public mode (:mod:`.access`)."""
        return self.access.admit(envelope.sender)

    def current(self, envelope: Envelope) -> Envelope:
        """``envelope`` with who its sender is now (the owner, a stranger: the config may have been reloaded)."""
        owner, public = self.access.is_owner(envelope.sender), self.access.is_public(envelope.sender)
        if (owner, public) == (envelope.is_owner, envelope.is_public):
            return envelope
        return dataclasses.replace(envelope, is_owner=owner, is_public=public)

    def conversation(self, envelope: Envelope) -> str:
        """A thread is one conversation, a user's DMs another."""
        return f"discord:{envelope.chat_id}"

    @contextlib.asynccontextmanager
    async def typing(self, envelope: Envelope) -> AsyncIterator[None]:
        """"Sabha is typing…" in a DM or a thread that exists, renewed while the turn runs (a question's own thread
        does not exist before its answer starts it: nothing is shown there)."""
        place = self.places.get(envelope.chat_id)
        if not envelope.chat_id.startswith(DM_PREFIX) and (place is None or not place.started):
            yield
            return
        async with repeating(lambda: self._typing(envelope.chat_id), TYPING_REFRESH_S, "discord typing"):
            yield

    async def _typing(self, chat_id: str) -> None:
        try:
            await self.client.http.send_typing(await self.outbound.target(chat_id))
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.debug("discord: typing in %s not shown (%s)", chat_id, exc)

    @contextlib.asynccontextmanager
    async def stream(self, envelope: Envelope) -> AsyncIterator[StreamSink | None]:
        """The answer to ``envelope`` shown while it is written (:mod:`.stream`), when ``discord.stream`` is on."""
        if not self.settings.stream or envelope.message_id is None or interaction_of(envelope.message_id):
            yield None
            return
        chat = envelope.chat_id
        sink = StreamedAnswer(self.outbound, lambda label: self.outbound.target(chat, label),
                              interval=self.settings.stream_edit_interval_s)
        key = (chat, envelope.message_id)
        self.drafts[key] = sink
        try:
            yield sink
        finally:
            await sink.settle()
            if sink.message_id is None:
                self.drafts.pop(key, None)

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        """Post ``reply`` where its question was (see the module docstring): its first message over the streamed
        draft when there is one, the rest after it; a copy sent once more (``progress.skip``, ``progress.heading``)
        starts after the messages Discord confirmed, headed by the "possibly repeated" line."""
        if await self.features.deliver(reply, progress):  # an interaction's answer: its follow-up
            return
        draft = self.drafts.pop((reply.chat_id, reply.reply_to or ""), None)
        named = reply.kind in ("answer", "meeting", "command")
        pieces = split_text(headed(reply.label if named else "", reply.text)) or ["(empty answer)"]
        channel_id = await self._target(reply, progress)
        self._questions.pop(reply.chat_id, None)  # its thread exists now: named
        view = self.components(reply.buttons) if self.components is not None and reply.buttons else None
        skip = progress.skip
        for i, piece in enumerate(pieces[skip:], start=skip):
            progress.part = f"{i + 1}/{len(pieces)}" if len(pieces) > 1 else ""
            last = i == len(pieces) - 1
            texts = [piece]
            if skip and i == skip and progress.heading:
                joined = f"{progress.heading}\n\n{piece}"
                texts = [joined] if len(joined) <= MAX_CHARS else [progress.heading, piece]
            for n, text in enumerate(texts):
                first = i == skip and n == 0
                extra = view if last and n == len(texts) - 1 else None
                if first and draft is not None and draft.message_id is not None and not progress.again and not skip:
                    await self.outbound.edit(channel_id, draft.message_id, text, progress, view=extra)
                    progress.note = "edited over the streamed draft"
                else:
                    await self.outbound.post(channel_id, text, progress, reply_to=reply.reply_to if first else None,
                                             nonce=nonce_of(reply.reply_to, i * 2 + n), view=extra)
            await progress.part_done(i + 1, len(pieces))

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        """An attachment's bytes, from Discord's CDN (:mod:`.attachments`)."""
        await self.features.fetch_media(attachment, sink)

    async def _target(self, reply: Reply, progress: SendProgress) -> int:
        try:
            return await self.outbound.target(reply.chat_id, reply.label)
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise failure(exc, progress, f"opening the conversation {reply.chat_id}") from exc

    # -- receiving -------------------------------------------------------------------

    def _arrived(self, message: discord.Message) -> None:
        """A gateway ``MESSAGE_CREATE``: queued for the receiver, in order; from the connection (or a drop) until
        the session is back and a new session's catch-up has read the history, it waits behind it (a newer message
        stored first would move its place's mark past older ones not yet stored: those would not be read; discord.py
        dispatches messages while it waits for the server's channels between ``READY`` and ``on_ready``)."""
        if not self._accepting:
            return
        if self._live_held is not None:
            self._live_held.append(message)
        else:
            self._queue.put_nowait(message)

    async def _receive_loop(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty() and len(batch) < 100:
                batch.append(self._queue.get_nowait())
            with self.hub.receiving(), received(self.name, ReceivedVia.GATEWAY, len(batch)):
                read = self.attachments_of
                await self._take([incoming_of(m, read(m) if read is not None else ()) for m in batch])

    async def _take(self, batch: list[Incoming]) -> None:
        """Claim ``batch`` in the intake (retrying while the state db refuses), then move each place's mark."""
        while True:
            try:
                await self.access.refresh()  # what strangers spent today (public mode; at most once a second)
                arrivals = [a for a in [await self._arrival(m) for m in batch] if a is not None]
                if arrivals:
                    await self.intake.receive([a for a, _ in arrivals])
                for _, (channel_id, message_id) in arrivals:
                    await self.places.seen(channel_id, message_id)
                return
            except StorageUnavailable:
                log.warning("discord: cannot store %d message(s) right now; trying again", len(batch))
            except Exception as exc:
                from bot.intake.storage import is_storage_error

                if not is_storage_error(exc):
                    raise
                self.hub.storage.failed(exc, "recording Discord places")
            await asyncio.sleep(RECEIVE_RETRY_S)

    async def _arrival(self, message: Incoming) -> tuple[Arrival, tuple[str, str]] | None:
        known = self.places.known()
        bot_id = str(self.client.user.id) if self.client.user is not None else None
        where = place_of(message, self.settings, known, bot_id)
        if where is Ignored.UNKNOWN_THREAD and message.channel_id in self._not_ours:
            where = Ignored.CHANNEL
        elif where is Ignored.UNKNOWN_THREAD:
            looked_up = await self._with_parent(message)
            if looked_up is not None:
                where = place_of(looked_up, self.settings, known, bot_id)
                if isinstance(where, Ignored):  # not a thread of the board's places: it never becomes one
                    self._not_ours[message.channel_id] = None
                    if len(self._not_ours) > NOT_OURS_KEPT:
                        self._not_ours.popitem(last=False)
        if isinstance(where, Ignored):
            self.counts["ignored"] += 1
            if where not in (Ignored.OWN, Ignored.BOT, Ignored.SYSTEM) and self._logged.first(message.channel_id,
                                                                                                where.value):
                log.info("discord: ignored %s (channel %s; further ones there are not logged)", where.value,
                         message.channel_id)
            return None
        self.counts["received"] += 1
        envelope = Envelope(channel=self.name, text=message.content, sender=message.author_id,
                            chat_id=where.chat_id, message_id=message.message_id, sender_name=message.author_name,
                            is_group=where.is_group, is_owner=self.access.is_owner(message.author_id),
                            is_public=self.access.is_public(message.author_id), role_hint=where.role,
                            attachments=message.attachments)
        if self._may_use(message.author_id):  # a stranger refused at the door leaves no places, fixes no advisor
            await self._record(where, envelope)
        return Arrival(envelope, self.conversation(envelope)), (message.channel_id, message.message_id)

    async def _record(self, where: Where, envelope: Envelope) -> None:
        """Record the places ``where`` names, first seen (before the claim: an answer must find its thread's
        parent); a new board or forum thread keeps the advisor its first words address."""
        if self.places.get(where.place.channel_id) is None:
            place = where.place
            if where.addressed_role_sticks and where.starts_thread is None:
                place = dataclasses.replace(place, role=self._addressed(envelope))
            await self.places.put(place)
        thread = where.starts_thread
        if thread is not None and self.places.get(thread.channel_id) is None:
            self._questions[thread.channel_id] = " ".join(envelope.text.split())[:QUESTION_NAME_CHARS]
            if where.addressed_role_sticks:
                thread = dataclasses.replace(thread, role=self._addressed(envelope))
            await self.places.put(thread)

    def _addressed(self, envelope: Envelope) -> str | None:
        """The advisor the first words of a board or forum thread address (they keep it); None: the chair."""
        route = self.uses.router().route(envelope)
        if route.kind == "chat" and not route.error and route.role != GENERAL:
            return route.role
        return None

    def _may_use(self, user: str) -> bool:
        """``user`` is listed, or the channel is public (a stranger's message is still limited at the door)."""
        return user in self.access.allowed or self.access.is_public(user)

    async def _with_parent(self, message: Incoming) -> Incoming | None:
        """``message`` with its thread's channel, asked of Discord (a thread not in discord.py's cache); None: Discord
        could not be asked."""
        try:
            channel = await self.client.fetch_channel(int(message.channel_id))
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning("discord: could not look up channel %s (%s)", message.channel_id, exc)
            return None
        parent = channel.parent_id if isinstance(channel, discord.Thread) else None
        return dataclasses.replace(message, parent_id=str(parent)) if parent is not None else message

    async def _interaction(self, interaction: discord.Interaction) -> None:
        if self.interactions is not None:
            await self.interactions(interaction)

    # -- the gateway's life ------------------------------------------------------------

    async def _ready(self) -> None:
        """A new session: nothing is replayed, so what was sent meanwhile is read from history (the gateway's new
        messages wait behind it, see :meth:`_arrived`)."""
        self.gateway_problem = None
        if self._live_held is None:
            self._live_held = []
        try:
            caught = await catch_up(self.client, self.places.all(), self._caught,
                                    max_age_hours=self.settings.catch_up_hours, guild_ids=self._guild_ids(),
                                    watched=self._watched())
        finally:
            self._release_held()
        self.counts["caught_up"] += caught.fed
        self.counts["too_old"] += caught.too_old

    def _guild_ids(self) -> list[int]:
        """The servers whose new threads a catch-up looks for: ``discord.guild_id``, else every one the bot is in."""
        if self.settings.guild_id:
            return [int(self.settings.guild_id)]
        return [guild.id for guild in self.client.guilds]

    def _watched(self) -> set[str]:
        """The channels whose threads are conversations: the advisors', the board channel, the forum."""
        settings = self.settings
        return {c for c in (*settings.channels.values(), settings.board_channel, settings.forum_channel) if c}

    def _caught(self, message: discord.Message) -> None:
        if self._accepting:
            self._queue.put_nowait(message)

    def _resumed(self) -> None:
        """The session resumed: the gateway has replayed what was missed; what was held follows it."""
        self.gateway_problem = None
        self._release_held()

    def _release_held(self) -> None:
        held, self._live_held = self._live_held, None
        for message in held or ():
            self._queue.put_nowait(message)

    def _disconnected(self) -> None:
        """No connection: the gateway's next messages are held until the session is back (a ``RESUMED``, or the
        catch-up after a new session's ``on_ready``)."""
        if self._live_held is None:
            self._live_held = []
        if self.state == "running" and self.gateway_problem is None:
            log.warning("discord: the gateway connection dropped; reconnecting (not ready until it is back)")
        self.gateway_problem = "the gateway connection dropped (reconnecting)"

    async def _probe(self) -> None:
        try:
            await self.client.http.request(discord.http.Route("GET", "/users/@me"))
        except discord.HTTPException:
            return  # an answer, even an error, means Discord is reachable
        except (aiohttp.ClientError, OSError) as exc:
            raise Unreachable(f"{type(exc).__name__}: {exc}") from exc

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Log in (the token checked), load the places, take up what is pending, connect the gateway."""
        self.state = "starting"
        assert self.settings.token is not None
        try:
            await self.client.login(self.settings.token.get_secret_value())
            _, url, _ = await self.client.http.get_bot_gateway()
        except discord.LoginFailure as exc:
            self.state = "failed"
            await self.client.close()
            raise ChannelError("discord.token was refused by Discord (401): copy the bot's token again from the "
                               "Developer Portal > your application > Bot > Reset Token") from exc
        except (discord.HTTPException, discord.GatewayNotFound, aiohttp.ClientError, OSError) as exc:
            self.state = "failed"
            await self.client.close()
            raise ChannelError(f"cannot reach Discord at {self.settings.api_base_url} ({exc}); check the network "
                               f"and discord.api_base_url") from exc
        point_at_gateway(url)
        await self.places.load()
        await self.intake.inbox.prune()
        await self.access.refresh()
        await self.intake.resume()
        self._accepting = True
        self._live_held = []  # discord.py dispatches messages between READY and on_ready: they wait for the catch-up
        self._tasks = [asyncio.create_task(self._receive_loop(), name="discord receiver"),
                       asyncio.create_task(self.client.run_gateway(), name="discord gateway")]
        self.reach.start()
        self.state = "running"
        await self.features.started()
        if self.settings.access.value == "allowlist" and not self.settings.allowed_user_ids:
            log.warning("discord: discord.allowed_user_ids is empty, so every message is ignored; add your user id "
                        "(Developer Mode > Copy User ID) or set discord.access: public")
        log.info("discord: bot %s running (%s), %d advisor channel(s)%s%s", self.client.user,
                 self.settings.access.value, len(self.settings.channels),
                 ", a board channel" if self.settings.board_channel else "",
                 ", a forum" if self.settings.forum_channel else "")

    async def stop_intake(self) -> None:
        """Stop taking messages (what arrives meanwhile is read from history at the next start)."""
        self._accepting = False

    async def stop(self, grace: float | None = None) -> None:
        """Stop taking messages, let running answers finish (when this channel owns its hub), disconnect."""
        if self.state not in ("running", "failed"):
            return
        self.state = "stopping"
        await self.stop_intake()
        await self.intake.wind_down(grace, owns_hub=self.owns_hub)
        await self.features.stopping()
        await self.reach.stop()
        await self.client.close()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        self.state = "stopped"
        log.info("discord: stopped (sent %d, refused %d)", self.outbound.sent, self.outbound.refused)

    # -- status ------------------------------------------------------------------------

    @property
    def problem(self) -> str | None:
        """Why Discord cannot be reached now (REST or the gateway), or None."""
        return self.reach.problem or self.gateway_problem

    def status_lines(self) -> list[str]:
        """Lines for ``/status`` and ``sabha status``."""
        c = self.counts
        lines = [f"discord: {self.state} as {self.client.user or '?'} ({self.settings.access.value})",
                 f"  received {c['received']} (caught up after a restart {c['caught_up']}, too old {c['too_old']}), "
                 f"ignored {c['ignored']}; sent {self.outbound.sent}, refused {self.outbound.refused}"]
        if self.problem:
            lines.append(f"  problem: {self.problem}")
        gate = self.access.gate
        if gate.refused_rate or gate.refused_cap:
            lines.append(f"  public mode refusals: rate {gate.refused_rate}, daily cap {gate.refused_cap} "
                         f"(spent today ${gate.spent_today:.4f} of ${gate.daily_usd:.2f})")
        lines.append(self.intake.status_line())
        return lines

    def describe(self) -> dict[str, Any]:
        """Machine-readable status (the daemon's /healthz and /readyz)."""
        return {"state": self.state, "user": str(self.client.user) if self.client.user else None,
                "access": self.settings.access.value, "sent": self.outbound.sent, "refused": self.outbound.refused,
                "received": self.counts["received"], "problem": self.problem}

    def routes(self) -> list[web.RouteDef]:
        """None: Discord comes over the gateway, not a webhook."""
        return []


def public_terms(settings: DiscordSection) -> PublicTerms:
    """What strangers may do and cost here (public mode): the board holds their model calls to it."""
    return PublicTerms("discord", daily_usd=settings.public_daily_usd, meetings=False, cap_text=CAP_REACHED,
                       meetings_text=MEETINGS_CLOSED)


def build(parts: ChannelParts, loaded: LoadedConfig, hub: IntakeHub) -> DiscordChannel:
    """The plugin factory: the channel for ``loaded``'s ``discord`` section."""
    return DiscordChannel(parts, loaded.config.discord, hub=hub)


