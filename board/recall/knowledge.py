"""The knowledge base as a recall source: the shared documents, the asking role's own, and documents attached in
the conversation asked from (long ones are indexed there with their pages), searched by
:class:`board.memory.knowledge.base.KnowledgeBase` with the permissions its own tool uses. Never for a stranger.
"""

from __future__ import annotations

from board.memory.knowledge.base import KnowledgeBase
from board.memory.knowledge.index import SearchHit, is_conversation_scope
from board.recall.passages import Asker, Passage, SourceKind

__all__ = ["KnowledgeSearch", "knowledge_cite"]


def knowledge_cite(hit: SearchHit) -> str:
    """``[kb: pricing.md]`` for a knowledge file, ``[deck.pdf p.7]`` for a document attached in a conversation."""
    if not is_conversation_scope(hit.scope):
        return f"[kb: {hit.source}]"
    name = hit.source.rsplit("/", 1)[-1]
    section = hit.heading[len(name):].strip() if hit.heading.startswith(name) else hit.heading
    return f"[{name} {section}]" if section else f"[{name}]"


class KnowledgeSearch:
    """See the module docstring."""

    name = "knowledge"

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    async def search(self, query: str, asker: Asker, *, limit: int) -> list[Passage]:
        """The best ``limit`` chunks ``asker``'s role may read from where they ask."""
        if not (asker.board or asker.everything):
            return []
        hits = await self.kb.search(query, role=asker.role, limit=limit, conversation=asker.conversation)
        return [Passage(source=SourceKind.KNOWLEDGE, ref=f"kb:{h.scope}:{h.source}:{h.heading}", cite=knowledge_cite(h),
                        speaker="document", said_at="", text=h.text) for h in hits]
