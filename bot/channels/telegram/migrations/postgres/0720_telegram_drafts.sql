-- PostgreSQL twin of ../0720_telegram_drafts.sql (same tables, columns and indexes).
-- A streamed answer's draft message (issue 26): recorded before its first chunk is sent
-- (message_id NULL), then with its id, so a restart edits that message into the answer
-- instead of posting a second one. Deleted once the answer is delivered.
CREATE TABLE telegram_drafts (
    chat_id    TEXT NOT NULL,
    reply_to   TEXT NOT NULL,
    message_id BIGINT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (chat_id, reply_to)
);
