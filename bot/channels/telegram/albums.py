"""Albums: several photos, videos or files sent together, answered as one turn.

Telegram sends each item of an album as its own message; the items share a
``media_group_id`` and usually only one carries the caption. Read one by one, the question
would be answered with the first picture only and the other pictures without the question.
Here an album is one arrival: the first item's message id (a redelivery is a duplicate), the
caption(s) as its text, every item's attachment, in order (:func:`merge`).

Within one ``getUpdates`` batch the items are grouped. An album may also be split across two
batches (rarely: its items reach Telegram's server apart). :class:`AlbumHold` decides which
trailing part of a batch to hold back: an album is *open* when nothing else from its chat
follows it in the batch, and it has been held for less than :data:`ALBUM_WAIT_S`. The wait of
every open album in a batch starts when the batch is read, so a batch is held back once, whatever
the number of albums and chats in it. The polling loop stores what comes before the first open
album and confirms it to Telegram, leaves the offset *at* that album (nothing held is stored or
confirmed, so a crash meanwhile loses nothing: Telegram offers it again), waits
:data:`ALBUM_WAIT_S` and polls again; the albums then come back with whatever followed them and
are stored whole. An album held longer than that is taken as complete; an item arriving after its
album was stored is answered on its own (logged). Every stored item is recorded
(:mod:`.album_items`): an item sent again, alone or regrouped with a late one, is not stored twice.

In webhook mode every item is its own request, answered 200 only once stored. Telegram posts
an album's items in parallel requests (up to the webhook's ``max_connections``):
:class:`AlbumGather` keeps the first item's request open for :data:`ALBUM_WAIT_S`, gathers the
items posted meanwhile, stores them as one arrival (in a task of its own: a request cancelled
meanwhile does not stop it), then answers every one of those requests (200 once stored; 503 when
not, so Telegram posts them again: nothing is lost, a redelivery is a duplicate, item by item).
Items posted one after another (``max_connections: 1``) stay separate turns.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from board.media.attachment import Attachment
from bot.channels.telegram.inbound import TgMessage, TgUpdate, parse_update

__all__ = ["ALBUM_WAIT_S", "AlbumGather", "AlbumHold", "AlbumKey", "album_key", "merge"]

log = logging.getLogger("sabha.telegram")

#: How long an album at the end of a batch is held back for its other items (seconds).
ALBUM_WAIT_S = 1.0
#: A held album forgotten after this long (its poll was cancelled; it will be read again anyway).
_FORGET_S = 300.0

#: (chat id, media_group_id): one album.
AlbumKey = tuple[int, str]


def album_key(update: TgUpdate | None) -> AlbumKey | None:
    """The album a new message belongs to (None: not part of an album, or not a new message)."""
    message = update.message if update is not None else None
    if message is None or message.media_group_id is None:
        return None
    return message.chat.id, message.media_group_id


def _chat_of(update: TgUpdate | None) -> int | None:
    message = (update.message or update.edited_message) if update is not None else None
    return message.chat.id if message is not None else None


def _parsed(raw: Any) -> TgUpdate | None:
    try:
        return parse_update(raw)
    except ValueError:
        return None


@dataclass
class AlbumHold:
    """Which trailing updates of a batch to hold back for an album's other items (module docstring)."""

    wait_s: float = ALBUM_WAIT_S
    clock: Callable[[], float] = time.monotonic
    since: dict[AlbumKey, float] = field(default_factory=dict)

    def split(self, raw_updates: Sequence[Any], parsed: Sequence[TgUpdate | None] | None = None
              ) -> tuple[list[Any], list[Any]]:
        """(to store now, to hold back): ``raw_updates`` (``parsed``: the same, read; None where unreadable)
        cut before the first open album whose wait has not run out. Every open album's wait starts at the
        first batch it is seen in, so the albums of one batch are held back together, once."""
        now = self.clock()
        self.since = {k: t for k, t in self.since.items() if now - t < _FORGET_S}
        if parsed is None:
            parsed = [_parsed(raw) for raw in raw_updates]
        cut = len(parsed)
        for i, update in enumerate(parsed):
            key = album_key(update)
            if key is None or not self._open(key, parsed[i:]):
                continue
            first = self.since.setdefault(key, now)
            if now - first < self.wait_s:
                cut = min(cut, i)
        for update in parsed[:cut]:
            key = album_key(update)
            if key is not None:
                self.since.pop(key, None)
        return list(raw_updates[:cut]), list(raw_updates[cut:])

    @staticmethod
    def _open(key: AlbumKey, rest: Sequence[TgUpdate | None]) -> bool:
        """Whether nothing from the album's chat but the album follows its first item in ``rest``."""
        return all(album_key(u) == key for u in rest if _chat_of(u) == key[0])


def merge(messages: Sequence[TgMessage], parts: Sequence[tuple[Attachment, ...]]) -> tuple[str | None,
                                                                                             tuple[Attachment, ...]]:
    """(text, attachments) of an album whose items are ``messages`` (in order) with their ``parts``:
    the distinct captions, one per line (None when no item has one), and every item's attachments."""
    captions: list[str] = []
    for message in messages:
        body = message.body
        if body is not None and body.strip() and body not in captions:
            captions.append(body)
    return ("\n".join(captions) if captions else None), tuple(a for p in parts for a in p)


@dataclass
class _Gathering:
    items: list[TgMessage]
    stored: asyncio.Future[bool]


@dataclass
class AlbumGather:
    """Webhook mode: an album's items posted in parallel requests, stored as one (module docstring).
    ``sleep`` waits for the other items (injectable: tests gather without waiting for time)."""

    wait_s: float = ALBUM_WAIT_S
    open: dict[AlbumKey, _Gathering] = field(default_factory=dict)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    _storing: set[asyncio.Task[None]] = field(default_factory=set)

    async def join(self, key: AlbumKey, item: TgMessage,
                   store: Callable[[list[TgMessage]], Awaitable[bool]]) -> bool:
        """Whether the album ``item`` belongs to was stored (``store`` is called once per gathering, with its
        items in message order, after the wait of the request that opened it; it says whether they were
        stored). The store runs as a task of its own: a request cancelled meanwhile (a shutdown) does not
        stop it, and every gathered request is answered from its outcome."""
        gathering = self.open.get(key)
        if gathering is not None:
            gathering.items.append(item)
            return await asyncio.shield(gathering.stored)  # a cancelled request is cancelled, not answered
        gathering = _Gathering([item], asyncio.get_running_loop().create_future())
        self.open[key] = gathering
        try:
            await self.sleep(self.wait_s)
        except BaseException:  # cancelled while gathering: nothing stored, every gathered request gets 503
            if not gathering.stored.done():
                gathering.stored.set_result(False)
            raise
        finally:
            if self.open.get(key) is gathering:
                del self.open[key]  # an item posted from now on opens a gathering of its own
        task = asyncio.create_task(self._store(gathering, store), name=f"telegram album {key[1]}")
        self._storing.add(task)
        task.add_done_callback(self._storing.discard)
        return await asyncio.shield(gathering.stored)

    @staticmethod
    async def _store(gathering: _Gathering, store: Callable[[list[TgMessage]], Awaitable[bool]]) -> None:
        stored = False
        try:
            stored = await store(sorted(gathering.items, key=lambda m: m.message_id))
        except Exception:
            log.exception("telegram: storing an album posted to the webhook failed; its requests get 503 "
                          "(Telegram posts them again)")
        finally:
            if not gathering.stored.done():
                gathering.stored.set_result(stored)
