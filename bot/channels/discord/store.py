"""Discord's rows in the state db: the places the board has seen (:class:`PlaceStore`, table ``discord_places``).

A *place* is a Discord channel a message came from: an advisor's text channel, the board channel, the forum, a
thread, or the DM channel of one user. Each row says what the place is to the board (:class:`DiscordPlaceKind`), its
parent (a thread's channel; a DM channel's user), the advisor it addresses (an advisor's channel; a thread's
first question), whether a thread Sabha is to start for a question exists yet, and the newest message stored
from it. That last id is where the place's history is read from after a restart (:mod:`.catchup`): the gateway
replays nothing to a new session.

The rows are read once at start and kept in memory; every change is written through. Snowflakes are compared as
numbers (their text is not ordered).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from types import MappingProxyType

from board.storage import Database

__all__ = ["DiscordPlaceKind", "Place", "PlaceStore"]


class DiscordPlaceKind(StrEnum):
    """What a Discord channel is to the board."""

    ADVISOR = "advisor"  # a text channel of ``discord.channels``: its messages go to that role
    BOARD = "board"  # ``discord.board_channel``: addressed by name
    FORUM = "forum"  # ``discord.forum_channel`` (its posts are threads)
    THREAD = "thread"  # a conversation: a thread under one of the above
    DM = "dm"  # a user's direct messages with the bot


@dataclass(frozen=True)
class Place:
    """One row of ``discord_places``."""

    channel_id: str
    kind: DiscordPlaceKind
    parent_id: str | None = None
    role: str | None = None
    started: bool = True
    last_message_id: str | None = None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def newer(a: str | None, b: str | None) -> str | None:
    """The newer of two snowflakes (None is older than any)."""
    if a is None:
        return b
    if b is None:
        return a
    return a if int(a) >= int(b) else b


class PlaceStore:
    """The ``discord_places`` table, cached; see the module docstring."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._places: dict[str, Place] = {}

    async def load(self) -> None:
        """Read every row (at start)."""
        rows = await self.db.fetchall("SELECT channel_id, kind, parent_id, role, started, last_message_id "
                                      "FROM discord_places")
        self._places = {r["channel_id"]: Place(r["channel_id"], DiscordPlaceKind(r["kind"]), r["parent_id"], r["role"],
                                               bool(r["started"]), r["last_message_id"]) for r in rows}

    def get(self, channel_id: str) -> Place | None:
        """The place ``channel_id``, if seen."""
        return self._places.get(channel_id)

    def known(self) -> Mapping[str, Place]:
        """Every place seen, by channel id (a read-only view of the cache, not a copy)."""
        return MappingProxyType(self._places)

    def all(self) -> list[Place]:
        """Every place seen."""
        return list(self._places.values())

    async def put(self, place: Place) -> Place:
        """Record ``place`` (its last message id never moves back)."""
        old = self._places.get(place.channel_id)
        if old is not None:
            place = replace(place, last_message_id=newer(old.last_message_id, place.last_message_id))
            if old == place:
                return place
        self._places[place.channel_id] = place
        await self.db.execute(
            "INSERT INTO discord_places(channel_id, kind, parent_id, role, started, last_message_id, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (channel_id) DO UPDATE SET kind = excluded.kind, "
            "parent_id = excluded.parent_id, role = excluded.role, started = excluded.started, "
            "last_message_id = excluded.last_message_id, updated_at = excluded.updated_at",
            (place.channel_id, place.kind.value, place.parent_id, place.role, int(place.started),
             place.last_message_id, _now()))
        return place

    async def seen(self, channel_id: str, message_id: str) -> None:
        """A message of ``channel_id`` was stored in the intake: history after a restart starts after it."""
        place = self._places.get(channel_id)
        if place is not None and newer(place.last_message_id, message_id) != place.last_message_id:
            await self.put(replace(place, last_message_id=message_id))

    async def started(self, thread_id: str) -> None:
        """The thread ``thread_id`` (one Sabha starts for a question) exists on Discord now."""
        place = self._places.get(thread_id)
        if place is not None and not place.started:
            await self.put(replace(place, started=True))
