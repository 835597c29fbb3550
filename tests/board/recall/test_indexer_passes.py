"""The background indexer's pass over conversations (issue 44: "the recall indexer scans every session every
2 s"): a session whose transcript has not changed since it was read costs its pass no statement and no read of
the transcript; a line written afterwards is still indexed on the next pass. Real sessions and transcript files
on a real state db; the passes' SQL statements are counted on SQLite's connection."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from board.conversation.sessions import Sessions
from board.conversation.transcripts import FileTranscripts
from board.recall.indexer import RecallIndexer
from board.storage import Database


def _said(text: str, role: str = "user") -> dict[str, Any]:
    return {"type": "message", "role": role, "text": text, "channel": "telegram", "sender": "7",
            "ts": "2026-11-29T10:00:00+00:00"}


async def _idle_pass(indexer: RecallIndexer, db: Database) -> list[str]:
    conn: Any = db
    seen: list[str] = []
    await conn.conn.set_trace_callback(seen.append)
    try:
        assert await indexer.run_once() == 0
    finally:
        await conn.conn.set_trace_callback(None)
    return seen


async def test_an_idle_pass_costs_no_statement_per_unchanged_session(database: Database, tmp_path: Path) -> None:
    transcripts = FileTranscripts(tmp_path / "sessions")
    sessions = Sessions(database, transcripts)
    indexer = RecallIndexer(database, sessions, transcripts)
    costs = []
    files: list[Path] = []
    for count in (3, 30):
        for n in range(len(files), count):
            transcript = await sessions.open(f"board:finance:tg-{n}", "finance")
            transcript.append(_said(f"pune office question {n}"), _said(f"answer {n}", "assistant"))
            files.append(transcripts.path_for(transcript.header.session_id))
        assert await indexer.run_once() == 2 * (count - (3 if count == 30 else 0))
        hour_ago = time.time() - 3600  # written long before the pass: settled
        for path in files:
            os.utime(path, (hour_ago, hour_ago))
        await indexer.run_once()  # the files' times moved: read once more, nothing new
        costs.append(len(await _idle_pass(indexer, database)))
    assert costs[0] == costs[1], f"an idle pass's statements grew with the sessions: {costs}"
    # a line written later is indexed by the next pass
    transcript = await sessions.open("board:finance:tg-4", "finance")
    transcript.append(_said("the pune lease was signed"))
    assert await indexer.run_once() == 1
    row = await database.fetchone("SELECT count(*) AS n FROM recall_passages WHERE text LIKE '%lease was signed%'")
    assert row is not None and int(row["n"]) == 1


@pytest.mark.backends
async def test_a_long_conversation_is_indexed_in_one_step_not_one_per_line(database: Database,
                                                                    tmp_path: Path) -> None:
    """Each statement of a transaction on SQLite is a hop to the express connection's thread while the
    transaction holds the write lock and that connection, which every webhook's durable claim waits for: a
    session's lines and its new position are written in one step on SQLite (acknowledgement p99, issues 41/44);
    on PostgreSQL in multi-row statements."""
    transcripts = FileTranscripts(tmp_path / "sessions")
    sessions = Sessions(database, transcripts)
    indexer = RecallIndexer(database, sessions, transcripts)
    transcript = await sessions.open("board:finance:tg-1", "finance")
    transcript.append(*(_said(f"line {n} about the pune office", "user" if n % 2 else "assistant")
                        for n in range(250)))
    statements: list[str] = []
    conn: Any = database
    if hasattr(conn, "on_express"):  # SQLite: count what runs on the express connection
        real = conn.on_express

        async def counted(step: Any) -> Any:
            statements.append(getattr(step, "__qualname__", ""))
            return await real(step)
        conn.on_express = counted
    try:
        assert await indexer.run_once() == 250
    finally:
        if hasattr(conn, "on_express"):
            del conn.on_express
    row = await database.fetchone("SELECT count(*) AS n FROM recall_passages WHERE text LIKE '%pune office%'")
    assert row is not None and int(row["n"]) == 250
    if hasattr(conn, "on_express"):
        assert len(statements) == 1, f"{len(statements)} steps on the express connection for one session's pass"
