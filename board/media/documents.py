"""Documents -> text (placeholder until the extractors land): plain text files only."""

from __future__ import annotations

from board.media.attachment import Attachment, MediaKind
from board.media.blobs import Blob
from board.media.problems import MediaProblem, Problem
from board.media.understand import UnderstandContext

__all__ = ["DocumentReader"]


class DocumentReader:
    """Reads UTF-8 text files; other documents are refused with a clear reason."""

    kinds = frozenset({MediaKind.DOCUMENT})

    async def understand(self, attachment: Attachment, blob: Blob, ctx: UnderstandContext) -> Attachment:
        if not (attachment.mime or "").startswith("text/"):
            raise MediaProblem(Problem.UNSUPPORTED, f"{attachment.label} is a {attachment.mime or 'file'} "
                                                    "I cannot read yet")
        text = blob.path.read_bytes()[: ctx.settings.doc_max_chars].decode("utf-8", "replace")
        return attachment.with_(derived=text)
