"""Recall ranks a bounded set however much of the board says the question's words (issue 43's "Scale": recall
<= 50 ms at 10,000 meetings and 1,000,000 lines). FTS5's bm25 counts, for its IDF, every row of each word, and
scores every row it ranks over every instance: a word half the board says cost that whole doclist on each recall.
So a passage search with a common word ranks the newest ``window`` candidates in Python
(:mod:`board.recall.ranking`) and never calls bm25, and a decision search whose words are all common ranks only the
newest ``ranked`` decisions (a rarer word's decisions are all ranked, however old). The work (SQLite's
virtual-machine steps, counted by a progress handler: each row FTS5 yields or ranks costs some) is the same with
three times as many passages or decisions holding the words. No timing is asserted. SQLite (PostgreSQL's bound is
in its query; its results are checked in test_recall_privacy.py and test_labelled_set.py on both backends)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from board.decisions.recall.search import related_decisions
from board.recall.lexical import PassageSearch
from board.recall.passages import Asker
from board.storage import Database

T = TypeVar("T")


async def _counted(db: Database, read: Callable[[], Awaitable[T]]) -> tuple[int, list[str], T]:
    """(VM steps, statements, result) of one read on the db's connection, the full-text indexes merged first."""
    conn: Any = db
    for table in ("recall_search", "decision_search"):
        await db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    steps: list[int] = []
    statements: list[str] = []
    await conn.conn.set_progress_handler(lambda: steps.append(1), 1)
    await conn.conn.set_trace_callback(statements.append)
    try:
        result = await read()
    finally:
        await conn.conn.set_progress_handler(None, 1)
        await conn.conn.set_trace_callback(None)
    return len(steps), statements, result


async def _say(db: Database, ref: str, text: str, audience: str = "owner") -> None:
    await db.execute("INSERT INTO recall_passages (source, ref, audience, speaker, cite, said_at, text) "
                     "VALUES ('conversation', ?, ?, 'user', '[finance, 2026-11-01]', '2026-11-01', ?)",
                     (ref, audience, text))


async def test_a_search_by_common_words_ranks_the_newest_window_only(database: Database) -> None:
    await _say(database, "old#pune", "the pricing of the pune office for europe, decided long ago")
    search = PassageSearch(database, common_at=10, window=20)
    owner = Asker.owner_view()
    figures = []
    for batch in range(3):  # 150 passages with both words, then 300, then 450
        for k in range(150):
            await _say(database, f"{batch}#{k}", f"pricing for europe, talk {batch} {k}" + " and more" * (k % 4))
        figures.append(await _counted(database, lambda: search.search("pricing in europe", owner, limit=5)))
    (first, _, _), (_, _, _), (last, statements, found) = figures
    assert last <= first * 1.05, f"{last} VM steps with 450 passages holding the words, {first} with 150"
    assert not any("bm25(" in s for s in statements), statements  # no IDF counts over the words' whole doclists
    assert len(found) == 5 and all(p.text.startswith("pricing for europe, talk 2 ") for p in found)
    assert all(len(p.text) <= len(found[-1].text) for p in found)  # the shortest of the newest first
    # a rarer word of the question still finds the oldest passage that has it
    rare = await search.search("pune pricing", owner, limit=5)
    assert rare[0].ref == "old#pune", [p.ref for p in rare]


async def test_a_member_with_common_words_ranks_only_their_newest(database: Database) -> None:
    member = Asker(frozenset({"id:telegram:7"}), board=True)
    search = PassageSearch(database, common_at=10, window=20)
    for k in range(40):
        await _say(database, f"m#{k}", f"pricing for europe, note {k}", "id:telegram:7")
    await _say(database, "m#germany", "pricing for germany and europe", "id:telegram:7")
    figures = []
    for batch in range(2):  # others say the words: 300, then 600 passages
        for k in range(300):
            await _say(database, f"o#{batch}#{k}", f"pricing germany europe secret {k}", "id:telegram:8")
        figures.append(await _counted(database, lambda: search.search("pricing germany europe", member, limit=5)))
    (first, _, _), (last, statements, found) = figures
    assert last <= first * 1.05, f"{last} VM steps with 600 others' passages, {first} with 300"
    assert not any("bm25(" in s for s in statements), statements
    assert found[0].text == "pricing for germany and europe" and all("secret" not in p.text for p in found)


async def _decide(db: Database, meeting: str, topic: str, minutes: str) -> None:
    await db.execute("INSERT INTO meetings(id, topic, roster, chair, status, started_at) "
                     "VALUES (?, ?, 'board', 'general', 'running', '2026-01-01T00:00:00+00:00')", (meeting, topic))
    await db.execute("UPDATE meetings SET status = 'ended', decision = ?, minutes = ? WHERE id = ?",
                     (json.dumps({"recommendation": f"go ahead with {topic}", "rationale": minutes}), minutes,
                      meeting))


async def test_a_decision_search_by_common_words_ranks_the_newest_only(database: Database) -> None:
    await _decide(database, "m-pune", "The Pune office lease", "pricing europe " * 20)
    figures = []
    for batch in range(3):  # 40 decisions holding every word of the topic, then 80, then 120
        for k in range(40):
            await _decide(database, f"m-{batch}-{k:03d}", f"Pricing in Europe, take {batch} {k}",
                          "pricing europe growth " * (10 + k))
        figures.append(await _counted(database, lambda: related_decisions(database, "Pricing for Europe?", limit=3,
                                                                         ranked=20)))
    (first, _, _), (_, _, _), (last, _, found) = figures
    assert last <= first * 1.05, f"{last} VM steps with 120 decisions holding the words, {first} with 40"
    assert len(found) == 3 and all(d.meeting_id.startswith("m-2-") for d in found), [d.meeting_id for d in found]
    # a rarer word: every decision that has it is ranked, the oldest too
    pune = await related_decisions(database, "Pricing of the Pune office", limit=3, ranked=20)
    assert pune[0].meeting_id == "m-pune", [d.meeting_id for d in pune]
