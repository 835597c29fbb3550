"""How much of the media store one more file may take: the per-sender and total quotas.

Files are kept ``media.keep_days``; without a bound, anyone who may write to the board (any
stranger in public mode) could fill the disk with files. Before a download the media service
asks :func:`room_for` how many bytes the sender may still add, the least of:

- the sender's own quota: what they sent in the last ``keep_days`` that was kept (the bytes their
  attachments read without a problem keep: the file and a picture's scaled copy in the file store, and
  the text read from it in the state db; refused files are not kept, :mod:`.service`), plus the files of
  the same message before this one, against ``media.quota_sender_mb``, or ``media.quota_stranger_mb`` for
  a stranger (public mode); the owner has no per-sender quota. A person linked across channels
  (:mod:`board.people`) has one quota: what every one of their identities sent counts;
- for a stranger, what all strangers sent together against ``media.quota_strangers_mb``;
- the whole store (the files on disk, :meth:`board.media.blobs.BlobStore.usage`, and the kept text,
  :meth:`board.media.store.MediaStore.text_total`: both running figures, no walk or table scan per
  download) against ``media.quota_total_mb``.

A declared size over the room is refused before any byte moves; an undeclared one is cut at the
room (the sink's cap). The sentence says which quota and what to do. Two files of one sender
read at the same moment may both pass the check: the overshoot is at most one file per lane; a
picture's copy is known only once read, so the last file in may pass its quota by its copy.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from board.envelope import Envelope
from board.media.blobs import BlobStore
from board.media.declared import size_text
from board.media.settings import MB, MediaSettings
from board.media.store import MediaStore
from board.people import People

__all__ = ["MediaUsage", "Quota", "Room", "media_usage", "room_for"]

log = logging.getLogger("sabha.media")


class Quota(StrEnum):
    """Which bound leaves the least room."""

    NONE = "none"  # only the kind's own cap
    SENDER = "sender"
    STRANGER = "stranger"
    STRANGERS = "strangers"
    TOTAL = "total"


@dataclass(frozen=True)
class Room:
    """What one more file of this sender may take: ``bytes`` (None: no quota binds), the binding
    ``quota``, what it has ``used`` of its ``limit``, and the days files are kept."""

    bytes: int | None
    quota: Quota = Quota.NONE
    used: int = 0
    limit: int = 0
    keep_days: float = 30.0

    def refusal(self, label: str, size: int | None, *, owner: bool = False) -> str:
        """The one line telling the sender why ``label`` was not downloaded (the ``owner`` also what to change)."""
        what = f"{label} ({size_text(size)})" if size else label
        used, limit, days = size_text(self.used), size_text(self.limit), f"{self.keep_days:g}"
        if self.quota in (Quota.SENDER, Quota.STRANGER):
            return (f"I did not download {what}: the files you sent in the last {days} days take {used} of the "
                    f"{limit} I keep for one person; send it again once older files expire, or write your "
                    "question as text")
        if self.quota is Quota.STRANGERS:
            return (f"I did not download {what}: the space for files from people I do not know is full right now "
                    f"({used} of {limit}); please write your question as text")
        if owner:
            return (f"I did not download {what}: the board's file store is full ({used} of {limit}); raise "
                    "media.quota_total_mb or lower media.keep_days (files are kept that long), then send it again")
        return (f"I did not download {what}: the board's file store is full ({used} of {limit}); please write "
                "your question as text, or send the file again in a few days")


async def room_for(envelope: Envelope, settings: MediaSettings, store: MediaStore, blobs: BlobStore, *,
                   pending: int = 0) -> Room:
    """The room ``envelope``'s sender has for one more file (see the module docstring); ``pending``: the bytes
    the message's files before this one keep, not recorded yet (the store on disk already holds them)."""
    since = (datetime.now(UTC) - timedelta(days=settings.keep_days)).isoformat(timespec="milliseconds")
    rooms: list[Room] = []
    days = settings.keep_days
    if not envelope.is_owner:
        quota, limit = (Quota.STRANGER, settings.quota_stranger_mb) if envelope.is_public \
            else (Quota.SENDER, settings.quota_sender_mb)
        used = await store.kept_bytes(since, identities=await _identities(envelope, store)) + pending
        rooms.append(_room(quota, used, limit, days))
    if envelope.is_public:
        strangers = await store.kept_bytes(since, public=True) + pending
        rooms.append(_room(Quota.STRANGERS, strangers, settings.quota_strangers_mb, days))
    usage = await asyncio.to_thread(blobs.usage)
    kept = usage.bytes + await store.text_total(since)
    total = _room(Quota.TOTAL, kept, settings.quota_total_mb, days)
    if total.bytes == 0:
        log.warning("media: the file store %s is full (%s of media.quota_total_mb %s): files are refused until "
                    "older ones expire (media.keep_days %g); raise the quota or lower keep_days", blobs.root,
                    size_text(kept), size_text(total.limit), days)
    rooms.append(total)
    return min(rooms, key=lambda r: r.bytes if r.bytes is not None else 1 << 62)


async def _identities(envelope: Envelope, store: MediaStore) -> list[tuple[str, str]]:
    """The ``(channel, sender)`` pairs whose files count against ``envelope``'s sender: every identity of
    their linked person, else their own."""
    own = [(envelope.channel, envelope.sender)]
    if envelope.person is None:
        return own
    keys = await People(store.db).keys_of(envelope.person.key)
    linked = [(channel, sender) for channel, _, sender in (k.partition(":") for k in keys) if channel != "person"]
    return own + [pair for pair in linked if pair != own[0]]


def _room(quota: Quota, used: int, limit_mb: float, days: float) -> Room:
    limit = int(limit_mb * MB)
    return Room(max(0, limit - used), quota, used, limit, days)


@dataclass(frozen=True)
class MediaUsage:
    """How full the media store is (``sabha status``): on disk against the total quota, and what strangers'
    files keep against theirs."""

    files: int
    bytes: int  # the files on disk and the text kept from them (text_bytes)
    quota_total_bytes: int
    strangers_bytes: int
    quota_strangers_bytes: int
    keep_days: float
    text_bytes: int = 0

    @property
    def used_percent(self) -> float:
        return round(100 * self.bytes / self.quota_total_bytes, 1) if self.quota_total_bytes else 0.0

    @property
    def full(self) -> bool:
        return self.bytes >= self.quota_total_bytes

    def lines(self) -> list[str]:
        """The plain report's lines."""
        line = (f"  media: {size_text(self.bytes)} in {self.files} file(s) and the text read from them "
                f"({size_text(self.text_bytes)}), {self.used_percent:.0f}% of "
                f"media.quota_total_mb ({size_text(self.quota_total_bytes)}); files are kept {self.keep_days:g} "
                "days after last use")
        lines = [line, f"    from strangers: {size_text(self.strangers_bytes)} of media.quota_strangers_mb "
                       f"({size_text(self.quota_strangers_bytes)})"]
        if self.full:
            lines.append("    FULL: new files are refused; raise media.quota_total_mb or lower media.keep_days")
        return lines

    def as_json(self) -> dict[str, int | float | bool]:
        """The figures, as numbers (``sabha status --json``)."""
        return {"files": self.files, "bytes": self.bytes, "text_bytes": self.text_bytes,
                "quota_total_bytes": self.quota_total_bytes,
                "used_percent": self.used_percent, "strangers_bytes": self.strangers_bytes,
                "quota_strangers_bytes": self.quota_strangers_bytes, "keep_days": self.keep_days, "full": self.full}


async def media_usage(settings: MediaSettings, store: MediaStore, blobs: BlobStore) -> MediaUsage:
    """How full the media store is (see :class:`MediaUsage`)."""
    usage = await asyncio.to_thread(blobs.usage)
    since = (datetime.now(UTC) - timedelta(days=settings.keep_days)).isoformat(timespec="milliseconds")
    strangers = await store.kept_bytes(since, public=True)
    text = await store.kept_text(since)
    return MediaUsage(usage.files, usage.bytes + text, int(settings.quota_total_mb * MB), strangers,
                      int(settings.quota_strangers_mb * MB), settings.keep_days, text)

