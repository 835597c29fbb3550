"""Documents -> text: PDF, DOCX, XLSX, CSV, TXT and MD, within caps, time and memory limits.

The format is sniffed from the declared type and name *and* the bytes (:mod:`.sniff`); the
text is extracted in a child process that is killed past ``media.extract_timeout_s``
(:mod:`.isolate`, :mod:`.extract`) and cached by blob (``media_derived``, how ``document``),
so a retried turn or the same file sent again is not read twice. A short document
(``<= media.doc_inline_chars``) goes into the turn whole, as quoted data with its file name
and page markers. A longer one is indexed in the conversation's own knowledge scope
(:mod:`.library`): the turn gets its start and a line saying the rest is searchable with
``search_knowledge_base`` and how to cite it (``[deck.pdf p.4]``).
"""

from __future__ import annotations

import asyncio
import logging
import time

from board.media.attachment import Attachment, MediaKind
from board.media.blobs import Blob
from board.media.extract import ExtractLimits
from board.media.isolate import extract_isolated
from board.media.library import HOW, document_name, shelve
from board.media.settings import MediaSettings
from board.media.sniff import sniff
from board.media.understand import UnderstandContext
from board.memory.knowledge.base import KnowledgeBase

__all__ = ["HOW", "SEARCHABLE_MARK", "DocumentReader", "limits_of"]

log = logging.getLogger("sabha.media")

#: Said in a long document's turn text (and so in its stored record: /files reads it there).
SEARCHABLE_MARK = "searchable in this conversation with search_knowledge_base"
FORGET_EVERY_S = 3600.0
MAX_PARALLEL = 2  # extractions at once (each a child process; the board's machine may have 2 cores)


def limits_of(settings: MediaSettings) -> ExtractLimits:
    """The extraction caps of ``media:``."""
    return ExtractLimits(max_pages=settings.doc_max_pages, max_rows=settings.doc_max_rows,
                         max_chars=settings.doc_max_chars)


class DocumentReader:
    """Reads documents (see the module docstring); ``knowledge`` None: a long document is cut,
    and the turn says so (the knowledge base is off)."""

    kinds = frozenset({MediaKind.DOCUMENT})

    def __init__(self, knowledge: KnowledgeBase | None = None) -> None:
        self.knowledge = knowledge
        self._slots = asyncio.Semaphore(MAX_PARALLEL)
        self._forgot_at: float | None = None

    async def understand(self, attachment: Attachment, blob: Blob, ctx: UnderstandContext) -> Attachment:
        await self._forget_old(ctx.settings.keep_days)
        text = await ctx.store.derived(blob.sha256, HOW)
        if text is None:
            # in a thread: a zip's directory (DOCX, XLSX) of a hundred thousand entries takes seconds to read
            fmt = await asyncio.to_thread(sniff, blob.path, name=attachment.name, mime=attachment.mime,
                                          label=attachment.label)
            async with self._slots:
                extracted = await extract_isolated(blob.path, fmt, attachment.label, limits_of(ctx.settings),
                                                   timeout_s=ctx.settings.extract_timeout_s)
            text = extracted.text
            await ctx.store.remember(blob.sha256, HOW, text)
        if len(text) <= ctx.settings.doc_inline_chars:
            return attachment.with_(derived=text)
        return attachment.with_(derived=await self._long(attachment, blob, text, ctx))

    async def _forget_old(self, keep_days: float) -> None:
        """Now and then, drop long documents no one sent for ``media.keep_days`` from the conversations'
        search (their files go then too: :meth:`board.media.blobs.BlobStore.prune`)."""
        now = time.monotonic()
        if self.knowledge is None or (self._forgot_at is not None and now - self._forgot_at < FORGET_EVERY_S):
            return
        self._forgot_at = now
        try:
            dropped = await self.knowledge.drop_conversation_documents(keep_days)
        except Exception:  # the index is derived data: reading the new document matters more
            log.exception("media: removing old conversation documents from the knowledge index failed")
            return
        if dropped:
            log.info("media: %d conversation document(s) older than %g days left the knowledge index", dropped,
                     keep_days)

    async def _long(self, attachment: Attachment, blob: Blob, text: str, ctx: UnderstandContext) -> str:
        """The start of a long document and a line saying where the rest is."""
        name = document_name(attachment.name, blob.sha256)
        if self.knowledge is None:
            note = (f"[only the start of {name} is shown ({len(text)} characters in all); the rest cannot be "
                    "searched: the knowledge base is off (knowledge.enabled)]")
        else:
            shelved = await shelve(self.knowledge, ctx.envelope, name=attachment.name, blob=blob.sha256, text=text)
            log.info("media: %s (%d characters, %d chunks) is searchable in %s", name, len(text), shelved.chunks,
                     shelved.scope)
            note = (f"[only the start of {name} is shown; all of it ({len(text)} characters) is {SEARCHABLE_MARK}; "
                    f"cite what you use as [{name} p.N] for a page, else [{name}]]")
        return f"{_head(text, ctx.settings.doc_inline_chars - len(note) - 1)}\n{note}"


def _head(text: str, budget: int) -> str:
    """The first whole lines of ``text`` within ``budget`` characters (cut inside a line only when
    the first line alone is longer)."""
    if budget <= 0:
        return ""
    cut = text[:budget]
    end = cut.rfind("\n")
    return cut[:end] if end > budget // 2 else cut
