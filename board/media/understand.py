"""How bytes become something the board can use: the :class:`Understander` protocol and the
:class:`MediaFetcher` a channel implements (the only media thing a channel does)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from board.media.attachment import Attachment, MediaKind
from board.media.blobs import Blob, BlobSink, BlobStore
from board.media.settings import MediaSettings
from board.media.store import MediaStore

if TYPE_CHECKING:
    from board.envelope import Envelope

__all__ = ["MediaFetcher", "UnderstandContext", "Understander"]


@runtime_checkable
class MediaFetcher(Protocol):
    """A channel's download: stream ``attachment``'s bytes into ``sink`` through the channel's
    own client (``sink.expect`` what the service declares first). Raises
    :class:`board.media.problems.MediaProblem` for what a person should be told (expired,
    too large, unreachable: network errors are turned into ``Problem.UNAVAILABLE``); a fresh
    link is asked for on every call (links expire). A channel's courier implements it."""

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None: ...


@dataclass(frozen=True)
class UnderstandContext:
    """What an understander may use: the message it came with, the settings, the stored bytes
    and the derived-text cache (keyed by blob, so a retried turn does not pay twice)."""

    envelope: Envelope
    settings: MediaSettings
    blobs: BlobStore
    store: MediaStore


class Understander(Protocol):
    """Turns one fetched attachment of its ``kinds`` into a copy with ``derived`` (or ``problem``) set.

    Raises :class:`board.media.problems.MediaProblem` for what the sender should be told;
    anything else is a bug, logged, and told as "could not be read"."""

    kinds: frozenset[MediaKind]

    async def understand(self, attachment: Attachment, blob: Blob, ctx: UnderstandContext) -> Attachment: ...
