"""The state database: one SQLite file (WAL) opened with aiosqlite, with numbered migrations.

Migrations are append-only and named: each entry of :data:`MIGRATIONS` runs once, in
list order, inside a transaction, and its name is recorded in ``schema_migrations``.
Other modules add their tables by appending a uniquely named migration here, never by
editing one that has shipped.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import aiosqlite

log = logging.getLogger("sabha.db")

MIGRATIONS: list[tuple[str, str]] = [
    (
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
    (
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
    (
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
    (
        "0200_telegram_topics",
        """
        CREATE TABLE telegram_topics (
            chat_id    TEXT NOT NULL,
            role       TEXT NOT NULL,
            thread_id  INTEGER NOT NULL,
            name       TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (chat_id, role)
        );
        """,
    ),
    (
        "0201_inbound_messages",
        """
        CREATE TABLE inbound_messages (
            channel     TEXT NOT NULL,
            chat_id     TEXT NOT NULL,
            message_id  TEXT NOT NULL,
            received_at TEXT NOT NULL,
            status      TEXT NOT NULL DEFAULT 'received',
            answered_at TEXT,
            PRIMARY KEY (channel, chat_id, message_id)
        );
        CREATE INDEX inbound_messages_received ON inbound_messages(channel, received_at);
        """,
    ),
    (
        "0100_meetings",
        """
        CREATE TABLE meetings (
            id           TEXT PRIMARY KEY,
            topic        TEXT NOT NULL,
            roster       TEXT NOT NULL,
            chair        TEXT NOT NULL,
            status       TEXT NOT NULL,             -- running | ended
            stop_reason  TEXT,                      -- completed | converged | budget | deadline | cancelled | error
            error        TEXT,
            agenda       TEXT,
            channel      TEXT,
            chat_id      TEXT,
            thread_id    INTEGER,
            started_at   TEXT NOT NULL,
            ended_at     TEXT,
            cost_usd     REAL NOT NULL DEFAULT 0,
            decision     TEXT,                      -- JSON of board.decision.Decision
            minutes      TEXT                       -- Markdown
        );
        CREATE TABLE meeting_participants (
            meeting_id TEXT NOT NULL REFERENCES meetings(id),
            role       TEXT NOT NULL,
            status     TEXT NOT NULL,               -- present | absent
            reason     TEXT,
            PRIMARY KEY (meeting_id, role)
        );
        CREATE TABLE meeting_statements (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            meeting_id TEXT NOT NULL REFERENCES meetings(id),
            round      INTEGER NOT NULL,
            role       TEXT NOT NULL,
            text       TEXT NOT NULL,
            model      TEXT,
            cost_usd   REAL NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        );
        CREATE TABLE meeting_events (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            meeting_id TEXT NOT NULL REFERENCES meetings(id),
            kind       TEXT NOT NULL,               -- disagreement | consensus | decision
            role       TEXT NOT NULL,
            round      INTEGER,
            data       TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX meeting_statements_by_meeting ON meeting_statements(meeting_id, round);
        CREATE INDEX meeting_events_by_meeting ON meeting_events(meeting_id, kind);
        """,
    ),
    (
        "0101_consultations",
        """
        CREATE TABLE consultations (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            ts          TEXT NOT NULL,
            from_role   TEXT NOT NULL,
            to_role     TEXT NOT NULL,
            depth       INTEGER NOT NULL,
            chain       TEXT NOT NULL,              -- JSON list of roles so far, ending with the caller
            question    TEXT NOT NULL,
            outcome     TEXT NOT NULL,              -- ok | degraded | refused | timeout
            latency_ms  REAL NOT NULL,
            cost_usd    REAL NOT NULL DEFAULT 0,
            session_key TEXT,
            meeting_id  TEXT,
            error       TEXT
        );
        CREATE INDEX consultations_by_ts ON consultations(ts);
        """,
    ),
    (
        "0202_inbound_messages_resume",
        """
        -- the durable inbox (bot.channels.inbox): what a message needs to be answered after a restart
        ALTER TABLE inbound_messages ADD COLUMN envelope TEXT;                       -- JSON of the Envelope
        ALTER TABLE inbound_messages ADD COLUMN reply TEXT;                          -- JSON of the Reply, once answered
        ALTER TABLE inbound_messages ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;  -- answering started this often
        CREATE INDEX inbound_messages_status ON inbound_messages(channel, status);
        """,
    ),
]


class StateDB:
    """An open state database. Use :meth:`open` (or ``async with StateDB.open(...)``)."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    async def open(cls, path: Path) -> StateDB:
        """Open (creating if needed) the database at ``path`` and bring it up to date."""
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(path)
        conn.row_factory = aiosqlite.Row
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA foreign_keys=ON")
        await conn.execute("PRAGMA busy_timeout=5000")
        db = cls(conn, path)
        await db._migrate()
        return db

    async def _migrate(self) -> None:
        await self.conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        async with self.conn.execute("SELECT name FROM schema_migrations") as cur:
            applied = {row[0] for row in await cur.fetchall()}
        names = [name for name, _ in MIGRATIONS]
        if len(set(names)) != len(names):
            raise RuntimeError("duplicate migration names in board.db.MIGRATIONS")
        unknown = applied - set(names)
        if unknown:
            raise RuntimeError(
                f"state db {self.path} has migrations this Sabha does not know ({', '.join(sorted(unknown))}); "
                "upgrade Sabha or point data_dir elsewhere"
            )
        for name, sql in MIGRATIONS:
            if name in applied:
                continue
            log.info("state db: applying migration %s", name)
            escaped = name.replace("'", "''")
            await self.conn.executescript(
                f"BEGIN;\n{sql}\nINSERT INTO schema_migrations(name, applied_at) "
                f"VALUES ('{escaped}', datetime('now'));\nCOMMIT;"
            )

    async def execute(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> None:
        """Run one statement and commit."""
        await self.conn.execute(sql, params)
        await self.conn.commit()

    async def fetchall(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[aiosqlite.Row]:
        """Rows of a query."""
        async with self.conn.execute(sql, params) as cur:
            return list(await cur.fetchall())

    async def fetchone(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> aiosqlite.Row | None:
        """The first row of a query, or None."""
        async with self.conn.execute(sql, params) as cur:
            return await cur.fetchone()

    async def close(self) -> None:
        """Close the connection."""
        await self.conn.close()

    async def __aenter__(self) -> StateDB:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
