"""Recall walks only what the asker may see (issue 43's "Scale": recall <= 50 ms at 1,000,000 lines). Each
passage's audience is a token of the full-text index (migration 1490), and every statement that reads
``recall_search`` for a member names their audiences in its MATCH: the work of a member's search (SQLite's
virtual-machine steps, counted by a progress handler; each row the index yields costs some) is the same whether
the board holds hundreds or thousands of other people's passages with the same words; the one walk beyond the
member's own passages is the count of each word in the whole index, which stops at the search's ``common_at``
(whether FTS5's bm25 would be cheap: its IDF counts every row of a word, whoever asks). Before, the others' passages
were matched and ranked, then dropped (the count grew with them). No timing is asserted. SQLite only: the
PostgreSQL side keeps the audience in its WHERE (its suite in test_recall_privacy.py)."""

from __future__ import annotations

from typing import Any

from board.recall.lexical import PassageSearch, audience_token
from board.recall.passages import Asker
from board.storage import Database

MEMBER = "id:telegram:7"
OTHERS = ("id:telegram:8", "group:telegram:-1009", "owner")


async def _say(db: Database, ref: str, audience: str, text: str) -> None:
    await db.execute("INSERT INTO recall_passages (source, ref, audience, speaker, cite, said_at, text) "
                     "VALUES ('conversation', ?, ?, 'user', '[finance, 2026-11-01]', '2026-11-01', ?)",
                     (ref, audience, text))


async def _steps(db: Database, search: PassageSearch, query: str, asker: Asker) -> tuple[int, list[str], list[str]]:
    """(VM steps, statements, texts found) of one search on the db's connection."""
    conn: Any = db
    await db.execute("INSERT INTO recall_search(recall_search) VALUES ('optimize')")  # one segment, as merged
    steps: list[int] = []
    statements: list[str] = []
    await conn.conn.set_progress_handler(lambda: steps.append(1), 1)
    await conn.conn.set_trace_callback(statements.append)
    try:
        found = await search.search(query, asker, limit=5)
    finally:
        await conn.conn.set_progress_handler(None, 1)
        await conn.conn.set_trace_callback(None)
    return len(steps), statements, [p.text for p in found]


async def test_a_members_search_does_not_walk_other_peoples_passages(database: Database) -> None:
    for k in range(30):
        await _say(database, f"m#{k}", MEMBER, f"the pune office budget, note {k}")
    await _say(database, "m#lease", MEMBER, "the pune office lease was signed on friday")
    search = PassageSearch(database, common_at=10, window=30)
    member = Asker(frozenset({MEMBER}), board=True)
    questions = ("what about the pune office lease?", "pune office", "pune")
    alone = {q: await _steps(database, search, q, member) for q in questions}
    crowds = []
    for crowd in range(2):  # other people say the same words, many times over: 900 passages, then 1,800
        for k in range(300):
            for audience in OTHERS:
                await _say(database, f"{audience}#{crowd}#{k}", audience, f"pune office lease secret {audience} {k}")
        crowds.append({q: await _steps(database, search, q, member) for q in questions})
    for q in questions:
        (before, _, found_before), (after, statements, found_after) = alone[q], crowds[0][q]
        assert found_after == found_before and "secret" not in " ".join(found_after), (q, found_after)
        reads = [s for s in statements if "recall_search MATCH" in s]
        assert reads and all(audience_token(MEMBER) in s for s in reads), statements
        # the only walk outside the member's passages: each word counted in the whole index up to common_at + 1
        assert after <= before * 1.15, f"{q!r}: {after} VM steps with 900 others' passages, {before} without"
        assert crowds[1][q][0] <= after * 1.05, f"{q!r}: {crowds[1][q][0]} VM steps with 1,800, {after} with 900"
        assert crowds[1][q][2] == found_before
    owner = await search.search("pune lease secret", Asker.owner_view(), limit=5)
    assert len(owner) == 5 and all("secret" in p.text for p in owner)  # the owner at the terminal: everything


def test_an_audience_token_is_one_unstemmed_word_per_audience() -> None:
    tokens = {audience_token(a) for a in (MEMBER, *OTHERS, "id:telegram:70", "board", "group:telegram:-1009 ")}
    assert len(tokens) == 7 and all(t.isalnum() and len(t) > 64 for t in tokens)
