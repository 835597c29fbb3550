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

In webhook mode every item is its own request, posted one after another with ``max_connections: 1``
(each only once the previous one was answered): :mod:`.album_staging` keeps each item as it is posted,
answers 200, and stores the album as one message once no item of it came for :data:`ALBUM_WAIT_S`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from board.media.attachment import Attachment
from bot.channels.telegram.inbound import TgMessage, TgUpdate, parse_update

__all__ = ["ALBUM_WAIT_S", "AlbumHold", "AlbumKey", "album_key", "chat_of", "merge"]

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


def chat_of(update: TgUpdate | None) -> int | None:
    """The chat a new or edited message is from (None: neither)."""
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
        return all(album_key(u) == key for u in rest if chat_of(u) == key[0])


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
