"""The labelled set: at least 80 questions over a generated board history (200 meetings, 5,000 messages, 20
documents, :mod:`tests.support.recall_history`), each with its expected source. Lexical recall@5 on the
exact-term questions must reach 0.9 on both backends; the paraphrase figure (lexical only) is printed for the
note."""

from __future__ import annotations

import json
import statistics
import time

import pytest

from board.app import Board
from board.recall.lexical import PassageSearch
from board.recall.passages import Asker
from board.recall.service import RecallService
from board.room.store import MeetingStore
from tests.support.recall_history import QUESTIONS_FILE, generate, hit, questions, seed


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
    owner = Asker.owner_view()
    scores: dict[str, list[bool]] = {"exact": [], "paraphrase": []}
    took: list[float] = []
    for q in [json.loads(line) for line in QUESTIONS_FILE.read_text(encoding="utf-8").splitlines()]:
        start = time.perf_counter()
        found = await board.parts.recall.recall(q["question"], owner, limit=5)
        took.append(time.perf_counter() - start)
        scores[q["kind"]].append(hit(q, [p.cite for p in found], [p.text for p in found]))
    exact = sum(scores["exact"]) / len(scores["exact"])
    paraphrase = sum(scores["paraphrase"]) / len(scores["paraphrase"])
    print(f"\nrecall@5 lexical: exact-term {exact:.2f} ({len(scores['exact'])} questions), "
          f"paraphrased {paraphrase:.2f} ({len(scores['paraphrase'])} questions); "
          f"median {statistics.median(took) * 1000:.1f} ms a recall")
    assert len(scores["exact"]) >= 80
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
    service = RecallService(retrievers)
    exact: list[bool] = []
    for q in [json.loads(line) for line in QUESTIONS_FILE.read_text(encoding="utf-8").splitlines()]:
        if q["kind"] == "exact":
            found = await service.recall(q["question"], Asker.owner_view(), limit=5)
            exact.append(hit(q, [p.cite for p in found], [p.text for p in found]))
    print(f"\nrecall@5 lexical, bounded ranking (common at 50 passages): exact-term {sum(exact) / len(exact):.2f} "
          f"({len(exact)} questions)")
    assert len(exact) >= 80 and sum(exact) / len(exact) >= 0.9
