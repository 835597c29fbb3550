"""Ranking a bounded set of candidate passages in Python, where FTS5's bm25 would cost more than the search.

FTS5's ``bm25()`` first counts, for each phrase of the query, every row that has it (its IDF): a word a big board
says all the time (``pricing`` in 163,000 of 1,000,000 passages) costs 4-6 ms of that alone, whoever asks and
however few passages are then ranked. When the question has such a word, :class:`~board.recall.lexical.PassageSearch`
takes a bounded set of candidates from the index instead (the newest ones that match, never more than its
``window``) and ranks them here with BM25's formula:

* the IDF of each word from the counts the search has already read (each counted up to a cap within what the asker
  may see: a common word's count is the cap, so every common word weighs alike and less than any rarer one);
* a word's presence in a passage as FTS5 found it (stems and all: the index decides which passage has which word;
  term frequency 1, since a line of talk rarely says a word twice);
* the passage's length (characters: read by SQLite, no text leaves it) against the candidates' mean (a
  short line with every word first).

Ties go to the newer passage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["K1", "B", "Candidate", "idf", "rank_candidates"]

#: BM25's term-frequency saturation and length normalisation (FTS5's own defaults).
K1 = 1.2
B = 0.75

@dataclass(frozen=True)
class Candidate:
    """A passage to rank: its id (newer is larger), its length (characters), and the query words it has."""

    id: int
    length: int
    has: frozenset[str]


def idf(total: int, having: int) -> float:
    """BM25's inverse document frequency of a word in ``having`` of ``total`` passages (always positive)."""
    return math.log(1.0 + (total - having + 0.5) / (having + 0.5))


def rank_candidates(candidates: Sequence[Candidate], weights: Mapping[str, float], limit: int) -> list[int]:
    """The ids of the best ``limit`` candidates, best first: the sum over the words each has of the word's weight
    (its :func:`idf`) times BM25's term part with term frequency 1; ties to the newer."""
    if not candidates or limit <= 0:
        return []
    mean = max(sum(c.length for c in candidates) / len(candidates), 1.0)
    weight: dict[frozenset[str], float] = {}  # a handful of distinct word sets among many candidates

    def score(c: Candidate) -> float:
        if (w := weight.get(c.has)) is None:
            w = weight[c.has] = sum(weights.get(word, 0.0) for word in c.has)
        return w * (K1 + 1.0) / (1.0 + K1 * (1.0 - B + B * c.length / mean))

    return [c.id for c in sorted(candidates, key=lambda c: (-score(c), -c.id))[:limit]]
