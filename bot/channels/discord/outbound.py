"""Sending to Discord through discord.py's REST client: where a reply goes (:meth:`DiscordOutbound.target`), a
message posted (:meth:`DiscordOutbound.post`) or edited (:meth:`DiscordOutbound.edit`), and what a failure means
for the intake (:class:`bot.intake.delivery.SendFailed`).

Where: a thread Sabha is to start for a question (:class:`.store.DiscordPlaceKind` thread, not started) is created from
the question's message first (``POST /channels/{channel}/messages/{message}/threads``; Discord allows one thread
per message and gives it the message's id, so a second try finds it made: error 160004 counts as done); a DM
chat (``dm-<user>``) is the user's DM channel (``POST /users/@me/channels``, the same channel every time).

Every message goes with ``allowed_mentions`` none (an ``@everyone`` in an answer pings nobody) and with a
``nonce`` naming the reply's part (``<question id>.<part>``): discord.py sends ``enforce_nonce``, so Discord
returns the message already made instead of a second one when the same part is sent again within a few minutes
(a resend after a dropped connection). The request's departure is told to the delivery's progress
(:mod:`.departure`); discord.py waits out rate limits (buckets, a 429's ``retry_after``) before that.

Failures: Discord's 4xx answer (a refusal: missing access, unknown channel, a bad body) posted nothing
(``not_sent``); a 5xx after discord.py's retries, or a connection lost after the request left, may have posted
it (``may_have_arrived``); before it left, nothing (``not_sent``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

import aiohttp
import discord

from bot.channels.discord.config import DM_PREFIX
from bot.channels.discord.departure import sending
from bot.channels.discord.store import DiscordPlaceKind, PlaceStore
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress

__all__ = ["THREAD_EXISTS", "DiscordOutbound", "failure", "nonce_of"]

log = logging.getLogger("sabha.discord")

#: Discord's error code for "a thread has already been created for this message".
THREAD_EXISTS = 160004
THREAD_NAME_CHARS = 100
#: A week without messages before Discord archives a thread (it reopens on the next message).
ARCHIVE_MINUTES: Literal[10080] = 10080
NO_MENTIONS = discord.AllowedMentions.none()


def failure(exc: BaseException, progress: SendProgress | None, what: str) -> SendFailed:
    """What ``exc`` (raised by a request of ``progress``'s delivery) means for the intake."""
    left = progress is not None and progress.in_flight
    if isinstance(exc, discord.HTTPException) and exc.status < 500:
        return SendFailed(f"Discord refused {what}: {exc.status} {exc.text or exc}", DeliveryOutcome.NOT_SENT)
    outcome = DeliveryOutcome.MAY_HAVE_ARRIVED if left else DeliveryOutcome.NOT_SENT
    detail = f"{exc.status} {exc.text}" if isinstance(exc, discord.HTTPException) else f"{type(exc).__name__}: {exc}"
    return SendFailed(f"{what} failed ({detail})", outcome)


class DiscordOutbound:
    """See the module docstring."""

    def __init__(self, client: discord.Client, places: PlaceStore, *,
                 thread_name: Callable[[str], str | None] = lambda message_id: None) -> None:
        self.client = client
        self.places = places
        self.thread_name = thread_name  # the question's first words, while known (else the answerer's name)
        self.sent = 0
        self.refused = 0
        self._dm: dict[str, int] = {}

    async def target(self, chat_id: str, label: str = "") -> int:
        """The Discord channel a reply to ``chat_id`` goes into (its thread started, its DM channel opened)."""
        if chat_id.startswith(DM_PREFIX):
            user = chat_id.removeprefix(DM_PREFIX)
            if user not in self._dm:
                dm = await self.client.create_dm(discord.Object(int(user)))
                self._dm[user] = dm.id
            return self._dm[user]
        place = self.places.get(chat_id)
        if place is not None and place.kind is DiscordPlaceKind.THREAD and not place.started and place.parent_id:
            await self._start_thread(place.parent_id, chat_id, label)
        return int(chat_id)

    async def _start_thread(self, parent_id: str, message_id: str, label: str) -> None:
        name = (self.thread_name(message_id) or label or "The board").strip()[:THREAD_NAME_CHARS] or "The board"
        try:
            await self.client.http.start_thread_with_message(parent_id, message_id, name=name,
                                                             auto_archive_duration=ARCHIVE_MINUTES)
            log.info("discord: started thread %s in channel %s", message_id, parent_id)
        except discord.HTTPException as exc:
            if exc.code != THREAD_EXISTS:
                raise
        await self.places.started(message_id)

    async def post(self, channel_id: int, text: str, progress: SendProgress | None, *,
                   reply_to: str | None = None, nonce: str | None = None, view: Any = None) -> int:
        """Post ``text`` into ``channel_id``, quoting ``reply_to`` (when it is in that channel); its message id."""
        channel = self.client.get_partial_messageable(channel_id)
        extra: dict[str, Any] = {"view": view} if view is not None else {}
        if reply_to is not None and reply_to.isdigit() and int(reply_to) != channel_id:
            extra["reference"] = discord.MessageReference(message_id=int(reply_to), channel_id=channel_id,
                                                          fail_if_not_exists=False)
        if nonce is not None:
            extra["nonce"] = nonce
        try:
            with sending(progress):
                message = await channel.send(text, allowed_mentions=NO_MENTIONS, **extra)
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            self.refused += 1
            raise failure(exc, progress, f"posting to channel {channel_id}") from exc
        self.sent += 1
        if progress is not None:
            progress.posted += 1
            progress.in_flight = False
        return message.id

    async def edit(self, channel_id: int, message_id: int, text: str, progress: SendProgress | None = None, *,
                   view: Any = None) -> None:
        """Replace the content of message ``message_id`` in ``channel_id`` with ``text`` (and its components with
        ``view``'s, when given)."""
        message = self.client.get_partial_messageable(channel_id).get_partial_message(message_id)
        extra: dict[str, Any] = {"view": view} if view is not None else {}
        try:
            with sending(progress):
                await message.edit(content=text, allowed_mentions=NO_MENTIONS, **extra)
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise failure(exc, progress, f"editing message {message_id}") from exc
        if progress is not None:
            progress.posted += 1
            progress.in_flight = False


def nonce_of(reply_to: str | None, part: int) -> str | None:
    """The nonce of part ``part`` of the answer to ``reply_to`` (at most 25 characters, as Discord allows)."""
    if not reply_to or not reply_to.isdigit():
        return None
    return f"{reply_to}.{part}"[:25]



