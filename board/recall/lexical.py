"""The lexical half of recall: words matched, best first, within what the asker may see.

:class:`PassageSearch` searches ``recall_passages`` (SQLite FTS5 ranked by bm25, or PostgreSQL's tsvector
behind a GIN index ranked by ``ts_rank`` times how many of the words a passage has); the asker's audiences
are part of the query. :class:`DecisionSearch` searches decisions and their minutes where they are already
indexed (``decision_search``, :func:`board.decisions.recall.search.related_decisions`), the board's record:
never for a stranger.
"""

from __future__ import annotations

from board.decisions.recall.search import query_terms, related_decisions
from board.recall.passages import BOARD, Asker, Passage, SourceKind
from board.storage import Database, Dialect, Row

__all__ = ["DecisionSearch", "PassageSearch"]


class PassageSearch:
    """Conversation lines, meeting statements and documents' text in ``recall_passages``."""

    name = "passages"

    def __init__(self, db: Database) -> None:
        self.db = db

    async def search(self, query: str, asker: Asker, *, limit: int) -> list[Passage]:
        """The best ``limit`` passages for ``query``'s content words that ``asker`` may see."""
        terms = query_terms(query)
        audiences = sorted(asker.audiences | ({BOARD} if asker.board else set()))
        if not terms or limit <= 0 or not (audiences or asker.everything):
            return []
        quoted = ['"' + t.replace('"', "") + '"' for t in terms]
        if self.db.dialect is Dialect.POSTGRES:
            where, params = _audience_sql("p.audience", audiences, asker.everything)
            sql = ("SELECT p.*, ts_rank(p.document, q.query) * (SELECT count(*) FROM unnest(q.terms) t "
                   "WHERE p.document @@ plainto_tsquery('english', t)) AS rank FROM recall_passages p, "
                   "(SELECT websearch_to_tsquery('english', ?) AS query, CAST(? AS TEXT[]) AS terms) q "
                   f"WHERE p.document @@ q.query{where} ORDER BY rank DESC, p.id DESC LIMIT ?")
            rows = await self.db.fetchall(sql, [" or ".join(quoted), terms, *params, limit])
        else:
            where, params = _audience_sql("p.audience", audiences, asker.everything)
            sql = ("SELECT p.* FROM recall_search s JOIN recall_passages p ON p.id = s.rowid "
                   f"WHERE recall_search MATCH ?{where} ORDER BY bm25(recall_search), p.id DESC LIMIT ?")
            rows = await self.db.fetchall(sql, [" OR ".join(quoted), *params, limit])
        return [_passage(r) for r in rows]


def _audience_sql(column: str, audiences: list[str], everything: bool) -> tuple[str, list[object]]:
    if everything:
        return "", []
    return f" AND {column} IN ({', '.join('?' for _ in audiences)})", list(audiences)


def _passage(row: Row) -> Passage:
    return Passage(source=SourceKind(row["source"]), ref=str(row["ref"]), cite=str(row["cite"]),
                   speaker=str(row["speaker"]), said_at=str(row["said_at"]), text=str(row["text"]))


class DecisionSearch:
    """Decisions and their minutes (``decision_search``): the board's record, cited ``[decision m-...]``."""

    name = "decisions"

    def __init__(self, db: Database) -> None:
        self.db = db

    async def search(self, query: str, asker: Asker, *, limit: int) -> list[Passage]:
        """The best ``limit`` decisions for ``query`` (none for an asker who may not see the board's record)."""
        if not (asker.board or asker.everything):
            return []
        found = await related_decisions(self.db, query, limit=limit)
        return [Passage(source=SourceKind.DECISION, ref=f"decision:{d.meeting_id}", cite=f"[decision {d.meeting_id}]",
                        speaker="board", said_at=d.started_at,
                        text=f"{d.topic}: decided {d.recommendation} (outcome: {d.outcome()})") for d in found]
