"""Transcripts: the JSONL format, torn lines, tail reads and reset archiving."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from board.envelope import Envelope
from board.memory.transcripts import TranscriptStore, iter_entries, read_tail
from board.service import Board


def ask(text: str, **kw: object) -> Envelope:
    kw.setdefault("is_owner", True)
    return Envelope(channel="console", text=text, sender="owner", **kw)  # type: ignore[arg-type]


async def test_turn_writes_header_user_and_assistant(board: Board, data_dir: Path) -> None:
    reply = await board.handle(ask("hello board"))
    files = list(data_dir.glob("*.jsonl"))
    assert len(files) == 1
    lines = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]
    header, user, assistant = lines
    assert header["type"] == "session" and header["key"] == "main" and header["role"] == "general"
    assert header["id"] == files[0].stem and header["created"]
    assert user == {**user, "type": "message", "role": "user", "text": "hello board", "channel": "console"}
    assert assistant["role"] == "assistant" and assistant["agent"] == "general"
    assert assistant["text"] == reply.text
    assert assistant["model"] == "offline" and len(assistant["soul_version"]) == 12
    assert assistant["usage"]["input_tokens"] > 0 and "latency_ms" in assistant


async def test_history_reaches_the_model(board: Board) -> None:
    await board.handle(ask("first"))
    await board.handle(ask("second"))
    third = await board.handle(ask("third"))
    assert "2 earlier message(s)" in third.text


def test_torn_last_line_is_skipped_with_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = TranscriptStore(tmp_path)
    t = store.create("s1", "main", "general")
    t.append({"type": "message", "role": "user", "text": "kept"})
    with open(t.path, "ab") as fh:
        fh.write(b'{"type":"message","role":"assistant","te')  # crash mid-write
    with caplog.at_level(logging.WARNING):
        tail = read_tail(t.path, 10)
    assert [e["text"] for e in tail] == ["kept"]
    assert any("torn last line" in r.getMessage() for r in caplog.records)
    # The next write starts on a fresh line instead of gluing onto the torn one.
    fresh = TranscriptStore(tmp_path).open("s1")
    fresh.append({"type": "message", "role": "user", "text": "after crash"})
    texts = [e.get("text") for e in iter_entries(t.path) if e.get("type") == "message"]
    assert texts == ["kept", "after crash"]
    assert [e["text"] for e in read_tail(t.path, 10)] == ["kept", "after crash"]


def test_tail_reads_across_block_boundaries(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path)
    t = store.create("big", "main", "general")
    t.append(*({"type": "message", "role": "user", "text": f"m{i} " + "x" * 500} for i in range(2000)))
    tail = read_tail(t.path, 150)
    assert [e["text"].split()[0] for e in tail] == [f"m{i}" for i in range(1850, 2000)]


async def test_recent_history_comes_from_the_tail_not_the_whole_file(board: Board, data_dir: Path) -> None:
    await board.handle(ask("start"))
    ref = await board.sessions.current("main")
    assert ref is not None
    path = board.transcripts.path_for(ref.session_id)
    with open(path, "ab") as fh:
        for i in range(5000):
            fh.write(json.dumps({"type": "message", "role": "user", "text": f"old {i}"}).encode() + b"\n")
    fresh = TranscriptStore(data_dir).open(ref.session_id)
    recent = fresh.recent(3)
    assert [e["text"] for e in recent] == ["old 4997", "old 4998", "old 4999"]


async def test_reset_archives_and_keeps_the_old_file(board: Board, data_dir: Path) -> None:
    await board.handle(ask("remember the red folder"))
    old = await board.sessions.current("main")
    reply = await board.handle(ask("/reset"))
    assert reply.kind == "command" and "archived" in reply.text
    new = await board.sessions.current("main")
    assert old is not None and new is not None and new.session_id != old.session_id
    assert board.transcripts.path_for(old.session_id).exists()
    history = await board.sessions.history_of("main")
    assert [h.session_id for h in history if h.archived_at] == [old.session_id]
    after = await board.handle(ask("what did I say?"))
    assert "earlier message" not in after.text  # the new session starts empty


async def test_reset_a_named_role(board: Board) -> None:
    await board.handle(ask("@finance runway?"))
    old = await board.sessions.current("board:finance")
    reply = await board.handle(ask("/reset finance"))
    assert "finance" in reply.text
    new = await board.sessions.current("board:finance")
    assert old and new and old.session_id != new.session_id
    assert (await board.handle(ask("/reset nobody"))).text.startswith("There is no role 'nobody'")


def test_first_append_after_reopen_is_not_duplicated_in_the_tail(tmp_path: Path) -> None:
    # A restart (or `sabha ask`) reopens the transcript from disk; the first entry written
    # then must appear once in recent history, not twice.
    t = TranscriptStore(tmp_path).create("s1", "main", "general")
    t.append({"type": "message", "role": "user", "text": "one"})
    reopened = TranscriptStore(tmp_path).open("s1")
    reopened.append({"type": "message", "role": "user", "text": "two"})
    assert [e["text"] for e in reopened.recent(10)] == ["one", "two"]


def test_tail_sees_entries_another_process_appended(tmp_path: Path) -> None:
    # `sabha ask` (console) and `sabha run` (the owner's Telegram DM) share the session `main`.
    daemon = TranscriptStore(tmp_path).create("s1", "main", "general")
    daemon.append({"type": "message", "role": "user", "text": "from telegram"})
    cli = TranscriptStore(tmp_path).open("s1")
    cli.append({"type": "message", "role": "user", "text": "from the console"})
    daemon.append({"type": "message", "role": "user", "text": "telegram again"})
    expected = ["from telegram", "from the console", "telegram again"]
    assert [e["text"] for e in daemon.recent(10)] == expected
    assert [e["text"] for e in cli.recent(10)] == expected


async def test_a_deleted_transcript_starts_a_new_session_instead_of_failing(board: Board, data_dir: Path) -> None:
    await board.handle(ask("@finance hello"))
    old = await board.sessions.current("board:finance")
    assert old is not None
    board.transcripts.path_for(old.session_id).unlink()
    fresh = TranscriptStore(data_dir)  # as after a restart
    board.transcripts = board.sessions.transcripts = fresh
    reply = await board.handle(ask("@finance still there?"))
    assert reply.kind == "answer" and reply.role == "finance"
    new = await board.sessions.current("board:finance")
    assert new is not None and new.session_id != old.session_id and new.role == "finance"
    assert [e.get("text") for e in iter_entries(fresh.path_for(new.session_id))][1] == "still there?"


def test_tail_survives_the_file_being_deleted_under_it(tmp_path: Path) -> None:
    t = TranscriptStore(tmp_path).create("s1", "main", "general")
    t.append({"type": "message", "role": "user", "text": "one"})
    t.path.unlink()
    assert t.recent(10) == []
    t.append({"type": "message", "role": "user", "text": "two"})
    assert [e["text"] for e in t.recent(10)] == ["two"]


def test_open_transcripts_are_bounded_and_reopen_cleanly(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path, max_open=2)
    for sid in ("a", "b", "c"):
        store.create(sid, f"board:{sid}", "finance").append({"type": "message", "role": "user", "text": f"hi {sid}"})
    assert list(store._open) == ["b", "c"]
    again = store.open("a")  # evicted: re-read from disk, history intact and not duplicated
    again.append({"type": "message", "role": "user", "text": "again"})
    assert [e["text"] for e in again.recent(10)] == ["hi a", "again"]
    assert list(store._open) == ["c", "a"]


async def test_session_locks_do_not_accumulate(board: Board) -> None:
    for i in range(5):
        await board.handle(ask(f"@finance question {i}"))
        await board.handle(Envelope(channel="telegram", text="hi", sender=str(i), chat_id=str(i), is_owner=False))
    import gc

    gc.collect()
    assert len(board._locks) == 0
