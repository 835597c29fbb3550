"""Voice notes and audio files -> text (placeholder until the transcription providers land).

:class:`OfflineTranscriber` is honest: it never invents a transcript; it says how long the
note is and which setting would have it transcribed.
"""

from __future__ import annotations

from board.media.attachment import Attachment, MediaKind
from board.media.blobs import Blob
from board.media.understand import UnderstandContext

__all__ = ["OfflineTranscriber"]

NO_TRANSCRIBER = "set media.transcribe_model to transcribe it"


class OfflineTranscriber:
    """What the offline model hears: the length of the note, and no words."""

    kinds = frozenset({MediaKind.VOICE, MediaKind.AUDIO})

    async def understand(self, attachment: Attachment, blob: Blob, ctx: UnderstandContext) -> Attachment:
        length = f"a {attachment.duration_s:.0f} s " if attachment.duration_s else "a "
        what = "voice note" if attachment.kind is MediaKind.VOICE else "audio file"
        return attachment.with_(problem=f"{length}{what} arrived, but no transcriber is set up: {NO_TRANSCRIBER}")
