"""The lexical half of recall: words matched, best first, within what the asker may see.

:class:`PassageSearch` searches ``recall_passages`` (SQLite FTS5 ranked by bm25, or PostgreSQL's tsvector
behind a GIN index ranked by ``ts_rank`` times how many of the words a passage has); the asker's audiences
are part of the query: on SQLite inside the MATCH itself (each passage's audience is indexed as a token of its own,
:func:`audience_token`, so FTS5 intersects the words with the asker's passages and never walks anyone else's),
and again on the rows read. On SQLite a word found in more than :data:`COMMON_AT` passages (``office`` in a big board's
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

__all__ = ["AUDIENCE_PREFIX", "COMMON_AT", "WINDOW", "DecisionSearch", "PassageSearch", "audience_token"]

#: Passages a word may be in before it counts as common (SQLite; counted up to this many, never further).
COMMON_AT = 2000
#: What every audience token in ``recall_search`` starts with (longer than the porter stemmer's 64 characters
#: with it: a token it leaves whole).
AUDIENCE_PREFIX = "audience" * 8
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
        each is common; the newest :attr:`window` passages with any of them when that finds fewer than ``limit``.
        Each MATCH names the asker's audiences (:func:`audience_token`), so FTS5 walks only their passages; the
        audience is checked once more on the rows read."""
        where, params = _audience_sql("p.audience", audiences, everything)
        within = "" if everything else " AND aud : (" + " OR ".join(audience_token(a) for a in audiences) + ")"
        counts = await self._counts(quoted, within)
        rare = [q for q in quoted if 0 < counts.get(q, 1) <= self.common_at]
        common = [q for q in quoted if counts.get(q, 0) > self.common_at]
        every = " OR ".join(quoted)
        rows: list[Row] = []
        if rare or len(common) != 1:
            words = every if not common else f"({' OR '.join(rare)}) AND ({every})" if rare else " AND ".join(common)
            sql = ("SELECT p.* FROM (SELECT rowid AS id, bm25(recall_search, 1.0, 0.0) AS score FROM recall_search "
                   "WHERE recall_search MATCH ? ORDER BY score, rowid DESC LIMIT ?) s "
                   f"JOIN recall_passages p ON p.id = s.id WHERE 1 = 1{where} ORDER BY s.score, p.id DESC")
            rows = list(await self.db.fetchall(sql, [f"text : ({words}){within}", limit, *params]))
        if rare or not common or len(rows) >= limit:
            return rows
        sql = ("SELECT p.* FROM (SELECT rowid AS id, bm25(recall_search, 1.0, 0.0) AS score FROM recall_search "
               "WHERE recall_search MATCH ? ORDER BY rowid DESC LIMIT ?) s JOIN recall_passages p ON p.id = s.id "
               f"WHERE 1 = 1{where} ORDER BY s.score, p.id DESC LIMIT ?")
        found = {r["id"] for r in rows}
        more = await self.db.fetchall(sql, [f"text : ({every}){within}", self.window, *params, limit])
        return (rows + [r for r in more if r["id"] not in found])[:limit]

    async def _counts(self, quoted: list[str], within: str) -> dict[str, int]:
        """How many of the passages the asker may see (``within``: their audiences' MATCH term) each word (quoted)
        is in, counted up to :attr:`common_at` + 1: one statement."""
        one = "SELECT count(*) FROM (SELECT rowid FROM recall_search WHERE recall_search MATCH ? LIMIT ?)"
        row = await self.db.fetchone("SELECT " + ", ".join(f"({one}) AS n{i}" for i in range(len(quoted))),
                                     [value for q in quoted for value in (f"text : {q}{within}", self.common_at + 1)])
        return {} if row is None else {q: int(row[f"n{i}"]) for i, q in enumerate(quoted)}


def audience_token(audience: str) -> str:
    """The token ``recall_search`` indexes a passage's audience as (its ``aud`` column, migration 1490): a fixed
    64-character prefix and the audience's UTF-8 in hex, as SQLite's ``hex()`` writes it."""
    return AUDIENCE_PREFIX + audience.encode().hex().upper()


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
