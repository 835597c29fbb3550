"""The memory's tables: the session index, the ledger of LLM calls and of tool calls (0001-0099)."""

from __future__ import annotations

from board.db import Migration

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_sessions",
        """
        CREATE TABLE sessions (
            session_id  TEXT PRIMARY KEY,
            key         TEXT NOT NULL,
            role        TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            archived_at TEXT
        );
        CREATE UNIQUE INDEX sessions_current ON sessions(key) WHERE archived_at IS NULL;
        """,
    ),
    Migration(
        "0002_llm_calls",
        """
        CREATE TABLE llm_calls (
            id                 INTEGER PRIMARY KEY,
            ts                 TEXT NOT NULL,
            provider           TEXT NOT NULL,
            model              TEXT NOT NULL,
            role               TEXT,
            session_key        TEXT,
            meeting_id         TEXT,
            purpose            TEXT,
            attempt            INTEGER NOT NULL DEFAULT 1,
            input_tokens       INTEGER NOT NULL DEFAULT 0,
            output_tokens      INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd           REAL,
            latency_ms         REAL,
            ttft_ms            REAL,
            outcome            TEXT NOT NULL,
            error              TEXT,
            blocks             TEXT,
            tags               TEXT
        );
        CREATE INDEX llm_calls_ts ON llm_calls(ts);
        CREATE INDEX llm_calls_session ON llm_calls(session_key, ts);
        """,
    ),
    Migration(
        "0003_tool_calls",
        """
        CREATE TABLE tool_calls (
            id           INTEGER PRIMARY KEY,
            ts           TEXT NOT NULL,
            role         TEXT,
            session_key  TEXT,
            meeting_id   TEXT,
            name         TEXT NOT NULL,
            call_id      TEXT,
            args         TEXT,
            ok           INTEGER NOT NULL,
            error        TEXT,
            retryable    INTEGER NOT NULL DEFAULT 0,
            result_bytes INTEGER NOT NULL DEFAULT 0,
            latency_ms   REAL
        );
        CREATE INDEX tool_calls_ts ON tool_calls(ts);
        """,
    ),
)
