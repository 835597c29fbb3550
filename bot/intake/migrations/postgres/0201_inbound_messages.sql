-- PostgreSQL twin of ../0201_inbound_messages.sql (same tables, columns and indexes).
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
