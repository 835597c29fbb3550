"""The labelled set: at least 80 questions over a generated board history (200 meetings, 5,000 messages, 20
documents, :mod:`tests.support.recall_history`), each with its expected source. Lexical recall@5 on the
exact-term questions must reach 0.9 on both backends; the paraphrase figure (lexical only) is printed for the
note."""

from __future__ import annotations

import json

import pytest

from board.app import Board
from board.recall.lexical import PassageSearch
from board.recall.service import RecallService
from board.room.store import MeetingStore
from tests.support.recall_history import QUESTIONS_FILE, generate, questions, score, seed


def test_the_checked_in_labelled_set_is_the_generators() -> None:
    history = generate()
    saved = [json.loads(line) for line in QUESTIONS_FILE.read_text(encoding="utf-8").splitlines()]
    assert saved == questions(history)
    assert len(saved) >= 80 and len(history.meetings) == 200 and len(history.documents) == 20
    assert 2 * len(history.chats) == 5000


@pytest.mark.backends
async def test_lexical_recall_at_5_on_exact_term_questions_is_at_least_0_9(board: Board) -> None:
    history = generate()
    await seed(history, board.parts.sessions, MeetingStore(board.parts.db), board.parts.media.store)
    while await board.parts.recall_indexer.run_once():
        pass
    scores = await score(board.parts.recall)
    exact, paraphrase = scores.recall("exact"), scores.recall("paraphrase")
    print(f"\nrecall@5 lexical: exact-term {exact:.2f} ({scores.count('exact')} questions), "
          f"paraphrased {paraphrase:.2f} ({scores.count('paraphrase')} questions); "
          f"median {scores.median_ms:.1f} ms a recall")
    assert scores.count("exact") >= 80
    assert exact >= 0.9


@pytest.mark.backends
async def test_the_bounded_ranking_keeps_exact_term_recall_at_5_at_least_0_9(board: Board) -> None:
    """The same questions with every word in more than 50 passages counted common (at this size, what a big
    board's words are at 2,000): SQLite ranks the newest candidates in Python (board.recall.ranking) instead of
    FTS5's bm25, PostgreSQL each word's newest 50; the exact-term figure still holds."""
    history = generate()
    await seed(history, board.parts.sessions, MeetingStore(board.parts.db), board.parts.media.store)
    while await board.parts.recall_indexer.run_once():
        pass
    retrievers = [PassageSearch(board.parts.db, common_at=50, window=50) if isinstance(r, PassageSearch) else r
                  for r in board.parts.recall.retrievers]
    assert len([r for r in retrievers if isinstance(r, PassageSearch)]) == 1
    asked = [json.loads(line) for line in QUESTIONS_FILE.read_text(encoding="utf-8").splitlines()]
    scores = await score(RecallService(retrievers), [q for q in asked if q["kind"] == "exact"])
    exact = scores.recall("exact")
    print(f"\nrecall@5 lexical, bounded ranking (common at 50 passages): exact-term {exact:.2f} "
          f"({scores.count('exact')} questions)")
    assert scores.count("exact") >= 80 and exact >= 0.9
