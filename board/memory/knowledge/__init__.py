"""The knowledge base: documents the agents can search, shared or private to one role.

Documents live under ``workspace/knowledge/``: ``shared/`` for every agent and
``<role>/`` for that role only. They are chunked by heading and paragraph
(:mod:`.chunking`) and indexed behind one interface (:mod:`.store`) by the state store's
backend: SQLite FTS5 with BM25 ranking in its own file (:mod:`.index`, after the FTS5 check
of :mod:`.fts`), or PostgreSQL full-text search, tsvector + GIN, in the state database that
every replica shares (:mod:`.postgres`, tables of :mod:`.migrations`); kept in step with the
folder by :class:`.base.KnowledgeBase`
(incremental re-index, a watchfiles watcher) and offered to agents as the
``search_knowledge_base`` tool (:mod:`.tool`), whose query only ever reads the shared
chunks and the calling role's own.
"""

# Submodules, imported on use (this file imports none of them).
__all__ = ["base", "chunking", "fts", "index", "migrations", "postgres", "store", "tool"]
