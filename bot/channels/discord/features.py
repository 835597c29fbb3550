"""What the Discord channel does besides messages, put together once: buttons, interactions, slash commands,
attachments and meetings (:class:`DiscordFeatures`), so the channel (:mod:`.channel`) needs only a few calls.

* buttons: a reply's buttons as the components under its last message (:func:`.components.button_view`);
* interactions: ``on_interaction`` is :meth:`.interactions.Interactions.handle`; where an interaction sits is
  decided as for a message (:func:`.inbound.place_of`): a button in a thread is that thread's conversation, a
  slash command in an advisor's or the board channel is that channel's own conversation (there is no message a
  thread could start from), in a DM the user's DM conversation;
* replies: one to an interaction goes as its follow-up while the token lives (:meth:`deliver`;
  :mod:`.followups`), else the channel posts it as usual;
* slash commands: registered once per start (:mod:`.commands`), the advisors as the choices of ``/board``;
* attachments: read from a message at receipt (:func:`.attachments.attachments_of`) and fetched in the lane
  (:class:`.attachments.DiscordMedia`);
* meetings: shown in a thread of their own (:mod:`.meeting`), opened beside the conversation they were called
  from (under the same text channel; in a DM or a forum post, in the conversation itself); a decision's buttons
  say its verdict once it is ruled on (:mod:`.verdicts`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
import discord

from board.envelope import Button, Envelope, Reply
from board.media.attachment import Attachment
from board.media.blobs import BlobSink
from bot.channels.discord.attachments import DiscordMedia, attachments_of
from bot.channels.discord.commands import SlashCommands
from bot.channels.discord.components import button_view
from bot.channels.discord.config import DiscordSection
from bot.channels.discord.departure import sending
from bot.channels.discord.followups import Followups, InteractionTokens
from bot.channels.discord.inbound import Ignored, Incoming, place_of
from bot.channels.discord.interactions import InteractionHooks, Interactions, Invocation, interaction_of
from bot.channels.discord.meeting import DiscordMeetings
from bot.channels.discord.outbound import ARCHIVE_MINUTES, DiscordOutbound
from bot.channels.discord.store import DiscordPlaceKind, Place, PlaceStore
from bot.channels.discord.verdicts import DecisionButtons
from bot.channels.meeting_posts import MeetingPosts
from bot.channels.parts import ChannelParts
from bot.intake.courier import ChannelTexts
from bot.intake.delivery import SendProgress
from bot.intake.inbox import Arrival

__all__ = ["ChannelSide", "DiscordFeatures"]

log = logging.getLogger("sabha.discord")

#: Discord's channel type of a public thread.
PUBLIC_THREAD: Literal[11] = 11


@dataclass(frozen=True)
class ChannelSide:
    """What the features use of the channel: its client, outbound, places, who its user is, the intake."""

    client: discord.Client
    outbound: DiscordOutbound
    places: PlaceStore
    is_owner: Callable[[str], bool]
    is_public: Callable[[str], bool]
    may_use: Callable[[str], bool]  # a listed member, or anyone while the channel is public
    lane: Callable[[Envelope], str]
    receive: Callable[[Sequence[Arrival]], Awaitable[None]]
    texts: ChannelTexts


class DiscordFeatures:
    """See the module docstring."""

    def __init__(self, parts: ChannelParts, settings: DiscordSection, side: ChannelSide) -> None:
        self.uses = parts
        self.settings = settings
        self.side = side
        self.tokens = InteractionTokens(parts.db)
        self.interactions = Interactions(
            InteractionHooks(envelope_for=self.envelope_for, may_use=lambda e: side.may_use(e.sender),
                             lane=side.lane, receive=side.receive),
            self.tokens, parts.commands.owner_only)
        self.followups = Followups(side.client, self.tokens, render=self._render, sending=sending,
                                   responded=self.interactions.responded)
        self.media = DiscordMedia(settings.api_base_url)
        self.slash = SlashCommands(side.client.http, settings.application_id or "", settings.guild_id)
        self.verdicts = DecisionButtons(parts.db, side.client)
        parts.decisions.subscribe(self.verdicts.changed)
        self.meetings = DiscordMeetings(self._post, self._open_thread, self._origin,
                                        record=MeetingPosts(parts.db, "discord"), room=parts.room,
                                        label_for=self._label, texts=side.texts, buttons_posted=self.verdicts.record)
        parts.room.subscribe(self.meetings)

    # -- the channel's calls ----------------------------------------------------------

    @staticmethod
    def view(buttons: tuple[Button, ...]) -> Any:
        """The components under a reply's last message (None: no buttons)."""
        return button_view(buttons)

    @staticmethod
    def attachments(message: discord.Message) -> tuple[Attachment, ...]:
        """What ``message`` carries besides text, as references (nothing downloaded)."""
        return attachments_of(message.attachments, flags=message.flags.value)

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        """The channel's download of an attachment (``FetchesMedia``)."""
        await self.media.fetch_media(attachment, sink)

    async def deliver(self, reply: Reply, progress: SendProgress) -> bool:
        """Send ``reply`` as its interaction's follow-up; False when it answers no interaction or the token cannot
        be used (the channel posts it)."""
        interaction = interaction_of(reply.reply_to)
        if interaction is None:
            return False
        return await self.followups.deliver(interaction, reply, progress)

    async def started(self) -> None:
        """The channel runs: register the slash commands (once per start), show meetings."""
        self.meetings.start()
        roles = {p.role: self._label(p.role) for p in self.uses.souls.profiles()}
        await self.slash.register(roles)
        try:
            await self.tokens.forget_before()
        except Exception as exc:  # noqa: BLE001 - old tokens are only clutter
            log.warning("discord: old interaction tokens could not be removed (%s)", exc)

    async def stopping(self, timeout: float = 10.0) -> None:
        """Post what meetings have queued, then stop showing them."""
        await self.meetings.drain(timeout)

    # -- interactions -----------------------------------------------------------------

    def envelope_for(self, invocation: Invocation) -> Envelope | None:
        """Where ``invocation`` sits, as the envelope of the message it stands for (None: not a place of the
        board's)."""
        from bot.channels.discord.interactions import message_id_of

        incoming = Incoming(message_id=message_id_of(invocation), channel_id=invocation.channel_id,
                            author_id=invocation.user_id, author_name=invocation.user_name, content=invocation.text,
                            guild_id=invocation.guild_id, parent_id=invocation.parent_id)
        known = {p.channel_id: p for p in self.side.places.all()}
        user = self.side.client.user
        where = place_of(incoming, self.settings, known, str(user.id) if user is not None else None)
        if isinstance(where, Ignored):
            log.info("discord: an interaction in channel %s was refused: %s", invocation.channel_id, where.value)
            return None
        chat_id = invocation.channel_id if where.starts_thread is not None else where.chat_id
        return Envelope(channel="discord", text=invocation.text, sender=invocation.user_id, chat_id=chat_id,
                        message_id=incoming.message_id, sender_name=invocation.user_name, is_group=where.is_group,
                        is_owner=self.side.is_owner(invocation.user_id),
                        is_public=self.side.is_public(invocation.user_id), role_hint=where.role)

    def _render(self, reply: Reply) -> str:
        from bot.channels.discord.format import headed

        named = reply.kind in ("answer", "meeting", "command")
        return headed(reply.label if named else "", reply.text)

    def _label(self, role: str) -> str:
        try:
            return self.uses.souls.profile(role).label
        except Exception:  # noqa: BLE001 - a missing soul: its role's name
            return role

    # -- meetings ---------------------------------------------------------------------

    async def _post(self, channel_id: int, text: str, progress: SendProgress | None,
                    buttons: tuple[Button, ...]) -> int:
        return await self.side.outbound.post(channel_id, text, progress, view=button_view(buttons))

    async def _origin(self, chat_id: str) -> int:
        return await self.side.outbound.target(chat_id)

    async def _open_thread(self, origin: str, name: str) -> tuple[int, bool]:
        """A public thread for a meeting beside the conversation ``origin`` (under its text channel); the
        conversation itself where none can be opened (a DM, a forum post, a refusal: logged)."""
        texts = {*self.settings.channels.values(), self.settings.board_channel} - {None}
        place = self.side.places.get(origin)
        parent: str | None = None
        if origin in texts:  # a slash command's conversation: the text channel itself
            parent = origin
        elif place is not None and place.kind is DiscordPlaceKind.THREAD and place.parent_id in texts:
            parent = place.parent_id
        if parent is None:
            return await self._origin(origin), False
        try:
            thread = await self.side.client.http.start_thread_without_message(
                parent, name=name, auto_archive_duration=ARCHIVE_MINUTES, type=PUBLIC_THREAD)
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.error("discord: a thread for the meeting could not be opened in channel %s (%s); it is shown in "
                      "the conversation it was called from", parent, exc)
            return await self._origin(origin), False
        thread_id = str(thread["id"])
        await self.side.places.put(Place(thread_id, DiscordPlaceKind.THREAD, parent_id=parent))
        log.info("discord: opened thread %s for a meeting in channel %s", thread_id, parent)
        return int(thread_id), True
