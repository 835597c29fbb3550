"""Recall (issue 43): one search over what the asker may see, each passage with where it came from.

- :mod:`~board.recall.passages`: a passage, its source kind and citation, the asker (what they may see) and
  the :class:`~board.recall.passages.Retriever` protocol every search half meets (lexical today; the
  vector half plugs in here)
- :mod:`~board.recall.audience`: who may see a conversation (from its session key) and what an asker sees
  (from the envelope: the person, their linked accounts, a group, a stranger)
- :mod:`~board.recall.indexer`: the background pass that copies conversation lines, meeting statements and
  documents' text into the index, resumable (``recall_progress``), never on an answer's path
- :mod:`~board.recall.lexical`: the lexical retrievers: the passages (SQLite FTS5 or PostgreSQL tsvector)
  and decisions with their minutes (the existing ``decision_search`` index, :mod:`board.decisions.recall`)
- :mod:`~board.recall.ranking`: BM25 over a bounded set of candidates in Python, where a common word would make
  FTS5's bm25 count its whole doclist
- :mod:`~board.recall.embedder`: the embedding model (``memory.embedding_model``: OpenAI, Gemini or any
  OpenAI-compatible endpoint), each call a ledger row
- :mod:`~board.recall.vector_store`: passages' vectors (``recall_vectors``), searched with sqlite-vec
- :mod:`~board.recall.vector_index`: the background pass that embeds passages, resumable, re-embedding after a
  change of model
- :mod:`~board.recall.semantic`: the vector retriever (passages near the question's meaning)
- :mod:`~board.recall.knowledge`: the knowledge base (shared, the role's own, documents attached in the chat)
- :mod:`~board.recall.service`: :class:`~board.recall.service.RecallService`, fusing retrievers' rankings
- :mod:`~board.recall.tool`: the ``recall`` tool advisors call, passages quoted as data with their citations
"""

# Submodules, imported on use (this file imports none of them).
__all__ = ["audience", "embedder", "indexer", "knowledge", "lexical", "migrations", "passages", "ranking", "semantic",
           "service", "tool", "vector_index", "vector_store"]
