"""Transcripts: the JSONL format, torn lines, tail reads and reset archiving.

The store's behaviour (header, appends, the tail, reopening, another writer, eviction, reset) runs on
both backends: JSONL files beside SQLite, ``transcript_lines`` rows on PostgreSQL. Torn lines, block
reads and a file deleted under a transcript are the file form's own.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from board.app import Board
from board.conversation.transcript_rows import RowTranscripts
from board.conversation.transcripts import FileTranscripts, TranscriptStore, iter_entries, read_tail
from board.envelope import Envelope
from board.storage import Database, Dialect, StorageError

Stores = Callable[..., TranscriptStore]


@pytest.fixture
def stores(database: Database, data_dir: Path) -> Stores:
    """A new transcript store on the test's backend per call, as another process would have one."""
    if database.dialect is Dialect.POSTGRES:
        return lambda **kw: RowTranscripts(database, **kw)
    return lambda **kw: FileTranscripts(data_dir, **kw)


async def exported(board: Board, session_id: str) -> bytes:
    return b"".join([chunk async for chunk in board.parts.transcripts.lines(session_id)])


async def delete_transcript(board: Board, session_id: str) -> None:
    """Lose a session's transcript (its file, or its rows)."""
    if isinstance(board.parts.transcripts, FileTranscripts):
        board.parts.transcripts.path_for(session_id).unlink()
    else:
        await board.parts.db.execute("DELETE FROM transcript_lines WHERE session_id = ?", (session_id,))


def ask(text: str, **kw: object) -> Envelope:
    kw.setdefault("is_owner", True)
    return Envelope(channel="console", text=text, sender="owner", **kw)  # type: ignore[arg-type]


@pytest.mark.backends
async def test_turn_writes_header_user_and_assistant(board: Board, data_dir: Path) -> None:
    reply = await board.handle(ask("hello board"))
    ref = await board.parts.sessions.current("main")
    assert ref is not None
    text = await exported(board, ref.session_id)
    files = list(data_dir.glob("*.jsonl"))
    if board.parts.db.dialect is Dialect.SQLITE:
        assert [f.stem for f in files] == [ref.session_id] and files[0].read_bytes() == text
    else:
        assert files == []  # rows, not files
    lines = [json.loads(line) for line in text.decode("utf-8").splitlines()]
    header, user, assistant = lines
    assert header["type"] == "session" and header["key"] == "main" and header["role"] == "general"
    assert header["id"] == ref.session_id and header["created"]
    assert user == {**user, "type": "message", "role": "user", "text": "hello board", "channel": "console"}
    assert assistant["role"] == "assistant" and assistant["agent"] == "general"
    assert assistant["text"] == reply.text
    assert assistant["model"] == "offline" and len(assistant["soul_version"]) == 12
    assert assistant["usage"]["input_tokens"] > 0 and "latency_ms" in assistant


@pytest.mark.backends
async def test_history_reaches_the_model(board: Board) -> None:
    await board.handle(ask("first"))
    await board.handle(ask("second"))
    third = await board.handle(ask("third"))
    assert "2 earlier message(s)" in third.text


async def test_torn_last_line_is_skipped_with_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = FileTranscripts(tmp_path)
    t = await store.create("s1", "main", "general")
    t.append({"type": "message", "role": "user", "text": "kept"})
    with open(t.path, "ab") as fh:
        fh.write(b'{"type":"message","role":"assistant","te')  # crash mid-write
    with caplog.at_level(logging.WARNING):
        tail = read_tail(t.path, 10)
    assert [e["text"] for e in tail] == ["kept"]
    assert any("torn last line" in r.getMessage() for r in caplog.records)
    # The next write starts on a fresh line instead of gluing onto the torn one.
    fresh = await FileTranscripts(tmp_path).open("s1")
    fresh.append({"type": "message", "role": "user", "text": "after crash"})
    texts = [e.get("text") for e in iter_entries(t.path) if e.get("type") == "message"]
    assert texts == ["kept", "after crash"]
    assert [e["text"] for e in read_tail(t.path, 10)] == ["kept", "after crash"]


async def test_tail_reads_across_block_boundaries(tmp_path: Path) -> None:
    store = FileTranscripts(tmp_path)
    t = await store.create("big", "main", "general")
    t.append(*({"type": "message", "role": "user", "text": f"m{i} " + "x" * 500} for i in range(2000)))
    tail = read_tail(t.path, 150)
    assert [e["text"].split()[0] for e in tail] == [f"m{i}" for i in range(1850, 2000)]


@pytest.mark.backends
async def test_recent_history_comes_from_the_tail_not_the_whole_file(board: Board, stores: Stores) -> None:
    await board.handle(ask("start"))
    ref = await board.parts.sessions.current("main")
    assert ref is not None
    t = await stores().open(ref.session_id)
    t.append(*({"type": "message", "role": "user", "text": f"old {i}"} for i in range(5000)))
    await t.sync()
    fresh = await stores().open(ref.session_id)
    recent = fresh.recent(3)
    assert [e["text"] for e in recent] == ["old 4997", "old 4998", "old 4999"]


@pytest.mark.backends
async def test_reset_archives_and_keeps_the_old_file(board: Board, data_dir: Path) -> None:
    await board.handle(ask("remember the red folder"))
    old = await board.parts.sessions.current("main")
    reply = await board.handle(ask("/reset"))
    assert reply.kind == "command" and "archived" in reply.text
    new = await board.parts.sessions.current("main")
    assert old is not None and new is not None and new.session_id != old.session_id
    assert next(e["text"] for e in await board.parts.transcripts.entries(old.session_id)) == "remember the red folder"
    history = await board.parts.sessions.history_of("main")
    assert [h.session_id for h in history if h.archived_at] == [old.session_id]
    after = await board.handle(ask("what did I say?"))
    assert "earlier message" not in after.text  # the new session starts empty


@pytest.mark.backends
async def test_reset_a_named_role(board: Board) -> None:
    await board.handle(ask("@finance runway?"))
    old = await board.parts.sessions.current("board:finance")
    reply = await board.handle(ask("/reset finance"))
    assert "finance" in reply.text
    new = await board.parts.sessions.current("board:finance")
    assert old and new and old.session_id != new.session_id
    assert (await board.handle(ask("/reset nobody"))).text.startswith("There is no role 'nobody'")


@pytest.mark.backends
async def test_first_append_after_reopen_is_not_duplicated_in_the_tail(stores: Stores) -> None:
    # A restart (or `sabha ask`) reopens the transcript from disk; the first entry written
    # then must appear once in recent history, not twice.
    t = await stores().create("s1", "main", "general")
    t.append({"type": "message", "role": "user", "text": "one"})
    await t.sync()
    reopened = await stores().open("s1")
    reopened.append({"type": "message", "role": "user", "text": "two"})
    await reopened.sync()
    assert [e["text"] for e in reopened.recent(10)] == ["one", "two"]


async def say(t: Any, text: str) -> None:
    t.append({"type": "message", "role": "user", "text": text})
    await t.sync()


@pytest.mark.backends
async def test_tail_sees_entries_another_process_appended(stores: Stores) -> None:
    # `sabha ask` (console) and `sabha run` (the owner's Telegram DM) share the session `main`; with the
    # state on PostgreSQL, two replicas one after the other. A turn opens its session first.
    daemon_store, cli_store = stores(), stores()
    await say(await daemon_store.create("s1", "main", "general"), "from telegram")
    await say(await cli_store.open("s1"), "from the console")
    await say(await daemon_store.open("s1"), "telegram again")
    expected = ["from telegram", "from the console", "telegram again"]
    assert [e["text"] for e in (await daemon_store.open("s1")).recent(10)] == expected
    assert [e["text"] for e in (await cli_store.open("s1")).recent(10)] == expected
    assert [e["text"] for e in await stores().entries("s1")] == expected


@pytest.mark.backends
async def test_a_deleted_transcript_starts_a_new_session_instead_of_failing(board: Board, stores: Stores) -> None:
    await board.handle(ask("@finance hello"))
    old = await board.parts.sessions.current("board:finance")
    assert old is not None
    await delete_transcript(board, old.session_id)
    fresh = stores()  # as after a restart
    board.parts = replace(board.parts, transcripts=fresh)
    board.parts.sessions.transcripts = fresh
    reply = await board.handle(ask("@finance still there?"))
    assert reply.kind == "answer" and reply.role == "finance"
    new = await board.parts.sessions.current("board:finance")
    assert new is not None and new.session_id != old.session_id and new.role == "finance"
    assert next(e.get("text") for e in await fresh.entries(new.session_id)) == "still there?"


async def test_tail_survives_the_file_being_deleted_under_it(tmp_path: Path) -> None:
    t = await FileTranscripts(tmp_path).create("s1", "main", "general")
    t.append({"type": "message", "role": "user", "text": "one"})
    t.path.unlink()
    assert t.recent(10) == []
    t.append({"type": "message", "role": "user", "text": "two"})
    assert [e["text"] for e in t.recent(10)] == ["two"]


@pytest.mark.backends
async def test_open_transcripts_are_bounded_and_reopen_cleanly(stores: Stores) -> None:
    store = stores(max_open=2)
    for sid in ("a", "b", "c"):
        await say(await store.create(sid, f"board:{sid}", "finance"), f"hi {sid}")
    assert list(store._open) == ["b", "c"]  # type: ignore[attr-defined]
    again = await store.open("a")  # evicted: re-read from disk, history intact and not duplicated
    await say(again, "again")
    assert [e["text"] for e in again.recent(10)] == ["hi a", "again"]
    assert list(store._open) == ["c", "a"]  # type: ignore[attr-defined]


async def test_session_locks_do_not_accumulate(board: Board) -> None:
    for i in range(5):
        await board.handle(ask(f"@finance question {i}"))
        await board.handle(Envelope(channel="telegram", text="hi", sender=str(i), chat_id=str(i), is_owner=False))
    import gc

    gc.collect()
    assert len(board.parts.locks) == 0


# -- rows (PostgreSQL) only ----------------------------------------------------------------------

on_postgres = pytest.mark.parametrize("backend", [Dialect.POSTGRES], ids=["postgres"], indirect=True)


@on_postgres
async def test_two_writers_at_once_lose_nothing(database: Database) -> None:
    # Two processes (a replica and `sabha ask`) appending to one session at the same moment: the one whose
    # numbers were taken retries with fresh ones; every line is kept, each writer's in its order.
    a, b = RowTranscripts(database), RowTranscripts(database)
    await a.create("s1", "main", "general")
    ta, tb = await a.open("s1"), await b.open("s1")
    for i in range(30):
        ta.append({"type": "message", "role": "user", "text": f"a{i}"})
        tb.append({"type": "message", "role": "user", "text": f"b{i}"})
    await asyncio.gather(ta.sync(), tb.sync())
    texts = [e["text"] for e in await RowTranscripts(database).entries("s1")]
    assert sorted(texts) == sorted([f"a{i}" for i in range(30)] + [f"b{i}" for i in range(30)])
    assert [t for t in texts if t[0] == "a"] == [f"a{i}" for i in range(30)]
    assert [t for t in texts if t[0] == "b"] == [f"b{i}" for i in range(30)]
    assert [e["text"] for e in (await a.open("s1")).recent(100)] == texts  # the tail is re-read


@on_postgres
async def test_lines_the_database_refuses_stay_queued_and_sync_says_so(database: Database,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    store = RowTranscripts(database)
    t = await store.create("s1", "main", "general")
    real = store.insert

    async def down(*args: Any, **kw: Any) -> int:
        raise StorageError("PostgreSQL at 127.0.0.1 cannot be reached", retryable=True)

    monkeypatch.setattr(store, "insert", down)
    t.append({"type": "message", "role": "user", "text": "kept for later"})
    with pytest.raises(StorageError):
        await t.sync()
    assert t.busy and [e["text"] for e in t.recent(5)] == ["kept for later"]
    monkeypatch.setattr(store, "insert", real)  # the server is back
    await t.sync()
    assert [e["text"] for e in await RowTranscripts(database).entries("s1")] == ["kept for later"]


@on_postgres
async def test_a_file_copied_into_rows_exports_the_same_bytes(database: Database, tmp_path: Path) -> None:
    # `sabha state copy` moves a SQLite board's transcripts into rows: the export is the file again.
    files = FileTranscripts(tmp_path)
    t = await files.create("s1", "board:finance", "finance")
    t.append({"type": "message", "role": "user", "text": "runway? ₹ and \"quotes\"", "n": 1},
             {"type": "tool_call", "name": "lookup", "arguments": {"q": "tea"}})
    rows = RowTranscripts(database)
    assert await rows.load_file(files.path_for("s1")) == 3
    copied = b"".join([chunk async for chunk in rows.lines("s1")])
    assert copied == files.path_for("s1").read_bytes()
    assert (await rows.open("s1")).header.key == "board:finance"


@on_postgres
async def test_on_postgres_each_line_is_also_jsonb_to_query(database: Database) -> None:
    """The row keeps the line's text (byte-compatible exports) and its JSONB form, which SQL can query."""
    rows = RowTranscripts(database)
    t = await rows.create("s1", "board:finance", "finance")
    t.append({"type": "message", "role": "user", "text": "runway?"})
    await t.sync()
    found = await database.fetchall("SELECT seq, entry ->> 'type' AS type, entry -> 'role' AS role, "
                                    "jsonb_typeof(entry) AS kind FROM transcript_lines WHERE session_id = ? "
                                    "ORDER BY seq", ("s1",))
    assert [(r["seq"], r["type"], r["kind"]) for r in found] == [(0, "session", "object"), (1, "message", "object")]


@pytest.mark.backends
async def test_a_new_sessions_id_that_is_taken_already_is_drawn_again(
        database: Database, stores: Stores, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two conversations opened in the same second drew the same random suffix (3 bytes: 501 new sessions of one
    role in a few seconds met it in a CI run): the second failed with FileExistsError. A taken id is drawn again."""
    from datetime import UTC, datetime, timedelta

    import board.conversation.sessions as sessions_module
    from board.conversation.sessions import Sessions

    store = stores()
    now = datetime.now(UTC)
    for offset in range(-2, 30):  # the id the next draw makes, whichever second it is drawn in
        stamp = (now + timedelta(seconds=offset)).strftime("%Y%m%dT%H%M%S")
        await store.create(f"{stamp}-research-aaaaaa", f"board:research:wa-other-{offset}", "research")
    draws = iter(["aaaaaa", "bbbbbb"])
    monkeypatch.setattr(sessions_module.secrets, "token_hex", lambda _n: next(draws))
    transcript = await Sessions(database, store).open("board:research:wa-1", "research")
    assert transcript.header.session_id.endswith("-research-bbbbbb")
    ref = await Sessions(database, store).current("board:research:wa-1")
    assert ref is not None and ref.session_id == transcript.header.session_id
