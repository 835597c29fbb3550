"""What recall finds and who asks: :class:`Passage` (its text, :class:`SourceKind`, citation), :class:`Asker`
(the audiences a person may see), and :class:`Retriever`, the protocol each half of the search meets.

A retriever ranks passages for a query *within what the asker may see*: privacy is applied inside each
retriever's query, never by filtering afterwards, so no retriever can leak by forgetting a filter downstream.
The lexical retrievers live in :mod:`board.recall.lexical`; a vector retriever (embeddings kept with
sqlite-vec or pgvector) is another :class:`Retriever` handed to :class:`board.recall.service.RecallService`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

__all__ = ["BOARD", "OWNER", "Asker", "Passage", "Retriever", "SourceKind"]

#: The audience of the board's own record (meeting statements): anyone on the board but a stranger.
BOARD = "board"
#: The audience of the owner's own direct chats (``main``, ``board:<role>``).
OWNER = "owner"


class SourceKind(StrEnum):
    """Where a passage comes from."""

    CONVERSATION = "conversation"
    MEETING = "meeting"
    DECISION = "decision"
    DOCUMENT = "document"
    KNOWLEDGE = "knowledge"


@dataclass(frozen=True)
class Passage:
    """One thing said or read: ``cite`` is how an answer names it (``[finance, 2026-03-04]``,
    ``[meeting m-..., round 2]``, ``[decision m-...]``, ``[deck.pdf]``); ``ref`` identifies it uniquely."""

    source: SourceKind
    ref: str
    cite: str
    speaker: str
    said_at: str
    text: str


@dataclass(frozen=True)
class Asker:
    """What one asker may see. ``audiences``: the conversations' audiences open to them (``owner``,
    ``id:<channel>:<sender>`` for each of their linked accounts, or one ``group:<channel>:<chat>``);
    ``board``: the board's meetings and decisions too (never for a stranger); ``everything``: the owner at
    the terminal (``sabha recall``); ``role``: the advisor asking (its private knowledge); ``conversation``: the
    knowledge base's scope of the chat asked from (documents attached there)."""

    audiences: frozenset[str]
    board: bool
    everything: bool = False
    role: str | None = None
    conversation: str | None = None

    @classmethod
    def owner_view(cls) -> Asker:
        """The owner at the terminal: every passage."""
        return cls(frozenset(), board=True, everything=True)


class Retriever(Protocol):
    """One half of the search: the best passages for ``terms`` that ``asker`` may see, best first."""

    @property
    def name(self) -> str:
        """Its name in logs."""
        ...

    async def search(self, query: str, asker: Asker, *, limit: int) -> list[Passage]: ...
