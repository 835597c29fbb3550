-- PostgreSQL twin of ../0200_telegram_topics.sql (same tables, columns and indexes).
CREATE TABLE telegram_topics (
    chat_id    TEXT NOT NULL,
    role       TEXT NOT NULL,
    thread_id  BIGINT NOT NULL,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (chat_id, role)
);
