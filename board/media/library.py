"""A conversation's long documents, searchable by its advisors and by no one else.

A document longer than ``media.doc_inline_chars`` does not fit in a turn. Its text is cut
back into its pages or sheets (the ``[p.4]`` / ``[sheet Revenue]`` lines
:mod:`board.media.extract` wrote), chunked like any knowledge document, and indexed in the
knowledge base under the conversation's own scope (:func:`conversation_scope` of the
envelope's channel and chat: a stranger's document stays in the stranger's conversation).
The ``search_knowledge_base`` tool searches that scope only when called from the same
conversation, and each passage says how to cite it: ``[deck.pdf p.4]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from board.envelope import Envelope
from board.media.settings import MediaSettings
from board.media.store import MediaStore
from board.memory.knowledge.base import KnowledgeBase
from board.memory.knowledge.chunking import Chunk, chunk_text
from board.memory.knowledge.index import conversation_scope
from board.workspace.quoting import FieldLimit, plain_line

__all__ = ["HOW", "Section", "Shelved", "document_name", "reshelve", "sections", "shelve"]

HOW = "document"  # the media_derived key of a document's extracted text

_MARKER = re.compile(r"^\[(p\.\d+|sheet [^\]\n]{1,120})\]$")


@dataclass(frozen=True)
class Section:
    """A page (``p.4``), a sheet (``sheet Revenue``) or, for a document without either, the whole (``""``)."""

    label: str
    text: str


@dataclass(frozen=True)
class Shelved:
    """Where a long document went: its conversation scope, its name there, how many chunks and sections."""

    scope: str
    name: str
    chunks: int
    sections: int


def document_name(name: str | None, blob: str) -> str:
    """The name a document is cited by: the sender's file name made one safe line (no ``/``, no
    brackets), else ``document-<hash>``."""
    cleaned = plain_line(name or "", FieldLimit.TITLE).replace("/", "_").replace("\\", "_")
    cleaned = cleaned.replace("[", "(").replace("]", ")").strip(" .")
    return cleaned or f"document-{blob[:8]}"


def sections(text: str) -> list[Section]:
    """``text`` cut at its page and sheet marker lines (text before the first: label ``""``)."""
    found: list[Section] = []
    label = ""
    lines: list[str] = []
    for line in text.splitlines():
        match = _MARKER.match(line.strip())
        if match is None:
            lines.append(line)
            continue
        if lines and "".join(lines).strip():
            found.append(Section(label, "\n".join(lines)))
        label, lines = match.group(1), []
    if lines and "".join(lines).strip():
        found.append(Section(label, "\n".join(lines)))
    return found


async def shelve(kb: KnowledgeBase, envelope: Envelope, *, name: str | None, blob: str, text: str) -> Shelved:
    """Index ``text`` (a document's extracted text) in ``envelope``'s conversation scope."""
    return await _shelve(kb, conversation_scope(envelope.channel, envelope.chat_id), name=name, blob=blob, text=text)


async def reshelve(kb: KnowledgeBase, store: MediaStore, settings: MediaSettings) -> int:
    """Index again the long documents of the last ``media.keep_days`` (their text from the cache), e.g.
    after ``sabha kb reindex`` rebuilt the index from the folder alone; returns how many."""
    since = (datetime.now(UTC) - timedelta(days=settings.keep_days)).isoformat(timespec="milliseconds")
    count = 0
    for row in await store.documents_since(since):
        text = await store.derived(row.blob or "", HOW)
        if text is None or len(text) <= settings.doc_inline_chars:
            continue
        await _shelve(kb, conversation_scope(row.channel, row.chat_id), name=row.name, blob=row.blob or "", text=text)
        count += 1
    return count


async def _shelve(kb: KnowledgeBase, scope: str, *, name: str | None, blob: str, text: str) -> Shelved:
    cited = document_name(name, blob)
    parts = sections(text)
    chunks: list[Chunk] = []
    for part in parts:
        heading = f"{cited} {part.label}".strip()
        chunks.extend(chunk_text(part.text, name=cited, heading=heading, max_chars=kb.settings.chunk_chars))
    await kb.put_conversation_document(f"{scope}/{blob[:16]}/{cited}", scope, sha256=blob, size=len(text),
                                       chunks=chunks)
    return Shelved(scope, cited, len(chunks), len(parts))
