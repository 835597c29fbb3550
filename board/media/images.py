"""Pictures (placeholder until vision lands): what can honestly be said without looking."""

from __future__ import annotations

from board.media.attachment import Attachment, MediaKind
from board.media.blobs import Blob
from board.media.understand import UnderstandContext

__all__ = ["ImageReader"]


class ImageReader:
    """Describes a picture by its type and size."""

    kinds = frozenset({MediaKind.IMAGE, MediaKind.STICKER})

    async def understand(self, attachment: Attachment, blob: Blob, ctx: UnderstandContext) -> Attachment:
        return attachment.with_(derived=f"{attachment.label}: {attachment.mime or 'an image'}, {blob.size:,} bytes")
