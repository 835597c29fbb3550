"""The vector half of recall: passages near the question's meaning, within what the asker may see.

:class:`VectorSearch` embeds the question (one embedding call, a ledger row with purpose ``embedding-query``)
and asks :class:`board.recall.vector_store.VectorStore` for the nearest passages among the asker's audiences:
the same rule, in the same query, as the lexical search (:mod:`board.recall.lexical`). Only passages already
embedded are found; the rest are still found by their words. :class:`board.recall.service.RecallService`
fuses its ranking with the lexical ones.
"""

from __future__ import annotations

from board.llm.purpose import CallPurpose
from board.recall.embedder import Embedder
from board.recall.passages import Asker, Passage
from board.recall.vector_store import VectorStore

__all__ = ["VectorSearch"]


class VectorSearch:
    """See the module docstring."""

    name = "vectors"

    def __init__(self, store: VectorStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder

    async def search(self, query: str, asker: Asker, *, limit: int) -> list[Passage]:
        """The ``limit`` passages nearest ``query`` in meaning that ``asker`` may see."""
        if not query.strip() or limit <= 0 or not (asker.audiences or asker.board or asker.everything):
            return []
        if await self.store.problem() is not None:  # no vector search here: no call paid for nothing
            return []
        [vector] = await self.embedder.embed([query], CallPurpose.EMBEDDING_QUERY)
        return await self.store.nearest(vector, self.embedder.settings.index_key, asker, limit=limit)
