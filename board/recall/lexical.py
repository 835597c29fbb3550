"""The lexical half of recall: words matched, best first, within what the asker may see.

:class:`PassageSearch` searches ``recall_passages`` (SQLite FTS5 ranked by bm25, or PostgreSQL's tsvector
behind a GIN index ranked by ``ts_rank`` times how many of the words a passage has); the asker's audiences
are part of the query. On SQLite a word found in more than :data:`COMMON_AT` passages (``office`` in a big board's
talk) only weighs in the ranking: passages are matched by the query's rarer words, or, when every word is common,
by all of them together (a search by common words alone would rank half the index: 0.3-0.6 s at 1,000,000 lines),
and only if that finds too few, among the newest :data:`WINDOW` passages with any of them.
:class:`DecisionSearch` searches decisions and their minutes where they are already indexed
(``decision_search``, :func:`board.decisions.recall.search.related_decisions`), the board's record: never for a
stranger.
"""

from __future__ import annotations

from board.decisions.recall.search import query_terms, related_decisions
from board.recall.passages import BOARD, Asker, Passage, SourceKind
from board.storage import Database, Dialect, Row

__all__ = ["COMMON_AT", "WINDOW", "DecisionSearch", "PassageSearch"]

#: Passages a word may be in before it counts as common (SQLite; counted up to this many, never further).
COMMON_AT = 2000
#: The newest passages with any of the words ranked when every word is common and they are rarely together.
WINDOW = 10_000


class PassageSearch:
    """Conversation lines, meeting statements and documents' text in ``recall_passages``."""

    name = "passages"

    def __init__(self, db: Database, *, common_at: int = COMMON_AT, window: int = WINDOW) -> None:
        self.db = db
        self.common_at = common_at
        self.window = window

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
            rows = await self._sqlite(quoted, audiences, asker.everything, limit)
        return [_passage(r) for r in rows]

    async def _sqlite(self, quoted: list[str], audiences: list[str], everything: bool, limit: int) -> list[Row]:
        """FTS5: matched by the rarer words found (every word weighs in bm25), or by all the words together when
        each is common; the newest :attr:`window` passages with any of them when that finds fewer than ``limit``."""
        where, params = _audience_sql("p.audience", audiences, everything)
        counts = await self._counts(quoted)
        rare = [q for q in quoted if 0 < counts.get(q, 1) <= self.common_at]
        common = [q for q in quoted if counts.get(q, 0) > self.common_at]
        every = " OR ".join(quoted)
        rows: list[Row] = []
        if rare or len(common) != 1:
            match = every if not common else f"({' OR '.join(rare)}) AND ({every})" if rare else " AND ".join(common)
            sql = ("SELECT p.* FROM recall_search s JOIN recall_passages p ON p.id = s.rowid "
                   f"WHERE recall_search MATCH ?{where} ORDER BY bm25(recall_search), p.id DESC LIMIT ?")
            rows = list(await self.db.fetchall(sql, [match, *params, limit]))
        if rare or not common or len(rows) >= limit:
            return rows
        sql = ("SELECT p.* FROM (SELECT rowid AS id, bm25(recall_search) AS score FROM recall_search "
               "WHERE recall_search MATCH ? ORDER BY rowid DESC LIMIT ?) s JOIN recall_passages p ON p.id = s.id "
               f"WHERE 1 = 1{where} ORDER BY s.score, p.id DESC LIMIT ?")
        found = {r["id"] for r in rows}
        more = [r for r in await self.db.fetchall(sql, [every, self.window, *params, limit]) if r["id"] not in found]
        return (rows + more)[:limit]

    async def _counts(self, quoted: list[str]) -> dict[str, int]:
        """How many passages each word (quoted) is in, counted up to :attr:`common_at` + 1: one statement."""
        one = "SELECT count(*) FROM (SELECT rowid FROM recall_search WHERE recall_search MATCH ? LIMIT ?)"
        row = await self.db.fetchone("SELECT " + ", ".join(f"({one}) AS n{i}" for i in range(len(quoted))),
                                     [value for q in quoted for value in (q, self.common_at + 1)])
        return {} if row is None else {q: int(row[f"n{i}"]) for i, q in enumerate(quoted)}


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

    def __init__(self, db: Database, *, common_at: int = COMMON_AT, window: int = WINDOW) -> None:
        self.db = db
        self.common_at = common_at
        self.window = window

    async def search(self, query: str, asker: Asker, *, limit: int) -> list[Passage]:
        """The best ``limit`` decisions for ``query`` (none for an asker who may not see the board's record)."""
        if not (asker.board or asker.everything):
            return []
        found = await related_decisions(self.db, query, limit=limit)
        return [Passage(source=SourceKind.DECISION, ref=f"decision:{d.meeting_id}", cite=f"[decision {d.meeting_id}]",
                        speaker="board", said_at=d.started_at,
                        text=f"{d.topic}: decided {d.recommendation} (outcome: {d.outcome()})") for d in found]
