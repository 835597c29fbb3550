"""One recall: every retriever asked, their rankings fused, the best passages with their citations.

:class:`RecallService` asks each :class:`~board.recall.passages.Retriever` (the lexical ones today; a vector
one when embeddings are configured) for its best passages within what the asker may see, and fuses the
rankings by reciprocal rank (``1 / (60 + rank)`` summed over retrievers), so a passage two halves agree on
rises and no half's raw scores need to be comparable. It reads only the index: never on an answer's path
does it index anything (:mod:`board.recall.indexer` does, in the background).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from board.recall.passages import Asker, Passage, Retriever

__all__ = ["DEFAULT_LIMIT", "FUSION_K", "RecallService"]

log = logging.getLogger("sabha.recall")

#: How many passages a recall returns unless asked otherwise.
DEFAULT_LIMIT = 5
#: The constant of reciprocal-rank fusion (the usual 60).
FUSION_K = 60


class RecallService:
    """See the module docstring."""

    def __init__(self, retrievers: Sequence[Retriever]) -> None:
        self.retrievers = tuple(retrievers)

    async def recall(self, query: str, asker: Asker, *, limit: int = DEFAULT_LIMIT) -> list[Passage]:
        """The best ``limit`` passages for ``query`` that ``asker`` may see, best first."""
        scores: dict[str, float] = {}
        found: dict[str, Passage] = {}
        for retriever in self.retrievers:
            try:
                ranked = await retriever.search(query, asker, limit=limit * 2)
            except Exception:  # one half failing leaves the other's answer
                log.exception("recall: the %s search failed", retriever.name)
                continue
            for rank, passage in enumerate(ranked):
                found.setdefault(passage.ref, passage)
                scores[passage.ref] = scores.get(passage.ref, 0.0) + 1.0 / (FUSION_K + rank + 1)
        best = sorted(scores, key=lambda ref: -scores[ref])[:limit]
        return [found[ref] for ref in best]
