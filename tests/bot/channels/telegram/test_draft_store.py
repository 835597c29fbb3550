"""The drafts of streamed answers (``telegram_drafts``, both backends): an answer with no draft is not looked up on
SQLite, where this process is the table's only writer (issue 44: two round trips per answer, one inside the turn's
place under the cap); a draft recorded before a restart is still found; on PostgreSQL, where another replica may
have recorded one, every lookup asks the table."""

from __future__ import annotations

import pytest

from board.storage import Database, Dialect
from board.storage.database import Params, Row
from bot.channels.telegram.stream import DraftKey, DraftStore, StoredDraft
from tests.support.fakes.outage_db import OutageDatabase

pytestmark = pytest.mark.backends

ANSWERED = DraftKey("700001", "11")
STREAMED = DraftKey("700001", "12")
LEFT_BY_A_CRASH = DraftKey("700002", "5")


class Reads(OutageDatabase):
    """``db``, counting the reads of the drafts table."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, lambda sql: False)
        self.reads = 0

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        self.reads += "telegram_drafts" in sql
        return await super().fetchone(sql, params)


async def test_an_answer_without_a_draft_is_not_looked_up_where_this_process_alone_writes_drafts(
        database: Database) -> None:
    await DraftStore(database).placed(LEFT_BY_A_CRASH, 9001)  # the run before this one, killed mid-stream
    reads = Reads(database)
    store = DraftStore(reads)
    await store.prune()  # at the channel's start
    alone = database.dialect is Dialect.SQLITE

    assert await store.get(ANSWERED) is None  # a turn begins: nothing streamed for it yet
    assert await store.get(ANSWERED) is None  # its answer is delivered: no draft to edit
    assert reads.reads == (0 if alone else 2)
    assert await store.get(LEFT_BY_A_CRASH) == StoredDraft(9001)  # continued after the restart, edited in place

    await store.sending(STREAMED)
    assert await store.get(STREAMED) == StoredDraft(None)
    await store.placed(STREAMED, 42)
    assert await store.get(STREAMED) == StoredDraft(42)
    await store.forget(STREAMED)  # delivered
    before = reads.reads
    assert await store.get(STREAMED) is None
    assert reads.reads == before + (0 if alone else 1)
