"""After a restart: the messages sent while Sabha was down, read from each place's history.

The gateway has no acknowledgement and replays nothing to a new session: a message sent while Sabha was down
(or killed with it in a queue not yet stored) reaches Sabha only through the channel's history. On every new
session (``READY``; a ``RESUME`` replays instead), :func:`catch_up` reads, for each place that has a stored
message (:class:`.store.PlaceStore`), ``GET /channels/{id}/messages?after=<the newest stored>`` (discord.py's
``history(after=..., oldest_first=True)``, 100 a page; a server's channel or thread read as discord.py knows it,
fetched when not cached, so each message carries its server and is answered where it was asked) and hands each
message to ``feed``, in order, as the gateway would have. The intake stores each message once (its id): one
claimed before the kill is not answered again, one it never saw is answered once.

Messages older than ``discord.catch_up_hours`` (24 h by default; 0: none) are not answered: after a long outage an
answer to a day-old question surprises more than it helps. They are counted and logged with the place.

A thread or a forum post *created* while Sabha was down has no stored message to read after: the server's active
threads are asked for (``GET /guilds/{guild}/threads/active``, :func:`new_threads`) and each one under a watched
channel or the forum (``watched``) that has nothing stored is read from its start (a forum post's first message
has the thread's id). A place Discord refuses to show (403, 404: the bot lost access) is logged and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import aiohttp
import discord

from bot.channels.discord.store import DiscordPlaceKind, Place

__all__ = ["CaughtUp", "catch_up", "new_threads"]

log = logging.getLogger("sabha.discord")


@dataclass(frozen=True)
class CaughtUp:
    """What one catch-up found: messages handed on, too old to answer, places that could not be read."""

    fed: int = 0
    too_old: int = 0
    unreadable: int = 0


async def new_threads(client: discord.Client, guild_ids: Iterable[int], watched: Collection[str],
                      places: list[Place]) -> list[tuple[Place, int]]:
    """The active threads under ``watched`` channels with no message stored from them, as places to read from
    their start (``last_message_id`` just before the thread's id), each with its server; a server Discord refuses
    to list is logged."""
    stored = {p.channel_id for p in places if p.last_message_id is not None}
    found: list[tuple[Place, int]] = []
    for guild_id in guild_ids:
        try:
            data = await client.http.get_active_threads(guild_id)
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning("discord: could not list the active threads of server %s (%s); a thread made while Sabha "
                        "was down is answered from its next message", guild_id, exc)
            continue
        for thread in data.get("threads") or ():
            tid, parent = str(thread.get("id") or ""), str(thread.get("parent_id") or "")
            if tid.isdigit() and parent in watched and tid not in stored:
                found.append((Place(tid, DiscordPlaceKind.THREAD, parent_id=parent,
                                    last_message_id=str(int(tid) - 1)), int(guild_id)))
    if found:
        log.info("discord: %d thread(s) with nothing stored from them (made while Sabha was down?) are read from "
                 "their start", len(found))
    return found


async def catch_up(client: discord.Client, places: list[Place], feed: Callable[[discord.Message], None], *,
                   max_age_hours: float, guild_ids: Iterable[int] = (), watched: Collection[str] = ()) -> CaughtUp:
    """Read each of ``places``' history after its newest stored message, and the new threads under ``watched``
    channels of the servers ``guild_ids`` from their start (see the module docstring)."""
    fed = too_old = unreadable = 0
    oldest = datetime.now(UTC) - timedelta(hours=max_age_hours)
    fresh = await new_threads(client, list(guild_ids), watched, places) if watched else []
    for place in [*places, *(p for p, _guild in fresh)]:
        if place.last_message_id is None or not place.started:
            continue
        old_here = 0
        try:
            channel = await _readable(client, place)
            async for message in channel.history(limit=None, after=discord.Object(int(place.last_message_id)),
                                                 oldest_first=True):
                if max_age_hours <= 0 or message.created_at < oldest:
                    old_here += 1
                    continue
                feed(message)
                fed += 1
        except (discord.HTTPException, discord.ClientException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            unreadable += 1
            log.warning("discord: could not read what was missed in channel %s (%s); its next message is "
                        "answered", place.channel_id, exc)
        if old_here:
            too_old += old_here
            log.warning("discord: %d message(s) in channel %s arrived while Sabha was down and are older than "
                        "discord.catch_up_hours (%g h); not answered", old_here, place.channel_id, max_age_hours)
    if fed or too_old:
        log.info("discord: caught up after the restart: %d message(s) sent while Sabha was down, %d too old",
                 fed, too_old)
    return CaughtUp(fed, too_old, unreadable)


async def _readable(client: discord.Client, place: Place) -> discord.abc.Messageable:
    """Where ``place``'s history is read: a server's channel or thread as discord.py knows it (its messages carry
    the server; read through a bare partial channel they would look like direct messages), a DM channel as is."""
    channel_id = int(place.channel_id)
    if place.kind is DiscordPlaceKind.DM:
        return client.get_partial_messageable(channel_id)
    channel = client.get_channel(channel_id) or await client.fetch_channel(channel_id)
    if not isinstance(channel, discord.abc.Messageable):
        raise discord.ClientException(f"channel {channel_id} holds no messages")
    return channel
