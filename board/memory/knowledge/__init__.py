"""The knowledge base: documents the agents can search, shared or private to one role.

Documents live under ``workspace/knowledge/``: ``shared/`` for every agent and
``<role>/`` for that role only. They are chunked by heading and paragraph
(:mod:`.chunking`), indexed in SQLite FTS5 with BM25 ranking (:mod:`.index`, after the
FTS5 check of :mod:`.fts`), kept in step with the folder by :class:`.base.KnowledgeBase`
(incremental re-index, a watchfiles watcher) and offered to agents as the
``search_knowledge_base`` tool (:mod:`.tool`), whose query only ever reads the shared
chunks and the calling role's own.
"""

# Submodules, imported on use (this file imports none of them).
__all__ = ["base", "chunking", "fts", "index", "tool"]
