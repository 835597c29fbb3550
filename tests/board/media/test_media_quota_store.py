"""The quota sums on both backends (SQLite and a real PostgreSQL): what one person's identities keep
(files and the text read from them), the kept text's running figure, kept by record and summed again
after a prune (:mod:`board.media.store`). The daemon tests (test_media_quota_text, test_media_quota_person)
run on SQLite; these are the same queries on PostgreSQL, where migration 1070's twin adds the column."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board.app import BOARD_MIGRATIONS
from board.media.attachment import Attachment, MediaKind
from board.media.store import MediaStore
from board.storage import Dialect, StateURL, open_database
from bot.app import all_migrations

pytestmark = pytest.mark.backends


def _doc(blob: str, stored: int, text: int, problem: str | None = None) -> Attachment:
    return Attachment(kind=MediaKind.DOCUMENT, name="a.docx", size=stored, blob=blob, stored=stored,
                      text_bytes=text, problem=problem)


async def test_a_persons_identities_and_the_kept_text_are_summed(
    state_url: StateURL | None, data_dir: Path, backend: Dialect
) -> None:
    url = state_url or StateURL(Dialect.SQLITE, path=data_dir / "sabha.db")
    db = await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()])  # what state_url's template holds
    try:
        store = MediaStore(db)
        since = (datetime.now(UTC) - timedelta(days=1)).isoformat(timespec="milliseconds")
        await store.record(channel="telegram", chat_id="7", thread_id=None, message_id="1", sender="7",
                           attachments=(_doc("a" * 64, 1000, 300_000),))
        assert await store.text_total(since) == 300_000  # summed at first ask
        await store.record(channel="whatsapp", chat_id="91", thread_id=None, message_id="w1", sender="91",
                           attachments=(_doc("b" * 64, 2000, 50_000), _doc("c" * 64, 5, 7, problem="refused")),
                           public=True)
        assert await store.text_total(since) == 350_000  # kept by record; the refused one not counted
        assert await store.kept_text(since) == 350_000
        both = [("telegram", "7"), ("whatsapp", "91")]
        assert await store.kept_bytes(since, identities=both) == 1000 + 300_000 + 2000 + 50_000
        assert await store.kept_bytes(since, identities=[("telegram", "7")]) == 301_000
        assert await store.kept_bytes(since, public=True) == 52_000
        await db.execute("UPDATE message_attachments SET created_at = ?", ("2000-01-01T00:00:00.000+00:00",))
        await store.prune(30)
        assert await store.text_total(since) == 0  # summed again after the prune
    finally:
        await db.close()
