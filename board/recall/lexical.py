"""The lexical half of recall: words matched, best first, within what the asker may see.

:class:`PassageSearch` searches ``recall_passages`` (SQLite FTS5 ranked by bm25, or PostgreSQL's tsvector
behind a GIN index ranked by ``ts_rank`` times how many of the words a passage has); the asker's audiences
are part of the query: on SQLite inside the MATCH itself (each passage's audience is indexed as a token of its own,
:func:`audience_token`, so FTS5 intersects the words with the asker's passages and never walks anyone else's),
and again on the rows read. On SQLite a word found in more than :data:`COMMON_AT` passages (``office`` in a big board's
talk) only weighs in the ranking: passages are matched by the query's rarer words, or, when every word is common,
by all of them together (a search by common words alone would rank half the index: 0.3-0.6 s at 1,000,000 lines),
and only if that finds too few, by any of them. When a word is common anywhere in the index, FTS5's bm25 is not
used (its IDF counts every row of each word, whoever asks: 4-6 ms a word at 1,000,000 lines): the newest
:data:`WINDOW` candidates are ranked in Python (:mod:`board.recall.ranking`). On PostgreSQL, for the owner at the
terminal, each word brings its newest :data:`WINDOW` passages to ``ts_rank`` (all of a rarer word's), never every
match; a member's matches are all ranked (their audience narrows them first).
:class:`DecisionSearch` searches decisions and their minutes where they are already indexed
(``decision_search``, :func:`board.decisions.recall.search.related_decisions`), the board's record: never for a
stranger.
"""

from __future__ import annotations

from board.decisions.recall.search import query_terms, related_decisions
from board.recall.passages import BOARD, Asker, Passage, SourceKind
from board.recall.ranking import Candidate, idf, rank_candidates
from board.storage import Database, Dialect, Row

__all__ = ["AUDIENCE_PREFIX", "COMMON_AT", "WINDOW", "DecisionSearch", "PassageSearch", "audience_token"]

#: Passages a word may be in before it counts as common (SQLite; counted up to this many, never further).
COMMON_AT = 2000
#: What every audience token in ``recall_search`` starts with (longer than the porter stemmer's 64 characters
#: with it: a token it leaves whole).
AUDIENCE_PREFIX = "audience" * 8
#: The most passages one search ranks when a word is common (the newest that match; on PostgreSQL per word).
WINDOW = 1_000


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
            rows = await self._postgres(quoted, terms, audiences, asker.everything, limit)
        else:
            rows = await self._sqlite(quoted, audiences, asker.everything, limit)
        return [_passage(r) for r in rows]

    async def _postgres(self, quoted: list[str], terms: list[str], audiences: list[str], everything: bool,
                        limit: int) -> list[Row]:
        """PostgreSQL: ``ts_rank`` times how many of the words a passage has. A member's matches are all ranked
        (the audience's b-tree narrows them first); the owner at the terminal ranks, for each word, its newest
        :attr:`window` passages (all of a rarer word's): ranking every match of the owner's common words read and
        ranked a third of a big index."""
        where, params = _audience_sql("p.audience", audiences, everything)
        rank = ("SELECT p.*, ts_rank(p.document, q.query) * (SELECT count(*) FROM unnest(q.words) w "
                "WHERE p.document @@ w) AS rank FROM (SELECT websearch_to_tsquery('english', ?) AS query, "
                "ARRAY(SELECT plainto_tsquery('english', t) FROM unnest(CAST(? AS TEXT[])) t) AS words) q ")
        if not everything:
            sql = rank + f"JOIN recall_passages p ON p.document @@ q.query{where} ORDER BY rank DESC, p.id DESC LIMIT ?"
            return list(await self.db.fetchall(sql, [" or ".join(quoted), terms, *params, limit]))
        # one subquery a word, its word a parameter of its own: the planner sees each word (a backward walk of the
        # id index for a common one, stopping at the window; the GIN index for a rarer one)
        newest = " UNION ".join("(SELECT x.id FROM recall_passages x WHERE x.document @@ plainto_tsquery('english', ?) "
                                "ORDER BY x.id DESC LIMIT ?)" for _ in terms)
        sql = rank + (f"JOIN recall_passages p ON p.id = ANY(ARRAY({newest})) "  # ids looked up, not a hash of all
                      "ORDER BY rank DESC, p.id DESC LIMIT ?")
        return list(await self.db.fetchall(sql, [" or ".join(quoted), terms,
                                                 *[v for t in terms for v in (t, self.window)], limit]))

    async def _sqlite(self, quoted: list[str], audiences: list[str], everything: bool, limit: int) -> list[Row]:
        """FTS5. Every word rare in the whole index (or absent): matched by any of them, ranked by bm25 (its IDF
        counts walk short doclists). A word common anywhere: no bm25 (its IDF would count that word's whole
        doclist, whoever asks); the newest :attr:`window` passages matched by the words rarer among the asker's
        passages (or, when every word is common there, by all of them together, and if that finds fewer than
        ``limit``, by any of them) are ranked in Python (:mod:`board.recall.ranking`). Each MATCH that reads
        passages names the asker's audiences (:func:`audience_token`), so FTS5 walks only their passages; the
        audience is checked once more on the rows read."""
        where, params = _audience_sql("p.audience", audiences, everything)
        within = "" if everything else " AND aud : (" + " OR ".join(audience_token(a) for a in audiences) + ")"
        counts, anywhere = await self._counts(quoted, within)
        every = " OR ".join(quoted)
        if all(anywhere.get(q, 0) <= self.common_at for q in quoted):
            sql = ("SELECT p.* FROM (SELECT rowid AS id, bm25(recall_search, 1.0, 0.0) AS score FROM recall_search "
                   "WHERE recall_search MATCH ? ORDER BY score, rowid DESC LIMIT ?) s "
                   f"JOIN recall_passages p ON p.id = s.id WHERE 1 = 1{where} ORDER BY s.score, p.id DESC")
            return list(await self.db.fetchall(sql, [f"text : ({every}){within}", limit, *params]))
        rare = [q for q in quoted if 0 < counts.get(q, 0) <= self.common_at]
        common = [q for q in quoted if counts.get(q, 0) > self.common_at]
        words = " OR ".join(rare) if rare else " AND ".join(common)
        rows = await self._newest(words, within, where, params) if rare or common else []
        if common and not rare and len(rows) < limit:  # common words rarely said together: any of them
            words = every
            rows = await self._newest(words, within, where, params)
        if not rows:
            return []
        together = words != every and not rare  # each candidate of an AND of the common words has all of them
        has = {r["id"]: frozenset(common) for r in rows} if together else await self._has(
            [(q, "" if counts.get(q, 0) <= self.common_at else words) for q in quoted if counts.get(q, 0) > 0],
            rows, within)
        total = await self._total()
        best = rank_candidates([Candidate(id=int(r["id"]), length=int(r["chars"]), has=has.get(r["id"], frozenset()))
                                for r in rows], {q: idf(total, max(counts.get(q, 0), 1)) for q in quoted}, limit)
        by_id = {r["id"]: r for r in await self.db.fetchall(
            f"SELECT * FROM recall_passages WHERE id IN ({', '.join('?' for _ in best)})", best)}
        return [by_id[i] for i in best if i in by_id]

    async def _newest(self, words: str, within: str, where: str, params: list[object]) -> list[Row]:
        """The ids and lengths (characters) of the newest :attr:`window` passages matching ``words`` (a MATCH
        expression of the text) that the asker may see: the index walked newest first and stopped there, nothing
        scored, no text read out."""
        sql = ("SELECT p.id, length(p.text) AS chars FROM (SELECT rowid AS id FROM recall_search WHERE recall_search "
               f"MATCH ? ORDER BY rowid DESC LIMIT ?) s JOIN recall_passages p ON p.id = s.id WHERE 1 = 1{where}")
        return list(await self.db.fetchall(sql, [f"text : ({words}){within}", self.window, *params]))

    async def _has(self, quoted: list[tuple[str, str]], rows: list[Row], within: str) -> dict[object, frozenset[str]]:
        """Which of the words each candidate has, as FTS5 matches them: one statement, from the oldest candidate's
        id on. ``quoted``: each word (quoted) with the candidates' MATCH for a word common among the asker's
        passages (read together with it: never the common word's whole doclist), "" for a rarer one (its own
        short doclist)."""
        if not quoted:
            return {}
        one = "SELECT {n} AS w, rowid AS id FROM recall_search WHERE recall_search MATCH ? AND rowid >= ?"
        oldest = min(int(r["id"]) for r in rows)
        found = await self.db.fetchall(" UNION ALL ".join(one.format(n=n) for n in range(len(quoted))), [
            v for q, words in quoted for v in (f"text : ({f'({words}) AND ' if words else ''}{q}){within}", oldest)])
        has: dict[object, set[str]] = {}
        for r in found:
            has.setdefault(r["id"], set()).add(quoted[int(r["w"])][0])
        return {k: frozenset(v) for k, v in has.items()}

    async def _total(self) -> int:
        """How many passages the index holds, near enough for an IDF (the largest id: one b-tree lookup)."""
        row = await self.db.fetchone("SELECT max(id) AS n FROM recall_passages")
        return int(row["n"] or 0) if row is not None else 0

    async def _counts(self, quoted: list[str], within: str) -> tuple[dict[str, int], dict[str, int]]:
        """How many of the passages the asker may see (``within``: their audiences' MATCH term) each word (quoted)
        is in, and for a member how many of all passages (whether bm25's IDF counts would be cheap), each counted
        up to :attr:`common_at` + 1 (never further): one statement."""
        one = "SELECT count(*) FROM (SELECT rowid FROM recall_search WHERE recall_search MATCH ? LIMIT ?)"
        scopes = [within, ""] if within else [within]
        matches = [f"text : {q}{scope}" for scope in scopes for q in quoted]
        row = await self.db.fetchone("SELECT " + ", ".join(f"({one}) AS n{i}" for i in range(len(matches))),
                                     [value for m in matches for value in (m, self.common_at + 1)])
        found = [0] * len(matches) if row is None else [int(row[f"n{i}"]) for i in range(len(matches))]
        here = dict(zip(quoted, found, strict=False))
        return here, dict(zip(quoted, found[len(quoted):], strict=False)) if within else here


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
