"""A state db made by the previous version (commit ec16d0d, before the house restructure)
opens with today's code and keeps working.

The fixture ``tests/data/state_db_v0_1.sql.gz`` is that version's db as a gzipped SQL dump, made by
``tests/data/make_state_db_v0_1.py`` with its own code: two console turns (session ``main``
and its transcript, ``llm_calls`` rows), a board meeting run to its end, two Telegram topic
mappings, and Telegram inbox rows (answered, replied, denied, and an unfinished ``received``
one that carries its envelope). The transcript it points at is in ``tests/data/state_db_v0_1/``.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from board.app import BOARD_MIGRATIONS, DB_FILE, Board, BoardSettings
from board.envelope import Envelope
from bot.app import all_migrations
from bot.channels.telegram.topics import Topics, TopicStore

DATA = Path(__file__).parents[2] / "data"
DUMP = DATA / "state_db_v0_1.sql.gz"
TRANSCRIPTS = DATA / "state_db_v0_1"

# what the previous version recorded (see the dump)
OLD_MIGRATIONS = {
    "0001_sessions", "0002_llm_calls", "0003_tool_calls", "0100_meetings", "0101_consultations",
    "0200_telegram_topics", "0201_inbound_messages", "0202_inbound_messages_resume",
}
SESSION_ID = "20261122T202344-general-8de007"
MEETING_ID = "m-20261122-202344-bba2"
FORUM = -1001234567890
OLD_CALLS = 19


def _load_dump(data_dir: Path) -> Path:
    """The previous version's db, rebuilt from its dump, with its transcripts beside it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / DB_FILE
    conn = sqlite3.connect(path)
    try:
        conn.executescript(gzip.decompress(DUMP.read_bytes()).decode("utf-8"))
    finally:
        conn.close()
    for transcript in TRANSCRIPTS.glob("*.jsonl"):
        shutil.copy2(transcript, data_dir / transcript.name)
    return path


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.fixture
def old_db(data_dir: Path) -> Path:
    return _load_dump(data_dir)


@pytest.fixture
async def upgraded(settings: BoardSettings, old_db: Path) -> AsyncIterator[Board]:
    board = await Board.open(settings, migrations=all_migrations())
    try:
        yield board
    finally:
        await board.close()


def test_the_fixture_is_the_previous_versions_db(old_db: Path) -> None:
    """Guard against a regenerated fixture that no longer holds what the tests rely on."""
    assert {name for (name,) in _rows(old_db, "SELECT name FROM schema_migrations")} == OLD_MIGRATIONS
    assert _rows(old_db, "SELECT COUNT(*) FROM llm_calls") == [(OLD_CALLS,)]
    assert _rows(old_db, "SELECT session_id, key FROM sessions") == [(SESSION_ID, "main")]
    assert (old_db.parent / f"{SESSION_ID}.jsonl").is_file()


async def test_no_migration_is_reapplied_or_missing(settings: BoardSettings, old_db: Path) -> None:
    """Today's full list (the board's, the intake's, every channel's) is recorded once each:
    the previous version's names keep their original timestamps (not applied again), the
    new ones are added, and opening a second time changes nothing."""
    before = dict(_rows(old_db, "SELECT name, applied_at FROM schema_migrations"))
    expected = {m.name for m in [*BOARD_MIGRATIONS, *all_migrations()]}
    assert expected >= OLD_MIGRATIONS, "a migration of the previous version vanished from today's code"
    for _ in range(2):
        board = await Board.open(settings, migrations=all_migrations())
        await board.close()
        rows = _rows(old_db, "SELECT name, applied_at FROM schema_migrations")
        assert sorted(name for name, _ in rows) == sorted(expected)
        after = dict(rows)
        assert {name: after[name] for name in before} == before


async def test_a_new_turn_continues_the_old_session(upgraded: Board, data_dir: Path) -> None:
    before = await upgraded.parts.sessions.current("main")
    assert before is not None and before.session_id == SESSION_ID

    reply = await upgraded.handle(Envelope(channel="console", text="Remind me what we discussed", sender="owner",
                                           sender_name="Owner", is_owner=True))
    assert reply.kind != "error" and not reply.degraded
    # the offline model counts the user messages it was sent: the two old ones were read back
    assert "(I have 2 earlier message(s) of ours in view.)" in reply.text

    after = await upgraded.parts.sessions.current("main")
    assert after is not None and after.session_id == SESSION_ID
    lines = (data_dir / f"{SESSION_ID}.jsonl").read_text(encoding="utf-8").splitlines()
    messages = [json.loads(line) for line in lines[1:]]
    assert [(m["role"], m["text"].split(":")[0][:29]) for m in messages if m["type"] == "message"] == [
        ("user", "What is our runway?"),
        ("assistant", "I am the Chair of the board"),
        ("user", "And if we hire two engineers?"),
        ("assistant", "I am the Chair of the board"),
        ("user", "Remind me what we discussed"),
        ("assistant", "I am the Chair of the board"),
    ]
    listed = await upgraded.parts.sessions.list(include_archived=True)
    assert [(s.key, s.session_id) for s in listed] == [("main", SESSION_ID)]


async def test_the_ledger_sums_old_and_new_calls(upgraded: Board, old_db: Path) -> None:
    old_tokens = _rows(old_db, "SELECT SUM(input_tokens), SUM(output_tokens) FROM llm_calls")[0]
    total = await upgraded.parts.ledger.total()
    assert (total.calls, total.input_tokens, total.output_tokens) == (OLD_CALLS, *old_tokens)

    await upgraded.handle(Envelope(channel="console", text="One more question", sender="owner", is_owner=True))
    new = await upgraded.parts.db.fetchall("SELECT input_tokens, output_tokens FROM llm_calls WHERE id > ?",
                                           (OLD_CALLS,))
    assert len(new) == 1
    total = await upgraded.parts.ledger.total()
    assert total.calls == OLD_CALLS + 1
    assert total.input_tokens == old_tokens[0] + new[0]["input_tokens"]
    assert total.output_tokens == old_tokens[1] + new[0]["output_tokens"]
    by_role = {row.key: row.calls for row in await upgraded.parts.ledger.summary(by="role")}
    assert by_role["general"] == 5  # two old turns, the chair's framing and synthesis, the new turn
    by_meeting = {row.key: row.calls for row in await upgraded.parts.ledger.summary(by="meeting")}
    assert by_meeting[MEETING_ID] == OLD_CALLS - 2


async def test_the_old_meeting_is_still_listed_with_its_minutes(upgraded: Board) -> None:
    [row] = await upgraded.parts.room.store.list()
    assert (row.id, row.topic, row.status, row.stop_reason) == (
        MEETING_ID, "Should we expand to Europe?", "ended", "completed")
    assert row.minutes and "Should we expand to Europe?" in row.minutes
    assert row.decision is not None and row.decision["recommendation"]
    assert await upgraded.parts.room.store.get(MEETING_ID[:12]) == row
    details = await upgraded.parts.room.store.details(MEETING_ID)
    assert len(details["statements"]) == 15


async def test_the_telegram_topics_are_still_mapped(upgraded: Board) -> None:
    store = TopicStore(upgraded.parts.db)
    assert await store.load(FORUM) == {"finance": (42, "💰 Finance"), "research": (43, "🔬 Research")}
    topics = Topics(FORUM, store)
    await topics.load()
    assert (topics.role_for(42), topics.role_for(43), topics.thread_for("finance")) == ("finance", "research", 42)


async def test_the_unfinished_inbox_row_keeps_its_envelope(upgraded: Board) -> None:
    """Only the columns the previous version had are looked at: the intake may add more."""
    rows = await upgraded.parts.db.fetchall(
        "SELECT chat_id, message_id, status, envelope, reply FROM inbound_messages ORDER BY message_id")
    assert [(r["chat_id"], r["message_id"], r["status"]) for r in rows] == [
        ("1001", "10", "answered"), ("1001", "11", "replied"), ("2002", "12", "denied"), ("1001", "13", "received"),
    ]
    unfinished = json.loads(rows[3]["envelope"])
    assert (unfinished["channel"], unfinished["chat_id"], unfinished["message_id"], unfinished["text"]) == (
        "telegram", "1001", "13", "what did finance say?")
    assert json.loads(rows[1]["reply"])["text"] == "A memo"
